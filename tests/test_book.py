"""Tests for kmt_ref/book.py: the course as a static site, built and then read in a real browser.

Two kinds of test. Without a browser: the build on a tiny repository made here (the editions, link
rewriting, the refusals that protect a user's files) and the real book's files. With headless
Chromium (Debian's ``chromium``; skipped with the reason when it is not installed): every page of
the real book is opened through the DevTools protocol (``websocket-client``, which Jupyter's server
already depends on) and must load with no uncaught script error, no failed or network resource,
every image drawn, every local link and anchor resolving, and its math typeset by the site's own
MathJax (no raw ``$$`` or ``\\(`` left, no TeX error). The checker itself is shown failing on a page
broken on purpose, and a matplotlib ``to_jshtml`` animation is shown playing offline (notebook 01's own
animation is checked once the stored notebook has one).
"""
import html
import json
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest

from kmt_ref.book import INSTRUCTOR_DOCS, MARKER, book_pages, build_book, checkout_root, github_slug
from kmt_ref.cli import main

ROOT = Path(__file__).resolve().parents[1]
BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
NO_BROWSER = "no chromium on this machine (apt-get install -y chromium): the book is not checked in a browser"
NB01 = ROOT / "notebooks" / "01_lloyd_as_a_transformer.ipynb"


def _has_animation(path):
    nb = nbformat.read(path, as_version=4)
    return any('class="animation"' in "".join(out.get("data", {}).get("text/html", ""))
               for cell in nb.cells for out in cell.get("outputs", []))


# --------------------------------------------------------------------------
# A tiny repository, built in about a second
# --------------------------------------------------------------------------
def tiny_repo(path, extra_link=""):
    (path / "notebooks" / "solutions").mkdir(parents=True)
    (path / "docs").mkdir()
    (path / "figures").mkdir()
    (path / "figures" / "dot.png").write_bytes((ROOT / "figures" / "fig1_validation.png").read_bytes())
    (path / "README.md").write_text(
        "# tiny\n\nintro\n\n## Start here\n\nRead [the notebook](notebooks/01_a.ipynb), the "
        "[glossary](docs/GLOSSARY.md) and [the notation](#the-layer-and-the-notation).\n"
        f"{extra_link}\n## The layer, and the notation\n\n![a figure](figures/dot.png)\n", encoding="utf-8")
    (path / "docs" / "GLOSSARY.md").write_text(
        "# Glossary\n\nSee [the notation](../README.md#the-layer-and-the-notation), "
        "[the solution](../notebooks/solutions/01_a.ipynb), [the rubrics](RUBRICS.md), "
        "[teaching](TEACHING.md#grading) and [a source file](../figures/dot.png).\n",
        encoding="utf-8")
    (path / "docs" / "TEACHING.md").write_text("# Teaching\n\n## Grading\n\nThe threshold is 745.133.\n",
                                               encoding="utf-8")
    (path / "docs" / "RUBRICS.md").write_text("# Rubrics\n\n- 2: the secret rubric item.\n", encoding="utf-8")
    for sub, text in (("", "Exercise: $x^2$."), ("solutions/", "Solved: $x^2 = 4$.")):
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"# 01 — A\n\n{text}")])
        nbformat.write(nb, path / "notebooks" / f"{sub}01_a.ipynb")
    return path


@pytest.fixture
def repo(tmp_path):
    return tiny_repo(tmp_path / "repo")


def test_github_slug():
    assert github_slug("The layer, and the notation") == "the-layer-and-the-notation"
    assert github_slug("1. Notation") == "1-notation"
    assert github_slug("kmt_ref — a transformer that is Lloyd's algorithm") == \
        "kmt_ref--a-transformer-that-is-lloyds-algorithm"
    seen = {}
    assert [github_slug("Ties", seen) for _ in range(3)] == ["ties", "ties-1", "ties-2"]


def test_student_edition(repo, tmp_path):
    out = tmp_path / "site"
    pages = build_book(out, root=repo)
    assert [p.out for p in pages] == ["index.html", "notebooks/01_a.html", "docs/GLOSSARY.html", "README.html"]
    assert not (out / "notebooks" / "solutions").exists()
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="notebooks/01_a.html"' in index and 'href="docs/GLOSSARY.html"' in index
    assert 'href="README.html#the-layer-and-the-notation"' in index  # a README section not on the index
    assert "intro" not in index.split('class="book-nav"')[0]  # only "Start here" and the title
    glossary = (out / "docs" / "GLOSSARY.html").read_text(encoding="utf-8")
    assert 'href="../README.html#the-layer-and-the-notation"' in glossary
    assert "solutions" not in glossary and "the solution" in glossary  # unlinked, text kept
    assert "TEACHING" not in glossary and "RUBRICS" not in glossary  # instructors' pages: unlinked, text kept
    assert "the rubrics" in glossary and "teaching" in glossary
    assert not (out / "docs" / "TEACHING.html").exists() and not (out / "docs" / "RUBRICS.html").exists()
    assert not any("745.133" in p.read_text(encoding="utf-8") or "secret" in p.read_text(encoding="utf-8")
                   for p in out.rglob("*.html"))
    assert 'href="../figures/dot.png"' in glossary and (out / "figures" / "dot.png").is_file()
    readme = (out / "README.html").read_text(encoding="utf-8")
    assert 'id="the-layer-and-the-notation"' in readme and 'src="figures/dot.png"' in readme
    assert (out / "_static" / "mathjax" / "MathJax.js").is_file() and (out / ".nojekyll").is_file()
    assert set(json.loads((out / MARKER).read_text())["files"]) == {
        p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {MARKER}


def test_solutions_edition_and_pager(repo, tmp_path):
    out = tmp_path / "site"
    pages = build_book(out, root=repo, solutions=True)
    assert "notebooks/solutions/01_a.html" in [p.out for p in pages]
    solved = (out / "notebooks" / "solutions" / "01_a.html").read_text(encoding="utf-8")
    assert "Solved" in solved and 'src="../../_static/mathjax/MathJax.js?config=' in solved
    assert 'href="../01_a.html" rel="prev"' in solved and 'href="../../docs/TEACHING.html" rel="next"' in solved
    glossary = (out / "docs" / "GLOSSARY.html").read_text(encoding="utf-8")
    assert 'href="../notebooks/solutions/01_a.html"' in glossary
    assert 'href="RUBRICS.html"' in glossary and 'href="TEACHING.html#grading"' in glossary
    assert {"docs/TEACHING.html", "docs/RUBRICS.html"} <= {p.out for p in pages}


def test_refuses_to_overwrite_what_it_did_not_write(repo, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match=r"out=.*not empty and not a kmt_ref book"):
        build_book(mine, root=repo)
    assert (mine / "notes.txt").read_text() == "keep me" and len(list(mine.iterdir())) == 1
    with pytest.raises(ValueError, match="is a file, not a folder"):
        build_book(mine / "notes.txt", root=repo)
    out = tmp_path / "site"
    build_book(out, root=repo)
    build_book(out, root=repo, solutions=True)  # a previous book is replaced
    assert (out / "notebooks" / "solutions" / "01_a.html").is_file()
    build_book(out, root=repo)
    assert not (out / "notebooks" / "solutions").exists()
    (out / "docs" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"holding files the book did not write \(docs/notes.txt\)"):
        build_book(out, root=repo)
    assert (out / "docs" / "notes.txt").read_text() == "mine" and (out / "index.html").is_file()
    (out / "docs" / "notes.txt").unlink()
    (out / "docs" / "drafts").mkdir()  # an empty folder of the user's is kept too
    with pytest.raises(ValueError, match=r"did not write \(docs/drafts\)"):
        build_book(out, root=repo)
    (out / "docs" / "drafts").rmdir()
    build_book(out, root=repo)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "repo", "site"]  # no work folder left
    with pytest.raises(TypeError, match="solutions='yes'"):
        build_book(tmp_path / "new", root=repo, solutions="yes")


@pytest.mark.parametrize("link", ["docs/NONE.md", "/etc/hostname", "../outside.txt"])
def test_a_link_out_of_the_repository_is_an_error(tmp_path, link):
    (tmp_path / "outside.txt").write_text("x")
    repo = tiny_repo(tmp_path / "repo", extra_link=f"[gone]({link})\n")
    with pytest.raises(ValueError, match=f"README.md links to '{re.escape(link)}', which is not a file"):
        build_book(tmp_path / "site", root=repo)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside.txt", "repo"]  # nothing written


def jshtml_animation():
    """A matplotlib ``to_jshtml`` animation of six frames (it links font-awesome from a CDN)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.animation import FuncAnimation

    fig, ax = plt.subplots(figsize=(2, 1.5))
    (line,) = ax.plot([0, 1], [0, 0])
    anim = FuncAnimation(fig, lambda i: (line.set_ydata([0, i / 5]), line)[1:], frames=6)
    markup = anim.to_jshtml()
    plt.close(fig)
    return markup


def add_output(repo, html):
    path = repo / "notebooks" / "01_a.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("anim", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/html": html, "text/plain": "<IPython.core.display.HTML object>"})]))
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def animated_book(tmp_path_factory):
    repo = tiny_repo(tmp_path_factory.mktemp("animated") / "repo")
    markup = jshtml_animation()
    assert "font-awesome" in markup and 'class="animation"' in markup
    add_output(repo, markup)
    build_book(repo.parent / "site", root=repo)
    return repo.parent / "site"


def test_an_animation_needs_no_network(animated_book):
    page = (animated_book / "notebooks" / "01_a.html").read_text(encoding="utf-8")
    assert 'class="animation"' in page and "font-awesome" not in page
    assert ".fa-play::before" in (animated_book / "_static" / "book.css").read_text()


def test_a_script_from_the_network_is_an_error(repo, tmp_path):
    add_output(repo, '<script src="https://example.org/x.js"></script>')
    with pytest.raises(ValueError, match=r"01_a.ipynb loads the script 'https://example.org/x.js' from the network"):
        build_book(tmp_path / "site", root=repo)


def test_cli_user_errors(repo, tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "a.txt").write_text("x")
    assert main(["book", "--out", str(mine)]) == 2
    assert f"error: --out={str(mine)!r} is a folder that is not empty" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["book"])  # --out is required


def test_cli_root(repo, tmp_path, capsys):
    """--root names the checkout to build from; a folder that is not one is refused by name."""
    assert main(["book", "--root", str(repo), "--out", str(tmp_path / "site")]) == 0
    assert (tmp_path / "site" / "index.html").is_file() and "wrote 4 pages" in capsys.readouterr().out
    (tmp_path / "empty").mkdir()
    assert main(["book", "--root", str(tmp_path / "empty"), "--out", str(tmp_path / "s2")]) == 2
    assert (f"error: --root={str(tmp_path / 'empty')!r} is not a kmt_ref checkout: it has no README.md and no "
            "notebooks/") in capsys.readouterr().err
    assert not (tmp_path / "s2").exists()
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "README.md").write_text("# half\n")
    with pytest.raises(ValueError, match=r"root=.*half' is not a kmt_ref checkout: it has no notebooks/$"):
        build_book(tmp_path / "s3", root=tmp_path / "half")
    with pytest.raises(TypeError, match="root=3 should be the path"):
        build_book(tmp_path / "s3", root=3)


def test_installed_package_asks_for_root(tmp_path, monkeypatch, capsys):
    """Installed without a checkout beside it, the default root asks for --root."""
    import kmt_ref.book

    monkeypatch.setattr(kmt_ref.book, "__file__", str(tmp_path / "site-packages" / "kmt_ref" / "book.py"))
    assert main(["book", "--out", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err
    assert "is installed, has no README.md and no notebooks/: pass --root the checkout's folder" in err
    assert str(tmp_path / "site-packages") in err


# --------------------------------------------------------------------------
# The real book
# --------------------------------------------------------------------------
#: the pages of the instructors' edition: the student edition's and the solutions (built once, checked once)
PAGES = [p.out for p in book_pages(checkout_root(), solutions=True)]

#: pages with a known fault in their source, to be fixed there: page -> the fault
KNOWN_FAULTS = {}  # page -> reason, for a fault found in a stored notebook and not yet fixed (none)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("book") / "site"
    start = time.perf_counter()
    build_book(out, root=ROOT, solutions=True)
    print(f"book built in {time.perf_counter() - start:.1f} s")
    return out


@pytest.mark.slow
def test_the_real_book(site):
    for rel in PAGES:
        text = (site / rel).read_text(encoding="utf-8")
        assert 'class="book-nav"' in text and 'class="book-pager"' in text, rel
        assert not re.search(r'<(?:script|link|img)\b[^>]*\b(?:src|href)="(?:https?:)?//', text), rel
        assert not re.search(r'<a\b[^>]*href="(?![a-z]+:)[^"#]*\.(?:md|ipynb)[#"]', text), rel
    for n in range(1, 6):
        assert any(p.startswith(f"notebooks/0{n}_") for p in PAGES)
        assert any(p.startswith(f"notebooks/solutions/0{n}_") for p in PAGES)
    for doc in ("TEACHING", "GLOSSARY", "SPEC", "ARCHITECTURE"):
        assert f"docs/{doc}.html" in PAGES
    student = book_pages(checkout_root())
    instructors = {f"docs/{d}.html" for d in INSTRUCTOR_DOCS}
    assert [p.out for p in student] == [p for p in PAGES if not p.startswith("notebooks/solutions/")
                                        and p not in instructors]
    assert "docs/EXERCISES.html" in [p.out for p in student]


def _plain_text(markdown):
    """Markdown (or a page's text) reduced to what survives rendering: no emphasis or code marks, one space."""
    return " ".join(re.sub(r"[*`_\\]", "", html.unescape(markdown)).split())


def _answers():
    """What states an answer: the rubric items of RUBRICS.md, the "checks" column of TEACHING's exercise
    table, and every output of a solutions notebook's answer and tests cells that its student notebook
    does not also show (texts and images); as {what: where it comes from}."""
    found = {}
    for line in (ROOT / "docs" / "RUBRICS.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^- [\d.]+: (.{30,})", line)
        if m:
            found[_plain_text(m.group(1))[:60]] = "RUBRICS.md"
    teaching = (ROOT / "docs" / "TEACHING.md").read_text(encoding="utf-8")
    for row in re.findall(r"^\| (\d\d\.\d+) \|(.*)\|$", teaching, re.M):
        checks = row[1].split(" | ")[4]
        if not checks.startswith("no: "):
            found[_plain_text(checks)[:60]] = f"TEACHING.md, {row[0]}"
    for solved in sorted((ROOT / "notebooks" / "solutions").glob("0*.ipynb")):
        student = nbformat.read(ROOT / "notebooks" / solved.name, as_version=4)
        shown = set()
        for cell in student.cells:
            for out in cell.get("outputs", []):
                shown |= set(_output_pieces(out))
        for cell in nbformat.read(solved, as_version=4).cells:
            if "nbgrader" not in cell.metadata:
                continue
            for out in cell.get("outputs", []):
                for piece in _output_pieces(out):
                    if piece not in shown:
                        found[piece] = f"{solved.name}, cell {cell.metadata['nbgrader']['grade_id']}"
    return found


def _output_pieces(out):
    """The lines of an output's text (of 8 characters or more, one space) and its images' data."""
    pieces = []
    text = out.get("text", "") if out.output_type == "stream" else out.get("data", {}).get("text/plain", "")
    for line in "".join(text).splitlines():
        line = " ".join(line.split())
        if len(line) >= 8:
            pieces.append(line)
    for kind in ("image/png", "image/jpeg", "image/svg+xml"):
        if kind in out.get("data", {}):
            pieces.append("".join(out.data[kind]).replace("\n", "")[:200])
    return pieces


@pytest.fixture(scope="module")
def student_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("book") / "student"
    build_book(out, root=ROOT)
    return out


@pytest.mark.slow
def test_the_student_edition_states_no_answer(student_site, site):
    """No rubric, no line of TEACHING's "checks" column, no solved notebook and no output of a solution's
    answer or tests cell that the student notebook does not show; the instructors' edition has them all."""
    from bs4 import BeautifulSoup

    answers = _answers()
    assert len([w for w in answers.values() if w == "RUBRICS.md"]) > 20
    assert any(w.startswith("TEACHING.md") for w in answers.values())
    assert sum(".ipynb" in w for w in answers.values()) > 20
    for edition, folder in (("student", student_site), ("instructors", site)):
        texts, raw = [], []
        for page in sorted(folder.rglob("*.html")):
            if "_static" in page.parts:
                continue
            body = page.read_text(encoding="utf-8")
            raw.append(body)
            texts.append(_plain_text(BeautifulSoup(body, features="html.parser").get_text(" ")))
        texts, raw = "\n".join(texts), "\n".join(raw)
        present = {a: w for a, w in answers.items() if a in texts or _plain_text(a) in texts or a in raw}
        if edition == "student":
            assert not present, f"the student edition shows answers: {list(present.items())[:5]}"
            assert not (folder / "notebooks" / "solutions").exists()
            assert not any((folder / "docs" / f"{d}.html").exists() for d in INSTRUCTOR_DOCS)
            assert "Working the exercises" in texts
        else:
            assert len(present) > 0.9 * len(answers), sorted(set(answers) - set(present))[:10]


# --------------------------------------------------------------------------
# The browser
# --------------------------------------------------------------------------
class Chromium:
    """Headless Chromium driven through the DevTools protocol (no Selenium)."""

    FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--remote-debugging-port=0", "--window-size=1280,1000"]

    def __init__(self):
        import websocket

        self.profile = tempfile.mkdtemp(prefix="kmt_ref_chromium_")
        self.proc = subprocess.Popen([BROWSER, *self.FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file, deadline = Path(self.profile) / "DevToolsActivePort", time.time() + 30
        while not (port_file.is_file() and len(port_file.read_text().split()) == 2):
            if time.time() > deadline or self.proc.poll() is not None:
                self.close()
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port, path = port_file.read_text().split()
        self.ws = websocket.create_connection(f"ws://127.0.0.1:{port}{path}", timeout=60, suppress_origin=True)
        self.next_id, self.events = 0, []

    def send(self, method, session=None, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method, session, seconds=60):
        deadline = time.time() + seconds
        while not any(e.get("method") == method and e.get("sessionId") == session for e in self.events):
            if time.time() > deadline:
                raise RuntimeError(f"no {method} within {seconds} s")
            self.events.append(json.loads(self.ws.recv()))

    def evaluate(self, session, expression):
        result = self.send("Runtime.evaluate", session, expression=expression, awaitPromise=True,
                           returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:60]}...: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url):
        """Load ``url``; return (problems found by the browser, facts about the page's DOM)."""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        try:
            for domain in ("Runtime", "Log", "Network", "Page"):
                self.send(f"{domain}.enable", session)
            self.events = []
            self.send("Page.navigate", session, url=url)
            self.wait_for("Page.loadEventFired", session)
            facts = self.evaluate(session, PAGE_FACTS)
            self.send("Runtime.evaluate", session, expression="0")  # drain late events
            return self._problems(session), facts
        finally:
            self.send("Target.closeTarget", targetId=target)

    def _problems(self, session):
        problems = []
        for e in self.events:
            if e.get("sessionId") != session:
                continue
            method, p = e.get("method"), e.get("params", {})
            if method == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                problems.append(f"script error: {d.get('exception', {}).get('description') or d.get('text')}")
            elif method == "Runtime.consoleAPICalled" and p.get("type") == "error":
                problems.append(f"console error: {[a.get('value') for a in p.get('args', [])]}")
            elif method == "Log.entryAdded" and p["entry"]["level"] == "error":
                problems.append(f"log error: {p['entry']['text']} {p['entry'].get('url', '')}")
            elif method == "Network.loadingFailed" and not p.get("canceled"):
                problems.append(f"failed resource: {p.get('errorText')}")
            elif method == "Network.requestWillBeSent":
                scheme = p["request"]["url"].split(":", 1)[0]
                if scheme not in ("file", "data", "about", "blob"):
                    problems.append(f"network request: {p['request']['url'][:100]}")
        return problems

    def close(self):
        if getattr(self, "ws", None):
            self.ws.close()
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


#: what the test reads of a page once MathJax has finished
PAGE_FACTS = r"""
new Promise(done => {
  const facts = () => {
    const skip = "pre, code, script, style, textarea, .MathJax, .MathJax_Display, .MathJax_Preview";
    const texts = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const n = walker.currentNode;
      if (!n.parentElement.closest(skip)) texts.push(n.textContent);
    }
    const text = texts.join(" ");
    const raw = [/\$\$/, /\\\(/, /\\\[/, /\$[^$\s][^$]*\$/].map(r => (text.match(r) || [""])[0]).filter(m => m);
    return {
      mathjax: !!(window.MathJax && MathJax.Hub),
      typeset: document.querySelectorAll("script[type^='math/tex']").length,
      rendered: document.querySelectorAll(".MathJax, .MathJax_Display").length,
      errors: Array.from(document.querySelectorAll(".MathJax_Error, .noError, merror")).map(e => e.textContent),
      raw: raw,
      images: Array.from(document.images).map(i => ({src: i.src.slice(0, 80), ok: i.complete && i.naturalWidth > 0})),
      links: Array.from(document.querySelectorAll("a[href]")).map(a => a.href),
      animations: Array.from(document.querySelectorAll(".animation")).map(a => {
        const img = a.querySelector("img"), slider = a.querySelector("input[type=range]");
        return {drawn: !!img && img.complete && img.naturalWidth > 0, frames: slider ? +slider.max + 1 : 0};
      }),
    };
  };
  if (window.MathJax && MathJax.Hub) MathJax.Hub.Queue(() => done(facts())); else done(facts());
})
"""


@pytest.fixture(scope="module")
def browser():
    if BROWSER is None:
        pytest.skip(NO_BROWSER)
    pytest.importorskip("websocket", reason="websocket-client (a dependency of jupyter-server) is not installed")
    chromium = Chromium()
    yield chromium
    chromium.close()


_IDS = {}


def _ids(path):
    if path not in _IDS:
        found = re.findall(r'\b(?:id|name)="([^"]+)"', path.read_text(encoding="utf-8"))
        _IDS[path] = {html.unescape(i) for i in found}
    return _IDS[path]


def page_problems(browser, path, site):
    """Every reason the page at ``path`` fails the checks of the module docstring; and its facts."""
    problems, facts = browser.open(path.as_uri())
    if not facts["mathjax"]:
        problems.append("MathJax did not load")
    if facts["rendered"] < facts["typeset"]:
        problems.append(f"{facts['typeset']} formulas, {facts['rendered']} typeset")
    problems += [f"TeX error: {e[:80]}" for e in facts["errors"]]
    problems += [f"raw math in the text: {m[:40]!r}" for m in facts["raw"]]
    problems += [f"image not drawn: {i['src']}" for i in facts["images"] if not i["ok"]]
    for href in facts["links"]:
        url = urlsplit(href)
        if url.scheme != "file":
            continue
        target = Path(unquote(url.path))
        if not target.is_file():
            problems.append(f"broken link: {href}")
        elif site not in target.parents:
            problems.append(f"link out of the site: {href}")
        elif url.fragment and target.suffix == ".html" and not {url.fragment, unquote(url.fragment)} & _ids(target):
            problems.append(f"no anchor #{url.fragment} in {target.relative_to(site)}")
    return problems, facts


@pytest.mark.slow
def test_the_checker_can_fail(browser, tmp_path):
    site = tmp_path
    bad = site / "bad.html"
    bad.write_text('<html><body><p>raw $$x$$ and \\(y\\)</p><img src="missing.png">'
                   '<a href="nowhere.html">x</a><a href="bad.html#nope">y</a>'
                   '<script>undefined_function()</script></body></html>', encoding="utf-8")
    problems, _ = page_problems(browser, bad, site)
    for fragment in ("script error", "failed resource", "MathJax did not load", "raw math", "image not drawn",
                     "broken link", "no anchor #nope"):
        assert any(fragment in p for p in problems), (fragment, problems)


@pytest.mark.slow
@pytest.mark.parametrize("rel", [pytest.param(p, marks=pytest.mark.xfail(strict=False, reason=KNOWN_FAULTS[p]))
                                 if p in KNOWN_FAULTS else p for p in PAGES])
def test_page_in_the_browser(browser, site, rel):
    problems, facts = page_problems(browser, site / rel, site)
    assert not problems, f"{rel}:\n" + "\n".join(problems)
    if rel.startswith("notebooks/"):
        assert facts["typeset"] > 0 and facts["images"], f"{rel}: no math or no figure"


@pytest.mark.slow
def test_an_animation_plays_in_the_browser(browser, animated_book):
    problems, facts = page_problems(browser, animated_book / "notebooks" / "01_a.html", animated_book)
    assert not problems
    assert facts["animations"] == [{"drawn": True, "frames": 6}]


@pytest.mark.slow
@pytest.mark.xfail(not _has_animation(NB01), strict=False, reason="needs the animation in notebook 01")
def test_notebook_01_plays_its_animation(browser, site):
    rel = next(p for p in PAGES if p.startswith("notebooks/01_"))
    problems, facts = page_problems(browser, site / rel, site)
    assert not problems
    assert facts["animations"], "no to_jshtml animation on the page"
    assert all(a["drawn"] and a["frames"] > 1 for a in facts["animations"]), facts["animations"]
