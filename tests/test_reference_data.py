"""Every measured reference data set of the book says how it was measured: ranks, cores, and
whether the ranks were oversubscribed (more ranks than cores); a chapter that reads an
oversubscribed one says so on its page."""

import json
from pathlib import Path

import nbformat
import pytest

BOOK = Path(__file__).resolve().parent.parent / "book"
MEASURED = sorted(p for p in (BOOK / "data").glob("*.json") if "benchmark" in json.loads(p.read_text()))


@pytest.mark.parametrize("path", MEASURED, ids=lambda p: p.name)
def test_measured_data_records_ranks_cores_and_oversubscription(path):
    d = json.loads(path.read_text())
    env = d.get("environment") or {}
    ranks, cores = d.get("ranks", env.get("ranks")), d.get("cores", env.get("cores"))
    assert isinstance(ranks, int) and isinstance(cores, int), (ranks, cores)
    assert d.get("oversubscribed") == (ranks > cores)


def test_chapters_reading_oversubscribed_data_say_so():
    over = {p.name for p in MEASURED if json.loads(p.read_text())["oversubscribed"]}
    assert over, "no oversubscribed reference data: this test has nothing to check"
    for nb_path in BOOK.glob("*.ipynb"):
        nb = nbformat.read(nb_path, as_version=4)
        text = "\n".join(c.source for c in nb.cells)
        shown = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
        for name in over:
            if name in text:
                assert "oversubscribed" in (text + shown).lower(), (nb_path.name, name)
