"""Command line: ``python -m kmt_ref <command>``.

Each command lives in its own module, which exposes ``register(subparsers)``
(adding its parser and setting ``func``); this file only lists them.
"""
from __future__ import annotations

import argparse
import importlib

#: modules that each add one or more subcommands
COMMAND_MODULES = [
    "kmt_ref.demo",  # demo: the paper's numerical validation (Theorem 2.1)
    "kmt_ref.figures",  # figures: regenerate everything in figures/
    "kmt_ref.training_cli",  # train, evaluate: learning the algorithm (SPEC §6)
]


def build_parser():
    parser = argparse.ArgumentParser(
        prog="python -m kmt_ref",
        description="kmt_ref: transformers that are clustering algorithms (arXiv 2506.19125).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    return args.func(args) or 0
