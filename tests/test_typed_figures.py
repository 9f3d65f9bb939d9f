"""No measured or simulated figure is typed by hand in the book's prose (tests/typed_figures.py)."""

from __future__ import annotations

import json

import pytest

from tests import typed_figures as tf


@pytest.mark.parametrize("path", tf.pages(), ids=lambda p: p.name)
def test_no_figure_is_typed_by_hand(path):
    found = tf.hits(path)
    assert not found, "\n".join(f"{path.name}:{c}: [{f}] {line}" for c, f, line in found)


def test_every_allowed_figure_is_still_on_its_page_with_a_reason():
    """A stale entry would silently allow a figure typed later: each must match a figure now."""
    pages = {p.name: p for p in tf.pages()}
    for name, figures, reason in tf.ALLOWED:
        assert name in pages, name
        assert reason.strip(), (name, figures)
        seen = {figure for _, figure, _ in tf.figures(pages[name])}
        missing = set(figures) - seen
        assert not missing, f"{name}: allowed but absent: {sorted(missing)}"


PAGE = """\
The two ranks are 1.52× slower, the gap is 0.58 µs and the run took about 20 s; 3 times faster; 9 of 13 win.
Glued: {glue:text}`gap:.2f` µs and {glue:text}`ratio` times, $t = 5\\,\\mu s$ and `--size 8 KiB`.
See [the data](results/12 ms.json).

$$
T = 100 µs
$$

```bash
python -m mpi_exercises pingpong   # 1.4 s
```

```{note}
A note says 12 MB/s.
```
"""


def test_the_scan_finds_typed_figures_and_skips_glue_math_code_and_links(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    assert [f for _, f, _ in tf.hits(page)] == ["1.52×", "0.58 µs", "about 20 s", "3 times", "9 of 13",
                                                 "12 MB/s"]
    nb = tmp_path / "chapter.ipynb"
    nb.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "source": "x = 7  # 7 ms", "outputs": [],
         "execution_count": 1},
        {"cell_type": "markdown", "metadata": {}, "source": "It moves 2.5 GB/s."}]}), encoding="utf-8")
    assert tf.hits(nb) == [(1, "2.5 GB/s", "It moves 2.5 GB/s.")]


def test_an_allowed_figure_is_allowed_on_its_page_only(tmp_path):
    lab1 = tmp_path / "lab1.md"
    other = tmp_path / "lab9.md"
    for p in (lab1, other):
        p.write_text("The reference run takes 1.4 s.\n", encoding="utf-8")
    assert tf.hits(lab1) == []
    assert [f for _, f, _ in tf.hits(other)] == ["1.4 s"]


def test_the_command_prints_each_hit_and_exits_1(tmp_path, capsys):
    page = tmp_path / "page.md"
    page.write_text("Measured: 3.2 µs.\n", encoding="utf-8")
    assert tf.main([str(page)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{page}: [3.2 µs] Measured: 3.2 µs.", "1 typed figures"]


def test_the_command_refuses_a_missing_file_with_usage_and_status_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        tf.main([str(tmp_path / "absent.md")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: python -m tests.typed_figures") and "absent.md" in err
    assert "Traceback" not in err


def test_claim_sentences_fill_in_the_glued_value_and_the_sample_repeats(tmp_path, capsys):
    nb = tmp_path / "chapter.ipynb"
    glue_output = {"output_type": "display_data", "metadata": {"scrapbook": {"name": "ratio", "mime_prefix":
                   "application/papermill.record/"}}, "data": {"application/papermill.record/text/plain": "1.5234"}}
    nb.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 4, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "source": "glue('ratio', 1.5234, display=False)",
         "outputs": [glue_output], "execution_count": 1},
        {"cell_type": "markdown", "metadata": {}, "source":
         "Two ranks are {glue:text}`ratio:.2f` times slower than one. A heading follows.\n\n"
         "```python\nx = 3  # 3 times faster in code, not prose\n```\n"}]}), encoding="utf-8")
    assert tf.claim_sentences([nb]) == [(str(nb), 1, "Two ranks are «1.52» times slower than one.")]
    for _ in range(2):
        assert tf.main(["--sample", "1", str(nb)]) == 0
    first, second = capsys.readouterr().out.splitlines()
    assert first == second == f"S001 {nb}:1: Two ranks are «1.52» times slower than one."
    with pytest.raises(SystemExit) as exit_:
        tf.main(["--sample", "2", str(nb)])
    assert exit_.value.code == 2


def test_the_book_sample_is_seeded(capsys):
    runs = []
    for seed in ("56", "56", "57"):
        assert tf.main(["--sample", "10", "--seed", seed]) == 0
        runs.append(capsys.readouterr().out)
    assert runs[0] == runs[1] != runs[2]
    assert len(runs[0].splitlines()) == 10 and "??" not in runs[0]   # every glue reference resolved
