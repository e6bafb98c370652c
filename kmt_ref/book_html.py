"""What the book's pages hold beyond nbconvert's rendering (used by :mod:`kmt_ref.book`).

- :func:`static_outputs`: a stored output a static page cannot show is left off its page, so that no
  empty ``Out[N]:`` prompt stands on it. That is an ipywidgets view (what is stored is a reference to a
  widget model, which only a running kernel draws; its ``text/plain`` is the widget's repr) and an output
  with nothing in it (blank text, no data). A code cell left with no output once its widgets are gone gets
  one italic line, :data:`WIDGET_NOTE`, unless the markdown cell just before it already says that it
  moves in a running notebook or kernel (open).
- :func:`add_contents`: a page with at least :data:`CONTENTS_MIN_HEADINGS` headings of level 2 and 3
  opens, below its title, with a list of them ("On this page", collapsed: one tap opens it), linked by the anchors the
  headings already carry (open).
- :data:`CSS`: the site's own style: the contents on the left (above the page on a narrow screen, where
  :mod:`kmt_ref.book` folds them), the pager, the in-page contents, display
  math that scrolls sideways in its own box when it is wider than a phone (MathJax 2.7's HTML-CSS output,
  the one the site's configuration picks, puts display math in ``div.MathJax_Display``), a notebook's
  output figures and animation frames at their stored size on a phone, their output box scrolling
  sideways (shrunk to a phone's width their text would be a few pixels tall), and the symbols
  of the animation buttons. The box has a styled scrollbar, and a shadow at each edge that has more to
  scroll to, because a phone's scrollbars overlay the page and fade when it stops moving.
"""
from __future__ import annotations

import html
import re

__all__ = ["static_outputs", "add_contents", "WIDGET_NOTE", "CONTENTS_MIN_HEADINGS", "CSS"]

#: the mimetype of a stored ipywidgets view
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

#: the line that stands for a cell whose only outputs are widgets (markdown)
WIDGET_NOTE = "*This cell's controls (ipywidgets) need a running kernel: open the notebook in Jupyter to use them.*"

#: a markdown cell that says this already, just before the cell, keeps the note off
_SAID = re.compile(r"\brunning (?:notebook|kernel)\b", re.IGNORECASE)

#: the fewest headings (levels 2 and 3) that give a page its "On this page" list
CONTENTS_MIN_HEADINGS = 4


def _blank(value):
    return not "".join(value).strip() if isinstance(value, (str, list)) else not value


def _shown(output):
    """Whether a static page can show anything of ``output`` (a stored notebook output)."""
    kind = output.get("output_type")
    if kind == "stream":
        return not _blank(output.get("text", ""))
    if kind in ("display_data", "execute_result"):
        data = output.get("data", {})
        return WIDGET_VIEW not in data and any(not _blank(v) for v in data.values())
    return True  # an error, or a kind nbconvert renders its own way


def static_outputs(nb):
    """Leave off ``nb``'s outputs that a static page cannot show (in place); return the count left off.

    See the module docstring for which outputs, and for the note a cell of widgets only gets.
    """
    import nbformat

    dropped = 0
    for i, cell in enumerate(nb.cells):
        outputs = cell.get("outputs") if cell.cell_type == "code" else None
        if not outputs:
            continue
        kept = [out for out in outputs if _shown(out)]
        widgets = any(WIDGET_VIEW in out.get("data", {}) for out in outputs)
        dropped += len(outputs) - len(kept)
        before = nb.cells[i - 1] if i else None
        said = before is not None and before.cell_type == "markdown" and _SAID.search(before.source)
        if widgets and not kept and not said:
            kept = [nbformat.v4.new_output("display_data", data={"text/markdown": WIDGET_NOTE})]
        cell.outputs = kept
    return dropped


def add_contents(soup, min_headings=CONTENTS_MIN_HEADINGS):
    """Put an "On this page" list of the page's h2 and h3 headings below its h1 (``soup``: the page, in place).

    Only a page with at least ``min_headings`` of them, each with an ``id``, gets one; the links are the
    headings' anchors. Returns the number of entries (0: no list).
    """
    main = soup.find("main") or soup.body
    if main is None:
        return 0
    heads = [h for h in main.find_all(("h2", "h3")) if h.get("id")]
    if len(heads) < min_headings:
        return 0
    groups = []  # [h2 entry, [its h3 entries]]; an h3 before any h2 stands alone
    for h in heads:
        link = h.find("a", class_="anchor-link")
        href = link["href"] if link is not None and link.get("href") else "#" + h["id"]
        text = " ".join("".join(s for s in h.strings if not s.find_parent("a", class_="anchor-link")).split())
        entry = f'<a href="{html.escape(href)}">{html.escape(text)}</a>'
        if h.name == "h2" or not groups:
            groups.append((entry, []))
        else:
            groups[-1][1].append(entry)
    items = "".join(f"<li>{entry}" + (f"<ul>{''.join(f'<li>{s}</li>' for s in subs)}</ul>" if subs else "") + "</li>"
                    for entry, subs in groups)
    markup = ('<details class="book-contents"><summary>On this page</summary>'
              f'<ul>{items}</ul></details>')
    from bs4 import BeautifulSoup

    box = BeautifulSoup(markup, features="html.parser")
    title = main.find("h1")
    if title is not None:
        title.insert_after(box)
    else:
        main.insert(0, box)
    return len(heads)


#: the site's own style (``_static/book.css``)
CSS = """\
nav.book-nav { position: fixed; top: 0; left: 0; bottom: 0; width: 15rem; overflow-y: auto;
  padding: 1rem; box-sizing: border-box; background: #f6f6f6; border-right: 1px solid #ddd;
  font: 14px/1.4 system-ui, sans-serif; }
nav.book-nav ul { list-style: none; padding-left: 0; margin: 0 0 1rem 0; }
nav.book-nav li { margin: 0.3rem 0; }
nav.book-nav p.book-group { margin: 1rem 0 0.3rem; font-weight: bold; color: #555; }
nav.book-nav a { text-decoration: none; color: #0645ad; }
nav.book-nav a[aria-current="page"] { font-weight: bold; color: #000; }
nav.book-nav .book-title { font-size: 1.2rem; font-weight: bold; margin: 0 0 0.5rem; }
body { margin-left: 15rem !important; }
nav.book-pager { display: flex; justify-content: space-between; gap: 1rem; margin: 2rem 1rem;
  padding-top: 1rem; border-top: 1px solid #ddd; font: 14px/1.4 system-ui, sans-serif; }
nav.book-nav details.book-menu > summary { display: none; }
@media (max-width: 50rem) {
  nav.book-nav { position: static; width: auto; border-right: none; border-bottom: 1px solid #ddd;
    padding: 0.6rem 1rem; }
  nav.book-nav .book-title { margin: 0 0 0.3rem; }
  nav.book-nav details.book-menu > summary { display: list-item; cursor: pointer; color: #0645ad; }
  body { margin-left: 0 !important; }
  .jp-OutputArea-output { overflow-x: auto; scrollbar-width: thin; scrollbar-color: #999 #eee; }
  .jp-OutputArea-output img, .kmt-animation .animation img { max-width: none !important; height: auto; }
}
details.book-contents { margin: 0.5rem 0 1.5rem; padding: 0.5rem 0.8rem; border: 1px solid #ddd;
  border-radius: 4px; background: #fafafa; font: 14px/1.5 system-ui, sans-serif; }
details.book-contents summary { cursor: pointer; font-weight: bold; color: #333; }
details.book-contents ul { margin: 0.3rem 0 0 0; padding-left: 1.2rem; }
details.book-contents ul ul { padding-left: 1.2rem; }
details.book-contents a { text-decoration: none; color: #0645ad; }
.MathJax_Display { overflow-x: auto; overflow-y: hidden; padding-bottom: 4px;
  scrollbar-width: thin; scrollbar-color: #999 #eee;
  background: linear-gradient(to right, #fff 30%, rgba(255, 255, 255, 0)) left / 2rem 100% no-repeat local,
    linear-gradient(to left, #fff 30%, rgba(255, 255, 255, 0)) right / 2rem 100% no-repeat local,
    radial-gradient(farthest-side at 0 50%, rgba(0, 0, 0, 0.3), rgba(0, 0, 0, 0)) left / 0.8rem 100% no-repeat scroll,
    radial-gradient(farthest-side at 100% 50%, rgba(0, 0, 0, 0.3), rgba(0, 0, 0, 0))
      right / 0.8rem 100% no-repeat scroll; }
.MathJax_Display::-webkit-scrollbar { height: 6px; }
.MathJax_Display::-webkit-scrollbar-track { background: #eee; }
.MathJax_Display::-webkit-scrollbar-thumb { background: #999; border-radius: 3px; }
.MJX_Assistive_MathML * { font-family: serif !important; }
.jp-RenderedHTMLCommon a code { color: inherit; }
.jp-RenderedMarkdown pre { margin-bottom: 1em; }
.anim-buttons i.fa { font-style: normal; }
.fa-minus::before { content: "\\2212"; }
.fa-plus::before { content: "+"; }
.fa-fast-backward::before { content: "|\\25C0\\25C0"; }
.fa-step-backward::before { content: "|\\25C0"; }
.fa-play::before { content: "\\25B6"; }
.fa-play.fa-flip-horizontal::before { content: "\\25C0"; }
.fa-pause::before { content: "\\275A\\275A"; }
.fa-step-forward::before { content: "\\25B6|"; }
.fa-fast-forward::before { content: "\\25B6\\25B6|"; }
"""
