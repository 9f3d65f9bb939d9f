"""The book's build log: myst-parser's and myst-nb's configuration dumps are not printed, every
warning is (``book/_ext/static_book.py``)."""

from __future__ import annotations

import logging
import sys

from tests.mpirun import ROOT

sys.path.insert(0, str(ROOT / "book" / "_ext"))
import static_book  # noqa: E402


def _passes(logger: str, level: int, msg: str, *args) -> bool:
    record = logging.LogRecord(logger, level, __file__, 1, msg, args, None)
    return all(f.filter(record) for f in logging.getLogger(logger).filters)


def test_the_configuration_dumps_are_filtered_and_warnings_kept():
    class App:   # what static_book.setup uses of Sphinx
        def connect(self, *args, **kwargs):
            pass

        def add_css_file(self, *args):
            pass

    static_book.setup(App())
    parser, nb = static_book.CONFIG_DUMP_LOGGERS
    assert not _passes(parser, logging.INFO, "\x1b[01mmyst v%s:\x1b[39;49;00m %s", "3.0.1", "MdParserConfig(...)")
    assert not _passes(nb, logging.INFO, "\x1b[01mmyst-nb v%s:\x1b[39;49;00m %s", "1.4.0", "NbParserConfig(...)")
    assert _passes(nb, logging.INFO, "Using jupyter-cache at: %s", "/tmp")
    assert _passes(parser, logging.WARNING, "myst v%s: %s", "3.0.1", "a warning with the same words")
