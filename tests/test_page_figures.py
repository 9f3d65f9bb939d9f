"""Measured figures on the book's Markdown pages, which cannot glue: each is stated as the
output of a named command and compared here with that output, so it cannot go stale.

The ping-pong's run time (``book/labs/lab1.md``, ``book/install.md``) is ``rounds.seconds`` of
the lab's reference ``pingpong.json`` (``mpiexec -n 2 python -m mpi_exercises pingpong --json
pingpong.json``), and its upper bound the command's ``--time-budget``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "labs" / "source" / "lab1" / "pingpong.json"

#: page, the sentence's pattern: (seconds measured, seconds at most)
PAGES = {
    "book/labs/lab1.md": r"pingpong\.json` took\s+([\d.]+) s, its `rounds\.seconds`.*?for at most the\s+(\d+) s of `--time-budget`",
    "book/install.md": r"pingpong --json pingpong\.json\s+# your α and β \(([\d.]+) s for the lab's reference run, (\d+) s at most\)",
}


def _stated(page: str) -> tuple[float, float]:
    text = (ROOT / page).read_text(encoding="utf-8")
    found = re.findall(PAGES[page], text, flags=re.S)
    assert len(found) == 1, f"{page}: the ping-pong's run time is stated {len(found)} times, not once"
    return float(found[0][0]), float(found[0][1])


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_pingpong_time_on_the_page_is_the_reference_runs(page):
    run = json.loads(REFERENCE.read_text(encoding="utf-8"))
    seconds, at_most = _stated(page)
    assert seconds == round(run["rounds"]["seconds"], 1), (page, seconds, run["rounds"]["seconds"])
    assert at_most == run["rounds"]["time_budget_s"] == run["parameters"]["time_budget_s"], (page, at_most)


def test_lab3s_measuring_times_are_its_reference_runs():
    """``book/labs/lab3.md``: the seconds of the ``rounds`` of the lab's reference ``logp.json``
    (its two phases summed) and ``barriers.json``, and their time budget."""
    text = (ROOT / "book" / "labs" / "lab3.md").read_text(encoding="utf-8")
    found = re.findall(r"`barriers\.json`\s+measured for ([\d.]+) s and ([\d.]+) s, the `seconds` of their "
                       r"`rounds`; rounds stop after (\d+) s per\s+phase at most", text)
    assert len(found) == 1, found
    logp_s, barriers_s, at_most = map(float, found[0])
    lab3 = ROOT / "labs" / "source" / "lab3"
    logp = json.loads((lab3 / "logp.json").read_text(encoding="utf-8"))
    barriers = json.loads((lab3 / "barriers.json").read_text(encoding="utf-8"))
    assert logp_s == round(sum(phase["seconds"] for phase in logp["rounds"].values()), 1)
    assert barriers_s == round(barriers["rounds"]["seconds"], 1)
    assert at_most == logp["parameters"]["time_budget_s"] == barriers["parameters"]["time_budget_s"]


def test_the_budget_on_the_pages_is_the_commands_default():
    from mpi_exercises.__main__ import build_parser

    args, _ = build_parser(["pingpong"]).parse_known_args(["pingpong"])
    for page in PAGES:
        assert _stated(page)[1] == args.time_budget, page


@pytest.mark.parametrize("page, command", [("book/labs/lab2.md", "nbl-testjig"), ("book/labs/lab4.md", "lop")])
def test_the_budget_of_labs_2_and_4_is_the_commands_default(page, command):
    """Their measurements record no run time: the page states the command's time budget, which
    bounds its extra rounds, rather than a duration nobody measured."""
    from mpi_exercises.__main__ import build_parser

    text = (ROOT / page).read_text(encoding="utf-8")
    stated = re.findall(r"extra rounds stop after its `--time-budget`, (\d+) s by default", text)
    args, _ = build_parser([command]).parse_known_args([command])
    assert [float(s) for s in stated] == [args.time_budget], (page, stated)
    assert not re.search(r"about a minute|a few minutes|under a minute", text), page
