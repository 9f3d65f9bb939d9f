"""What the course's pages and spreadsheets let through of a student's work.

A hand-in is hostile: any text, name or output of it may be HTML, CSS, script or a spreadsheet
formula.  The course's pages (the feedback pages of ``make feedback``: ``feedback_page.py``; the
class report of ``class_report.py``) and its CSV files (``grades.csv``, the class report's)

- carry a Content Security Policy (:func:`content_security_policy`) that runs no script but the
  page's own, named by their SHA-256 (:func:`script_hash`), and loads nothing from anywhere
  (images only from ``data:`` URIs in the page itself);
- pass every piece of HTML a student wrote or made (Markdown cells, ``text/html`` and
  ``text/markdown`` outputs) through an allow-list (:func:`clean`): text structure, tables,
  links to the web and ``data:`` images; no script, style, class, id, form or frame;
- write every text a student brought into a CSV cell so that no spreadsheet reads it as a
  formula (:func:`spreadsheet_text`), numbers left numbers.

Light on purpose (no nbconvert import): the class report uses it too.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable

#: the elements a student's HTML may keep (anything else is shown as text)
TAGS = frozenset((
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd", "del", "details",
    "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img",
    "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub", "summary",
    "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var",
))
#: the attributes they may keep, per element (no style, class, id, name or event handler anywhere)
ATTRIBUTES = {"a": {"href", "title"}, "abbr": {"title"}, "img": {"src", "alt", "title", "width", "height"},
              "td": {"colspan", "rowspan"}, "th": {"colspan", "rowspan", "scope"}, "ol": {"start"},
              "col": {"span"}, "colgroup": {"span"}}
#: images a student's HTML may show: inside the page, as the feedback pages' own figures are
DATA_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=\s]*\Z", re.I)
LINK = re.compile(r"(https?:|mailto:|#)", re.I)


def _attribute(tag: str, name: str, value: str) -> bool:
    if name not in ATTRIBUTES.get(tag, ()):
        return False
    if tag == "a" and name == "href":
        return bool(LINK.match(value.strip()))
    if tag == "img" and name == "src":
        return bool(DATA_IMAGE.match(value.strip()))
    return True


def clean(text) -> str:
    """``text`` (HTML written or made by a student) with only :data:`TAGS` and :data:`ATTRIBUTES`
    kept: other elements are escaped (shown as text), other attributes and comments dropped."""
    import bleach

    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    return bleach.Cleaner(tags=TAGS, attributes=_attribute, protocols={"http", "https", "mailto", "data"},
                          strip=False, strip_comments=True).clean(text)


# ---------------------------------------------------------------- the policy of every page
def script_hash(code: str | bytes) -> str:
    """The CSP source naming one inline script by its text: ``'sha256-<base64>'``."""
    data = code.encode("utf-8") if isinstance(code, str) else code
    if not isinstance(data, bytes):
        raise ValueError(f"code must be str or bytes, got {type(code).__name__}")
    return f"'sha256-{base64.b64encode(hashlib.sha256(data).digest()).decode('ascii')}'"


def content_security_policy(scripts: Iterable[str] = ()) -> str:
    """The Content Security Policy of a course page whose only scripts are ``scripts`` (CSP hash
    sources, :func:`script_hash`): no other script, nothing loaded from outside the page (images
    from ``data:`` URIs only), inline styles allowed (the pages' own and their SVG figures'),
    no plugin, frame, form target or base URL."""
    scripts = list(scripts)
    bad = [s for s in scripts if not re.fullmatch(r"'sha256-[A-Za-z0-9+/]{43}='", s)]
    if bad:
        raise ValueError(f"scripts must be CSP sha256 sources ('sha256-...'), got {bad[:1]}")
    return ("default-src 'none'; script-src " + (" ".join(scripts) or "'none'")
            + "; style-src 'unsafe-inline'; img-src data:; object-src 'none'; frame-src 'none'; "
              "worker-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'")


def csp_meta(scripts: Iterable[str] = ()) -> str:
    """The ``<meta>`` element of :func:`content_security_policy` (first in a page's head)."""
    return f'<meta http-equiv="Content-Security-Policy" content="{content_security_policy(scripts)}">'


# ---------------------------------------------------------------- spreadsheets
#: what makes a spreadsheet read a cell as a formula (or, tab and carriage return, start one)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(text: str) -> str:
    """A text cell for a CSV file: prefixed by ``'`` if it begins as a formula does
    (:data:`FORMULA_START`), so that a spreadsheet shows it as text.  For texts only (ids, names,
    statuses): numbers are written as numbers, negative ones included."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str (numbers stay numbers), got {type(text).__name__}")
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_cell(value):
    """A value for :mod:`csv`: a ``str`` through :func:`spreadsheet_text`, anything else (numbers,
    booleans, None) unchanged."""
    return spreadsheet_text(value) if isinstance(value, str) else value
