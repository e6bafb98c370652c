"""The course for nbgrader: ``python -m kmt_ref course DIR``, ``feedback DIR`` and ``screen DIR``.

``course DIR`` writes an nbgrader course directory: ``DIR/nbgrader_config.py`` (:data:`CONFIG`, with the
release's preprocessors of :func:`release_preprocessors`) and, for each unit of :data:`UNITS`,
``DIR/source/unitN/`` with the solutions notebook (:func:`course_notebook`, its links rewritten by
:func:`rewrite_links`) and the files its links reach (:func:`linked_files`; never :data:`INSTRUCTOR_DOCS`).
What the configuration sets and why, and the nbgrader workflow around both commands, are in docs/TEACHING.md
("With nbgrader").

``feedback DIR`` makes the feedback pages ``nbgrader generate_feedback`` wrote under ``DIR/feedback/`` read
offline (:func:`offline_feedback`): MathJax 2.7 from the ``jupyter-server-mathjax`` package, in a
``_static/mathjax`` folder beside the pages of each student's assignment (the parts MathJax loads for the
site's configuration, about 2 MB), instead of a CDN; no CDN stylesheet (font-awesome); long output lines
wrapped instead of cut off at the right. Each ``feedback/<student>/<assignment>/`` folder is then
self-contained: return it whole.

``screen DIR`` lists the lines of submitted code cells that touch the grading machinery (:func:`screen`).

An existing ``DIR`` must be empty or a course this command wrote (its marker file :data:`MARKER`); it is
then updated in place, and everything nbgrader wrote (``release/``, ``submitted/``, ``autograded/``,
``feedback/``, ``gradebook.db``) is kept.
"""
from __future__ import annotations

import json
import posixpath
import re
import shutil
import time
from pathlib import Path

__all__ = ["UNITS", "INSTRUCTOR_DOCS", "TAMPERING", "clear_answer_outputs", "linked_files", "offline_feedback",
           "release_preprocessors", "dead_links", "rewrite_links", "screen", "student_files", "write_course",
           "register"]

#: assignment name -> notebook number: one nbgrader assignment per unit of docs/TEACHING.md's syllabus
UNITS = {f"unit{int(n)}": n for n in ("01", "02", "03", "04", "05")}

#: the pages that state answers: never copied into a course's release or the course archive
INSTRUCTOR_DOCS = ("docs/TEACHING.md", "docs/RUBRICS.md")

#: the marker file of a course directory written by ``course``
MARKER = ".kmt_ref_course"

#: the student pages the course archive ships besides what the notebooks link to
STUDENT_PAGES = ("docs/GLOSSARY.md", "docs/EXERCISES.md")

#: a markdown link or image: ``[text](target)`` / ``![alt](target)``
LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)\)")
_SCHEME = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//|#)")

CONFIG = '''\
# nbgrader_config.py of the kmt_ref course (written by python -m kmt_ref course; docs/TEACHING.md)
from kmt_ref.course import release_preprocessors

c = get_config()
c.ClearSolutions.code_stub = {{"python": {code_stub!r}}}
c.ClearSolutions.text_stub = {text_stub!r}
c.Execute.timeout = 600  # seconds per cell; nbgrader's default of 30 is too short for notebook 04's training runs
# the release keeps the figures and animations; only the answer and tests cells lose their outputs
c.GenerateAssignment.preprocessors = release_preprocessors()
'''

#: the stubs the student notebook has in place of the solutions (tools/make_notebook.py's CODE_STUB, TEXT_STUB)
CODE_STUB, TEXT_STUB = "# your code: it sets `answer`", "*Your answer here.*"


# --------------------------------------------------------------------------
# The release's preprocessors (imported by nbgrader_config.py)
# --------------------------------------------------------------------------
def clear_answer_outputs():
    """The preprocessor class ``ClearAnswerOutputs``: clears the outputs and execution counts of the cells that
    carry nbgrader metadata of a graded or solution cell (the answer cells and the tests cells), keeps the rest."""
    from nbgrader.preprocessors import NbGraderPreprocessor

    class ClearAnswerOutputs(NbGraderPreprocessor):
        """Clear the outputs of answer and tests cells only (nbgrader's ClearOutput clears them all)."""

        def preprocess_cell(self, cell, resources, index):
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "code" and (meta.get("solution") or meta.get("grade")):
                cell.outputs = []
                cell.execution_count = None
            return cell, resources

    return ClearAnswerOutputs


def release_preprocessors():
    """nbgrader's ``GenerateAssignment.preprocessors`` with ``ClearOutput`` replaced by :func:`clear_answer_outputs`."""
    from nbgrader.converters import GenerateAssignment
    from nbgrader.preprocessors import ClearOutput

    default = GenerateAssignment.class_traits()["preprocessors"].default()
    if ClearOutput not in default:
        raise RuntimeError("this nbgrader's generate_assignment has no ClearOutput step to replace")
    keep = clear_answer_outputs()
    return [keep if p is ClearOutput else p for p in default]


# --------------------------------------------------------------------------
# Links
# --------------------------------------------------------------------------
def _targets(text, where):
    """(match, repository path, fragment) of the relative links of markdown ``text`` read at ``where``."""
    for m in LINK.finditer(text):
        url = m.group(3)
        if _SCHEME.match(url):
            continue
        path, _, frag = url.partition("#")
        yield m, posixpath.normpath(posixpath.join(posixpath.dirname(where), path)), frag


def linked_files(root, starts):
    """The repository files (relative, POSIX) reached by following relative links from the files ``starts``
    (markdown files and notebooks, relative): every file linked to, and recursively the links of the markdown
    files among them; :data:`INSTRUCTOR_DOCS` are never followed. ``starts`` themselves are left out."""
    import nbformat

    root = Path(root)
    found, todo = set(), list(starts)
    while todo:
        rel = todo.pop()
        if rel.endswith(".ipynb"):
            nb = nbformat.read(root / rel, as_version=4)
            text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        elif rel.endswith(".md"):
            text = (root / rel).read_text(encoding="utf-8")
        else:
            continue
        for _, target, _ in _targets(text, rel):
            if target in INSTRUCTOR_DOCS or target in found or target in starts:
                continue
            if target.startswith("../") or not (root / target).is_file():
                raise ValueError(f"{rel} links to {target!r}, which is not a file of the repository")
            found.add(target)
            todo.append(target)
    return found


def student_files(root=None):
    """The pages and figures of the course archive besides the package and the notebooks: what the student
    notebooks link to (:func:`linked_files`), :data:`STUDENT_PAGES` and what they link to."""
    from .book import checkout_root

    root = checkout_root(root)
    notebooks = [p.relative_to(root).as_posix() for p in sorted((root / "notebooks").glob("0*.ipynb"))]
    return sorted(linked_files(root, notebooks + list(STUDENT_PAGES)) | set(STUDENT_PAGES))


def rewrite_links(text, where):
    """Markdown ``text``, read at repository path ``where``, with each relative link rewritten for the top of an
    assignment's folder, where the notebook is stored and the files it links to keep their repository paths:
    ``../docs/SPEC.md#x`` in a notebook of ``notebooks/`` becomes ``docs/SPEC.md#x``. A link to one of
    :data:`INSTRUCTOR_DOCS` keeps its text and loses its target."""
    out, last = [], 0
    for m, target, frag in _targets(text, where):
        out.append(text[last:m.start()])
        if target in INSTRUCTOR_DOCS:
            out.append(m.group(2))
        else:
            url = target + (f"#{frag}" if frag else "")
            out.append(f"{m.group(1)}[{m.group(2)}]({url})")
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def _anchors(path):
    """The anchors of a markdown page (GitHub's, as kmt_ref.book writes them) or of a notebook's headings."""
    import nbformat as nbf

    from .book import github_slug

    if path.suffix == ".ipynb":
        text = "\n".join(c.source for c in nbf.read(path, as_version=4).cells if c.cell_type == "markdown")
    else:
        text = path.read_text(encoding="utf-8")
    text = re.sub(r"```.*?```", "", text, flags=re.S)  # a "# comment" in a code block is no heading
    seen = {}
    return {github_slug(re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", re.sub(r"[*`]", "", m)), seen)
            for m in re.findall(r"^#{1,6} (.*)$", text, re.M)}


def dead_links(folder, files):
    """The relative links of ``files`` (notebooks and markdown pages under ``folder``) that do not resolve to a
    file under ``folder`` (and to an anchor of it, when they name one); also follows the pages they reach."""
    import nbformat

    bad, todo, done = [], list(files), set()
    folder = Path(folder).resolve()
    while todo:
        path = Path(todo.pop()).resolve()
        if path in done or path.suffix not in (".md", ".ipynb"):
            continue
        done.add(path)
        text = ("\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown")
                if path.suffix == ".ipynb" else path.read_text(encoding="utf-8"))
        for url in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^(?:[a-zA-Z][a-zA-Z0-9+.-]*:|//)", url):
                continue
            rel, _, frag = url.partition("#")
            target = (path.parent / rel).resolve() if rel else path
            where = f"{path.relative_to(folder)}: {url}"
            if folder not in target.parents or not target.is_file():
                bad.append(where)
            elif frag and frag not in _anchors(target):
                bad.append(where + " (no such anchor)")
            else:
                todo.append(target)
    return bad


# --------------------------------------------------------------------------
# The course directory
# --------------------------------------------------------------------------
def course_notebook(root, stem):
    """The nbgrader source of notebook ``stem``: the solutions notebook, its ungraded cells' outputs and
    markdown taken from the student notebook, every relative link rewritten for the assignment's folder."""
    import nbformat

    root = Path(root)
    solved = nbformat.read(root / "notebooks" / "solutions" / f"{stem}.ipynb", as_version=4)
    student = nbformat.read(root / "notebooks" / f"{stem}.ipynb", as_version=4)
    if [c.cell_type for c in solved.cells] != [c.cell_type for c in student.cells]:
        raise ValueError(f"notebooks/{stem}.ipynb and its solutions do not have the same cells: rebuild them "
                         f"with tools/make_notebook.py")
    for mine, theirs in zip(solved.cells, student.cells):
        if "nbgrader" in mine.metadata:
            continue
        if mine.cell_type == "code":
            mine.outputs, mine.execution_count = theirs.outputs, theirs.execution_count
        else:
            mine.source = theirs.source  # written for notebooks/, as the graded cells are
    for cell in solved.cells:
        if cell.cell_type == "markdown":
            cell.source = rewrite_links(cell.source, f"notebooks/{stem}.ipynb")
    return solved


def _check_dir(out, name):
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{name}={str(out)!r} is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise ValueError(f"{name}={str(out)!r} is a folder that is not empty and not a kmt_ref course "
                         f"(no {MARKER} in it): choose a new or empty folder")


def write_course(out, *, units=None, root=None):
    """Write the nbgrader course directory ``out``; return the assignments written (``["unit1", ...]``).

    Parameters
    ----------
    out : str or Path
        The course's folder: new, empty, or a course written before (updated; nbgrader's own files are kept).
    units : list of str, optional
        The assignments to write (keys of :data:`UNITS`); default all five.
    root : str or Path, optional
        The kmt_ref checkout to read; default the one the package was installed from.
    """
    import nbformat

    from .book import checkout_root
    from .exercises import NOTEBOOKS

    root = checkout_root(root)
    units = list(UNITS) if units is None else list(units)
    bad = [u for u in units if u not in UNITS]
    if bad:
        raise ValueError(f"units={bad!r}: the assignments are {', '.join(UNITS)}")
    _check_dir(out, "out")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "nbgrader_config.py").write_text(CONFIG.format(code_stub=CODE_STUB, text_stub=TEXT_STUB),
                                            encoding="utf-8")
    for unit in units:
        stem = NOTEBOOKS[UNITS[unit]]
        folder = out / "source" / unit
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        nbformat.write(course_notebook(root, stem), folder / f"{stem}.ipynb")
        for rel in sorted(linked_files(root, [f"notebooks/{stem}.ipynb"])):
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / rel, folder / rel)
    (out / MARKER).write_text(json.dumps({"units": sorted(set(units) | _units_of(out))}), encoding="utf-8")
    return units


def _units_of(out):
    return {p.name for p in (Path(out) / "source").iterdir() if p.is_dir()} if (Path(out) / "source").is_dir() else set()


# --------------------------------------------------------------------------
# Offline feedback
# --------------------------------------------------------------------------
#: what of MathJax 2.7 the feedback pages leave out (not loaded with their configuration): other languages,
#: the accessibility extensions, the SVG output and the fonts other than STIX-Web
MATHJAX_SKIP = ("localization", "extensions/a11y", "jax/output/SVG", "unpacked")

#: the marker comment of a page made offline
OFFLINE = "<!-- kmt_ref: offline -->"

#: what a feedback page gets in its head: the site's MathJax settings, long output lines wrapped, wide images (an
#: animation's frames) scaled to the page
HEAD = """{marker}
<script type="text/x-mathjax-config">
MathJax.Hub.Config({{tex2jax: {{inlineMath: [['$','$'], ['\\\\(','\\\\)']], displayMath: [['$$','$$'], ['\\\\[','\\\\]']],
                             processEscapes: true, processEnvironments: true}},
                    "HTML-CSS": {{availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null}},
                    MathMenu: {{showFontMenu: false}}}});
MathJax.Hub.Register.StartupHook("HTML-CSS Jax Ready", function () {{
  MathJax.OutputJax["HTML-CSS"].webFontDefault = "serif";
}});
</script>
<script src="{src}"></script>
<style>
div.output_area pre, div.output_subarea pre, div.output_text pre {{ white-space: pre-wrap; overflow-wrap: anywhere; }}
div.input_area pre {{ white-space: pre-wrap; overflow-wrap: anywhere; }}
div.output_area img, div.output_subarea img {{ max-width: 100%; height: auto; }}
.MJX_Assistive_MathML * {{ font-family: serif !important; }}
</style>
"""


def _mathjax_copy(dest):
    from .book import MATHJAX_CONFIG, mathjax_folder  # noqa: F401  (mathjax_folder checks the packages)

    source = mathjax_folder()

    def ignore(folder, names):
        rel = Path(folder).relative_to(source).as_posix()
        skip = {n for n in names if posixpath.normpath(posixpath.join(rel, n)) in MATHJAX_SKIP}
        if rel == "fonts/HTML-CSS" or rel == "jax/output/HTML-CSS/fonts":
            skip |= {n for n in names if n != "STIX-Web"}
        return skip

    if not (dest / "MathJax.js").is_file():
        shutil.copytree(source, dest, ignore=ignore, dirs_exist_ok=True)


def offline_feedback(course):
    """Make every page under ``course/feedback/`` read offline (see the module's docstring); return the pages.

    A page already made offline is left as it is, so the command can run again after ``generate_feedback``.
    """
    from bs4 import BeautifulSoup

    from .book import MATHJAX_CONFIG

    course = Path(course)
    folder = course / "feedback"
    if not folder.is_dir():
        raise ValueError(f"{str(course)!r} has no feedback/ folder: run nbgrader generate_feedback there first")
    pages = sorted(folder.glob("*/*/*.html"))
    for page in pages:
        text = page.read_text(encoding="utf-8")
        _mathjax_copy(page.parent / "_static" / "mathjax")
        if OFFLINE in text:
            continue
        soup = BeautifulSoup(text, features="html.parser")
        for tag in soup.find_all("script", src=True):
            if _SCHEME.match(tag["src"]):
                tag.decompose()  # the CDN MathJax (replaced below); nbgrader's page needs no other script
        for tag in soup.find_all("script"):
            if tag.get("type") == "text/x-mathjax-config":
                tag.decompose()
        for tag in soup.find_all("link", href=True):
            if _SCHEME.match(tag["href"]):
                tag.decompose()  # font-awesome: the page's icons are decoration
        head = BeautifulSoup(HEAD.format(marker=OFFLINE, src=f"_static/mathjax/MathJax.js?config={MATHJAX_CONFIG}"),
                             features="html.parser")
        soup.head.append(head)
        page.write_text(str(soup), encoding="utf-8")
    return pages


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------
# --------------------------------------------------------------------------
# Screening the submissions
# --------------------------------------------------------------------------
#: what a submitted cell has no reason to do, and can do to make the tests pass without the work: rebind
#: `check` or `report`, write into kmt_ref, swap code objects, reload modules, trace calls, read the
#: checkers' private state or frames, run code in another process or a thread of its own, or compile code
#: (the tests run in the student's kernel, so the guard cannot stop all of these)
TAMPERING = re.compile(
    r"^\s*(?:check|report|kmt_ref_check)\s*[:=](?!=)"          # check = ...
    r"|\bdef\s+(?:check|report)\s*\("                          # def check(...)
    r"|\bimport\b[^\n]*\bas\s+(?:check|report)\b"             # import ... as check
    r"|\bkmt_ref\b[\w.]*\.\w+\s*=(?!=)"                        # kmt_ref.exercises.check = ...
    r"|\.\s*(?:check|report|checker)\s*=(?!=)"                   # E.check = ... (any alias)
    r"|\b(?:setattr|delattr)\s*\("
    r"|__code__|__globals__|__dict__|\bvars\s*\(|\bsys\.modules\b|\bimportlib\b|\b(?:set|get)trace\b|\bbuiltins\b"
    r"|\b_getframe\b|\b_current_frames\b|\bcurrentframe\b|\bf_locals\b|\bf_back\b|\bgc\b"  # the checker's frames
    r"|\bsubprocess\b|\bmultiprocessing\b|\bconcurrent\b|\b_thread\b|\bos\.(?:system|popen|fork|exec\w*)\b"
    r"|\b(?:exec|eval|compile)\s*\(|\b__(?:array|float|int|index|complex)__\b|\binspect\b"
    r"|\bthreading\b|\bThread\b|\bsetprofile\b|\bwalk_stack\b|\btb_frame\b|\bspawn\w*|\bkmt_ref\.exercises\.nb0\d"
    r"|\b(?:EXERCISES|REGISTRY|_RESULTS|_RUNNING|_FAILED_CELL|_registry)\b|\bnb0\d\._\w+",
    re.M)


def screen(course):
    """The submitted cells of ``course/submitted/`` that touch the grading machinery (:data:`TAMPERING`).

    Returns ``[(student, assignment, notebook, cell index, line)]`` for every line of a code cell that a
    student wrote or changed (its source is not a cell of the assignment's source notebook) and that matches.
    A line listed is a place to read, not a verdict.
    """
    course = Path(course)
    folder = course / "submitted"
    if not folder.is_dir():
        raise ValueError(f"{str(course)!r} has no submitted/ folder: collect the submissions first")
    import nbformat

    found = []
    for path in sorted(folder.glob("*/*/*.ipynb")):
        student, assignment = path.parts[-3], path.parts[-2]
        source = course / "source" / assignment / path.name
        known = {c.source for c in nbformat.read(source, as_version=4).cells} if source.is_file() else set()
        for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type != "code" or cell.source in known:
                continue
            found += [(student, assignment, path.name, index, line.strip()) for line in cell.source.splitlines()
                      if TAMPERING.search(line)]
    return found


def _screen_command(args):
    found = screen(args.dir)
    for student, assignment, notebook, index, line in found:
        print(f"{student} {assignment}/{notebook} cell {index}: {line}")
    print(f"{len(found)} line{'' if len(found) == 1 else 's'} to read" if found else
          "no submitted cell touches the grading machinery")
    return 0


def _course_command(args):
    start = time.perf_counter()
    units = write_course(args.dir, units=args.units, root=args.root)
    print(f"wrote the nbgrader course {args.dir} ({', '.join(units)}) in {time.perf_counter() - start:.1f} s; "
          f"next, in it: nbgrader generate_assignment {units[0]}")
    return 0


def _feedback_command(args):
    pages = offline_feedback(args.dir)
    print(f"made {len(pages)} feedback page{'s' * (len(pages) != 1)} under {Path(args.dir) / 'feedback'} read offline")
    return 0


def register(subparsers):
    """Add ``course``, ``feedback`` and ``screen`` to ``python -m kmt_ref``."""
    p = subparsers.add_parser(
        "course", help="an nbgrader course directory: its config and one assignment per unit",
        description="Write an nbgrader course directory: nbgrader_config.py, and source/unitN/ with notebook N's "
                    "solutions and the pages and figures its links reach (docs/TEACHING.md, 'With nbgrader').")
    p.add_argument("dir", metavar="DIR", help="the course's folder: new, empty, or a course written before")
    p.add_argument("--units", nargs="+", choices=list(UNITS), default=None, metavar="UNIT",
                   help=f"the assignments to write (default all: {' '.join(UNITS)})")
    p.add_argument("--root", default=None, metavar="PATH",
                   help="the kmt_ref checkout to read; default: the checkout the package was installed from")
    p.set_defaults(func=_course_command)
    f = subparsers.add_parser(
        "feedback", help="make the feedback pages of an nbgrader course read offline",
        description="Make the pages nbgrader generate_feedback wrote in DIR/feedback/ read offline (MathJax "
                    "beside them, no CDN) and wrap their long output lines.")
    f.add_argument("dir", metavar="DIR", help="the nbgrader course directory")
    f.set_defaults(func=_feedback_command)
    g = subparsers.add_parser(
        "screen", help="list the submitted cells of an nbgrader course that touch the grading machinery",
        description="List every line of a submitted code cell (under DIR/submitted/) that rebinds check, writes "
                    "into kmt_ref, swaps code objects, reloads modules or reads the checkers' private state: the "
                    "tests run in the student's kernel and cannot stop these (docs/TEACHING.md).")
    g.add_argument("dir", metavar="DIR", help="the nbgrader course directory")
    g.set_defaults(func=_screen_command)
