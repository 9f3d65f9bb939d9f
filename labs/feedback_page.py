"""The HTML exporter of the feedback pages (``make feedback``), and the template filters it adds.

:class:`FeedbackExporter` is given to ``GenerateFeedback`` alone by ``nbgrader_config.py``:
nbgrader's other HTML exporters (the Formgrader's) keep their own templates.  Its template,
``templates/kit_feedback``, puts the page's Content Security Policy first in its head, shows the
student's HTML through ``page_safety.clean`` in boxes it cannot paint outside of, and the
grader's score above and below the notebook, out of their reach.
"""

from __future__ import annotations

import re

from nbconvert.exporters import HTMLExporter
from traitlets import Bool, default

from page_safety import clean, csp_meta, script_hash

#: the output types a feedback page shows (HTML and Markdown through ``page_safety.clean``)
SHOWN = ("text/html", "text/markdown", "image/svg+xml", "text/latex", "image/png", "image/jpeg", "text/plain")


def _base64(value) -> str:
    """Template filter: ``value`` if it is base64 text (an image's data), else ``""``."""
    text = "".join(value) if isinstance(value, list) else value
    return text if isinstance(text, str) and re.fullmatch(r"[A-Za-z0-9+/=\s]*", text) else ""


def _pixels(value) -> str:
    """Template filter: a width or height from an output's metadata, as a whole number of pixels
    (1 to 10000), else ``""``."""
    try:
        n = float(value)
    except (TypeError, ValueError):
        return ""
    return str(int(n)) if 1 <= n <= 10_000 else ""


#: a CSS font rule that loads a file (bootstrap's Glyphicons, which the pages do not use)
FONT_FILE_RULE = re.compile(r"@font-face\s*\{[^}]*url\(\s*['\"]?(?!data:)[^}]*\}")


def _without_font_files(css: str) -> str:
    """Template filter: ``css`` (or a page's head) without the font rules that load a file: under
    the page's policy Chromium would still try to load them, and report each refusal."""
    return FONT_FILE_RULE.sub("", css)


def _page_csp(scripts, *hashes) -> str:
    """Template filter: the ``<meta>`` of a page running the inline ``scripts`` (their texts as
    rendered) and the scripts named by ``hashes`` (CSP sources of scripts the page makes)."""
    return csp_meta([*(script_hash(s) for s in scripts), *(h for h in hashes if h)])


# ---------------------------------------------------------------- the feedback pages
class FeedbackExporter(HTMLExporter):
    """nbconvert's HTML exporter with the feedback pages' template (``templates/kit_feedback``,
    set in ``nbgrader_config.py``), the filters it uses (``kit_clean``: ``page_safety.clean``;
    ``kit_csp``: the page's policy; ``kit_base64``, ``kit_pixels``: an image's data and size;
    ``kit_without_font_files``),
    nbconvert's own sanitising on, and no JavaScript or widget output in the priority."""

    sanitize_html = Bool(True, help="always on for feedback pages").tag(config=True)
    exclude_anchor_links = Bool(True, help="no ids from a student's headings").tag(config=True)
    embed_images = Bool(False, help="never read a file a student's Markdown names").tag(config=True)

    @property
    def default_config(self):
        """nbconvert's, with only the output types a page shows (:data:`SHOWN`) in the priority: an
        output that also carries JavaScript or a widget is shown by its HTML, image or text."""
        c = super().default_config
        c.NbConvertBase.display_data_priority = [m for m in c.NbConvertBase.display_data_priority if m in SHOWN]
        return c

    @default("template_name")
    def _template_name_default(self):
        return "kit_feedback"

    def _init_resources(self, resources):
        if not self.sanitize_html or self.embed_images:
            raise ValueError("FeedbackExporter: sanitize_html must be True and embed_images False")
        return super()._init_resources(resources)

    def default_filters(self):
        yield from super().default_filters()
        yield ("kit_clean", clean)
        yield ("kit_csp", _page_csp)
        yield ("kit_base64", _base64)
        yield ("kit_pixels", _pixels)
        yield ("kit_without_font_files", _without_font_files)
