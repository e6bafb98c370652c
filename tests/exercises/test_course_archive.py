"""The course archive of docs/TEACHING.md holds what the student notebooks read and link to, and notebook 05's §7
runs from it.

The archive is built exactly as TEACHING.md's recipe says (its ``git archive`` command, with the output
moved into tmp_path), from HEAD: so these tests check the committed state.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA_EXT = (".csv", ".npz", ".npy", ".json", ".txt")


def _in_git_checkout():
    if shutil.which("git") is None:
        return False
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--is-inside-work-tree"], capture_output=True, text=True)
    return done.returncode == 0 and done.stdout.strip() == "true"


needs_git = pytest.mark.skipif(not _in_git_checkout(), reason="the course archive is built with git archive: "
                                                              "needs git and a git checkout of the repository")


def recipe():
    """TEACHING.md's ``git archive`` command, as an argument list."""
    text = (ROOT / "docs" / "TEACHING.md").read_text()
    block = next(b for b in re.findall(r"```bash\n(.*?)```", text, re.S) if "git archive" in b)
    return shlex.split(block.replace("\\\n", " "))


def build_archive(tmp_path, ref="HEAD"):
    """Run the recipe (at ``ref``) into tmp_path and unpack it; return the unpacked folder."""
    args = recipe()
    assert args[:2] == ["git", "archive"] and "-o" in args and "HEAD" in args, args
    zip_path = tmp_path / "course.zip"
    args[args.index("-o") + 1] = str(zip_path)
    args[args.index("HEAD")] = ref
    subprocess.run(args, cwd=ROOT, check=True, capture_output=True)
    out = tmp_path / "course"
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(out)
    return out


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return build_archive(tmp_path_factory.mktemp("archive"))


def student_code(path):
    """The code cells of a notebook, IPython magics (``%matplotlib inline``) left out."""
    return ["\n".join(line for line in c.source.splitlines() if not line.lstrip().startswith(("%", "!")))
            for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def data_files_read(code):
    """Repository-relative paths of the data files a notebook's code reads.

    Two ways a notebook reaches a file: a path constant imported from kmt_ref (``COST_CSV``, or a folder such as
    ``MODELS_DIR`` joined with a literal, ``MODELS_DIR / "paper.npz"``), or a literal path ending in a data
    extension (relative to notebooks/, where the notebook runs).
    """
    import ast
    import importlib

    import kmt_ref
    base = Path(kmt_ref.__file__).resolve().parents[1]   # the checkout kmt_ref is imported from
    tree = ast.parse(code)
    constants, joined, literals = {}, [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kmt_ref"):
            mod = importlib.import_module(node.module)
            for alias in node.names:
                value = getattr(mod, alias.name, None)
                if isinstance(value, Path):
                    constants[alias.asname or alias.name] = value
        elif (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.left, ast.Name)
              and isinstance(node.right, ast.Constant) and isinstance(node.right.value, str)):
            joined.append((node.left.id, node.right.value))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.endswith(DATA_EXT):
            literals.add(node.value)
    found = set()
    for name, value in constants.items():
        targets = [value / rel for left, rel in joined if left == name] if value.is_dir() else [value]
        found |= {t.resolve().relative_to(base).as_posix() for t in targets}
    found |= {(Path("notebooks") / lit).as_posix() for lit in literals - {rel for _, rel in joined}}
    return found


@needs_git
@pytest.mark.parametrize("nb", sorted(p.name for p in (ROOT / "notebooks").glob("0*.ipynb")))
def test_every_data_file_a_student_notebook_reads_is_in_the_archive(nb, course):
    code = "\n".join(student_code(ROOT / "notebooks" / nb))
    for rel in data_files_read(code):
        assert (course / rel).is_file(), f"{nb} reads {rel}, which the course archive of docs/TEACHING.md leaves out"


@needs_git
def test_the_data_files_are_found_and_ship_as_package_data(course):
    """The scan finds what notebooks 04 and 05 read, and each is package data (pyproject), not a repository file."""
    code = {nb: "\n".join(student_code(ROOT / "notebooks" / f"{nb}.ipynb"))
            for nb in ("04_learning_to_cluster", "05_leaner_binary_codes")}
    assert "kmt_ref/datasets/binary_cost.csv" in data_files_read(code["05_leaner_binary_codes"])
    assert "kmt_ref/models/paper.npz" in data_files_read(code["04_learning_to_cluster"])
    text = (ROOT / "pyproject.toml").read_text()
    patterns = dict(re.findall(r'^"(kmt_ref\.\w+)" = \[(.*)\]$', text, re.M))
    for rel in set().union(*map(data_files_read, code.values())):
        package, name = rel.rsplit("/", 1)
        globs = re.findall(r'"([^"]+)"', patterns.get(package.replace("/", "."), ""))
        assert any(Path(name).match(g) for g in globs), f"{rel} is not package data in pyproject.toml"


@needs_git
def test_notebook_05_section_7_runs_from_the_unpacked_archive(course, tmp_path):
    """The imports cell and §7's code cells of the archived student notebook, run with the archive's kmt_ref."""
    nb = nbformat.read(course / "notebooks" / "05_leaner_binary_codes.ipynb", as_version=4)
    cells, inside = [], False
    for c in nb.cells:
        if c.cell_type == "markdown" and re.search(r"^## \d+\.", c.source, re.M):
            inside = bool(re.search(r"^## 7\.", c.source, re.M))
        elif c.cell_type == "code" and inside:
            cells.append(c.source)
    assert cells and "COST_CSV" in "\n".join(cells)
    first = next(c.source for c in nb.cells if c.cell_type == "code")
    script = tmp_path / "section7.py"
    script.write_text("\n\n".join(["import kmt_ref, os",
                                   f"assert os.path.realpath(kmt_ref.__file__).startswith({str(course.resolve())!r}), "
                                   "kmt_ref.__file__",
                                   first, *cells]))
    env = {**os.environ, "PYTHONPATH": str(course), "MPLBACKEND": "Agg"}
    done = subprocess.run([sys.executable, str(script)], cwd=course / "notebooks", env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "k = 1000" in done.stdout


def test_every_path_a_notebook_module_holds_is_inside_the_package():
    """A module the notebooks import keeps its data files inside kmt_ref (a function's default argument may read
    one without the notebook naming it), so an installed kmt_ref, or the course archive, has them."""
    import importlib

    import kmt_ref
    package = Path(kmt_ref.__file__).resolve().parent
    modules = {m for src in (ROOT / "notebooks" / "src").glob("*.py")
               for m in re.findall(r"^\s*(?:from|import) (kmt_ref[\w.]*)", src.read_text(), re.M)}
    found = 0
    for name in sorted(modules):
        for attr, value in vars(importlib.import_module(name)).items():
            if isinstance(value, Path):
                found += 1
                assert package in value.resolve().parents, f"{name}.{attr} = {value} lies outside the package"
    assert found >= 3   # the models folder, the validation draw, the binary codes' cost


@needs_git
def test_the_archive_ships_the_pages_the_notebooks_link_to_and_no_answer(course):
    """Every page and figure the student notebooks reach by their links (kmt_ref.course.student_files) is in the
    archive, every relative link of its notebooks and of those pages resolves inside it (file and anchor), the
    README's only dead links are to the pages left out on purpose, and neither docs/TEACHING.md nor
    docs/RUBRICS.md nor a solutions notebook is in it."""
    from kmt_ref.course import INSTRUCTOR_DOCS, dead_links, student_files

    wanted = student_files()
    assert "docs/SPEC.md" in wanted and "docs/EXERCISES.md" in wanted
    missing = [rel for rel in wanted if not (course / rel).is_file()]
    assert missing == [], f"the course archive of docs/TEACHING.md leaves out {missing}"
    for rel in INSTRUCTOR_DOCS:
        assert not (course / rel).exists(), rel
    assert not (course / "notebooks" / "solutions").exists()
    notebooks = sorted((course / "notebooks").glob("0*.ipynb"))
    assert len(notebooks) == 5
    assert dead_links(course, notebooks + [course / rel for rel in wanted if rel.endswith(".md")]) == []
    # the README (the project's front page, which pip needs) links the instructors' and developers' pages too:
    # those, and only those, are the pages the archive leaves out on purpose
    left_out = {line.split(": ", 1)[1].split("#")[0] for line in dead_links(course, [course / "README.md"])}
    assert left_out <= set(INSTRUCTOR_DOCS) | {"docs/ARCHITECTURE.md", "docs/PERFORMANCE.md"}, left_out
