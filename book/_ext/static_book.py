"""The built book works without a kernel and without the network.

A local Sphinx extension (``_config.yml``: ``sphinx.local_extensions``) that

- serves Plotly and the script of the interactive figures (``netmodels/figures/interactive.py``)
  from the site: ``_static/plotly.min.js`` is copied from the installed ``plotly``
  package and both are loaded (``defer``) only on pages that contain such a figure;
- serves MathJax 3 from the site: ``mathjax_path`` points to ``_static/mathjax/``, filled
  from the ``django-static-mathjax`` wheel (MathJax 3.2.2; only the files the CHTML
  renderer, its fonts, TeX extensions, the menu and English accessibility need);
- keeps the site small: the theme's JavaScript/CSS source maps are not published;
- does not emit ipywidgets views: the static book has no kernel to drive them and
  their JavaScript manager would come from a CDN (``nb_ipywidgets_js: {}`` in
  ``_config.yml``).  A widget view becomes a one-line note that points to the figure
  below it: every live panel of a chapter is followed by its static twin, both made from
  the figure's one spec (``netmodels.figures.panel``, ``netmodels.figures.interactive``);
- removes what would reach the network or break a page: Thebe's configuration and
  loader (no launch buttons; its library is on a CDN; sphinx-thebe 0.3 declares it twice,
  a JavaScript error on every page);
- fixes small theme glitches the browser test found: a console error on a first visit
  (no default colour mode), a second search field in an empty header bar, and a bare
  ``index.html`` redirect without a favicon (the browser then asks for /favicon.ico);
- writes ``.nojekyll`` so GitHub Pages publishes ``_static/`` as it is;
- keeps the build's log readable: the two lines in which myst-parser and myst-nb print their
  whole configuration (about 800 characters each, information only) are dropped, every other
  message, every warning included, is printed.

``tests/test_browser.py`` checks all of this in headless Chromium.
"""

from __future__ import annotations

import html
import logging as pylogging
import re
import shutil
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

import offline_mathjax  # noqa: E402  (book/_ext is on the path: local_extensions)

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
WIDGET_VIEW = '<script type="application/vnd.jupyter.widget-view+json">'
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
LIVE_NOTE = ("Live panel: it recomputes the model as you move its sliders, so it needs a running "
             "Python kernel. Open this notebook in JupyterLab to use it; in this book, use the "
             "interactive figure below.")



def plotly_js() -> Path:
    import plotly

    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise FileNotFoundError(f"plotly.min.js not found in the plotly package at {path}")
    return path


def replace_widget_views(app: Sphinx, doctree: nodes.document) -> None:
    """Turn ipywidgets view outputs into a short note (no widget manager in the static book)."""
    for raw in list(doctree.findall(nodes.raw)):
        if raw.get("format") == "html" and raw.astext().lstrip().startswith(WIDGET_VIEW):
            raw.replace_self(nodes.paragraph(LIVE_NOTE, LIVE_NOTE, classes=["nm-live-only"]))


def _unwanted(asset) -> bool:
    """The ipywidgets state (no manager reads it) and Thebe: the book has no launch
    buttons, Thebe would load from a CDN, and sphinx-thebe 0.3 declares its
    configuration twice on every page (a JavaScript SyntaxError)."""
    attrs = getattr(asset, "attributes", {}) or {}
    name = str(getattr(asset, "filename", "") or "")
    return (attrs.get("type") == WIDGET_STATE or "THEBE_JS_URL" in str(attrs.get("body", ""))
            or name.endswith(("sphinx-thebe.js", "sphinx-thebe.css")))


def page_assets(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Load Plotly and the figure script where a figure is; drop unwanted assets."""
    for key in ("script_files", "css_files"):
        if context.get(key) is not None:
            context[key][:] = [a for a in context[key] if not _unwanted(a)]
    if 'class="nm-interactive"' in context.get("body", ""):
        app.add_js_file("plotly.min.js", loading_method="defer")
        app.add_js_file("nm-interactive.js", loading_method="defer")
        app.add_css_file("nm-interactive.css")


REDIRECT = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{title}</title>
<meta http-equiv="Refresh" content="0; url={url}">
{icon}</head>
<body><p><a href="{url}">{title}</a></p></body></html>
"""


def complete_redirect(app: Sphinx) -> None:
    """sphinx-external-toc writes index.html as a bare meta refresh: make it a page with
    a title, a link and the favicon (else the browser asks for a missing /favicon.ico)."""
    index = Path(app.outdir) / "index.html"
    if not index.is_file():
        return
    text = index.read_text(encoding="utf-8")
    m = re.fullmatch(r'<meta http-equiv="Refresh" content="0; url=([^"]+)" />\s*', text)
    if not m:
        return
    icon = ""
    if app.config.html_favicon:
        icon = f'<link rel="icon" href="_static/{Path(app.config.html_favicon).name}">\n'
    title = html.escape(app.config.html_title or app.config.project or "")
    index.write_text(REDIRECT.format(title=title, url=html.escape(m.group(1)), icon=icon), encoding="utf-8")


def copy_assets(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    complete_redirect(app)
    (Path(app.outdir) / ".nojekyll").touch()      # GitHub Pages: publish _static/ as it is
    static = Path(app.outdir) / "_static"
    static.mkdir(parents=True, exist_ok=True)
    for sourcemap in static.rglob("*.map"):      # the theme's source maps (3 MB): for debugging only
        sourcemap.unlink()
    shutil.copy2(plotly_js(), static / "plotly.min.js")
    if str(app.config.mathjax_path).startswith("mathjax/"):
        offline_mathjax.copy(static / "mathjax")
        target = static / app.config.mathjax_path
        if not target.is_file():
            logger.warning("mathjax_path %s is not among the copied MathJax files", app.config.mathjax_path)


def check_config(app: Sphinx, config) -> None:
    # pydata-sphinx-theme logs a console error on a first visit without a default mode
    config.html_context.setdefault("default_mode", "auto")
    # pydata-sphinx-theme 0.17 adds a search field to a header bar that sphinx-book-theme
    # keeps empty: a second search field above the sidebar's own
    config.html_theme_options.setdefault("navbar_persistent", [])
    if getattr(config, "nb_ipywidgets_js", None):
        logger.warning("nb_ipywidgets_js loads the widget manager from a CDN: set it to {} "
                       "(the static book replaces widget views by a note)")
    if str(config.mathjax_path).startswith(("http:", "https:", "//")):
        logger.warning("mathjax_path points to a CDN; use mathjax/tex-mml-chtml.js (served by the site)")


class _NoConfigDump(pylogging.Filter):
    """Drops the INFO records "myst v...: MdParserConfig(...)" and "myst-nb v...: NbParserConfig(...)"."""

    def filter(self, record: pylogging.LogRecord) -> bool:
        return not (record.levelno == pylogging.INFO and isinstance(record.msg, str)
                    and re.search(r"myst(-nb)? v%s:", record.msg) is not None)


#: the loggers of the two configuration dumps (sphinx.util.logging prefixes "sphinx.")
CONFIG_DUMP_LOGGERS = ("sphinx.myst_parser.sphinx_ext.main", "sphinx.myst_nb.sphinx_ext")


def setup(app: Sphinx) -> dict:
    for name in CONFIG_DUMP_LOGGERS:
        pylogging.getLogger(name).addFilter(_NoConfigDump())
    app.connect("config-inited", check_config)
    app.connect("builder-inited", lambda app: app.config.html_static_path.append(str(STATIC)))
    app.add_css_file("book.css")
    app.connect("doctree-read", replace_widget_views)
    app.connect("html-page-context", page_assets, priority=600)
    app.connect("build-finished", copy_assets, priority=900)   # after the index.html redirect
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
