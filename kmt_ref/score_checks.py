"""Checks of attention scores, dropout and positive reals; :mod:`kmt_ref.validation` re-exports them.

What a legitimate score is (:mod:`kmt_ref.core.normalizers`): a real number or -inf, a mask that gets
weight exactly 0; NaN and +inf never are; every slice along the normalized axis needs at least one
finite score (linear: finite, >= 0).
"""
from __future__ import annotations

import numbers

import numpy as np

__all__ = ["as_scores", "check_score_max", "check_nonnegative_scores", "check_finite", "check_positive",
           "check_dropout"]


def _where(A, mask):
    """``A[i, j]=value`` for the first True entry of ``mask`` (for error messages)."""
    idx = tuple(int(i) for i in np.argwhere(mask)[0])
    return f"[{', '.join(map(str, idx))}]={A[idx].item()!r}"


def as_scores(S, axis, name="S", who="normalizer"):
    """A real score array with at least one score along ``axis``, as an ndarray (dtype kept, no copy).

    Only O(1) checks: the dtype (int or float; bool, complex, object and
    strings are refused), ``S.ndim >= 1``, ``axis`` an integer in range and
    ``S.shape[axis] >= 1`` (there is no distribution over zero keys). The
    values are checked by :func:`check_score_max`.
    """
    if isinstance(S, (str, bytes)):
        raise TypeError(f"{who}: {name} must be a numeric array, got {type(S).__name__} {S!r:.60}")
    try:
        arr = np.asarray(S)
    except Exception as exc:  # ragged nested lists, ...
        raise TypeError(f"{who}: {name} must be a numeric array; np.asarray failed: {exc}") from None
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{who}: {name} must be a real numeric array (int or float), got dtype={arr.dtype}")
    if arr.ndim == 0:
        raise ValueError(f"{who}: {name} must have at least one axis (the keys), got the scalar {name}={arr!r}")
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{who}: axis must be an integer, got {axis!r} ({type(axis).__name__})")
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"{who}: axis={axis} is out of range for {name} with shape={arr.shape}")
    if arr.shape[axis] == 0:
        raise ValueError(
            f"{who}: {name} has no scores along axis={axis} (shape={arr.shape}): "
            "there is no distribution over zero keys"
        )
    return arr


def check_score_max(M, S, axis, name="S", who="normalizer"):
    """Raise unless the maximum ``M`` of every slice of ``S`` along ``axis`` is finite.

    ``M`` is the per-slice maximum the normalizer computes anyway
    (``np.max(S, axis, keepdims=True)``, or ``S`` at ``np.argmax``). NumPy's
    maximum and argmax propagate NaN, so ``M`` is finite exactly when the slice
    holds no NaN, no +inf and at least one finite score: the check costs
    O(M.size), not a pass over ``S``, unless it raises. -inf scores pass (masks).
    """
    if M.dtype.kind != "f" or np.isfinite(M).all():
        return
    if np.isnan(S).any():
        raise ValueError(f"{who}: scores must be finite or -inf (a mask), got {name}{_where(S, np.isnan(S))}")
    if np.isposinf(S).any():
        raise ValueError(
            f"{who}: scores must be finite or -inf (a mask), got {name}{_where(S, np.isposinf(S))}"
        )
    j = [int(i) for i in np.argwhere(~np.isfinite(M))[0]]
    j[axis] = ":"
    raise ValueError(
        f"{who}: every score of {name}[{', '.join(map(str, j))}] is -inf (all keys masked); "
        f"each slice along axis={axis} needs at least one finite score"
    )


def check_nonnegative_scores(S, total, name="S", who="linear"):
    """Scores of normalized linear attention: finite, ``>= 0``, with a finite sum ``total`` per slice."""
    if S.size and not S.min() >= 0:  # NaN fails this too
        bad = np.isnan(S) | (S < 0)
        raise ValueError(f"{who}: scores must be finite and >= 0, got {name}{_where(S, bad)}")
    if total.dtype.kind == "f" and not np.isfinite(total).all():
        if np.isposinf(S).any():
            raise ValueError(f"{who}: scores must be finite and >= 0, got {name}{_where(S, np.isposinf(S))}")
        raise ValueError(f"{who}: the sum of the scores {name} overflows to inf; rescale {name}")


def check_finite(A, name):
    """A real array without NaN or inf (any shape); returned as a float ndarray."""
    try:
        arr = np.asarray(A, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a real numeric array; np.asarray failed: {exc}") from None
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite, got {name}{_where(arr, ~np.isfinite(arr))}")
    return arr


def check_positive(value, name):
    """A finite real number ``> 0`` of any real type (Python or NumPy scalar; bools refused), as float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name}={value!r} should be a finite number > 0")
    return value


def check_dropout(dropout, rng):
    """Attention dropout: a real ``0 <= dropout < 1``; ``dropout > 0`` needs a numpy Generator ``rng``."""
    if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real):
        raise TypeError(f"dropout must be a real number in [0, 1), got {dropout!r} ({type(dropout).__name__})")
    if not 0 <= dropout < 1:  # NaN fails this too
        raise ValueError(f"dropout={dropout!r} should be in [0, 1)")
    if dropout > 0 and not isinstance(rng, np.random.Generator):
        raise (ValueError if rng is None else TypeError)(
            f"dropout={dropout!r} needs rng, a numpy.random.Generator (np.random.default_rng(seed)); got rng={rng!r}"
        )
    return dropout
