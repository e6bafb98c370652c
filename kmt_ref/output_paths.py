"""Checks of the paths a command will write, run before the work starts.

Nothing is lost to a path that cannot be written after an hour of training. The one rule of every
command: a file's name ends in its format's suffix (never appended silently), and an existing file is
written over only if it is of the command's own kind. :func:`check_output_file`, :func:`check_output_dir`,
:func:`not_png` and the PNG constants can also be imported from :mod:`kmt_ref.validation`.
:func:`replace_atomically` is how the resumable commands (``sweep``, ``train-sweep``) rewrite their CSV.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["check_output_file", "check_output_dir", "not_png", "not_read_by", "replace_atomically",
           "PNG_SIGNATURE", "PNG_FILE"]


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


def _check_existing(path, name, value, existing):
    """An existing ``path`` is refused unless ``existing = (rule, why_not)`` accepts it."""
    rule, why_not = existing
    why = ("is a folder" if path.is_dir() else why_not(path) if path.exists()
           else f"is a broken symbolic link (to {os.readlink(path)!r})")  # writing would create its target
    if why is not None:
        raise ValueError(f"{name}={str(value)!r} exists and {why}; {rule}: move it away or choose another "
                         f"{name.split()[0]}")


def check_output_file(path, name, suffix=None, existing=None):
    """A file a command may write (not a folder; its folder writable or creatable); returns a Path.

    ``name`` is the option (``"--out"``); a name not ending in ``suffix``
    (``".npz"``) is refused. ``existing = (rule, why_not)``: an existing file
    is refused unless ``why_not(path)`` returns None (a file of the command's
    own kind, which it may replace, merge into or resume; else a phrase such as
    ``"is not a PNG image"``); ``rule`` says what the command writes over.
    Whether such a file may be replaced (``train --force``) is the caller's.
    """
    if path is None or str(path) == "":
        raise ValueError(f"{name}={path!r} should be a file path")
    p = Path(path)
    if p.is_dir() or str(path).endswith(("/", os.sep)):
        raise ValueError(f"{name}={str(path)!r} is a folder; give a file path "
                         f"(e.g. {str(p / ('out' + (suffix or '.npz')))!r})")
    if suffix and not p.name.endswith(suffix):
        raise ValueError(f"{name}={str(path)!r} should end in {suffix}, the format this command writes "
                         f"(e.g. {str(p.with_name(p.stem + suffix))!r})")
    if p.exists():
        if existing is not None:
            _check_existing(p, name, path, existing)
        if not os.access(p, os.W_OK):
            raise ValueError(f"{name}={str(path)!r} exists and is not writable")
    _check_can_create_in(p.parent, name, path)
    return p


#: the first eight bytes of every PNG file
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def not_png(path):
    """Why the existing file ``path`` is not a PNG image (None if it is one, by its signature)."""
    with open(path, "rb") as f:
        return None if f.read(8) == PNG_SIGNATURE else "is not a PNG image (it lacks the PNG signature)"


def not_read_by(read, kind):
    """A check for ``check_output_file``'s ``existing``: why a file is not a ``kind`` (None if ``read`` reads it).

    ``read(path)`` raises ValueError with a message that names the path (``"'x.csv' is not ..."`` or
    ``"'x.csv' line 3 ..."``); the check returns that message without the path.
    """
    def why(path):
        try:
            read(path)
        except ValueError as exc:
            msg = str(exc).split(f"{str(Path(path))!r} ", 1)[-1]
            return msg if msg.startswith("is ") else f"is not a {kind} ({msg})"
        return None

    return why


#: what ``figures`` and ``demo`` may write over in their ``--outdir``
PNG_FILE = ("only a PNG image of a figure's name is replaced there, and nothing else in the folder", not_png)


def check_output_dir(path, name, files=(), existing=PNG_FILE):
    """A folder that exists and is writable, or can be created; returns it as a Path.

    ``files`` are the names the command writes in it; nothing else there is
    touched, and an existing file of one of these names is replaced only if
    ``existing`` accepts it (as in :func:`check_output_file`; by default a PNG
    image), else the folder is refused before any work starts.
    """
    if path is None or str(path) == "":
        raise ValueError(f"{name}={path!r} should be a folder path")
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ValueError(f"{name}={str(path)!r} is a file, not a folder")
    for fname in files:
        if (p / fname).exists() or (p / fname).is_symlink():
            _check_existing(p / fname, f"{name} (its file {fname})", p / fname, existing)
    _check_can_create_in(p, name, path)
    return p


def replace_atomically(path, text):
    """Write ``text`` to ``path`` through a temporary file and a rename: an interruption leaves the old file whole."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8", newline="")  # the line ends as given, on every platform
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
