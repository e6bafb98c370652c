"""Command line: ``python -m kmt_ref <command>``.

Each command lives in its own module, which exposes ``register(subparsers)``
(adding its parser and setting ``func``); this file only lists them.

A user's mistake never ends in a traceback: a command checks its arguments
(and the paths it will write) before it starts working and raises
``ValueError`` or ``TypeError`` naming the argument; :func:`main` prints
``error: <message>`` on stderr and returns 2, as argparse does for the
arguments it parses itself. The same holds for unreadable checkpoints
(``CheckpointError``), files that cannot be written (``OSError``), a
diverged training run and sizes that do not fit in memory. Any other
exception is a bug and keeps its traceback; ``--traceback`` shows it for the
errors above too.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
import tempfile
from pathlib import Path

#: modules that each add one or more subcommands
COMMAND_MODULES = [
    "kmt_ref.demo",  # demo: the paper's numerical validation (Theorem 2.1)
    "kmt_ref.figures",  # figures: regenerate everything in figures/
    "kmt_ref.training_cli",  # train, evaluate: learning the algorithm (SPEC §6)
]

#: exit status of a user error (argparse uses the same)
USAGE_ERROR = 2


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m kmt_ref",
        description="kmt_ref: transformers that are clustering algorithms (arXiv 2506.19125).",
    )
    parser.add_argument("--traceback", action="store_true",
                        help="show the full traceback of an error (for bug reports)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def _user_errors():
    """Exceptions that report a user's mistake, not a bug in kmt_ref."""
    from .training import CheckpointError, TrainingDiverged

    return (ValueError, TypeError, CheckpointError, OSError, TrainingDiverged)


def main(argv=None):
    """Run one command; return its exit status (0, or 2 after ``error: ...`` on stderr)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return USAGE_ERROR
    try:
        return args.func(args) or 0
    except _user_errors() as exc:
        if args.traceback:
            raise
        print(f"error: {_describe(exc)}", file=sys.stderr)
        return USAGE_ERROR
    except MemoryError as exc:  # a size the user chose (--n, --tasks, --batch) does not fit
        if args.traceback:
            raise
        print(f"error: out of memory ({exc or 'MemoryError'}); choose smaller sizes (--n, --tasks, --batch)",
              file=sys.stderr)
        return USAGE_ERROR
    except KeyboardInterrupt:
        if args.traceback:
            raise
        print("interrupted", file=sys.stderr)
        return 130


def _describe(exc):
    """The message of an exception; an OSError also names its file."""
    if isinstance(exc, OSError) and exc.strerror:
        name = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{name}"
    return str(exc) or type(exc).__name__


# --------------------------------------------------------------------------
# Checks of the paths a command will write (run before the work starts).
# They belong with the library's checks in kmt_ref/validation.py and may move there.
# --------------------------------------------------------------------------
def _nearest_existing(path):
    """``path`` or its closest ancestor that exists."""
    p = Path(os.path.abspath(path))
    while not p.exists() and p != p.parent:
        p = p.parent
    return p


def _check_can_create_in(path, name, value):
    """The missing part of ``path`` can be created: its nearest existing ancestor is a writable folder."""
    base = _nearest_existing(path)
    if not base.is_dir():
        raise ValueError(f"{name}={str(value)!r}: {str(base)!r} is a file, not a folder")
    try:  # os.access answers True for root even on a read-only file system: try it
        fd, probe = tempfile.mkstemp(dir=base, prefix=".kmt_ref_write_test")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"{name}={str(value)!r}: cannot write in the folder {str(base)!r} "
                         f"({exc.strerror or exc})") from None


def check_output_file(path, name):
    """A file that can be written: not a folder; its folder exists or can be created, and is writable.

    Returns the path as a :class:`~pathlib.Path`. Whether an existing file may
    be replaced is the caller's decision.
    """
    if path is None or str(path) == "":
        raise ValueError(f"{name}={path!r} should be a file path")
    p = Path(path)
    if p.is_dir() or str(path).endswith(("/", os.sep)):
        raise ValueError(f"{name}={str(path)!r} is a folder; give a file path (e.g. {str(p / 'out.npz')!r})")
    if p.exists() and not os.access(p, os.W_OK):
        raise ValueError(f"{name}={str(path)!r} exists and is not writable")
    _check_can_create_in(p.parent, name, path)
    return p


def check_output_dir(path, name):
    """A folder that exists and is writable, or can be created. Returns it as a Path."""
    if path is None or str(path) == "":
        raise ValueError(f"{name}={path!r} should be a folder path")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ValueError(f"{name}={str(path)!r} is a file, not a folder")
    _check_can_create_in(p, name, path)
    return p
