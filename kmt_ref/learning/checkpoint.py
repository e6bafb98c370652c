"""What the learning experiment keeps on disk: checkpoints and stored evaluation results (SPEC §6).

A checkpoint (:func:`save_checkpoint`, :func:`load_checkpoint`) holds the
trained weights, the :class:`~kmt_ref.learning.config.TrainConfig`, the seed,
the history and the optimiser state for resuming; an evaluation file
(:func:`save_evaluation`, :func:`load_evaluation`) holds per-task curves of the
evaluation settings of the authors' ``expts.md`` (other n, k-means++ starts, other families).
Both are ``.npz`` files written
atomically; every way a file can be wrong ends in a :class:`CheckpointError`
that says what is wrong with it. The committed models and their evaluation
live in ``kmt_ref/models/`` (:data:`MODELS_DIR`).
"""
from __future__ import annotations

import json
import os
import zipfile
import zlib
from dataclasses import dataclass, field, fields, asdict
from pathlib import Path

import numpy as onp

from ..validation import check_count
from .config import TrainConfig
from .model import BLOCKS

__all__ = ["MODELS_DIR", "CheckpointError", "Checkpoint", "HISTORY_KEYS", "CHECKPOINT_FORMAT", "save_checkpoint",
           "load_checkpoint", "save_evaluation", "load_evaluation", "CHECKPOINT_FILE", "EVALUATION_FILE"]

#: folder of the committed trained models and their evaluation (package data)
MODELS_DIR = Path(__file__).resolve().parent.parent / "models"


class CheckpointError(ValueError):
    """A checkpoint file is missing, unreadable, or does not fit the request."""


@dataclass
class Checkpoint:
    """What a checkpoint ``.npz`` holds.

    Attributes
    ----------
    params : dict of ndarray
    config : TrainConfig
    seed : int
    step : int
        Optimisation steps done.
    history : dict of ndarray
        ``step``, ``loss`` (mean training loss over the steps since the previous
        evaluation), ``val`` (validation score), ``lr``, ``elapsed`` (seconds).
    state : dict
        Optimiser, schedule and random-generator state for ``--resume``.
    """

    params: dict
    config: TrainConfig
    seed: int
    step: int
    history: dict = field(default_factory=dict)
    state: dict = field(default_factory=dict)

    @property
    def n_params(self):
        return int(sum(v.size for v in self.params.values()))


HISTORY_KEYS = ("step", "loss", "val", "lr", "elapsed")


#: the ``format`` stored in a checkpoint's ``meta``; other formats are refused (the name is the
#: file format's, kept from the module that first wrote it: the committed models carry it)
CHECKPOINT_FORMAT = "kmt_ref.training/1"

#: what ``state`` must hold to resume a run
RESUME_STATE_KEYS = ("rng", "sched_best", "sched_bad", "lr", "best", "adam_t")

#: the first bytes of a zip archive (a .npz file) that holds at least one entry
_ZIP_HEAD = b"PK\x03\x04"


def _write_npz_atomically(path, arrays, compressed=False):
    """Write ``arrays`` to a temporary file next to ``path``, then ``os.replace`` it.

    An existing ``path`` is never left half-written; the temporary file is
    removed if writing fails (a full disk, a permission error).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp.npz")
    try:
        (onp.savez_compressed if compressed else onp.savez)(tmp, **arrays)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def _read_npz(path, what):
    """Every array of an ``.npz`` file, or a CheckpointError that says why not."""
    path = Path(path)
    if path.is_dir():
        raise CheckpointError(f"{what} {str(path)!r} is a directory, not a .npz file")
    if not path.is_file():
        raise CheckpointError(f"{what} {str(path)!r} does not exist")
    with path.open("rb") as f:
        head = f.read(4)
    if not zipfile.is_zipfile(path):
        if head == b"" or head == _ZIP_HEAD:  # empty, or a zip archive whose end (its directory) is missing
            state = ("empty" if not head else
                     "it begins like a .npz file, a zip archive, but its end is missing")
            other = (", or use another checkpoint (a run's '<out>_best.npz' snapshot can be evaluated)"
                     if what == "checkpoint" else "")
            raise CheckpointError(
                f"{what} {str(path)!r} is damaged or truncated ({path.stat().st_size} bytes; {state}). kmt_ref "
                "writes its files atomically, so it was probably cut short while being copied or downloaded: "
                f"copy it again{other}")
        raise CheckpointError(f"{what} {str(path)!r} is not a .npz file (it is not a zip archive)")
    try:
        with onp.load(path, allow_pickle=False) as z:
            return {key: z[key] for key in z.files}
    except (zipfile.BadZipFile, EOFError, zlib.error) as exc:  # a member cut short, a bad CRC-32, ...
        raise CheckpointError(f"{what} {str(path)!r} is damaged: a .npz file whose contents cannot be read "
                              f"({exc}); copy it again") from None
    except Exception as exc:  # object arrays, ...
        raise CheckpointError(f"{what} {str(path)!r} is not a readable .npz file: {exc}") from None


def _read_meta(data, path, what):
    """The JSON dict in a file's ``meta`` entry ({} if there is none)."""
    if "meta" not in data:
        return {}
    try:
        meta = json.loads(str(data["meta"]))
    except ValueError:
        meta = None
    if not isinstance(meta, dict):
        raise CheckpointError(f"{what} {str(path)!r} has a 'meta' entry that is not a JSON object")
    return meta


def save_checkpoint(path, ckpt, adam=None):
    """Write a checkpoint atomically (a temporary file, then ``os.replace``)."""
    arrays = {f"param_{key}": onp.asarray(v) for key, v in ckpt.params.items()}
    arrays.update({f"history_{key}": onp.asarray(ckpt.history.get(key, []), dtype=float) for key in HISTORY_KEYS})
    if adam is not None:
        arrays.update({f"adam_m_{key}": v for key, v in adam.m.items()})
        arrays.update({f"adam_v_{key}": v for key, v in adam.v.items()})
    meta = {"config": asdict(ckpt.config), "seed": int(ckpt.seed), "step": int(ckpt.step), "state": ckpt.state,
            "format": CHECKPOINT_FORMAT}
    arrays["meta"] = onp.array(json.dumps(meta))
    return _write_npz_atomically(path, arrays)


def _check_weights(arrays, expected, where, what, config):
    """Each expected array present, of that shape, real floating point and finite."""
    got = {key: v.shape for key, v in arrays.items()}
    if got != expected:
        missing = sorted(set(expected) - set(got))
        extra = sorted(set(got) - set(expected))
        wrong = {key: got[key] for key in sorted(set(got) & set(expected)) if got[key] != expected[key]}
        raise CheckpointError(
            f"{where}: {what} shapes do not match its configuration (d={config.d}, k={config.k}, "
            f"embedding={config.embedding!r}, d_emb={config.d_emb}): "
            + "; ".join(part for part in (
                f"missing {missing}" if missing else "", f"unexpected {extra}" if extra else "",
                f"wrong shapes {wrong}" if wrong else "") if part)
        )
    for key, v in arrays.items():
        if v.dtype.kind != "f":
            raise CheckpointError(f"{where}: {what} {key} has dtype {v.dtype}, not floating point")
        if not onp.all(onp.isfinite(v)):
            raise CheckpointError(f"{where}: {what} {key} contains NaN or infinite values")


def load_checkpoint(path, d=None, k=None, with_adam=False):
    """Read and check a checkpoint written by :func:`save_checkpoint`.

    Parameters
    ----------
    path : str or Path
    d, k : int, optional
        If given, the checkpoint must have been trained for this (d, k).
    with_adam : bool
        Also return the saved Adam moments ``(m, v)`` (for resuming); the
        checkpoint must then hold them and the rest of the optimiser state.

    Raises
    ------
    CheckpointError
        Missing file, not an ``.npz`` file, not a kmt_ref checkpoint (an
        evaluation file, say), another format version, configuration fields
        this version does not know or lacks, invalid configuration values,
        missing entries, parameters whose shapes do not match the
        configuration's ``d_emb``, non-finite parameters, no optimiser state
        when ``with_adam``, or a (d, k) other than requested.
    """
    data = _read_npz(path, "checkpoint")
    where = f"checkpoint {str(path)!r}"
    meta = _read_meta(data, path, "checkpoint")
    if "config" not in meta:
        hint = (": it holds evaluation results (written by `evaluate --save`)"
                if any("::" in key for key in data) else " (its 'meta' entry has no 'config')")
        raise CheckpointError(f"{str(path)!r} is not a kmt_ref training checkpoint{hint}")
    if meta.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{where} has format {meta.get('format')!r}; this version of kmt_ref reads "
                              f"{CHECKPOINT_FORMAT!r} (was it written by another version?)")
    cfg = meta["config"]
    if not isinstance(cfg, dict):
        raise CheckpointError(f"{where}: its configuration is not a JSON object")
    known = [f.name for f in fields(TrainConfig)]
    unknown = sorted(set(cfg) - set(known))
    if unknown:
        raise CheckpointError(f"{where} has configuration field(s) {unknown} that this version of kmt_ref "
                              "does not know (written by a newer version?); refusing to guess their meaning")
    missing = [name for name in known if name not in cfg]
    if missing:
        raise CheckpointError(f"{where} lacks configuration field(s) {missing} (written by an older version?)")
    try:
        config = TrainConfig(**cfg).validate()
        seed = check_count(meta.get("seed"), "seed")
        step = check_count(meta.get("step"), "step")
    except (TypeError, ValueError) as exc:
        raise CheckpointError(f"{where} has an invalid value: {exc}") from None
    state = meta.get("state", {})
    if not isinstance(state, dict):
        raise CheckpointError(f"{where}: its optimiser state is not a JSON object")
    de = config.d_emb
    expected = {m + b: (de, de) for b in BLOCKS for m in "QKV"}
    expected.update({"b" + m + b: (de,) for b in BLOCKS for m in "QKV"})
    params = {key[6:]: v for key, v in data.items() if key.startswith("param_")}
    _check_weights(params, expected, where, "parameter", config)
    missing = [f"history_{key}" for key in HISTORY_KEYS if f"history_{key}" not in data]
    if missing:
        raise CheckpointError(f"{where} lacks the entries {missing}")
    history = {key: data[f"history_{key}"] for key in HISTORY_KEYS}
    if len({v.shape for v in history.values()}) != 1 or history["step"].ndim != 1:
        raise CheckpointError(f"{where}: its history arrays are not 1-D arrays of one length "
                              f"({ {key: v.shape for key, v in history.items()} })")
    for name, want in (("d", d), ("k", k)):
        if want is not None and getattr(config, name) != want:
            raise CheckpointError(
                f"{where} was trained for {name}={getattr(config, name)} "
                f"(d={config.d}, k={config.k}, d_emb={de}), but {name}={want} was requested: "
                "the model does not transfer to another d or k"
            )
    ckpt = Checkpoint(params=params, config=config, seed=seed, step=step, history=history, state=state)
    if with_adam:
        m = {key[7:]: v for key, v in data.items() if key.startswith("adam_m_")}
        v = {key[7:]: v for key, v in data.items() if key.startswith("adam_v_")}
        lacking = [key for key in RESUME_STATE_KEYS if key not in state]
        if not m and not v or lacking:
            raise CheckpointError(
                f"{where} holds no optimiser state (only the weights, like the '<out>_best.npz' snapshots): "
                "it can be evaluated, not resumed")
        _check_weights(m, expected, where, "Adam first moment", config)
        _check_weights(v, expected, where, "Adam second moment", config)
        return ckpt, (m, v)
    return ckpt


# --------------------------------------------------------------------------
# Stored evaluation results (the authors' evaluation settings: other n, k-means++ starts, other families)
# --------------------------------------------------------------------------
def save_evaluation(path, results, info=None):
    """Store evaluation curves, merging into an existing file.

    Parameters
    ----------
    path : str or Path
    results : dict
        ``{setting label: {name: log objectives (n_tasks, T+1)}}``; ``name`` is
        a model name or ``"lloyd"``.
    info : dict, optional
        Free-form provenance (command, seed, number of tasks), stored as JSON.

    Raises
    ------
    CheckpointError
        ``path`` exists but is not an evaluation file (it is left untouched).
    """
    path = Path(path)
    stored, old_info = load_evaluation(path) if path.exists() else ({}, {})
    arrays = {f"{label}::{name}": arr for label, per_name in stored.items() for name, arr in per_name.items()}
    for label, per_name in results.items():
        for name, arr in per_name.items():
            arrays[f"{label}::{name}"] = onp.asarray(arr, dtype=float)
    arrays["meta"] = onp.array(json.dumps({"info": {**old_info, **(info or {})}}))
    return _write_npz_atomically(path, arrays, compressed=True)


def load_evaluation(path):
    """Read :func:`save_evaluation`'s file: ``({label: {name: array}}, info)``.

    Raises
    ------
    CheckpointError
        Missing file, not an ``.npz`` file, or not an evaluation file (a
        training checkpoint, say).
    """
    data = _read_npz(path, "evaluation file")
    meta = _read_meta(data, path, "evaluation file")
    info = meta.get("info", {})
    if "config" in meta or not isinstance(info, dict):
        what = "a training checkpoint" if "config" in meta else "its 'meta' has no 'info' object"
        raise CheckpointError(f"{str(path)!r} is not a kmt_ref evaluation file ({what})")
    out = {}
    for key, arr in data.items():
        if key == "meta":
            continue
        parts = key.split("::")
        if len(parts) != 2 or arr.ndim != 2 or arr.dtype.kind != "f":
            raise CheckpointError(f"{str(path)!r} is not a kmt_ref evaluation file: entry {key!r} is not "
                                  "'<setting>::<name>' with a 2-D float array of log objectives")
        out.setdefault(parts[0], {})[parts[1]] = arr
    return out, info


# --------------------------------------------------------------------------
# What a command may write over (kmt_ref.validation.check_output_file's ``existing``)
# --------------------------------------------------------------------------
def _predicate(exc, path):
    """``"is not a .npz file (...)"`` from ``"checkpoint 'x.npz' is not a .npz file (...)"``.

    Every message of :func:`_read_npz`, :func:`_read_meta` and :func:`load_evaluation`
    has that form: the file, then what is wrong with it.
    """
    msg = str(exc)
    return msg.split(f"{str(path)!r} ", 1)[-1]


def _not_a_checkpoint(path):
    """Why the file ``path`` is not a kmt_ref training checkpoint of any version (None if it is one)."""
    try:
        data = _read_npz(path, "file")
        meta = _read_meta(data, path, "file")
    except CheckpointError as exc:
        return _predicate(exc, path)
    if "config" in meta and str(meta.get("format", "")).startswith("kmt_ref."):
        return None
    if any("::" in key for key in data):
        return "holds evaluation results (written by `evaluate --save`), not a training checkpoint"
    return "is not a kmt_ref training checkpoint (a .npz file without a checkpoint's 'meta')"


def _not_an_evaluation(path):
    """Why the file ``path`` is not a kmt_ref evaluation file (None if it is one)."""
    try:
        load_evaluation(path)
    except CheckpointError as exc:
        return _predicate(exc, path)
    return None


#: ``train --out``: an existing file is replaced (with ``--force``) only if it is a training checkpoint
CHECKPOINT_FILE = ("--force replaces a kmt_ref training checkpoint and no other file", _not_a_checkpoint)
#: ``evaluate --save``: the results are merged into an existing evaluation file; nothing else is written over
EVALUATION_FILE = ("--save merges the results into a kmt_ref evaluation file and writes over no other file",
                   _not_an_evaluation)
