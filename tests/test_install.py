"""The package as ``pip install .`` makes it: the wheel built, installed alone, run from another folder.

The wheel is built from a copy of the package's sources (so no ``build/`` left in the checkout by an
earlier build can add a file), then installed with ``--no-deps`` into a fresh virtual environment
that has no view of the checkout: its dependencies (numpy, matplotlib, nbconvert, ...) come from the
environment running the tests, through a ``.pth`` file listing that environment's site-packages (a
plain list of folders: the ``.pth`` files there, such as an editable install's finder, are not run).
Every command then runs from an empty temporary folder with no ``PYTHONPATH``: it must import the
installed copy (``kmt_ref.__file__`` is checked), read its data from the package, write where it
says, relative to that folder, and write nothing into site-packages.
"""
import importlib.util
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kmt_ref"


def _source_files():
    """The package's files, relative to the checkout (POSIX): what a wheel must hold, caches left out."""
    return sorted(p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
                  and not p.name.startswith("."))


def _build_isolation():
    """``--no-build-isolation`` when the setuptools here can build a wheel (>= 70.1, or >= 64 with ``wheel``).

    Otherwise pip builds in an isolated environment, fetching setuptools from the package index.
    """
    try:
        import setuptools
    except ImportError:
        return []
    version = tuple(int(x) for x in setuptools.__version__.split(".")[:2])
    has_wheel = importlib.util.find_spec("wheel") is not None
    return ["--no-build-isolation"] if version >= (70, 1) or (version >= (64,) and has_wheel) else []


def run(args, cwd, env=None, ok=True):
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if ok:
        assert proc.returncode == 0, f"{args} exited with {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for rel in _source_files():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    dist = tmp_path_factory.mktemp("dist")
    start = time.perf_counter()
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *_build_isolation(), "-w", str(dist), str(src)],
        cwd=src)
    print(f"wheel built in {time.perf_counter() - start:.1f} s")
    (path,) = dist.glob("kmt_ref-*.whl")
    return path


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """(python of the new environment, its site-packages, the environment variables of every command)."""
    env_dir = tmp_path_factory.mktemp("venv")
    run([sys.executable, "-m", "venv", "--without-pip", "--clear", str(env_dir)], cwd=env_dir)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    purelib = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                       cwd=env_dir).stdout.strip())
    # the new environment has no pip: this one's writes the wheel into its site-packages
    run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(purelib),
         str(wheel)], cwd=env_dir)
    outer = site.getsitepackages() + [sysconfig.get_paths()["purelib"]]
    outer += [site.getusersitepackages()] if site.ENABLE_USER_SITE else []
    outer = [p for p in outer if Path(p).is_dir()]
    (purelib / "_outer_environment.pth").write_text("\n".join(dict.fromkeys(outer)) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env["MPLBACKEND"] = "Agg"
    # nbconvert finds its templates under sys.prefix/share/jupyter: the new prefix has none, the outer one has
    env["JUPYTER_PATH"] = os.pathsep.join(
        [str(Path(sys.prefix) / "share" / "jupyter")] + ([env["JUPYTER_PATH"]] if env.get("JUPYTER_PATH") else []))
    return python, purelib, env


def _tree(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")
                  if "__pycache__" not in p.parts and p.suffix != ".pyc")


def test_the_wheel_holds_every_package_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    packages = [p.parent.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("__init__.py")
                if "__pycache__" not in p.parts]
    assert "kmt_ref/core/exact" in packages and "kmt_ref/viz" in packages
    assert [p for p in packages if f"{p}/__init__.py" not in names] == []
    assert [f for f in _source_files() if f not in names] == []  # modules, models/*.npz, datasets/*
    assert {n.split("/")[0] for n in names} == {"kmt_ref", wheel.name.split("-py")[0] + ".dist-info"}


def test_the_wheel_holds_the_data_the_code_reads(wheel):
    import kmt_ref
    from kmt_ref.data import PAPER_VALIDATION_FILE
    from kmt_ref.learning import MODELS_DIR
    from kmt_ref.viz.binary_figures import COST_CSV
    from kmt_ref.viz.lloyd_figures import SWEEP_CSV

    names = set(zipfile.ZipFile(wheel).namelist())
    package = Path(kmt_ref.__file__).resolve().parent
    models = sorted(MODELS_DIR.glob("*.npz"))
    assert len(models) >= 5
    for path in (PAPER_VALIDATION_FILE, COST_CSV, SWEEP_CSV, *models):
        assert "kmt_ref/" + path.resolve().relative_to(package).as_posix() in names, path


def test_the_installed_package_runs_from_another_folder(installed, tmp_path):
    python, purelib, env = installed
    here = tmp_path.resolve()  # the commands print resolved paths
    before = _tree(purelib)
    start = time.perf_counter()

    def kmt(*args, ok=True):
        return run([str(python), "-m", "kmt_ref", *map(str, args)], cwd=tmp_path, env=env, ok=ok)

    where = run([str(python), "-c", "import kmt_ref; print(kmt_ref.__file__)"], cwd=tmp_path, env=env).stdout
    assert Path(where.strip()).resolve() == (purelib / "kmt_ref" / "__init__.py").resolve()  # not the checkout's

    assert "demo" in kmt("--help").stdout and "--root" in kmt("book", "--help").stdout
    assert "checkpoint" in kmt("evaluate", "--help").stdout

    out = kmt("demo").stdout  # the authors' draw: kmt_ref/datasets/paper_validation.npy
    figure = here / "demo_output" / "fig1_validation.png"
    assert f"wrote figure 1 to {figure}" in out and figure.is_file()
    assert "6.442" in out and "4.593" in out

    # figure 2 reads the committed sweep, the cost figure binary_cost.csv, the training figure every model
    for name in ("fig2_finite_gamma_gap", "fig_binary_cost", "fig_binary_training"):
        assert f"1 figure in {here / 'figures'}" in kmt("figures", "--only", name).stdout
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == [
        "fig2_finite_gamma_gap.png", "fig_binary_cost.png", "fig_binary_training.png"]

    assert "paper" in kmt("evaluate", "paper", "--tasks", "2", "--steps", "1").stdout  # a committed model by name

    proc = kmt("book", "--out", tmp_path / "site", ok=False)  # no checkout beside an installed package
    assert proc.returncode == 2 and "pass --root the checkout's folder" in proc.stderr
    proc = kmt("book", "--root", tmp_path, "--out", tmp_path / "site", ok=False)
    assert proc.returncode == 2 and f"--root={str(tmp_path)!r} is not a kmt_ref checkout" in proc.stderr
    assert "wrote" in kmt("book", "--root", ROOT, "--out", tmp_path / "site").stdout
    assert (tmp_path / "site" / "index.html").is_file()

    assert _tree(purelib) == before  # nothing written into site-packages
    print(f"commands ran in {time.perf_counter() - start:.1f} s")
