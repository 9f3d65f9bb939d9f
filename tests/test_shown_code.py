"""What a reader sees of the book's code: the model, the schedule and the measurement, not the
plumbing.  Every shown line of every chapter is classified (:mod:`tests.shown_code`: print,
format and ``glue`` lines against the rest); the book shows at most :data:`MAX_LINES` lines,
at most :data:`MAX_PLUMBING` of them plumbing, and so does each chapter's share.  Each chapter
that uses a model shows its step rule from the module itself (:data:`STEP_RULES`), and the
committed output is the module's current source, so it cannot drift."""

from __future__ import annotations

import ast
import json

import pytest

from netmodels.figures.source import show_source, source_of
from tests.shown_code import BOOK, chapters, classify, figures, plumbing

MAX_LINES = 1200        #: shown code lines, all chapters
MAX_PLUMBING = 0.15     #: the share of them that prints, formats or glues

#: chapter: the step rules (module, qualified name) it shows from source
STEP_RULES = {
    "alpha_beta": [("netmodels.models.alphabeta", "AlphaBetaRule.costs")],
    "nbl": [("netmodels.models.nbl", "NBLModel.step_time"), ("netmodels.models.nbl", "NBLRule.costs")],
    "logp": [("netmodels.models.logp", q) for q in ("LogP.message_terms", "LogPClock.advance", "LogPClock.send",
                                                    "LogPClock.receive", "LogPClock.hold_rendezvous")],
    "lop": [("netmodels.models.lop", "LoPRule.costs"), ("netmodels.models.lop", "t_one_to_n")],
    "topology": [("netmodels.models.alphabeta", "AlphaBetaRule.costs")],
    "multilevel": [("netmodels.models.twolevel", "TwoLevelRule.costs")],
}


def _resolve(module: str, qualname: str):
    import importlib

    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


# ---------------------------------------------------------------- the classifier itself
@pytest.mark.parametrize("source, expected", [
    ('print(f"x = {x}")', (1, 0)),
    ('glue("a", f"{a:.2f}", display=False)', (1, 0)),
    ('label = f"{n} ranks"', (1, 0)),
    ('row = "{:>3} {:>8}".format(*cols)', (1, 0)),
    ('text = ", ".join(f"{v:.1f}" for v in values)', (1, 0)),
    ('t = simulate(schedule, model).time', (0, 1)),
    ('names = ", ".join(sorted(found))', (0, 1)),                 # joining names is not formatting
    ('for p in (2, 4):\n    t = model.time(p)\n    print(f"{p} {t}")', (1, 2)),
    ('for p in (2, 4):\n    print(p)', (2, 0)),                  # a loop that only prints
    ('def label(x):\n    """Doc."""\n    return f"{x} µs"', (3, 0)),
    ('# a comment\n\nx = 1', (0, 1)),
    ('%matplotlib inline\nx = 1', (0, 2)),
])
def test_the_classifier_counts_plumbing_and_other_lines(source, expected):
    p, o = classify(source)
    assert (len(p), len(o)) == expected, (source, sorted(p), sorted(o))


def test_a_statement_is_plumbing_by_its_syntax_not_its_names():
    assert plumbing(ast.parse("glue('x', 1)").body[0])
    assert not plumbing(ast.parse("gluey('x', 1)").body[0])
    assert not plumbing(ast.parse("printed = compute(x)").body[0])


# ---------------------------------------------------------------- the book
def test_the_book_shows_little_code_and_little_plumbing():
    total = {"lines": 0, "plumbing": 0}
    per = {}
    for path in chapters():
        f = per[path.stem] = figures(path)
        total["lines"] += f["lines"]
        total["plumbing"] += f["plumbing"]
    table = "\n".join(f"  {k}: {v['lines']} lines, {v['plumbing']} plumbing" for k, v in per.items())
    assert total["lines"] <= MAX_LINES, f"{total['lines']} shown lines > {MAX_LINES}:\n{table}"
    assert total["plumbing"] <= MAX_PLUMBING * total["lines"], \
        f"{total['plumbing']} of {total['lines']} shown lines are plumbing (> {MAX_PLUMBING:.0%}):\n{table}"


@pytest.mark.parametrize("chapter", [p.stem for p in chapters()])
def test_each_chapter_shows_at_most_its_share_of_plumbing(chapter):
    f = figures(BOOK / f"{chapter}.ipynb")
    assert f["plumbing"] <= MAX_PLUMBING * f["lines"], f"{chapter}: {f['plumbing']} of {f['lines']} lines are plumbing"


def _markdown_outputs(chapter: str) -> list[str]:
    nb = json.loads((BOOK / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    return ["".join(o["data"]["text/markdown"]) if isinstance(o["data"]["text/markdown"], list)
            else o["data"]["text/markdown"]
            for c in nb["cells"] if c["cell_type"] == "code"
            for o in c.get("outputs", []) if "text/markdown" in o.get("data", {})]


@pytest.mark.parametrize("chapter", sorted(STEP_RULES))
def test_each_chapter_shows_its_step_rule_as_the_module_has_it(chapter):
    """The committed output is ``show_source`` of the rule today: re-execute the chapter
    when a rule changes."""
    objects = [_resolve(m, q) for m, q in STEP_RULES[chapter]]
    expected = show_source(*objects).data
    shown = _markdown_outputs(chapter)
    assert expected in shown, f"{chapter}: the step rule shown is not the module's current source " \
                              f"of {[q for _, q in STEP_RULES[chapter]]}: re-execute the notebook"


def test_show_source_is_the_source_and_refuses_what_has_none():
    from netmodels.models.alphabeta import AlphaBetaRule

    text = show_source(AlphaBetaRule.costs).data
    assert text.startswith("```python\n# netmodels.models.alphabeta.AlphaBetaRule.costs\ndef costs(")
    assert "np.maximum(sent, received)" in text and text.endswith("```")
    with pytest.raises(ValueError, match="obj must be"):
        source_of(42)
    with pytest.raises(ValueError, match="objects"):
        show_source()
