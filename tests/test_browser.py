"""The built book in a real browser: every page loads from localhost alone, cleanly.

The book is the ``book_html`` fixture of ``tests/conftest.py``: built once per run from the
working tree into a temporary directory with the flags of ``make book`` (-W -n --keep-going),
so the test sees the current sources and never a stale ``_build/``; set
``BOOK_HTML=path/to/html`` to test an existing build instead (the deployment workflow tests
the very site it uploads).  The site is served on 127.0.0.1 by
a thread of this process and loaded in headless Chromium (``tests/cdp.py``).  A page
fails on: a JavaScript error or console error, a request to any host but localhost, an
HTTP error or failed request, an image that does not load, an internal link to a missing
page or anchor, math left unrendered, an interactive figure that did not draw.  On one
interactive figure a slider is dragged with the mouse and the drawn curve must change.

The pages with figures are also opened from disk (file://, no server at all).

Without Chromium the test is skipped on a developer's machine and fails under CI=true
(``.ci/run`` installs Debian's ``chromium``).
"""

from __future__ import annotations

import functools
import os
import threading
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from tests.cdp import Browser, find_chromium

LOCAL_HOSTS = {"127.0.0.1", "localhost"}


# -- fixtures ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def chromium() -> str:
    exe = find_chromium()
    if exe is None:
        msg = "chromium not found (apt-get install chromium, or set CHROMIUM)"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(msg + ": the browser test is required in CI")
        pytest.skip(msg)
    return exe


@pytest.fixture(scope="module")
def site(book_html) -> Path:
    """The built book (``tests/conftest.py``: built once per run, or ``BOOK_HTML``)."""
    return book_html


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(site):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(10)


@pytest.fixture(scope="module")
def browser(chromium, tmp_path_factory):
    with Browser(chromium, tmp_path_factory.mktemp("chromium-profile")) as b:
        yield b


# -- helpers -----------------------------------------------------------------------------
def pages(site: Path) -> list[str]:
    """Every HTML page of the site, relative, except copied sources and static files."""
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                  if p.relative_to(site).parts[0] not in ("_static", "_sources", "_images"))


class _Ids(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if k == "id" or (k == "name" and tag == "a"):
                self.ids.add(v or "")


@functools.lru_cache(maxsize=None)
def anchors(path: Path) -> frozenset:
    parser = _Ids()
    parser.feed(path.read_text(encoding="utf-8", errors="replace"))
    return frozenset(parser.ids)


def network_problems(events: list[dict]) -> list[str]:
    """Requests leaving localhost, HTTP errors, failed loads, console and JS errors."""
    urls, found = {}, []
    for e in events:
        m, p = e["method"], e["params"]
        if m == "Network.requestWillBeSent":
            url = p["request"]["url"]
            urls[p["requestId"]] = url
            parts = urlsplit(url)
            if parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in LOCAL_HOSTS:
                found.append(f"request leaves localhost: {url}")
        elif m == "Network.responseReceived" and p["response"]["status"] >= 400:
            found.append(f"HTTP {p['response']['status']}: {p['response']['url']}")
        elif m == "Network.loadingFailed" and not p.get("canceled"):
            found.append(f"failed to load ({p.get('errorText')}): {urls.get(p['requestId'], '?')}")
        elif m == "Runtime.consoleAPICalled" and p["type"] in ("error", "assert"):
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            found.append(f"console.{p['type']}: {text}")
        elif m == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            found.append(f"JavaScript exception: {d.get('exception', {}).get('description') or d.get('text')}")
        elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
            found.append(f"browser error: {p['entry']['text']} {p['entry'].get('url', '')}")
    return found


IMAGES_JS = """(async () => {
  const imgs = Array.from(document.images);
  imgs.forEach(i => { i.loading = 'eager'; });
  await Promise.all(imgs.map(i => i.complete ? null : new Promise(r => {
    i.addEventListener('load', r); i.addEventListener('error', r); setTimeout(r, 5000); })));
  return imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.currentSrc || i.src);
})()"""

MATH_JS = """(async () => {
  const math = document.querySelectorAll('.math, span.math, div.math').length;
  if (!math) return {math: 0, rendered: 0};
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  return {math, rendered: document.querySelectorAll('mjx-container').length,
          errors: document.querySelectorAll('mjx-merror').length};
})()"""

FIGURES_JS = """Array.from(document.querySelectorAll('div.nm-interactive')).map(d => ({
  id: d.id, mounted: d.hasAttribute('data-nm-mounted'),
  svg: !!d.querySelector('.main-svg'), sliders: d.querySelectorAll('input.nm-slider').length}))"""


def link_problems(browser: Browser, site: Path, origin: str) -> list[str]:
    found = []
    hrefs = browser.evaluate("Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
    for href in sorted(set(hrefs)):
        parts = urlsplit(href)
        if parts.scheme not in ("http", "https") or f"{parts.scheme}://{parts.netloc}" != origin:
            continue
        path = site / unquote(parts.path).lstrip("/")
        if path.is_dir():
            path = path / "index.html"
        if not path.is_file():
            found.append(f"broken link: {href}")
        elif parts.fragment and path.suffix == ".html" and unquote(parts.fragment) not in anchors(path):
            found.append(f"missing anchor: {href}")
    return found


# -- tests -------------------------------------------------------------------------------
#: the browser's window (tests/cdp.py: --window-size), and a phone's width: the widths at which
#: nothing may be cut (:func:`test_nothing_is_cut_at_the_box_edge`)
WINDOW, PHONE = 1280, 400


def offline_problems(browser: Browser, site: Path, server: str, page: str) -> tuple[list[str], bool, int]:
    """Load ``page`` from ``server``: (what is wrong with it offline, whether it has math, its
    interactive figures)."""
    events = browser.load(f"{server}/{page}")
    found = network_problems(events)
    found += [f"image did not load: {src}" for src in browser.evaluate(IMAGES_JS, await_promise=True)]
    found += link_problems(browser, site, server)
    math = browser.evaluate(MATH_JS, await_promise=True)
    if math["math"] and (not math["rendered"] or math["errors"]):
        found.append(f"math not rendered by MathJax: {math}")
    if browser.evaluate("document.querySelectorAll('script[type*=\"jupyter.widget\"]').length"):
        found.append("ipywidgets view or state left in the page (no widget manager is served)")
    figures = browser.evaluate(FIGURES_JS)
    found += [f"interactive figure not drawn: {fig}" for fig in figures
              if not (fig["mounted"] and fig["svg"] and fig["sliders"])]
    found += network_problems(browser.events[len(events):])   # anything logged meanwhile
    return found, bool(math["math"]), len(figures)


@pytest.fixture(scope="module")
def every_page(site, server, browser) -> dict:
    """Every page loaded once in the browser's window (:data:`WINDOW` wide): page -> (its offline
    problems, whether it has math, its interactive figures, :data:`CUT_JS`'s answer, asked after
    the offline checks because it opens folded code).  Two tests read it: the offline checks
    and the box edges at that width."""
    browser.call("Emulation.setDeviceMetricsOverride", width=WINDOW, height=900, deviceScaleFactor=1, mobile=False)
    try:
        return {page: (*offline_problems(browser, site, server, page), browser.evaluate(CUT_JS))
                for page in pages(site)}
    finally:
        browser.call("Emulation.clearDeviceMetricsOverride")


def test_every_page_works_offline(every_page):
    assert "index.html" in every_page and len(every_page) >= 3, sorted(every_page)
    report = {page: found for page, (found, _, _, _) in every_page.items() if found}
    assert not report, "\n".join(f"{page}:\n  " + "\n  ".join(v) for page, v in report.items())
    assert sum(math for _, math, _, _ in every_page.values()) >= 1, "no page has math: the MathJax check never ran"
    assert sum(n for _, _, n, _ in every_page.values()) >= 1, \
        "no page has an interactive figure (netmodels.figures.interactive)"


#: every code block, output, table and formula of the article, folded code opened, and those cut:
#: a code block or printed output (``pre``) wider than its box (they wrap), anything else wider
#: than its box that does not scroll, or a box running past the article outside a scrolling box
CUT_JS = """(() => {
  const art = document.querySelector('.bd-article');
  if (!art) return {checked: 0, cut: []};
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const right = art.getBoundingClientRect().right;
  const scrolls = el => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const cut = [];
  let checked = 0;
  for (const el of art.querySelectorAll('pre, div.cell_output, div.highlight, table, mjx-container[display="true"]')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    checked += 1;
    const wider = el.scrollWidth > el.clientWidth + 1;
    let held = false;                   // inside a box of the article that scrolls
    for (let a = el.parentElement; a && a !== art; a = a.parentElement)
      if (scrolls(a) && a.getBoundingClientRect().right <= right + 1) { held = true; break; }
    const why = el.tagName === 'PRE' && wider ? 'does not wrap'
      : wider && !scrolls(el) ? 'neither wraps nor scrolls'
      : r.right > right + 1 && !held ? `runs ${Math.round(r.right - right)} px past the article` : null;
    if (why)
      cut.push(`${el.tagName.toLowerCase()}.${el.className} ${why} (box ${Math.round(r.width)} px, content ` +
               `${el.scrollWidth} px): ` + (el.textContent || '').trim().slice(0, 60));
  }
  return {checked, cut};
})()"""


@pytest.mark.parametrize("width", [WINDOW, PHONE])
def test_nothing_is_cut_at_the_box_edge(site, server, browser, width, request):
    """A code block or printed output wraps inside its box, a table or a displayed formula
    scrolls inside its own (book/_ext/static/book.css): on every page, folded code opened, in a
    desktop window and a phone's width, nothing is cut.  At the window's width the pages are
    those :func:`every_page` loaded; at a phone's they are loaded here."""
    if width == WINDOW:
        found_at = {page: cut for page, (*_, cut) in request.getfixturevalue("every_page").items()}
    else:
        browser.call("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False)
        try:
            found_at = {}
            for page in pages(site):
                browser.load(f"{server}/{page}")
                found_at[page] = browser.evaluate(CUT_JS)
        finally:
            browser.call("Emulation.clearDeviceMetricsOverride")
    report = {page: found["cut"] for page, found in found_at.items() if found["cut"]}
    checked = sum(found["checked"] for found in found_at.values())
    assert not report, f"{sum(map(len, report.values()))} cut at {width} px:\n" + "\n".join(
        f"{page}:\n  " + "\n  ".join(v) for page, v in report.items())
    assert checked >= 100, f"only {checked} code blocks and outputs checked: the check did not run"


STATE_JS = """(() => {
  const root = document.querySelector('div.nm-interactive[data-nm-mounted]');
  const input = root.querySelector('input.nm-slider');
  input.scrollIntoView({block: 'center'});
  const r = input.getBoundingClientRect();
  // what is drawn: every line's path and every marker's position
  const drawn = Array.from(root.querySelectorAll('.scatterlayer path.js-line, .scatterlayer path.point'))
    .map(p => p.getAttribute('d') + '@' + (p.getAttribute('transform') || ''));
  return {id: root.id, value: input.value, max: input.max, frame: root.getAttribute('data-nm-frame'),
          label: input.parentNode.querySelector('output').textContent,
          d: drawn.length ? drawn.join('|') : null,
          x: r.left, y: r.top + r.height / 2, w: r.width};
})()"""


def test_dragging_a_slider_changes_the_figure(site, server, browser, tmp_path):
    with_figures = [p for p in pages(site) if 'class="nm-interactive"' in (site / p).read_text(encoding="utf-8")]
    assert with_figures, "no page has an interactive figure (netmodels.figures.interactive)"
    page = "book/alpha_beta.html" if "book/alpha_beta.html" in with_figures else with_figures[0]
    events = browser.load(f"{server}/{page}")
    before = browser.evaluate(STATE_JS)
    assert before["d"], f"the first figure of {page} draws nothing: {before}"
    # drag the thumb of the first slider from its position to the other end of the track
    frac = int(before["value"]) / int(before["max"])
    start = before["x"] + 8 + frac * (before["w"] - 16)
    end = before["x"] + (4 if frac > 0.5 else before["w"] - 4)
    browser.drag(start, before["y"], end)
    browser.pump(0.5)
    after = browser.evaluate(STATE_JS)
    if os.environ.get("BOOK_SCREENSHOTS"):
        browser.screenshot(Path(os.environ["BOOK_SCREENSHOTS"]) / "slider-after.png")
    assert after["value"] != before["value"], f"the slider did not move: {before} -> {after}"
    assert after["frame"] != before["frame"] and after["label"] != before["label"], (before, after)
    assert after["d"] != before["d"], "the slider moved but the drawn curve did not change"
    assert not network_problems(browser.events[len(events):])


def test_pages_with_figures_work_from_the_file_system(site, browser):
    """Opened from disk (file://, no server at all), math and figures still work."""
    with_figures = [p for p in pages(site) if 'class="nm-interactive"' in (site / p).read_text(encoding="utf-8")]
    assert with_figures, "no page has an interactive figure (netmodels.figures.interactive)"
    report = {}
    for page in with_figures:
        events = browser.load((site / page).as_uri())
        found = network_problems(events)
        math = browser.evaluate(MATH_JS, await_promise=True)
        if math["math"] and (not math["rendered"] or math["errors"]):
            found.append(f"math not rendered by MathJax: {math}")
        found += [f"interactive figure not drawn: {fig}" for fig in browser.evaluate(FIGURES_JS)
                  if not (fig["mounted"] and fig["svg"] and fig["sliders"])]
        if found:
            report[page] = found
    assert not report, "\n".join(f"{page}:\n  " + "\n  ".join(v) for page, v in report.items())


REPORT_JS = """(() => {
  const svgs = Array.from(document.querySelectorAll('figure svg')).map(s => s.getBoundingClientRect())
    .map(r => ({w: r.width, h: r.height}));
  return {svgs, tooltips: document.querySelectorAll('figure svg title').length,
          machines: document.querySelectorAll('table.machines tr:not(.notes)').length - 1,
          not_used: document.querySelectorAll('#not-used + div tr').length - 1,
          width: document.documentElement.scrollWidth, view: window.innerWidth};
})()"""


def test_class_report_opens_offline(browser, tmp_path):
    """The instructor's class report (labs/class_report.py) of a synthetic class, opened from disk:
    nothing requested, no error, every figure drawn with its tooltips, the bad hand-ins listed."""
    from tests.test_class_report import _module, make_course

    course = make_course(tmp_path)
    for lab in ("lab1", "lab3", "lab5"):
        assert _module().main(["--lab", lab, "--course", str(course), "--out", str(tmp_path / "out")]) == 0
        events = browser.load((tmp_path / "out" / f"{lab}.html").as_uri())
        found = network_problems(events)
        requested = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
        assert requested == [(tmp_path / "out" / f"{lab}.html").as_uri()], requested   # the page alone
        state = browser.evaluate(REPORT_JS)
        assert state["svgs"] and all(s["w"] > 300 and s["h"] > 100 for s in state["svgs"]), (lab, state)
        shown = 9 if lab != "lab5" else 10                      # machines drawn, each point a tooltip
        assert state["tooltips"] >= shown, (lab, state)
        assert state["machines"] >= 9 and state["not_used"] >= 2, (lab, state)
        assert state["width"] <= state["view"] + 1, f"{lab}: the page is wider than the window: {state}"
        found += network_problems(browser.events[len(events):])
        assert not found, f"{lab}: {found}"
        if os.environ.get("BOOK_SCREENSHOTS"):
            browser.screenshot(Path(os.environ["BOOK_SCREENSHOTS"]) / f"class-report-{lab}.png")
