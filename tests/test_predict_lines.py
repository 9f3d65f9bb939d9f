"""predict's last line and the class report's precision column of a lab 5 report: what they say
of a calibration that is precise yet changed between its halves."""


def test_the_last_line_says_when_the_machine_changed_though_the_calibration_is_precise(monkeypatch):
    """A calibration can be precise (its noise within the limit) and yet differ between its halves:
    the last line and the class report then say the machine changed, not only "reliable"."""
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent / "labs"))   # the course's modules
    from class_report_machines import precision
    from mpi_exercises.bench.predict.text import last_line

    class Cal:
        reliability = {"reliable": True}
    mode = {"mode": "normal", "bytes": 1 << 20, "ratio": 1.5, "threshold": 2.3}
    moved = {"largest": 0.59, "at": "software door at n = 512", "stable": False}
    line = last_line(2, False, 1.0, {}, Cal, mode, moved)
    assert "calibration reliable; the machine CHANGED during the run (59% between the calibration's halves)" in line
    still = last_line(2, False, 1.0, {}, Cal, mode, {**moved, "largest": 0.05, "stable": True})
    assert "; the machine held still;" in still and "CHANGED" not in still
    record = {"benchmark": "predict", "reliable": True, "stable": False, "drift": moved}
    assert precision(record) == "calibration reliable, machine changed during the run (59%)"
    assert precision({**record, "stable": True}) == "calibration reliable"
