r"""Learning the algorithm: the trainable one-layer transformer (SPEC §6, paper §4).

The trainable model is **the same generic layer** as the hand-set k-means
transformer (:func:`kmt_ref.attention.layer_forward`), with all twelve Q, K, V
learned, with biases::

    Xbar' = Xbar + A(Xbar, Cbar; Q1,K1,V1) + A(Xbar, Xbar; Q2,K2,V2)
    Cbar' = Cbar + A(Cbar, Xbar'; Q3,K3,V3) + A(Cbar, Cbar; Q4,K4,V4)

Euclidean scores divided by ``sqrt(d_emb)``, gamma = 1, softmax in every block,
optional attention dropout (0.01 in the paper's training). Token layout: the
paper's ``Xbar = [X; Y]`` with ``Y = 0`` and ``Cbar = [C; I_k]``
(``embedding="onehot"``, ``d_emb = d + k``, no type-flag row), or the d-only
ablation ``Xbar = X``, ``Cbar = C`` (``embedding="none"``, ``d_emb = d``).
At d = 32, k = 10: 12 (42^2 + 42) = 21,672 parameters.

The loss is the smoothed upper bound of the k-means objective (SPEC §6)::

    L = sum_i sum_j softmax_j(-lambda ||x_i - c_j||^2) ||x_i - c_j||^2
      >= sum_i min_j ||x_i - c_j||^2,          lambda = 10, mean over the batch,

on the centers after one layer. Adam (lr 0.01) with the learning rate halved on
a plateau of the validation score (objective after one layer / objective after
one Lloyd step, on 320 fixed tasks, every 50 steps), 10,000 steps of 32 tasks.
Evaluation (:func:`evaluate`) applies the layer T = 20 times, re-embedding
between steps, and reports the natural log of the k-means objective, beside
Lloyd's algorithm from the same initial centers. **Evaluation runs without
dropout** (the authors' code leaves dropout on at evaluation; the project
switches it off and says so; ``evaluate(..., dropout=0.01)`` measures their
choice: 5.020 instead of 5.012 for the committed model).

Committed results (``kmt_ref/models/``, 320 evaluation tasks, T = 20): Lloyd
5.295, the trained layer 5.012, the d-only ablation 5.362 (paper: 5.26, 5.00,
5.35); the full table (k-means++, other n, other families) is stored in
``kmt_ref/models/evaluation.npz`` and printed by ``python -m kmt_ref evaluate``.

autograd rules (STYLE §8), followed here and in :mod:`kmt_ref.attention`:

- differentiable code imports ``autograd.numpy as np``; plain NumPy (``onp``)
  only on values outside the gradient path;
- no index assignment, no ``.dot``, no ``float()`` and no ``np.asarray`` on the
  gradient path (``np.matmul``, slicing and ``np.concatenate`` only);
- hard selections (argmin, sort, median) happen outside the gradient: the
  k-means objective used for validation and evaluation is never differentiated;
- subtract the (constant) maximum before ``exp``;
- keep squared distances (no ``sqrt`` at 0).

Training runs in float32 (as the authors' PyTorch code does; the gradient is
checked in float64 by the tests, with the same code). Speed note: on Linux with
glibc, large temporary arrays are returned to the OS after every operation;
setting ``MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=100000000000`` in the
environment keeps them in the heap and makes a training step about 1.6-1.8x
faster (0.35-0.39 -> 0.22 s at the paper setting on one core,
``benchmarks/bench_train.py``). :func:`tune_malloc` does the same from inside
the process; ``python -m kmt_ref train`` calls it.
"""
from __future__ import annotations

import json
import math
import os
import time
import zipfile
from dataclasses import dataclass, field, fields, asdict
from pathlib import Path

import numpy as onp
import autograd.numpy as np
from autograd import value_and_grad
from autograd.tracer import getval

from .attention import Block, Sublayer, layer_forward
from .reference import lloyd
from .tasks import FAMILIES, INITS, sample_tasks
from .trace import kmeans_objective
from .validation import check_choice, check_count

__all__ = [
    "tune_malloc",
    "TrainConfig",
    "CONFIGS",
    "EMBEDDINGS",
    "BLOCKS",
    "d_emb_of",
    "init_params",
    "model_layer",
    "embed_batch",
    "model_step",
    "soft_kmeans_loss",
    "batch_loss",
    "batch_objective",
    "lloyd_batch",
    "run_model",
    "validation_score",
    "Adam",
    "Plateau",
    "train",
    "save_checkpoint",
    "load_checkpoint",
    "Checkpoint",
    "evaluate",
    "TrainingDiverged",
    "CheckpointError",
]

#: token layouts: the paper's one-hot scratch rows, or the d-only ablation
EMBEDDINGS = ("onehot", "none")

#: the four attention blocks of the layer and their parameter names
BLOCKS = ("1", "2", "3", "4")


class TrainingDiverged(FloatingPointError):
    """The training loss became NaN or infinite."""


class CheckpointError(ValueError):
    """A checkpoint file is missing, unreadable, or does not fit the request."""


# --------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------
@dataclass
class TrainConfig:
    """Every hyperparameter of a training run (defaults: the paper's, SPEC §6).

    Attributes
    ----------
    n, d, k : int
        Points per task, dimension, clusters (paper: 512, 32, 10).
    embedding : {"onehot", "none"}
        ``"onehot"``: ``d_emb = d + k`` (paper); ``"none"``: the d-only ablation.
    batch : int
        Tasks per step (32).
    steps : int
        Optimisation steps (10,000).
    lr : float
        Adam learning rate (0.01).
    lr_decay : float
        Factor applied on a plateau (0.5).
    patience : int
        Evaluations without improvement tolerated before decaying (5).
    eval_every : int
        Steps between validation evaluations (50).
    n_val : int
        Fixed validation tasks (320).
    loss_lambda : float
        lambda of the smoothed loss (10).
    dropout : float
        Attention dropout in training (0.01).
    scale : float
        Noise scale of the task mixture (0.1).
    family : str
        Training task family ("normal").
    checkpoint_every : int
        Steps between checkpoints (250).
    dtype : {"float32", "float64"}
        Arithmetic of training.
    """

    n: int = 512
    d: int = 32
    k: int = 10
    embedding: str = "onehot"
    batch: int = 32
    steps: int = 10_000
    lr: float = 0.01
    lr_decay: float = 0.5
    patience: int = 5
    eval_every: int = 50
    n_val: int = 320
    loss_lambda: float = 10.0
    dropout: float = 0.01
    scale: float = 0.1
    family: str = "normal"
    checkpoint_every: int = 250
    dtype: str = "float32"

    def validate(self):
        """Raise ValueError/TypeError naming the first invalid hyperparameter."""
        for name in ("n", "d", "k", "batch", "steps", "eval_every", "n_val", "checkpoint_every"):
            check_count(getattr(self, name), name, minimum=1)
        check_count(self.patience, "patience", minimum=0)
        if self.k > self.n:
            raise ValueError(f"n={self.n} points should be >= k={self.k} centers")
        check_choice(self.embedding, "embedding", EMBEDDINGS)
        check_choice(self.family, "family", FAMILIES)
        check_choice(self.dtype, "dtype", ("float32", "float64"))
        for name, lo, hi, lo_open, hi_open in (
            ("lr", 0.0, math.inf, True, True),
            ("lr_decay", 0.0, 1.0, True, False),
            ("loss_lambda", 0.0, math.inf, True, True),
            ("dropout", 0.0, 1.0, False, True),
            ("scale", 0.0, math.inf, True, True),
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise TypeError(f"{name} must be a real number, got {v!r}")
            ok = (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi) and math.isfinite(v)
            if not ok:
                lb = "(" if lo_open else "["
                ub = ")" if hi_open else "]"
                raise ValueError(f"{name}={v!r} should be in {lb}{lo}, {hi}{ub}")
        return self

    @property
    def d_emb(self):
        return d_emb_of(self.d, self.k, self.embedding)


#: named configurations: "paper" (SPEC §6) and "small" (about a minute on one core)
CONFIGS = {
    "paper": TrainConfig(),
    "paper_d_only": TrainConfig(embedding="none"),
    "small": TrainConfig(n=64, d=4, k=3, batch=16, steps=2000, eval_every=50, n_val=64, checkpoint_every=250),
}


def d_emb_of(d, k, embedding):
    """Token width: ``d + k`` (one-hot scratch rows) or ``d`` (ablation)."""
    return d + k if embedding == "onehot" else d


# --------------------------------------------------------------------------
# The model: parameters, layer, embedding
# --------------------------------------------------------------------------
def init_params(d_emb, rng, dtype="float32"):
    r"""Random Q, K, V (d_emb, d_emb) and biases (d_emb,) for the four blocks.

    Entries are uniform in ``[-1/sqrt(d_emb), 1/sqrt(d_emb)]``, PyTorch's
    default initialisation of ``nn.Linear`` (the authors' model).

    Returns
    -------
    params : dict
        ``Q1, K1, V1, bQ1, bK1, bV1, ..., bV4``; 12 (d_emb^2 + d_emb) numbers.
    """
    bound = 1.0 / math.sqrt(d_emb)
    params = {}
    for b in BLOCKS:
        for m in "QKV":
            params[m + b] = rng.uniform(-bound, bound, (d_emb, d_emb)).astype(dtype)
            params["b" + m + b] = rng.uniform(-bound, bound, d_emb).astype(dtype)
    return params


def model_layer(d_emb, dropout=0.0):
    """The layer description of the trainable model for :func:`layer_forward`.

    Four Euclidean-softmax blocks, gamma = 1, scores divided by ``sqrt(d_emb)``;
    block 3 reads the updated points (keys ``"X"`` in the second sublayer),
    no type-flag row. ``dropout`` is attention dropout (training only).
    """
    s = float(math.sqrt(d_emb))  # a Python float keeps float32 arithmetic float32
    blk = dict(score="euclidean", normalizer="softmax", gamma=1.0, scale=s, dropout=float(dropout))
    return (
        Sublayer("X", (Block("1", keys="C", **blk), Block("2", keys="X", **blk))),
        Sublayer("C", (Block("3", keys="X", **blk), Block("4", keys="C", **blk))),
    )


def embed_batch(X, C, embedding="onehot"):
    """Batched tokens: ``Xbar = [X; 0]`` (B, d+k, n) and ``Cbar = [C; I_k]`` (B, d+k, k).

    With ``embedding="none"`` the tokens are the data and centers themselves.
    This is the batched form of :class:`kmt_ref.constructions.Embedding` with
    layout ``("x", "y")``; the re-embedding between evaluation steps calls it
    on the new centers (Y reset to 0).
    """
    if embedding == "none":
        return X, C
    B, d, n = X.shape
    k = C.shape[-1]
    Xbar = onp.concatenate([X, onp.zeros((B, k, n), X.dtype)], axis=1)  # (B, d+k, n)
    Cbar = onp.concatenate([C, onp.broadcast_to(onp.eye(k, dtype=C.dtype), (B, k, k))], axis=1)  # (B, d+k, k)
    return Xbar, Cbar


def model_step(params, X, C, embedding="onehot", dropout=0.0, rng=None):
    """One application of the trainable layer: new centers from (X, C).

    Parameters
    ----------
    params : dict
    X : ndarray, shape (B, d, n)
    C : ndarray, shape (B, d, k)
    embedding : {"onehot", "none"}
    dropout : float
        Attention dropout (needs ``rng``); 0 at evaluation.
    rng : numpy.random.Generator or None

    Returns
    -------
    C_new : ndarray, shape (B, d, k)
        The data rows of the decoder output ``Cbar'``.
    """
    d = X.shape[-2]
    Xbar, Cbar = embed_batch(X, C, embedding)
    _, Cbar_out = layer_forward(params, Xbar, Cbar, model_layer(Xbar.shape[-2], dropout), rng=rng)
    return Cbar_out[..., :d, :]  # (B, d, k)


# --------------------------------------------------------------------------
# Loss and objectives
# --------------------------------------------------------------------------
def soft_kmeans_loss(X, C, lam=10.0):
    r"""The smoothed upper bound of the k-means objective, per task.

    Parameters
    ----------
    X : ndarray, shape (B, d, n)
    C : ndarray, shape (B, d, k)
    lam : float
        Inverse temperature lambda (10 in the paper).

    Returns
    -------
    L : ndarray, shape (B,)

    Notes
    -----
    ``L = sum_i sum_j softmax_j(-lam D_ji) D_ji`` with ``D_ji = ||x_i - c_j||^2``
    (SPEC §6; paper §4, "Training setup"). Each inner sum is a convex
    combination of the ``D_ji`` over j, so it is ``>= min_j D_ji``: L upper
    bounds the k-means objective and tends to it as lam -> inf.
    """
    x_sq = np.sum(X * X, axis=-2)[..., None, :]  # (B, 1, n)
    c_sq = np.sum(C * C, axis=-2)[..., :, None]  # (B, k, 1)
    D = x_sq + c_sq - 2.0 * np.matmul(np.swapaxes(C, -1, -2), X)  # (B, k, n)
    S = -lam * D
    E = np.exp(S - onp.max(getval(S), axis=-2, keepdims=True))
    W = E / np.sum(E, axis=-2, keepdims=True)  # (B, k, n)
    return np.sum(W * D, axis=(-2, -1))


def batch_loss(params, X, C0, config, rng=None):
    """Mean smoothed loss over a batch after one layer (the training objective)."""
    C1 = model_step(params, X, C0, config.embedding, config.dropout, rng)
    return np.mean(soft_kmeans_loss(X, C1, config.loss_lambda))


def batch_objective(X, C):
    """Hard k-means objective ``sum_i min_j ||x_i - c_j||^2`` per task, shape (B,).

    Computed in float64 with :func:`kmt_ref.trace.kmeans_objective` (nearest
    center by the expanded formula, then the direct squared distance).
    """
    X = onp.asarray(X, dtype=onp.float64)
    C = onp.asarray(C, dtype=onp.float64)
    return onp.array([kmeans_objective(X[b], C[b]) for b in range(X.shape[0])])


def lloyd_batch(X, C0, n_iter):
    """Lloyd's objective after 0..n_iter iterations per task, shape (B, n_iter+1)."""
    return onp.stack([lloyd(X[b], C0[b], n_iter).objective for b in range(X.shape[0])])


def run_model(params, X, C0, n_steps, embedding="onehot", dtype="float32", task_chunk=32, dropout=0.0, rng=None):
    """Apply the trained layer ``n_steps`` times, re-embedding between steps.

    Parameters
    ----------
    params : dict
    X : ndarray, shape (B, d, n)
    C0 : ndarray, shape (B, d, k)
    n_steps : int
        T (20 in the paper's evaluation).
    embedding : {"onehot", "none"}
    dtype : str
        Arithmetic of the forward pass (objectives are computed in float64).
    task_chunk : int
        Tasks per forward call (bounds memory: O(task_chunk n^2)).
    dropout : float
        Attention dropout at evaluation (default 0, the project's protocol;
        the authors' evaluation keeps their training value 0.01). Needs ``rng``.
    rng : numpy.random.Generator, optional

    Returns
    -------
    objective : ndarray, shape (B, n_steps + 1)
        ``sum_i min_j ||x_i - c_j^{(t)}||^2``; column 0 is the initial centers'.
    centers : ndarray, shape (n_steps + 1, B, d, k)

    Notes
    -----
    Step t: ``Xbar = [X; 0]``, ``Cbar = [C^{(t)}; I_k]``, one layer, read
    ``C^{(t+1)}`` from the data rows of ``Cbar'`` (SPEC §6 "Evaluation").
    No dropout unless ``dropout`` is given.
    """
    p = {key: onp.asarray(v, dtype=dtype) for key, v in params.items()}
    centers = [onp.asarray(C0, dtype=onp.float64)]
    Xd = onp.asarray(X, dtype=dtype)
    C = onp.asarray(C0, dtype=dtype)
    for _ in range(n_steps):
        parts = [model_step(p, Xd[a:a + task_chunk], C[a:a + task_chunk], embedding, dropout, rng)
                 for a in range(0, X.shape[0], task_chunk)]
        C = onp.concatenate(parts, axis=0)
        centers.append(C.astype(onp.float64))
    centers = onp.stack(centers)  # (T+1, B, d, k)
    objective = onp.stack([batch_objective(X, centers[t]) for t in range(n_steps + 1)], axis=1)
    return objective, centers


def validation_score(params, X, C0, lloyd1, embedding="onehot", dtype="float32"):
    """Mean over tasks of (objective after one layer) / (objective after one Lloyd step)."""
    obj, _ = run_model(params, X, C0, 1, embedding, dtype)
    return float(onp.mean(obj[:, 1] / lloyd1))


# --------------------------------------------------------------------------
# Optimiser and schedule
# --------------------------------------------------------------------------
class Adam:
    r"""Adam (Kingma & Ba 2015) on a dict of arrays, with PyTorch's defaults.

    ``m <- b1 m + (1-b1) g``, ``v <- b2 v + (1-b2) g^2``,
    ``p <- p - lr (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)``;
    ``b1 = 0.9``, ``b2 = 0.999``, ``eps = 1e-8``. No gradient clipping.
    """

    def __init__(self, params, lr, b1=0.9, b2=0.999, eps=1e-8):
        self.lr, self.b1, self.b2, self.eps = lr, b1, b2, eps
        self.t = 0
        self.m = {key: onp.zeros_like(v) for key, v in params.items()}
        self.v = {key: onp.zeros_like(v) for key, v in params.items()}

    def step(self, params, grads):
        """Return the updated parameter dict (the input is not modified)."""
        self.t += 1
        c1 = 1.0 - self.b1 ** self.t
        c2 = 1.0 - self.b2 ** self.t
        new = {}
        for key, p in params.items():
            g = grads[key]
            self.m[key] = self.b1 * self.m[key] + (1.0 - self.b1) * g
            self.v[key] = self.b2 * self.v[key] + (1.0 - self.b2) * g * g
            upd = (self.m[key] / c1) / (onp.sqrt(self.v[key] / c2) + self.eps)
            new[key] = (p - self.lr * upd).astype(p.dtype)
        return new


class Plateau:
    """Learning-rate halving on a plateau (PyTorch ``ReduceLROnPlateau`` semantics).

    An evaluation *improves* if ``score < best * (1 - 1e-4)``. After more than
    ``patience`` evaluations in a row without improvement the rate is
    multiplied by ``factor`` and the count restarts (so with patience 5 the
    rate halves at the 6th evaluation without improvement; the authors' setup).
    """

    def __init__(self, factor=0.5, patience=5, threshold=1e-4):
        self.factor, self.patience, self.threshold = factor, patience, threshold
        self.best = math.inf
        self.bad = 0

    def step(self, score, lr):
        """Record one validation score; return the (possibly reduced) learning rate."""
        if score < self.best * (1.0 - self.threshold):
            self.best = score
            self.bad = 0
        else:
            self.bad += 1
        if self.bad > self.patience:
            self.bad = 0
            return lr * self.factor
        return lr


# --------------------------------------------------------------------------
# Checkpoints
# --------------------------------------------------------------------------
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


#: the ``format`` stored in a checkpoint's ``meta``; other formats are refused
CHECKPOINT_FORMAT = "kmt_ref.training/1"

#: what ``state`` must hold to resume a run
RESUME_STATE_KEYS = ("rng", "sched_best", "sched_bad", "lr", "best", "adam_t")


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
    if not zipfile.is_zipfile(path):
        raise CheckpointError(f"{what} {str(path)!r} is not a .npz file (it is not a zip archive)")
    try:
        with onp.load(path, allow_pickle=False) as z:
            return {key: z[key] for key in z.files}
    except Exception as exc:  # a corrupt archive, object arrays, ...
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
        raise CheckpointError(f"{what} {str(path)!r}: its 'meta' entry is not a JSON object")
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
# Training
# --------------------------------------------------------------------------
def _fmt_time(seconds):
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


def validation_tasks(config, seed):
    """The fixed validation tasks of a run and Lloyd's objective after one step.

    Drawn from ``default_rng([seed, 1])`` (the training stream is
    ``default_rng([seed, 0])``), so they never overlap the training tasks'
    random numbers.
    """
    rng = onp.random.default_rng([seed, 1])
    X, C0 = sample_tasks(rng, config.n_val, config.n, config.d, config.k, config.family, config.scale)
    lloyd1 = lloyd_batch(X, C0, 1)[:, 1]
    return X, C0, lloyd1


def train(config=None, seed=0, out=None, resume=None, log=print):
    r"""Train the one-layer transformer (SPEC §6).

    Parameters
    ----------
    config : TrainConfig, optional
        Default: the paper's setting.
    seed : int
        Seeds the initial weights, the training tasks, dropout
        (``default_rng([seed, 0])``) and the validation tasks (``[seed, 1]``).
    out : str or Path, optional
        Checkpoint file, rewritten atomically every ``checkpoint_every`` steps
        and at the end; the best validation score so far goes to
        ``<out stem>_best.npz``.
    resume : str or Path, optional
        Continue from this checkpoint: weights, Adam moments, schedule,
        random-generator state, history and seed are restored; ``config``
        must have the checkpoint's d, k and embedding (``config.steps`` may
        extend the run).
    log : callable
        Receives one progress line per evaluation.

    Returns
    -------
    Checkpoint
        The final parameters, configuration, seed, step and history.

    Raises
    ------
    TrainingDiverged
        The loss became NaN or infinite; the message names the step and the
        last good checkpoint.
    """
    config = (config or TrainConfig()).validate()
    check_count(seed, "seed")
    adam_state = None
    if resume is not None:
        prev, adam_state = load_checkpoint(resume, d=config.d, k=config.k, with_adam=True)
        if prev.config.embedding != config.embedding:
            raise CheckpointError(
                f"checkpoint {str(resume)!r} has embedding={prev.config.embedding!r}, "
                f"but embedding={config.embedding!r} was requested"
            )
        if config.steps < prev.step:
            raise ValueError(f"steps={config.steps} should be >= the checkpoint's step {prev.step} to resume")
        seed = prev.seed
    dtype = config.dtype
    rng = onp.random.default_rng([seed, 0])
    if resume is None:
        params = init_params(config.d_emb, rng, dtype)
        step0, history, sched, lr, best = 0, {key: [] for key in HISTORY_KEYS}, Plateau(config.lr_decay, config.patience), config.lr, math.inf
    else:
        params = {key: v.astype(dtype) for key, v in prev.params.items()}
        step0 = prev.step
        history = {key: list(v) for key, v in prev.history.items()}
        st = prev.state
        rng.bit_generator.state = st["rng"]
        sched = Plateau(config.lr_decay, config.patience)
        sched.best, sched.bad = st["sched_best"], st["sched_bad"]
        lr, best = st["lr"], st["best"]
    adam = Adam(params, lr)
    if adam_state is not None:
        adam.m, adam.v = adam_state
        adam.t = prev.state["adam_t"]
    Xv, Cv, lloyd1 = validation_tasks(config, seed)
    Xv, Cv = Xv.astype(dtype), Cv.astype(dtype)
    grad_fn = value_and_grad(batch_loss)
    out = Path(out) if out is not None else None
    best_path = out.with_name(out.stem + "_best.npz") if out is not None else None
    last_good = str(resume) if resume is not None else None
    elapsed0 = history["elapsed"][-1] if history["elapsed"] else 0.0
    t_start = time.perf_counter() - elapsed0
    losses = []

    def snapshot(step):
        state = {"rng": rng.bit_generator.state, "sched_best": sched.best, "sched_bad": sched.bad,
                 "lr": adam.lr, "best": best, "adam_t": adam.t}
        return Checkpoint(params=params, config=config, seed=seed, step=step,
                          history={key: onp.array(v, dtype=float) for key, v in history.items()}, state=state)

    for step in range(step0, config.steps + 1):
        if step % config.eval_every == 0 or step == config.steps:
            if not (history["step"] and history["step"][-1] == step):
                val = validation_score(params, Xv, Cv, lloyd1, config.embedding, dtype)
                if step > 0:
                    adam.lr = sched.step(val, adam.lr)
                elapsed = time.perf_counter() - t_start
                losses_done = bool(losses)
                mean_loss = float(onp.mean(losses)) if losses else float("nan")
                losses = []
                for key, v in zip(HISTORY_KEYS, (step, mean_loss, val, adam.lr, elapsed)):
                    history[key].append(v)
                done = step - step0
                eta = (elapsed - elapsed0) / done * (config.steps - step) if done else float("nan")
                loss_txt = f"{mean_loss:10.4f}" if losses_done else f"{'-':>10}"
                log(f"step {step:>6}/{config.steps}  loss {loss_txt}  val {val:.4f}  "
                    f"lr {adam.lr:.3g}  elapsed {_fmt_time(elapsed)}  eta {_fmt_time(eta) if eta == eta else '?'}")
                if out is not None and val < best and step > 0:
                    best = val
                    save_checkpoint(best_path, snapshot(step))
        if out is not None and step > step0 and (step % config.checkpoint_every == 0 or step == config.steps):
            save_checkpoint(out, snapshot(step), adam)
            last_good = str(out)
        if step == config.steps:
            break
        X, C0 = sample_tasks(rng, config.batch, config.n, config.d, config.k, config.family, config.scale)
        loss, grads = grad_fn(params, X.astype(dtype), C0.astype(dtype), config, rng)
        if not onp.isfinite(loss):
            raise TrainingDiverged(
                f"training loss is {loss} at step {step + 1}; stopped. Last good checkpoint: "
                f"{last_good or 'none written yet'}"
            )
        losses.append(float(loss))
        params = adam.step(params, grads)
    return snapshot(config.steps)


# --------------------------------------------------------------------------
# Evaluation
# --------------------------------------------------------------------------
def evaluate(params, embedding="onehot", *, n_tasks=320, n=512, d=32, k=10, family="normal", init="random",
             n_steps=20, seed=2506_19125, scale=0.1, dtype="float32", dropout=0.0):
    r"""The paper's evaluation: T re-embedded steps of the model vs T Lloyd iterations.

    Parameters
    ----------
    params : dict
        Trained weights (for this d, k and embedding).
    embedding : {"onehot", "none"}
    n_tasks : int
        Seeded evaluation tasks (320 in the paper).
    n, d, k : int
    family : str
        Task family (``"normal"`` in distribution; others out of distribution).
    init : {"random", "kmeans++"}
        Initial centers (shared by the model and Lloyd).
    n_steps : int
        T (20).
    seed : int
        Seed of the evaluation tasks (independent of training and validation).
    dropout : float
        Attention dropout at evaluation: 0 (default) is the project's protocol;
        0.01 mimics the authors' evaluation, which leaves dropout on.

    Returns
    -------
    dict
        ``model``, ``lloyd``: log objectives, shape (n_tasks, n_steps + 1);
        ``model_mean``, ``lloyd_mean``: their means over tasks, (n_steps + 1,).

    Notes
    -----
    Metric: ``log sum_i min_j ||x_i - c_j^{(t)}||^2`` (natural log), mean over
    tasks; both methods start from the same ``C0``. No dropout.
    """
    check_count(n_tasks, "n_tasks", minimum=1)
    check_count(n_steps, "n_steps")
    check_choice(init, "init", INITS)
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout < 1.0:
        raise ValueError(f"dropout={dropout!r} should be in [0, 1)")
    de = d_emb_of(d, k, embedding)
    shape = params["Q1"].shape
    if shape != (de, de):
        raise CheckpointError(
            f"the weights have d_emb={shape[0]} but d={d}, k={k}, embedding={embedding!r} needs d_emb={de}"
        )
    rng = onp.random.default_rng(seed)
    X, C0 = sample_tasks(rng, n_tasks, n, d, k, family, scale, init)
    chunk = max(1, (32 * 512 * 512) // (n * n))
    drop_rng = onp.random.default_rng([seed, 1]) if dropout else None  # the tasks do not depend on it
    model_obj, _ = run_model(params, X, C0, n_steps, embedding, dtype, task_chunk=chunk, dropout=dropout, rng=drop_rng)
    lloyd_obj = lloyd_batch(X, C0, n_steps)
    model_log, lloyd_log = onp.log(model_obj), onp.log(lloyd_obj)
    return {"model": model_log, "lloyd": lloyd_log, "model_mean": model_log.mean(0), "lloyd_mean": lloyd_log.mean(0)}


# --------------------------------------------------------------------------
# The evaluation suite of the paper (Figure 4, Table 1) and its stored results
# --------------------------------------------------------------------------
#: (init, n, family) settings of the paper's evaluation: in distribution, k-means++
#: initial centers, other n, other families
PAPER_SUITE = (
    ("random", 512, "normal"),
    ("kmeans++", 512, "normal"),
    ("random", 128, "normal"),
    ("random", 256, "normal"),
    ("random", 1024, "normal"),
    ("random", 2048, "normal"),
    ("random", 512, "cauchy"),
    ("random", 512, "gumbel"),
    ("random", 512, "laplace"),
    ("random", 512, "lognormal"),
)

#: default seed of the evaluation tasks (independent of training and validation)
EVAL_SEED = 2506_19125


def setting_label(init, n, family):
    """``"random,n=512,normal"``: the key of one evaluation setting."""
    return f"{init},n={n},{family}"


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
# Plots and the figures of SPEC §7 (5: training and evaluation, 6: weights)
# --------------------------------------------------------------------------
MODELS_DIR = Path(__file__).resolve().parent / "models"


def _axes(ax, figsize=(5, 3.5)):
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=figsize)
        return fig, ax
    return ax.figure, ax


def plot_training_history(histories, key="val", ax=None):
    """Validation score (or ``key="loss"``) against the step, one line per run.

    Parameters
    ----------
    histories : dict name -> dict with arrays ``step`` and ``key``
    """
    fig, ax = _axes(ax)
    for name, h in histories.items():
        step, y = onp.asarray(h["step"]), onp.asarray(h[key])
        ok = onp.isfinite(y)
        ax.plot(step[ok], y[ok], label=name, lw=1)
    if key == "val":
        ax.axhline(1.0, color="k", ls="--", lw=0.8, label="one Lloyd step")
        ax.set_ylabel("validation: objective / Lloyd's (1 step)")
    else:
        ax.set_ylabel("training loss (smoothed bound)")
    ax.set_xlabel("training step")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    return fig


def plot_evaluation_curves(curves, ax=None, band=(0.0, 1.0), title=None):
    """Mean log objective per clustering step with a band over tasks.

    Parameters
    ----------
    curves : dict name -> ndarray (n_tasks, T+1)
        Log objectives (e.g. ``"Lloyd"``, ``"trained"``).
    band : (float, float)
        Quantiles of the shaded band over tasks ((0, 1): min-max, as in the
        authors' figure).
    """
    fig, ax = _axes(ax)
    colors = {"lloyd": "k", "Lloyd": "k"}
    for name, L in curves.items():
        L = onp.asarray(L)
        t = onp.arange(L.shape[1])
        (line,) = ax.plot(t, L.mean(0), lw=1.5, label=f"{name} ({L.mean(0)[-1]:.3f})", color=colors.get(name))
        lo, hi = onp.quantile(L, band, axis=0)
        ax.fill_between(t, lo, hi, color=line.get_color(), alpha=0.12)
    ax.set_xlabel("clustering step t")
    ax.set_ylabel("log k-means objective")
    if title:
        ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    return fig


def plot_final_vs_n(ns, finals, ax=None):
    """Final mean log objective against n, one line per method (``finals``: name -> values)."""
    fig, ax = _axes(ax)
    for name, v in finals.items():
        ax.plot(ns, v, "o-", label=name, color="k" if name.lower() == "lloyd" else None)
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns)
    ax.set_xticklabels([str(n) for n in ns])
    ax.set_xlabel("n (points per task; trained at 512)")
    ax.set_ylabel("log objective after T steps")
    ax.legend(fontsize=8)
    return fig


def plot_weight_grid(learned, hand, d, k, fig=None):
    """Heatmaps of ``Q_b^T K_b`` and ``V_b``, learned beside hand-set, for the four blocks.

    Parameters
    ----------
    learned, hand : dict
        Parameter dicts with ``Q1 .. V4`` of shape (d_emb, d_emb) (the same d_emb).
    d, k : int
        Draws the boundary between the data rows and the one-hot rows.
    """
    import matplotlib.pyplot as plt

    if fig is None:
        fig = plt.figure(figsize=(10, 10), layout="constrained")
    axs = fig.subplots(4, 4)
    for r, b in enumerate(BLOCKS):
        mats = [
            (learned["Q" + b].T @ learned["K" + b], f"learned Q{b}ᵀK{b}"),
            (hand["Q" + b].T @ hand["K" + b], f"hand-set Q{b}ᵀK{b}"),
            (learned["V" + b], f"learned V{b}"),
            (hand["V" + b], f"hand-set V{b}"),
        ]
        for c, (M, title) in enumerate(mats):
            ax = axs[r, c]
            vmax = float(onp.max(onp.abs(M))) or 1.0
            ax.imshow(M, cmap="RdBu_r", vmin=-vmax, vmax=vmax)
            if M.shape[0] > d:
                ax.axhline(d - 0.5, color="k", lw=0.5)
                ax.axvline(d - 0.5, color="k", lw=0.5)
            ax.set_title(f"{title} (±{vmax:.2g})", fontsize=8)
            ax.set_xticks([])
            ax.set_yticks([])
    return fig


def attention_maps(params, X, C0, embedding="onehot"):
    """The four attention matrices of the trained layer on one task (no dropout).

    Parameters
    ----------
    X : ndarray, shape (d, n); C0 : ndarray, shape (d, k)

    Returns
    -------
    dict name -> ndarray (r, q)
        Block 1: (k, n) centers attended by each point; block 2: (n, n);
        block 3: (n, k); block 4: (k, k). Columns are queries.
    """
    p = {key: onp.asarray(v, dtype=onp.float64) for key, v in params.items()}
    Xbar, Cbar = embed_batch(X[None], C0[None], embedding)
    _, _, rec = layer_forward(p, Xbar[0], Cbar[0], model_layer(Xbar.shape[1]), record=True)
    return rec.weights


def _committed(name):
    return load_checkpoint(MODELS_DIR / f"{name}.npz")


def fig5_training(path):
    """Figure 5: training curves, evaluation curves (d-only ablation, k-means++, other n, families)."""
    import matplotlib.pyplot as plt

    paper, donly = _committed("paper"), _committed("paper_d_only")
    ev, info = load_evaluation(MODELS_DIR / "evaluation.npz")
    fig, axs = plt.subplots(2, 3, figsize=(15, 8.5))
    hist = {f"d+k one-hot ({paper.step} steps)": paper.history, f"d-only ({donly.step} steps)": donly.history}
    plot_training_history(hist, "val", axs[0, 0])
    axs[0, 0].set_title("validation score during training", fontsize=9)
    plot_training_history(hist, "loss", axs[0, 1])
    axs[0, 1].set_title("training loss (mean over the steps between evaluations)", fontsize=9)
    base = ev[setting_label("random", 512, "normal")]
    plot_evaluation_curves({"Lloyd": base["lloyd"], "trained (d+k)": base["paper"],
                            "d-only ablation": base["paper_d_only"]}, axs[0, 2],
                           title=f"{base['lloyd'].shape[0]} tasks, n=512, random initial centers (band: min-max)")
    kpp = ev[setting_label("kmeans++", 512, "normal")]
    plot_evaluation_curves({"Lloyd": kpp["lloyd"], "trained (d+k)": kpp["paper"]}, axs[1, 0],
                           title="k-means++ initial centers")
    ns = [128, 256, 512, 1024, 2048]
    finals = {"Lloyd": [ev[setting_label("random", n, "normal")]["lloyd"][:, -1].mean() for n in ns],
              "trained (d+k)": [ev[setting_label("random", n, "normal")]["paper"][:, -1].mean() for n in ns]}
    plot_final_vs_n(ns, finals, axs[1, 1])
    axs[1, 1].set_title("other n (log objective after 20 steps)", fontsize=9)
    fams = list(FAMILIES)
    x = onp.arange(len(fams))
    for off, (name, key, col) in enumerate([("Lloyd", "lloyd", "k"), ("trained (d+k)", "paper", "C1")]):
        vals = [ev[setting_label("random", 512, f)][key][:, -1].mean() for f in fams]
        axs[1, 2].bar(x + (off - 0.5) * 0.38, vals, width=0.38, label=name, color=col, alpha=0.8)
    axs[1, 2].set_xticks(x)
    axs[1, 2].set_xticklabels(fams)
    axs[1, 2].set_ylabel("log objective after 20 steps")
    axs[1, 2].set_title("task families (trained on normal only)", fontsize=9)
    axs[1, 2].legend(fontsize=8)
    fig.suptitle("Learning the algorithm (paper §4): d=32, k=10, trained at n=512 "
                 f"(evaluation seed {info.get('seed', EVAL_SEED)}, no dropout at evaluation)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def fig6_learned_weights(path):
    """Figure 6: learned vs hand-set Q^T K and V per block, and the learned attention maps."""
    import matplotlib.pyplot as plt

    from .constructions import lloyd_weights
    from .reference import lloyd as lloyd_ref
    from .tasks import sample_task

    paper = _committed("paper")
    cfg = paper.config
    hand, _ = lloyd_weights(cfg.d, cfg.k, "linear")  # the paper's d_emb = d + k layout
    fig = plt.figure(figsize=(11, 14.5), layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[10, 3.4])
    plot_weight_grid(paper.params, hand, cfg.d, cfg.k, top)
    X, C0 = sample_task(onp.random.default_rng(EVAL_SEED), cfg.n, cfg.d, cfg.k)
    order = onp.argsort(lloyd_ref(X, C0, 1).labels[0], kind="stable")  # points grouped by Lloyd's first assignment
    W = attention_maps(paper.params, X[:, order], C0, cfg.embedding)
    axs = bottom.subplots(1, 4)
    titles = {"1": "block 1: centers (rows) per point", "2": "block 2: points per point",
              "3": "block 3: points (rows) per center", "4": "block 4: centers per center"}
    for ax, b in zip(axs, BLOCKS):
        ax.imshow(W[b], aspect="auto", cmap="viridis", interpolation="nearest")
        ax.set_title(titles[b], fontsize=8)
        ax.set_xlabel("query")
        ax.set_ylabel("key")
    bottom.suptitle("learned attention on one task (points sorted by Lloyd's first assignment)", fontsize=9)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def tune_malloc():
    """Keep large temporaries in the heap (glibc only); return True if applied.

    Notes
    -----
    A training step allocates and frees many (B, n, n) arrays. By default glibc
    serves each from a fresh ``mmap`` and returns it to the OS when freed, and
    the page faults cost about 40% of a step. ``mallopt(M_MMAP_MAX, 0)`` and a
    large ``M_TRIM_THRESHOLD`` (what the environment variables
    ``MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=...`` do at start-up) keep the
    memory in the process instead. Results are unchanged; only speed differs.
    Does nothing (returns False) where the C library is not glibc.
    """
    import ctypes
    import ctypes.util
    import sys

    name = ctypes.util.find_library("c")
    if not name or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(name)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # glibc's malloc.h
    return bool(mallopt(M_MMAP_MAX, 0)) and bool(mallopt(M_TRIM_THRESHOLD, 2**31 - 1))
