"""Checks at the public boundary (STYLE §7): clear errors that name the argument.

Internals assume valid input. Every public entry point calls these helpers
first, so bad input never becomes a NaN, a silent wrong answer or a traceback
from deep inside NumPy.
"""
from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "as_points",
    "as_centers",
    "check_count",
    "check_gamma",
    "check_choice",
    "rows_to_columns",
]


def _as_float_matrix(A, name):
    if isinstance(A, (str, bytes)):
        raise TypeError(f"{name} must be a numeric array, got {type(A).__name__} {A!r:.60}")
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
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(
            f"{name} contains NaN or infinite values, e.g. {name}[{bad[0]}, {bad[1]}]={float(arr[tuple(bad)])!r}"
        )
    return arr


def as_points(X, name="X"):
    """Validate data of shape (d, n) (points as columns) and return it as float64.

    Integer and float32 input is converted to float64: results on float32 input
    are those on ``X.astype(np.float64)``, with float64 tolerances.
    """
    return _as_float_matrix(X, name)


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


def rows_to_columns(X_rows, name="X"):
    """The one place where data arrives as rows ``(n, d)``: return columns ``(d, n)``.

    The scikit-learn-style estimator, the command line and file loading call
    this; everything else in kmt_ref takes tokens as columns (SPEC §1).
    """
    arr = np.asarray(X_rows)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D with one row per point, got shape={arr.shape}")
    return as_points(arr.T, name=f"{name}.T")
