"""Checks at the public boundary: clear errors that name the argument and quote its value.

The arguments of the algorithms (data, centers, counts, inverse temperatures, random states), the
arrays handed to the plotting functions and the learning experiment's hyperparameters; the checks of
output paths (:mod:`kmt_ref.output_paths`) and of attention scores (:mod:`kmt_ref.score_checks`) live
in their own modules and are re-exported here. Internals assume valid input. Every public entry point calls these helpers
first, so bad input never becomes a NaN, a silent wrong answer or a traceback
from deep inside NumPy.
"""
from __future__ import annotations

import numbers
import os
import sys
import warnings

import numpy as np

# the checks of output paths and of attention scores live in their own modules; their names stay here too
from .output_paths import PNG_FILE, PNG_SIGNATURE, check_output_dir, check_output_file, not_png  # noqa: F401
from .score_checks import (as_scores, check_dropout, check_finite, check_nonnegative_scores,  # noqa: F401
                           check_positive, check_score_max)

__all__ = [
    "as_points",
    "as_centers",
    "check_count",
    "check_gamma",
    "check_choice",
    "rows_to_columns",
    "check_beta",
    "check_random_state",
    "check_rng",
    "check_output_file",
    "check_output_dir",
    "not_png",
    "ColumnsWarning",
    "check_real_in",
    "check_enough_points",
]


class ColumnsWarning(UserWarning):
    """Data with more rows than columns: perhaps points were passed as rows."""


def _unmasked_dense(A, name):
    """Refuse masked arrays with masked entries and sparse matrices; return plain data."""
    if isinstance(A, np.ma.MaskedArray):
        masked = int(np.ma.count_masked(A))
        if masked:
            raise TypeError(
                f"{name} is a masked array with {masked} masked entries: kmt_ref does not honour masks "
                f"and will not ignore them; drop the points that have masked entries, or fill them "
                f"({name}.filled(value))"
            )
        A = A.data
    if hasattr(A, "toarray") and hasattr(A, "nnz"):  # scipy.sparse
        raise TypeError(
            f"{name} is a sparse matrix ({type(A).__name__}): kmt_ref needs a dense array; "
            f"pass {name}.toarray()"
        )
    return A


def _as_float_matrix(A, name):
    if isinstance(A, (str, bytes)):
        raise TypeError(f"{name} must be a numeric array, got {type(A).__name__} {A!r:.60}")
    A = _unmasked_dense(A, name)
    try:
        arr = np.asarray(A)
    except Exception as exc:  # ragged nested lists, ...
        raise TypeError(f"{name} must be a numeric array; np.asarray failed: {exc}") from None
    if arr.dtype == object or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real numeric array (int or float), got dtype={arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D with tokens as columns, got ndim={arr.ndim} (shape={arr.shape})"
        )
    if 0 in arr.shape:
        raise ValueError(f"{name} must not be empty, got shape={arr.shape}")
    arr = arr.astype(np.float64, copy=False)  # float64 input is used as it is (kmt_ref never writes into it)
    # a sum is finite when every entry is (one pass, no boolean array); an overflowing sum of finite
    # entries is told apart by the full check
    with np.errstate(over="ignore", invalid="ignore"):  # huge finite data may overflow the sum: no warning
        total = np.sum(arr)
    if not np.isfinite(total) and not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"{name} contains NaN or infinite values, e.g. {name}[{bad[0]}, {bad[1]}]={float(arr[tuple(bad)])!r}"
        )
    return arr


def _caller_level():
    """``stacklevel`` for :func:`warnings.warn` that names the first frame outside kmt_ref (the user's line)."""
    package = os.path.dirname(os.path.abspath(__file__))
    level, frame = 1, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package + os.sep):
        level, frame = level + 1, frame.f_back
    return level


def as_points(X, name="X", warn_shape=True):
    """Validate data of shape (d, n) (points as columns) and return it as float64.

    Integer and float32 input is converted to float64: results on float32 input
    are those on ``X.astype(np.float64)``, with float64 tolerances. Masked
    arrays with masked entries and sparse matrices are refused (``TypeError``).

    With ``warn_shape`` (the default), data with more rows than columns
    (``d > n``) give a :class:`ColumnsWarning`: that is what a student gets who
    passes points as rows, the NumPy habit. Such data are legal (few points in
    many dimensions), so it is a warning, not an error.
    """
    arr = _as_float_matrix(X, name)
    d, n = arr.shape
    if warn_shape and d > n:
        warnings.warn(
            f"{name} has shape {arr.shape}: d={d} rows (dimensions) but only n={n} columns (points). "
            f"kmt_ref takes points as columns, shape (d, n) (its convention); if your rows are points, "
            f"pass {name}.T or kmt_ref.rows_to_columns({name})",
            ColumnsWarning,
            stacklevel=_caller_level(),
        )
    return arr


def as_centers(C0, X, name="C0"):
    """Validate initial centers of shape (d, k) against data X of shape (d, n)."""
    C = _as_float_matrix(C0, name)
    d, n = X.shape
    if C.shape[0] != d:
        raise ValueError(
            f"{name} has {C.shape[0]} rows but X has d={d}: both hold tokens as columns, "
            f"shapes (d, k) and (d, n); got {name}.shape={C.shape}, X.shape={X.shape}"
        )
    k = C.shape[1]
    if k > n:
        raise ValueError(f"n={n} points should be >= k={k} centers ({name}.shape={C.shape})")
    return C


def check_count(value, name, minimum=0):
    """An integer >= minimum (bools rejected)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if value < minimum:
        raise ValueError(f"{name}={value} should be >= {minimum}")
    return int(value)


def check_gamma(value, name="gamma", allow_inf=True, allow_zero=True):
    """A real inverse temperature: not NaN, >= 0 (> 0 if not allow_zero); inf if allowed."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if np.isnan(value):
        raise ValueError(f"{name}={value} must not be NaN")
    if value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name}={value} should be {bound}")
    if np.isinf(value) and not allow_inf:
        raise ValueError(f"{name}={value} must be finite")
    return value


def check_choice(value, name, choices):
    """One of a fixed set of strings."""
    if value not in choices:
        raise ValueError(f"{name}={value!r} should be one of {sorted(choices)}")
    return value


def rows_to_columns(X_rows, name="X", who="kmt_ref"):
    """The one place where data arrives as rows ``(n, d)``: return columns ``(d, n)``, float64.

    The scikit-learn-style estimator, the command line and file loading call
    this; everything else in kmt_ref takes tokens as columns (SPEC §1). Its
    checks follow scikit-learn's conventions (the estimator passes its suite):
    sparse matrices and masked arrays with masked entries are refused
    (``TypeError``); complex data, 1-D data (with a hint to reshape), empty
    arrays ("Found array with 0 sample(s)"), NaN and inf raise ``ValueError``;
    numbers held in an object array are converted. ``who`` names the caller
    in the messages.
    """
    if isinstance(X_rows, (str, bytes)):
        raise TypeError(f"{name} must be a numeric array, got {type(X_rows).__name__} {X_rows!r:.60}")
    try:
        arr = np.asarray(_unmasked_dense(X_rows, name))
    except TypeError:
        raise
    except Exception as exc:  # ragged nested lists, ...
        raise TypeError(f"{name} must be a numeric array; np.asarray failed: {exc}") from None
    if np.iscomplexobj(arr):
        raise ValueError(f"Complex data not supported: {name} has dtype={arr.dtype}; {who} needs real data")
    if arr.dtype == object:  # numbers held as Python objects are converted, as scikit-learn does
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:  # e.g. "float() argument must be a string or a real number"
            raise type(exc)(f"{name} has dtype=object and could not be converted to float64: {exc}") from None
    if arr.ndim != 2:
        hint = (f". Reshape your data: {name}.reshape(-1, 1) if it has one feature, "
                f"{name}.reshape(1, -1) if it is one sample") if arr.ndim == 1 else ""
        raise ValueError(f"{name} must be 2-D with one row per point, got shape={arr.shape}{hint}")
    if 0 in arr.shape:
        axis, what = (0, "sample(s)") if arr.shape[0] == 0 else (1, "feature(s)")
        raise ValueError(
            f"Found array with {arr.shape[axis]} {what} (shape={arr.shape}) while a minimum of 1 "
            f"is required by {who}."
        )
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):  # report the entry as the caller wrote it
        i, j = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} contains NaN or infinite values, e.g. {name}[{i}, {j}]={float(arr[i, j])!r}")
    return as_points(arr.T, name=f"{name}.T", warn_shape=False)


def check_beta(beta, name="beta"):
    """A finite inverse temperature ``beta > 0`` (soft k-means), as a float.

    ``beta = 0`` (every responsibility 1/k, independent of the data), a
    negative, NaN or infinite ``beta`` (use :func:`kmt_ref.lloyd` for the
    hard limit) raise ``ValueError``; a non-number raises ``TypeError``.
    """
    return check_gamma(beta, name, allow_inf=False, allow_zero=False)


def check_random_state(random_state, name="random_state"):
    """None, an int in [0, 2**32), a ``numpy.random.Generator`` or a ``numpy.random.RandomState``."""
    if random_state is None or isinstance(random_state, (np.random.Generator, np.random.RandomState)):
        return random_state
    if isinstance(random_state, bool) or not isinstance(random_state, numbers.Integral):
        raise TypeError(
            f"{name} must be None, an int, a numpy.random.Generator or a numpy.random.RandomState, "
            f"got {random_state!r} ({type(random_state).__name__})"
        )
    if not 0 <= random_state < 2**32:
        raise ValueError(f"{name}={random_state} should be in [0, 2**32)")
    return int(random_state)


def check_rng(rng, name="rng"):
    """A ``numpy.random.Generator`` (no seeds, no global state: every stochastic function takes a Generator)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{name} must be a numpy.random.Generator (e.g. np.random.default_rng(0)), "
            f"got {rng!r} ({type(rng).__name__})"
        )
    return rng


# --------------------------------------------------------------------------
# Arrays handed to the plotting functions (kmt_ref.viz). Moved from
# kmt_ref/viz/plotting.py; lenient on purpose: a picture of a
# matrix with NaN or of an empty run is still a picture.
# --------------------------------------------------------------------------
def check_2d(A, name):
    """``A`` as a 2-D float array (a matrix, or points as columns); ``ValueError`` naming ``name`` otherwise."""
    A = np.asarray(A, dtype=float)
    if A.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got shape={A.shape}")
    return A


def check_center_path(centers, name="centers"):
    """Centers over the steps, shape (T+1, d, k), as a float array."""
    centers = np.asarray(centers, dtype=float)
    if centers.ndim != 3:
        raise ValueError(f"{name} must have shape (T+1, d, k), got shape={centers.shape}")
    return centers


def check_labels(labels, n, name="labels"):
    """One cluster index per point: an array of shape (n,)."""
    labels = np.asarray(labels)
    if labels.shape != (n,):
        raise ValueError(f"{name} must have shape (n,)=({n},), got shape={labels.shape}")
    return labels


# --------------------------------------------------------------------------
# Hyperparameters of the learning experiment (kmt_ref/learning/ keeps its
# checks here): real numbers in an interval, as
# a training configuration stores them, and enough points for the clusters.
# --------------------------------------------------------------------------
def check_real_in(value, name, lo, hi, lo_open=True, hi_open=True):
    """A finite Python ``int`` or ``float`` in the interval from ``lo`` to ``hi`` (bools refused).

    ``lo_open``/``hi_open`` exclude the ends. Only Python numbers pass (NumPy
    scalars do not): a training configuration is stored as JSON. The message
    writes the interval as given, e.g. ``lr=0.0 should be in (0.0, inf)``.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    ok = ((value > lo if lo_open else value >= lo) and (value < hi if hi_open else value <= hi)
          and bool(np.isfinite(float(value))))
    if not ok:
        lb = "(" if lo_open else "["
        ub = ")" if hi_open else "]"
        raise ValueError(f"{name}={value!r} should be in {lb}{lo}, {hi}{ub}")
    return value


def check_enough_points(n, k):
    """``k <= n``: a task of n points can have k clusters (its initial centers are k of its points)."""
    if k > n:
        raise ValueError(f"n={n} points should be >= k={k} centers")
    return n, k
