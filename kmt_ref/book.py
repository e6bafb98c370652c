"""The course as a static site: ``python -m kmt_ref book --out DIR``.

The site is read before anything is installed (a course web server, GitHub Pages, a USB stick in a
lab without internet), so it needs no network at build or view time:

- ``index.html``: the README's "Start here" (the reading order, the prerequisites, what each
  notebook teaches); one page per notebook of ``notebooks/`` with its stored outputs (figures,
  animations, tables), rendered by nbconvert's ``lab`` template and never executed; one page per
  ``docs/*.md`` and one for the whole README. ``solutions=True`` (``--solutions``) makes the instructors'
  edition: it adds the solved notebooks of ``notebooks/solutions/`` and the instructors' pages
  (:data:`INSTRUCTOR_DOCS`: ``docs/TEACHING.md``, whose exercise table says what each checker verifies,
  and ``docs/RUBRICS.md``, the rubrics of the written answers). The student edition (the default) has
  none of them: its guide to the exercises is ``docs/EXERCISES.md``.
- The site mirrors the repository's layout (``docs/SPEC.md`` becomes ``DIR/docs/SPEC.html``), so a link
  keeps its relative path and only ``.md`` and ``.ipynb`` become ``.html``; any other repository
  file a page links to or shows (a figure) is copied to the same path. A link to a notebook or a page
  that is not in this edition (a solution, TEACHING or RUBRICS, in the student edition) keeps its text
  and loses its link (open).
- Headings of the ``.md`` pages carry GitHub's anchors (``#the-layer-and-the-notation``), so the
  links written for GitHub keep working; notebook pages keep nbconvert's anchors.
- Math is typeset by MathJax 2.7 served from the site itself (``_static/mathjax``, copied from the
  ``jupyter-server-mathjax`` package) in its STIX-Web fonts, the only ones the package ships. Two
  settings keep every font request on the site (open): the font-loading probe uses ``serif``, as
  MathJax does on Safari, not a font from ``about:blank``; the hidden MathML kept for screen readers
  is drawn in ``serif``, not in MathJax's TeX fonts. nbconvert's references to require.js, mermaid
  and widget scripts on a CDN are left out, and so is the CDN font-awesome stylesheet that
  matplotlib's ``to_jshtml`` animations link to: ``_static/book.css`` draws their buttons' symbols.
- Every page has the contents on its left (on a phone above the page, folded under "All pages") and
  previous/next at its foot; ``.nojekyll`` stops
  GitHub Pages from hiding ``_static``. What :mod:`kmt_ref.book_html` adds to nbconvert's pages: a
  stored output a static page cannot show (a widget, an empty output) is left off, a long page opens with
  a list of its sections, and display math and output figures wider than a phone scroll sideways.

The folder is written whole in a sibling folder and then moved into place. An existing ``DIR``
must be empty or a previous book: its marker file ``.kmt_ref_book`` lists the files the book wrote,
and a book folder holding any other file is refused (a user's file is never deleted).
"""
from __future__ import annotations

import html
import importlib.util
import json
import os
import posixpath
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .book_html import CSS, add_contents, static_outputs

__all__ = ["build_book", "book_pages", "github_slug", "INSTRUCTOR_DOCS", "MARKER", "register", "mathjax_folder"]

#: the marker file of a built book: JSON, the files the build wrote (relative, POSIX)
MARKER = ".kmt_ref_book"

#: the docs, in the order of the contents (others under docs/ follow, sorted)
DOCS_ORDER = ("EXERCISES", "TEACHING", "RUBRICS", "GLOSSARY", "LAYER", "EXACTNESS", "RESULTS", "BINARY", "USAGE", "SPEC", "ARCHITECTURE",
              "PERFORMANCE")

#: the docs only the instructors' edition carries: they state answers (what each checker verifies, the rubrics)
INSTRUCTOR_DOCS = ("TEACHING", "RUBRICS")

#: the MathJax configuration the bundled MathJax 2.7 offers (its TeX input, HTML-CSS output), and Safe
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"

#: on a narrow screen the list of all pages starts folded (without scripts it stays open)
MENU_SCRIPT = ('if (matchMedia("(max-width: 50rem)").matches) '
               'document.querySelector("nav.book-nav details.book-menu").open = false;')

#: nbconvert's lab template, less what it would fetch from a CDN, plus the contents and the pager
TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{%- block html_head_js_mathjax -%}
<script type="text/x-mathjax-config">
MathJax.Hub.Config({"HTML-CSS": {availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null},
                    MathMenu: {showFontMenu: false}});
MathJax.Hub.Register.StartupHook("HTML-CSS Jax Ready", function () {
  MathJax.OutputJax["HTML-CSS"].webFontDefault = "serif";  /* as on Safari: no probe font from about:blank */
});
</script>
{{ super() }}
{%- endblock html_head_js_mathjax -%}
{%- block extra_css -%}
<link rel="stylesheet" href="{{ resources.book.css }}">
{%- endblock extra_css -%}
{%- block body_header -%}
{{ super() }}
{{ resources.book.nav }}
{%- endblock body_header -%}
{%- block body_footer -%}
{{ resources.book.pager }}
{{ super() }}
{%- endblock body_footer -%}
"""

@dataclass(frozen=True)
class Page:
    """One page of the site.

    ``source`` is the repository file it comes from and ``out`` the site file it becomes (both
    relative, POSIX); ``kind`` is ``"notebook"``, ``"markdown"`` or ``"index"`` (the README's
    "Start here"); ``label`` is its entry in the contents, under ``group``.
    """

    source: str
    out: str
    kind: str
    title: str
    label: str
    group: str


# --------------------------------------------------------------------------
# What the site holds
# --------------------------------------------------------------------------
def checkout_root(root=None, name="root"):
    """The source checkout the book is built from: ``root``, by default the one the package was installed from.

    Raises ``ValueError`` naming ``name`` (the argument, ``--root`` on the command line) when the folder
    has no README.md or no notebooks/; an installed (non-editable) package has neither beside it.
    """
    if root is not None and not isinstance(root, (str, os.PathLike)):
        raise TypeError(f"{name}={root!r} should be the path of a kmt_ref checkout")
    folder = Path(__file__).resolve().parents[1] if root is None else Path(root)
    missing = [f for f, ok in (("README.md", (folder / "README.md").is_file()),
                               ("notebooks/", (folder / "notebooks").is_dir())) if not ok]
    if root is not None and not folder.is_dir():
        raise ValueError(f"{name}={str(root)!r} is not a folder" + (" (it is a file)" if folder.exists() else
                                                                     " (it does not exist)"))
    if not missing:
        return folder
    if root is None:
        raise ValueError(f"the book is built from a source checkout of kmt_ref, and {str(folder)!r}, where the "
                         f"package is installed, has no {' and no '.join(missing)}: pass {name} the checkout's folder")
    raise ValueError(f"{name}={str(root)!r} is not a kmt_ref checkout: it has no {' and no '.join(missing)}")


def _plain(title):
    """A markdown heading's text without its emphasis and code marks."""
    return re.sub(r"[*`]", "", title).strip()


def _title_of(text, default):
    for line in text.splitlines():
        if line.startswith("# "):
            return _plain(line[2:])
    return default


def _notebook_title(path, default):
    import nbformat

    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            return _title_of(cell.source, default)
    return default


def book_pages(root, solutions=False):
    """The pages of the site, in reading order (the order of the contents and of previous/next)."""
    root = Path(root)
    readme = (root / "README.md").read_text(encoding="utf-8")
    pages = [Page("README.md", "index.html", "index", "kmt_ref: start here", "Start here", "")]
    groups = [("notebooks", "Notebooks", "")]
    if solutions:
        groups.append(("notebooks/solutions", "Solutions", "Solutions: "))
    for folder, group, prefix in groups:
        for path in sorted((root / folder).glob("[0-9][0-9]_*.ipynb")):
            title = _notebook_title(path, path.stem)
            rel = path.relative_to(root).as_posix()
            pages.append(Page(rel, rel[:-len(".ipynb")] + ".html", "notebook", prefix + title, prefix + title, group))
    docs = sorted((root / "docs").glob("*.md"), key=lambda p: (
        DOCS_ORDER.index(p.stem) if p.stem in DOCS_ORDER else len(DOCS_ORDER), p.name))
    for path in docs:
        if path.stem in INSTRUCTOR_DOCS and not solutions:
            continue
        rel = path.relative_to(root).as_posix()
        title = _title_of(path.read_text(encoding="utf-8"), path.stem)
        pages.append(Page(rel, rel[:-len(".md")] + ".html", "markdown", title, title, "Documents"))
    title = _title_of(readme, "README")
    pages.append(Page("README.md", "README.html", "markdown", title, "The whole README", "Documents"))
    return pages


def start_here(readme):
    """The README's title and its "Start here" section: the text of the site's index."""
    lines = readme.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip().lower() == "## start here")
    except StopIteration:
        raise ValueError("README.md has no '## Start here' section: the index of the book is made of it") from None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    title = next((line for line in lines if line.startswith("# ")), "# kmt_ref")
    return "\n".join([title, ""] + lines[start:end]) + "\n"


# --------------------------------------------------------------------------
# Rendering
# --------------------------------------------------------------------------
def github_slug(text, seen=None):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2.

    >>> github_slug("The layer, and the notation")
    'the-layer-and-the-notation'
    """
    slug = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
    if seen is not None:
        base, n = slug, seen.get(slug, 0)
        if n:
            slug = f"{base}-{n}"
        seen[base] = n + 1
    return slug


def _exporter():
    import jinja2
    from nbconvert import HTMLExporter
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    class GitHubRenderer(IPythonRenderer):
        """nbconvert's markdown renderer with GitHub's heading anchors (for the .md pages)."""

        seen: dict

        def heading(self, text, level, **attrs):
            plain = html.unescape(re.sub(r"<[^>]+>", "", text))
            slug = github_slug(plain, self.seen)
            return (f'<h{level} id="{slug}">{text}<a class="anchor-link" href="#{slug}">'
                    f'{self.anchor_link_text}</a></h{level}>\n')

    class BookExporter(HTMLExporter):
        @jinja2.pass_context
        def markdown2html(self, context, source):
            if not context.get("resources", {}).get("book", {}).get("github_anchors"):
                return super().markdown2html(context, source)
            renderer = GitHubRenderer(escape=False, anchor_link_text=self.anchor_link_text)
            renderer.seen = {}
            return MarkdownWithMath(renderer=renderer).render(source)

    return BookExporter(template_name="lab", raw_template=TEMPLATE)


def _relative(target, page_out):
    """``target`` (site-relative) as seen from the page ``page_out``."""
    return posixpath.relpath(target, posixpath.dirname(page_out) or ".")


def _nav(pages, current):
    rel = lambda p: html.escape(_relative(p.out, current.out))  # noqa: E731
    parts = ['<nav class="book-nav" aria-label="Contents">',
             f'<p class="book-title"><a href="{rel(pages[0])}">kmt_ref</a></p>',
             '<details class="book-menu" open><summary>All pages</summary>']
    group = None
    for page in pages:
        if page.group != group:
            if group is not None:
                parts.append("</ul>")
            if page.group:
                parts.append(f'<p class="book-group">{html.escape(page.group)}</p>')
            parts.append("<ul>")
            group = page.group
        here = ' aria-current="page"' if page == current else ""
        parts.append(f'<li><a href="{rel(page)}"{here}>{html.escape(page.label)}</a></li>')
    parts += ["</ul>", "</details>", "</nav>", f"<script>{MENU_SCRIPT}</script>"]
    i = pages.index(current)
    pager = ['<nav class="book-pager" aria-label="Previous and next">']
    pager.append(f'<a rel="prev" href="{rel(pages[i - 1])}">&larr; {html.escape(pages[i - 1].label)}</a>'
                 if i > 0 else "<span></span>")
    if i + 1 < len(pages):
        pager.append(f'<a rel="next" href="{rel(pages[i + 1])}">{html.escape(pages[i + 1].label)} &rarr;</a>')
    pager.append("</nav>")
    return "\n".join(parts), "\n".join(pager)


def _render(exporter, root, page, pages):
    import nbformat

    if page.kind == "notebook":
        nb = nbformat.read(root / page.source, as_version=4)
        static_outputs(nb)
    else:
        text = (root / page.source).read_text(encoding="utf-8")
        if page.kind == "index":
            text = start_here(text)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    nb.metadata["title"] = page.title
    nav, pager = _nav(pages, page)
    exporter.mathjax_url = _relative("_static/mathjax/MathJax.js", page.out) + "?config=" + MATHJAX_CONFIG
    resources = {"metadata": {"name": page.title},
                 "book": {"nav": nav, "pager": pager, "css": _relative("_static/book.css", page.out),
                          "github_anchors": page.kind != "notebook"}}
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    return body


_SCHEME = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)")


def _rewrite(body, root, page, pages, copies):
    """Point the page's local links and images at the site; drop CDN stylesheets of outputs.

    ``copies`` collects the repository files (relative) the site must carry.
    """
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(body, features="html.parser")
    add_contents(soup)
    out_of = {p.source: p.out for p in pages if p.kind != "index"}
    ids = {tag["id"] for tag in soup.find_all(id=True)}
    for tag in soup.find_all("link", href=True):
        if _SCHEME.match(tag["href"]) and not tag["href"].startswith("data:"):
            tag.decompose()  # e.g. the font-awesome of matplotlib's to_jshtml: book.css draws the buttons
    for tag in soup.find_all("script", src=True):
        if _SCHEME.match(tag["src"]):
            raise ValueError(f"{page.source} loads the script {tag['src']!r} from the network: "
                             f"the book is read offline")
    for tag, attr in [(t, "href") for t in soup.find_all("a", href=True)] + \
                     [(t, "src") for t in soup.find_all("img", src=True)]:
        url = tag[attr]
        if _SCHEME.match(url) or tag.find_parent("nav", class_=("book-nav", "book-pager")):
            continue  # the web, or the site's own contents and pager
        path, _, frag = url.partition("#")
        if not path:
            if page.kind == "index" and frag and frag not in ids:
                tag[attr] = _relative(out_of["README.md"], page.out) + "#" + frag
            continue
        target = posixpath.normpath(posixpath.join(posixpath.dirname(page.source), path))
        if target.startswith(("/", "../")) or target == ".." or not (root / target).exists():
            raise ValueError(f"{page.source} links to {url!r}, which is not a file of the repository")
        if target in out_of:
            tag[attr] = _relative(out_of[target], page.out) + (f"#{frag}" if frag else "")
        elif target.endswith((".ipynb", ".md")) or (root / target).is_dir():
            tag.unwrap()  # not in this edition (a solution in the student edition) or a folder
        else:
            copies.add(target)
            tag[attr] = _relative(target, page.out) + (f"#{frag}" if frag else "")
    return str(soup)


# --------------------------------------------------------------------------
# The output folder
# --------------------------------------------------------------------------
def _files(folder, dirs=False):
    """The files (or the folders) under ``folder``, relative, POSIX."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_dir() == dirs}


def check_out(out, name="out"):
    """Refuse an ``out`` that is a file, or a non-empty folder that is not a previous book with only its own files.

    ``name`` is the argument the messages name (``"--out"`` on the command line).
    """
    value, out = out, Path(out)
    if not out.exists():
        return
    if not out.is_dir():
        raise ValueError(f"{name}={str(value)!r} is a file, not a folder")
    present = _files(out)
    if not present:
        return
    marker = out / MARKER
    if not marker.is_file():
        raise ValueError(f"{name}={str(value)!r} is a folder that is not empty and not a kmt_ref book "
                         f"(no {MARKER} in it): choose a new or empty folder")
    try:
        written = set(json.loads(marker.read_text(encoding="utf-8"))["files"])
    except (ValueError, KeyError, TypeError):
        raise ValueError(f"{name}={str(value)!r}: its {MARKER} is not a book's list of files; "
                         f"choose a new or empty folder") from None
    folders = set()  # the folders the book made: every ancestor of a file it wrote
    for file in written:
        parent = posixpath.dirname(file)
        while parent and parent not in folders:
            folders.add(parent)
            parent = posixpath.dirname(parent)
    others = sorted((present - written - {MARKER}) | (_files(out, dirs=True) - folders))
    if others:
        shown = ", ".join(others[:5]) + (", ..." if len(others) > 5 else "")
        raise ValueError(f"{name}={str(value)!r} is a kmt_ref book holding files the book did not write "
                         f"({shown}): move them, or choose another folder")


#: what the book needs beyond kmt_ref's own dependencies (the extra "book" of pyproject.toml): import name -> package
BOOK_PACKAGES = {"nbformat": "nbformat", "nbconvert": "nbconvert", "jupyter_server_mathjax": "jupyter-server-mathjax"}


def mathjax_folder():
    """The MathJax the site serves, after checking that every package of :data:`BOOK_PACKAGES` is there."""
    missing = [package for module, package in BOOK_PACKAGES.items() if importlib.util.find_spec(module) is None]
    if missing:
        raise ValueError(f"the book needs {', '.join(missing)}, not installed: pip install -r requirements.txt "
                         f"in a checkout, or pip install 'kmt_ref[book]'")
    import jupyter_server_mathjax

    return Path(jupyter_server_mathjax.__file__).parent / "static"


def build_book(out, *, solutions=False, root=None):
    """Write the course as a static site into the folder ``out``; return the list of pages.

    Parameters
    ----------
    out : str or Path
        The site's folder: new, empty, or a previous book (replaced; see :func:`check_out`).
    solutions : bool
        Add the solved notebooks and the instructors' pages (the instructors' edition); default the
        student edition.
    root : str or Path, optional
        The repository checkout to read; default the one the package was installed from
        (:func:`checkout_root`).

    Returns
    -------
    list of Page
        The pages written, in reading order; ``out/index.html`` is the first.
    """
    if not isinstance(solutions, bool):
        raise TypeError(f"solutions={solutions!r} should be True or False")
    root = checkout_root(root)
    out = Path(out)
    check_out(out)
    mathjax = mathjax_folder()
    pages = book_pages(root, solutions)
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        exporter, copies = _exporter(), set()
        for page in pages:
            body = _rewrite(_render(exporter, root, page, pages), root, page, pages, copies)
            (work / page.out).parent.mkdir(parents=True, exist_ok=True)
            (work / page.out).write_text(body, encoding="utf-8")
        for rel in sorted(copies):
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / rel, work / rel)
        shutil.copytree(mathjax, work / "_static" / "mathjax")
        (work / "_static" / "book.css").write_text(CSS, encoding="utf-8")
        (work / ".nojekyll").write_text("", encoding="utf-8")
        (work / MARKER).write_text(json.dumps({"files": sorted(_files(work))}, indent=0), encoding="utf-8")
        _move_into_place(work, out)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return pages


def _move_into_place(work, out):
    """Replace ``out`` (absent, empty, or a previous book checked again here) by the built ``work``."""
    os.chmod(work, 0o755)  # mkdtemp's folder is private; a site is read by others
    if not out.exists():
        work.rename(out)
        return
    check_out(out)
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
    old.rmdir()
    out.rename(old)
    work.rename(out)
    shutil.rmtree(old)  # only the previous book's own files: check_out verified it


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------
def _command(args):
    root = checkout_root(args.root, "--root")  # build_book checks both again, naming its own arguments
    check_out(args.out, "--out")
    start = time.perf_counter()
    pages = build_book(args.out, solutions=args.solutions, root=root)
    edition = "with solutions" if args.solutions else "student edition"
    print(f"wrote {len(pages)} pages ({edition}) to {args.out} in {time.perf_counter() - start:.1f} s; "
          f"open {Path(args.out) / 'index.html'}")
    return 0


def register(subparsers):
    """Add ``book`` to ``python -m kmt_ref``."""
    p = subparsers.add_parser(
        "book", help="the notebooks and docs as a static site (read offline, math included)",
        description="Write the course (README's 'Start here', the stored notebooks, docs/) as a static "
                    "HTML site that needs no network: open DIR/index.html, or publish DIR.")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="the site's folder: new, empty, or a previous book (replaced)")
    p.add_argument("--root", default=None, metavar="PATH",
                   help="the kmt_ref checkout to build from (its README.md, notebooks/, docs/); default: the "
                        "checkout the package was installed from")
    p.add_argument("--solutions", action="store_true",
                   help="add the solved notebooks (notebooks/solutions/) and docs/TEACHING.md and docs/RUBRICS.md: "
                        "the instructors' edition")
    p.set_defaults(func=_command)
