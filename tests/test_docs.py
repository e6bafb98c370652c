"""The text a reader meets names only paths that exist and commands that parse.

Sources, one test per file so a failure names its file: README.md, docs/*.md, the markdown cells and
the code cells' comments of notebooks/src/*.py, and the docstrings and comments of every module under
kmt_ref/ and tests/.

Paths. A path is a word that starts with one of the repository's top folders (:data:`TOP`) and a
slash, e.g. ``kmt_ref/sweep.py``, ``tests/core/``, ``figures/fig1_validation.png``; a path of
another repository (the authors' ``results/...``) does not start so and is not checked. Rules:

- it exists in the repository, as a file or a folder (a figure the text shows is committed in
  figures/, so a figure path must exist like any other);
- a name without a suffix may name a module by its path: ``kmt_ref/learning/cli`` stands for
  ``kmt_ref/learning/cli.py``;
- a pattern must match at least one path: ``*`` stands for any name, and a capital ``N`` run after a
  lowercase letter, a digit or ``_`` for digits (``kmt_ref/exercises/nbNN.py``);
- the worked example of how to add a clustering variant (:data:`EXAMPLES`) names the files a reader
  would create: they are the only paths checked not to exist yet;
- the value of an output option of a ``python -m kmt_ref`` command (:data:`OUTPUT_OPTIONS`) is
  written by that command, so it need not exist, unless it is under figures/ (the committed
  figures and their data are what the text shows).

Commands. Every ``python -m kmt_ref ...`` in a code span (`...` or ``...``) or at the start of a
line of a code block parses with the command line's own parser (:func:`kmt_ref.cli.build_parser`;
nothing is run). A ``#`` starts a shell comment. ``a | b | c`` after the command lists
alternatives when each of b, c is a command name (``python -m kmt_ref train | evaluate``); any other
``|`` is a shell pipe, and what follows it is not ours. In a list of alternatives each name must be a
command. A command name alone (``python -m kmt_ref evaluate``) names the command: it must be one,
but need not parse (``evaluate`` needs a checkpoint). Placeholders (a word in capitals such as
``N`` or ``CKPT``, ``<command>``, ``{out}``, ``...``, ``…``) stand for a value: after an option that
takes one they become a valid value (its first choice, or 1 for a number, else ``x``); elsewhere the
command is checked up to the placeholder.
"""
import argparse
import ast
import contextlib
import io
import re
import shlex
import tokenize
from pathlib import Path

import pytest

from kmt_ref.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]

#: the repository's top folders: a word starting with one of these and "/" is a path of this repository
TOP = ("kmt_ref", "tests", "docs", "figures", "notebooks", "benchmarks", "tools")

#: source -> the paths of a worked example, files that a reader following it would create
EXAMPLES = {"docs/ARCHITECTURE.md": {"kmt_ref/algorithms/median.py", "tests/algorithms/test_median.py"}}

#: options whose value is a file or folder the command writes
OUTPUT_OPTIONS = ("--out", "--outdir", "--save")

PATH = re.compile(r"(?<![\w./:@-])((?:%s)/(?:[\w.*/-]*[\w*/])?)" % "|".join(TOP))
FENCE = re.compile(r"^[ \t]*```[^\n]*$", re.M)
SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
COMMAND = "python -m kmt_ref"
DIGITS = re.compile(r"(?<=[a-z0-9_])N+(?![A-Za-z])")
PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z_]*|<[^>]*>|\{[^}]*\}|\.\.\.|…)$")


# --------------------------------------------------------------------------
# The text of each source, as (first line number, text) chunks
# --------------------------------------------------------------------------
def _markdown_cells(path):
    """The markdown cells of a notebook source (``# %% [markdown]`` up to the next ``# %%``)."""
    chunks, lines, start, inside = [], [], 0, False
    for no, line in enumerate(path.read_text().splitlines() + ["# %%"], start=1):
        if line.startswith("# %%"):
            if inside and lines:
                chunks.append((start, "\n".join(lines)))
            inside, lines, start = line.startswith("# %% [markdown]"), [], no + 1
        elif inside:
            lines.append(line[2:] if line.startswith("# ") else line.lstrip("#"))
    return chunks


def _docstrings_and_comments(path, skip=None):
    """Every docstring (module, class, function) and every comment of a Python file.

    With ``skip`` (line numbers), a notebook source: only its comments not on those lines (its ``%`` magics
    are not Python).
    """
    source = path.read_text()
    chunks = []
    for node in ast.walk(ast.parse(source)) if skip is None else ():
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                chunks.append((body[0].lineno, body[0].value.value))
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and tok.start[0] not in (skip or ()):
            chunks.append((tok.start[0], tok.string.lstrip("#")))
    return chunks


def _sources():
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "notebooks" / "src").glob("*.py")),
             *sorted((ROOT / "kmt_ref").rglob("*.py")), *sorted((ROOT / "tests").rglob("*.py"))]
    return [f.relative_to(ROOT).as_posix() for f in files]


def _chunks(name):
    path = ROOT / name
    if name.endswith(".md"):
        return [(1, path.read_text())]
    if name.startswith("notebooks/"):  # markdown cells, and the comments of code cells
        cells = _markdown_cells(path)
        markdown = {start + i for start, text in cells for i in range(-1, text.count("\n") + 1)}
        return cells + _docstrings_and_comments(path, skip=markdown)
    return _docstrings_and_comments(path)


def _line(start, text, offset):
    return start + text.count("\n", 0, offset)


# --------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------
def _masked(text, pattern):
    """``text`` with every match of ``pattern`` blanked (its line breaks kept, so line numbers hold)."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def _commands(start, text):
    """(line, command text) of every ``python -m kmt_ref ...`` in code spans and at the start of lines."""
    found = []
    text = _masked(text, FENCE)  # the fences' lines; a span inside a fenced block still counts
    for m in SPAN.finditer(text):
        body = m.group(2)
        if "\n\n" not in body and body.strip().startswith(COMMAND):
            found.append((_line(start, text, m.start()), " ".join(body.split())))
    for no, line in enumerate(_masked(text, SPAN).splitlines()):  # code blocks, indented code, comments
        if line.strip().startswith(COMMAND):
            found.append((start + no, line.strip()))
    return sorted(found, key=lambda found: found[0])


def _subcommands(parser):
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def _value_for(action):
    if action.choices:
        return str(next(iter(action.choices)))
    return "1" if action.type in (int, float) else "x"


def _argvs(command, parser):
    """The argument lists a command text stands for (placeholders resolved, alternatives expanded).

    Alternatives (``train | evaluate``) come back as one-word lists after the first.
    """
    words = shlex.split(command[len(COMMAND):], comments=True)
    parts, current = [], []
    for w in words + ["|"]:
        if w == "|":
            parts.append(current)
            current = []
        else:
            current.append(w)
    argvs = [parts[0]]
    for alt in parts[1:]:
        if len(alt) != 1 or alt[0] not in _subcommands(parser):
            break  # a shell pipe: what follows is not ours
        argvs.append(alt)
    return [_resolve(argv, parser) for argv in argvs]


def _resolve(argv, parser):
    out, current = [], parser
    for w in argv:
        if PLACEHOLDER.match(w):
            action = current._option_string_actions.get(out[-1]) if out else None
            if action is None or action.nargs == 0:
                break  # a placeholder for positionals: check up to it
            out.append(_value_for(action))
            continue
        out.append(w)
        if current is parser and w in _subcommands(parser):
            current = _subcommands(parser)[w]
    return out


def _parse_error(parser, argv):
    """The parser's error message for ``argv``, or None if it parses."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            parser.parse_args(argv)
        except SystemExit as exc:
            if exc.code:
                return err.getvalue().strip().splitlines()[-1]
    return None


# --------------------------------------------------------------------------
# Paths
# --------------------------------------------------------------------------
def _outputs(chunks, parser):
    """The paths that the commands of a source write (values of OUTPUT_OPTIONS)."""
    out = set()
    for start, text in chunks:
        for _, command in _commands(start, text):
            for argv in _argvs(command, parser):
                out.update(b for a, b in zip(argv, argv[1:]) if a in OUTPUT_OPTIONS)
    return out


def _exists(path):
    if "*" in path or DIGITS.search(path):
        return any(ROOT.glob(DIGITS.sub(lambda m: "[0-9]" * len(m.group(0)), path)))
    p = ROOT / path
    return p.exists() or (not p.suffix and not path.endswith("/") and p.with_suffix(".py").exists())


@pytest.fixture(scope="module")
def parser():
    return build_parser()


SOURCES = _sources()


def _missing_paths(name, chunks, parser):
    """``name:line: path`` of each path in ``chunks`` that breaks the rules of the module docstring."""
    written = _outputs(chunks, parser)
    missing = []
    for start, text in chunks:
        for m in PATH.finditer(text):
            path = m.group(1)
            if path in EXAMPLES.get(name, ()):
                assert not _exists(path), f"{name}: the example {path} exists: it is no longer an example"
                continue
            if _exists(path) or (path in written and not path.startswith("figures/")):
                continue
            missing.append(f"{name}:{_line(start, text, m.start())}: {path}")
    return missing


@pytest.mark.parametrize("name", SOURCES)
def test_named_paths_exist(name, parser):
    missing = _missing_paths(name, _chunks(name), parser)
    assert not missing, "paths that do not exist:\n" + "\n".join(missing)


def _command_error(command, parser):
    """Why the command line rejects a command text, or None."""
    argvs = _argvs(command, parser)
    if len(argvs) > 1 or (len(argvs[0]) == 1 and not argvs[0][0].startswith("-")):  # names of commands
        wrong = [argv for argv in argvs if len(argv) != 1 or argv[0] not in _subcommands(parser)]
        return f"{wrong}: each should be one command name" if wrong else None
    return _parse_error(parser, argvs[0])


@pytest.mark.parametrize("name", SOURCES)
def test_commands_parse(name, parser):
    bad = []
    for start, text in _chunks(name):
        for line, command in _commands(start, text):
            error = _command_error(command, parser)
            if error:
                bad.append(f"{name}:{line}: {command!r}: {error}")
    assert not bad, "commands the command line rejects:\n" + "\n".join(bad)


def test_the_checks_can_fail(parser):
    """The two checks on made-up text: a missing path, a module by its path, a bad option, a placeholder,
    a command's output."""
    text = ("see `kmt_ref/no_such_module.py`, `kmt_ref/learning/cli`, `tests/core/`, `figures/*.png`;\n"
            "run `python -m kmt_ref sweep --grid tiny` or `python -m kmt_ref demo --seed N`,\n"
            "`python -m kmt_ref train | evaluate`, `python -m kmt_ref demo | head`\n")
    paths = [m.group(1) for m in PATH.finditer(text)]
    assert paths == ["kmt_ref/no_such_module.py", "kmt_ref/learning/cli", "tests/core/", "figures/*.png"]
    assert [_exists(p) for p in paths] == [False, True, True, True]
    commands = [c for _, c in _commands(1, text)]
    assert commands == ["python -m kmt_ref sweep --grid tiny", "python -m kmt_ref demo --seed N",
                        "python -m kmt_ref train | evaluate", "python -m kmt_ref demo | head"]
    argvs = [_argvs(c, parser) for c in commands]
    assert argvs == [[["sweep", "--grid", "tiny"]], [["demo", "--seed", "1"]], [["train"], ["evaluate"]],
                     [["demo"]]]
    assert "invalid choice: 'tiny'" in _command_error(commands[0], parser)
    assert [_command_error(c, parser) for c in commands[1:]] == [None, None, None]
    assert "each should be one command name" in _command_error("python -m kmt_ref demo --seed 1 | train", parser)
    assert _command_error("python -m kmt_ref evaluate", parser) is None  # the name of a command
    assert "one command name" in _command_error("python -m kmt_ref evaluat", parser)  # a typo
    assert "arguments are required" in _command_error("python -m kmt_ref evaluate --tasks 3", parser)
    patterns = ("kmt_ref/exercises/nbNN.py", "kmt_ref/exercises/nb0N.py", "kmt_ref/exercises/nbNNN.py",
                "docs/ARCHITECTURE.md")
    assert [_exists(p) for p in patterns] == [True, True, False, True]
    text = ("`python -m kmt_ref sweep --out benchmarks/mine.csv` writes benchmarks/mine.csv;\n"
            "`python -m kmt_ref sweep --out figures/data/mine.csv` writes figures/data/mine.csv; "
            "see tests/none.py\n")
    assert _missing_paths("x.md", [(10, text)], parser) == [
        "x.md:11: figures/data/mine.csv", "x.md:11: figures/data/mine.csv", "x.md:11: tests/none.py"]


# --------------------------------------------------------------------------
# Links: every Markdown link of README.md and docs/ resolves, anchors included
# --------------------------------------------------------------------------
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _anchors(path):
    from kmt_ref.book import github_slug

    seen, text = {}, re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return {github_slug(m.group(1), seen) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


def _broken_links(path):
    broken = []
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(f"{target} (no file {dest.relative_to(ROOT) if ROOT in dest.parents else dest})")
        elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
            broken.append(f"{target} (no heading with that anchor)")
    return broken


@pytest.mark.parametrize("name", ["README.md"] + [f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md"))])
def test_links_resolve(name):
    assert not _broken_links(ROOT / name), _broken_links(ROOT / name)


def test_link_check_can_fail(tmp_path, monkeypatch):
    (tmp_path / "a.md").write_text("# Top\n\n## The γ sweep, against theirs\n\n[x](b.md) [y](#top) [z](#nope) "
                                   "[w](#the-γ-sweep-against-theirs) [v](https://example.org/#q)\n")
    assert _broken_links(tmp_path / "a.md") == [f"b.md (no file {tmp_path / 'b.md'})", "#nope (no heading with that anchor)"]
