"""Tests for kmt_ref/book_html.py: what the book's pages hold beyond nbconvert's rendering.

Without a browser: the outputs a static page cannot show are left off (no empty ``Out[N]:`` prompt, the
widget note said once), the "On this page" list of a long page, and the README's "Start here" figures on
the index. With headless Chromium at a phone's width (390 px; skipped without it, as in test_book.py): wide
display math scrolls in its own box with a scrollbar that takes room (visible) instead of being clipped,
the index's figure is drawn within the screen, a notebook's output figures keep their stored size in a
box that scrolls sideways, and the real notebooks 01-03, which store ipywidgets
sliders, show no empty output prompt.
"""
import json
import time
from pathlib import Path

import nbformat
import pytest
from bs4 import BeautifulSoup
from test_book import ROOT, browser, tiny_repo  # noqa: F401  (browser: test_book's Chromium fixture)

from kmt_ref.book import build_book
from kmt_ref.book_html import CONTENTS_MIN_HEADINGS, WIDGET_NOTE, WIDGET_VIEW, add_contents, static_outputs

PNG = (ROOT / "figures" / "fig1_validation.png").read_bytes()
SLIDER = {WIDGET_VIEW: {"model_id": "ab12", "version_major": 2, "version_minor": 0},
          "text/plain": "interactive(children=(SelectionSlider(description='gamma'),))"}


def _out(kind, **data):
    if kind == "stream":
        return nbformat.v4.new_output("stream", name="stdout", text=data["text"])
    if kind == "error":
        return nbformat.v4.new_output("error", ename="ValueError", evalue="x", traceback=["ValueError: x"])
    return nbformat.v4.new_output(kind, data=data, **({"execution_count": 3} if kind == "execute_result" else {}))


def slider_notebook():
    """Cells as the notebooks store them: a figure then a slider; a slider alone (with and without a
    markdown cell saying it moves in a running notebook); blank outputs; an error."""
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    figure = _out("display_data", **{"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})
    cells = [md("# 01 — A\n\nSliders.\n\n$$x^2$$"),
             code("small_multiples(); parameter_sliders()", execution_count=3,
                  outputs=[figure, _out("execute_result", **SLIDER)]),
             md("The slider below."),
             code("parameter_sliders()", execution_count=4, outputs=[_out("execute_result", **SLIDER)]),
             md("Behind a slider (it moves in a running notebook)."),
             code("parameter_sliders()", execution_count=5, outputs=[_out("execute_result", **SLIDER)]),
             code("print('')", execution_count=6, outputs=[_out("stream", text="\n"),
                                                            _out("execute_result", **{"text/plain": " "}),
                                                            _out("display_data")]),
             code("1/0", execution_count=7, outputs=[_out("error")]),
             code("x", execution_count=8, outputs=[_out("execute_result", **{"text/plain": "False"})])]
    state = {"state": {"ab12": {"model_name": "VBoxModel", "state": {}}}, "version_major": 2, "version_minor": 0}
    return nbformat.v4.new_notebook(cells=cells, metadata={"widgets": {WIDGET_VIEW.replace("view", "state"): state}})


def test_static_outputs_leave_off_what_a_page_cannot_show():
    nb = slider_notebook()
    assert static_outputs(nb) == 6
    outputs = [c.outputs for c in nb.cells if c.cell_type == "code"]
    assert [o.output_type for o in outputs[0]] == ["display_data"] and "image/png" in outputs[0][0].data
    assert [o.data for o in outputs[1]] == [{"text/markdown": WIDGET_NOTE}]  # the slider alone: the note
    assert outputs[2] == []  # the markdown before says it already: said once
    assert outputs[3] == []  # blank text, no data
    assert [o.output_type for o in outputs[4]] == ["error"]
    assert outputs[5][0].data == {"text/plain": "False"}
    assert static_outputs(nb) == 0  # a second pass leaves everything (the note is shown)


def empty_prompts(page):
    """The ``Out[N]:`` prompts of a page whose output shows nothing: no text outside scripts, no image."""
    soup = BeautifulSoup(page, features="html.parser")
    empty = []
    for child in soup.select(".jp-OutputArea-child"):
        prompt = child.select_one(".jp-OutputPrompt")
        if prompt is None or not prompt.get_text(strip=True):
            continue
        body = child.select_one(".jp-OutputArea-output")
        for tag in body.find_all(("script", "style")) if body is not None else []:
            tag.decompose()
        if body is None or not (body.get_text(strip=True) or body.find(("img", "svg", "iframe", "video"))):
            empty.append(prompt.get_text(strip=True))
    return empty


def _write(repo, nb):
    nbformat.write(nb, repo / "notebooks" / "01_a.ipynb")


@pytest.fixture
def slider_site(tmp_path):
    repo = tiny_repo(tmp_path / "repo")
    _write(repo, slider_notebook())
    (repo / "docs" / "LONG.md").write_text(
        "# Long\n\n" + "".join(f"## Part {i}\n\ntext\n\n### Part {i}, detail\n\nmore\n\n" for i in range(3)),
        encoding="utf-8")
    (repo / "docs" / "SHORT.md").write_text("# Short\n\n## One\n\n## Two\n", encoding="utf-8")
    build_book(tmp_path / "site", root=repo)
    return tmp_path / "site"


def test_no_empty_output_prompt(slider_site):
    page = (slider_site / "notebooks" / "01_a.html").read_text(encoding="utf-8")
    assert empty_prompts(page) == []
    assert WIDGET_VIEW not in page and "SelectionSlider" not in page
    assert page.count("need a running kernel") == 1  # only the slider with nothing said before it
    assert "Out[8]" in page and "ValueError" in page  # a real result and an error stay


@pytest.mark.filterwarnings("ignore:Your element with mimetype")  # the blank display_data, kept here
def test_empty_prompts_finds_the_widget_prompt(tmp_path, monkeypatch):
    """The check above can fail: without static_outputs, nbconvert leaves an empty Out[N]: for each stored
    widget (its view is a script for a widget manager the offline page does not load) and blank output."""
    import kmt_ref.book

    monkeypatch.setattr(kmt_ref.book, "static_outputs", lambda nb: 0)
    repo = tiny_repo(tmp_path / "repo")
    _write(repo, slider_notebook())
    build_book(tmp_path / "site", root=repo)
    page = (tmp_path / "site" / "notebooks" / "01_a.html").read_text(encoding="utf-8")
    assert WIDGET_VIEW in page
    assert empty_prompts(page) == ["Out[3]:", "Out[4]:", "Out[5]:", "Out[6]:"]


def test_long_pages_open_with_their_contents(slider_site):
    long = BeautifulSoup((slider_site / "docs" / "LONG.html").read_text(encoding="utf-8"), features="html.parser")
    box = long.select_one("details.book-contents")
    assert box is not None and box.find_previous("h1").get_text(strip=True).startswith("Long")
    assert not box.has_attr("open") and box.summary.get_text() == "On this page"
    top = box.find("ul").find_all("li", recursive=False)
    assert [li.a.get_text() for li in top] == ["Part 0", "Part 1", "Part 2"]
    assert [a.get_text() for a in top[1].find("ul").find_all("a")] == ["Part 1, detail"]
    ids = {h["id"] for h in long.find_all(("h2", "h3"))}
    assert [a["href"][1:] for a in box.find_all("a")] == [h["id"] for h in long.find_all(("h2", "h3"))]
    assert len(ids) == 6 >= CONTENTS_MIN_HEADINGS
    short = (slider_site / "docs" / "SHORT.html").read_text(encoding="utf-8")
    assert "book-contents" not in short  # 2 headings: fewer than CONTENTS_MIN_HEADINGS


def test_contents_of_a_notebook_page_use_its_anchors():
    soup = BeautifulSoup('<main><h1 id="T">T<a class="anchor-link" href="#T">¶</a></h1>' + "".join(
        f'<h2 id="{i}.-The-$x$-(a)">{i}. The $x$ (a)<a class="anchor-link" href="#{i}.-The-$x$-(a)">¶</a></h2>'
        for i in range(4)) + "</main>", features="html.parser")
    assert add_contents(soup) == 4
    links = soup.select("details.book-contents a")
    assert [a["href"] for a in links] == [f"#{i}.-The-$x$-(a)" for i in range(4)]
    assert links[0].get_text() == "0. The $x$ (a)"  # no pilcrow; the math is typeset by MathJax in place
    assert add_contents(BeautifulSoup("<main><h2 id='a'>a</h2></main>", features="html.parser")) == 0


def test_start_here_figure_is_on_the_index(tmp_path):
    repo = tiny_repo(tmp_path / "repo", extra_link="\n![The circuit](figures/fig0_circuit.png)\n")
    (repo / "figures" / "fig0_circuit.png").write_bytes(PNG)
    build_book(tmp_path / "site", root=repo)
    index = BeautifulSoup((tmp_path / "site" / "index.html").read_text(encoding="utf-8"), features="html.parser")
    assert [img["src"] for img in index.find_all("img")] == ["figures/fig0_circuit.png"]
    assert (tmp_path / "site" / "figures" / "fig0_circuit.png").read_bytes() == PNG
    assert json.loads((tmp_path / "site" / ".kmt_ref_book").read_text())["files"].count("figures/fig0_circuit.png") == 1


# --------------------------------------------------------------------------
# In a browser, at a phone's width
# --------------------------------------------------------------------------
def at_width(browser, path, width, expression, mobile=True):
    """Open ``path`` in a ``width``-pixel-wide screen (a phone's, or a desktop window if not ``mobile``), wait
    for MathJax, return ``expression``'s value."""
    target = browser.send("Target.createTarget", url="about:blank")["targetId"]
    session = browser.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    try:
        browser.send("Page.enable", session)
        browser.send("Emulation.setDeviceMetricsOverride", session, width=width, height=900, deviceScaleFactor=1,
                     mobile=mobile)
        browser.events = []
        browser.send("Page.navigate", session, url=Path(path).as_uri())
        browser.wait_for("Page.loadEventFired", session)
        browser.evaluate(session, "new Promise(d => MathJax.Hub.Queue(() => d(1)))")
        return browser.evaluate(session, expression)
    finally:
        browser.send("Target.closeTarget", targetId=target)


#: each display formula: its width, the width it may show, its overflow, the room its scrollbar takes, its
#: edge shadows (a phone's overlay scrollbar fades: the shadow stays)
DISPLAYS = """Array.from(document.querySelectorAll(".MathJax_Display")).map(d => ({
  scroll: d.scrollWidth, client: d.clientWidth, overflow: getComputedStyle(d).overflowX,
  bar: d.offsetHeight - d.clientHeight, right: d.getBoundingClientRect().right, screen: innerWidth,
  shadow: (getComputedStyle(d).backgroundImage.match(/radial-gradient/g) || []).length === 2}))"""


def clipped(displays, mobile=True):
    """The display formulas wider than their box that do not scroll in a box within the screen that shows it
    can: by its edge shadows on a phone, by a scrollbar that takes room in a desktop window."""
    return [d for d in displays if d["scroll"] > d["client"] + 1 and not (
        d["overflow"] in ("auto", "scroll") and d["right"] <= d["screen"]
        and (d["shadow"] if mobile else d["bar"] >= 4))]


@pytest.mark.slow
def test_wide_math_scrolls_on_a_phone(browser, tmp_path):
    repo = tiny_repo(tmp_path / "repo")
    wide = " + ".join(f"A(\\bar X, \\bar C; Q_{i}, K_{i}, V_{i})" for i in range(1, 6))
    cell = nbformat.v4.new_markdown_cell(f"# 01 — A\n\n$$x = {wide}$$\n\n$$y$$")
    _write(repo, nbformat.v4.new_notebook(cells=[cell]))
    build_book(tmp_path / "site", root=repo)
    for mobile in (True, False):
        displays = at_width(browser, tmp_path / "site" / "notebooks" / "01_a.html", 390, DISPLAYS, mobile)
        assert len(displays) == 2 and displays[0]["scroll"] > displays[0]["client"] + 100  # too wide for 390 px
        assert clipped(displays, mobile) == [], displays
        assert displays[1]["bar"] == 0  # a formula that fits gets no scrollbar


@pytest.fixture(scope="module")
def real_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("book") / "site"
    start = time.perf_counter()
    build_book(out, root=ROOT)
    print(f"book built in {time.perf_counter() - start:.1f} s")
    return out


@pytest.mark.slow
def test_notebook_01_math_scrolls_on_a_phone(browser, real_site):
    page = next((real_site / "notebooks").glob("01_*.html"))
    displays = at_width(browser, page, 390, DISPLAYS)
    assert any(d["scroll"] > d["client"] + 1 for d in displays), "no formula wider than a phone: nothing tested"
    assert clipped(displays) == [], clipped(displays)


@pytest.mark.slow
@pytest.mark.parametrize("n", ["01", "02", "03"])
def test_the_slider_notebooks_show_no_empty_prompt(real_site, n):
    source = next((ROOT / "notebooks").glob(f"{n}_*.ipynb"))
    assert WIDGET_VIEW in source.read_text(encoding="utf-8"), f"{source.name} stores no slider: nothing tested"
    page = (real_site / "notebooks" / (source.stem + ".html")).read_text(encoding="utf-8")
    assert empty_prompts(page) == []
    assert "need a running kernel" not in page  # the notebooks say beside each slider that it moves in a kernel


@pytest.mark.slow
def test_the_index_shows_its_figures_within_a_phone(browser, tmp_path):
    repo = tiny_repo(tmp_path / "repo", extra_link="\n![The circuit](figures/fig0_circuit.png)\n")
    (repo / "figures" / "fig0_circuit.png").write_bytes(PNG)
    build_book(tmp_path / "site", root=repo)
    images = at_width(browser, tmp_path / "site" / "index.html", 390, """Array.from(document.images).map(i => ({
      ok: i.complete && i.naturalWidth > 0, right: i.getBoundingClientRect().right, screen: innerWidth,
      natural: i.naturalWidth}))""")
    assert len(images) == 1 and images[0]["ok"] and images[0]["natural"] > 390
    assert images[0]["right"] <= images[0]["screen"]


#: each output figure of a page: its drawn and stored widths, and its output box's overflow and right edge
OUTPUT_IMAGES = """Array.from(document.querySelectorAll(".jp-OutputArea-output img")).map(i => {
  const box = i.closest(".jp-OutputArea-output");
  return {ok: i.complete && i.naturalWidth > 0, width: i.getBoundingClientRect().width, natural: i.naturalWidth,
          overflow: getComputedStyle(box).overflowX, right: box.getBoundingClientRect().right, screen: innerWidth};
})"""


@pytest.mark.slow
def test_notebook_figures_keep_their_size_and_scroll_on_a_phone(browser, real_site):
    page = next((real_site / "notebooks").glob("01_*.html"))
    images = at_width(browser, page, 390, OUTPUT_IMAGES)
    wide = [i for i in images if i["natural"] > 390]
    assert wide and all(i["ok"] for i in images), "no figure wider than a phone: nothing tested"
    assert all(abs(i["width"] - i["natural"]) <= 1 for i in wide), wide    # not shrunk to a few-pixel text
    assert all(i["overflow"] in ("auto", "scroll") and i["right"] <= i["screen"] + 1 for i in wide), wide
    desk = at_width(browser, page, 1280, OUTPUT_IMAGES, mobile=False)
    assert all(i["width"] <= i["natural"] + 1 for i in desk)


@pytest.mark.slow
def test_the_list_of_pages_is_folded_on_a_phone(browser, slider_site):
    nav = """(() => { const n = document.querySelector("nav.book-nav"), d = n.querySelector("details.book-menu");
      return {height: n.getBoundingClientRect().height, open: d.open,
              summary: getComputedStyle(d.querySelector("summary")).display}; })()"""
    page = slider_site / "docs" / "LONG.html"
    phone = at_width(browser, page, 390, nav)
    assert phone["open"] is False and phone["summary"] != "none" and phone["height"] < 120, phone
    desk = at_width(browser, page, 1280, nav, mobile=False)
    assert desk["open"] is True and desk["summary"] == "none", desk
