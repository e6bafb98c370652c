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
errors above too. Out of memory, the message names the options of the
command that ran which set its sizes (:data:`SIZE_OPTIONS`).

No command writes over a file of another kind, whatever the flags: every
command checks its output paths with :func:`kmt_ref.validation.check_output_file`
(a name ends in the format's suffix; an existing file must be of the
command's own kind) or :func:`~kmt_ref.validation.check_output_dir` (only the
command's own PNG files are written in the folder, and an existing file of
such a name is replaced only if it is a PNG image); ``book``, which writes a
whole folder, replaces only a previous book holding nothing but its own files
(:func:`kmt_ref.book.check_out`).
"""
from __future__ import annotations

import argparse
import importlib
import sys

#: modules that each add one or more subcommands
COMMAND_MODULES = [
    "kmt_ref.demo",  # demo: the numerical validation of Theorem 2.1 (the authors' numerical_validation.ipynb)
    "kmt_ref.viz.registry",  # figures: regenerate everything in figures/
    "kmt_ref.learning.cli",  # train, evaluate: learning the algorithm (SPEC §6)
    "kmt_ref.learning.train_sweep",  # train-sweep: the training runs of the paper's Figures 9, 10a, 10b
    "kmt_ref.sweep",  # sweep: the authors' gamma sweep, re-run against their published table
    "kmt_ref.book",  # book: the notebooks and docs as a static site, read offline
    "kmt_ref.course",  # course, feedback, screen: an nbgrader course directory; feedback read offline; screening
    "kmt_ref.reports",  # report: the documentation's tables of results, from the committed results
]

#: exit status of a user error (argparse uses the same)
USAGE_ERROR = 2

#: the options that set the memory a command needs, named when it runs out of memory
SIZE_OPTIONS = {
    "train": ("--n", "--batch", "--n-val"),
    "evaluate": ("--n", "--tasks"),
    "sweep": ("--max-points",),
}


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
    from .learning import CheckpointError, TrainingDiverged

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
    except MemoryError as exc:  # a size the user chose (SIZE_OPTIONS) does not fit
        if args.traceback:
            raise
        sizes = SIZE_OPTIONS.get(args.command)
        hint = f"choose smaller sizes ({', '.join(sizes)})" if sizes else "free some memory and run it again"
        print(f"error: out of memory ({exc or 'MemoryError'}); {hint}", file=sys.stderr)
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
