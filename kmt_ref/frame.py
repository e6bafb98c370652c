r"""The data frame: where squared distances are computed, for data anywhere in float64's range.

Every algorithm and circuit in kmt_ref computes squared distances as the
expansion ``||x||^2 + ||c||^2 - 2 x.c`` (one matrix product, SPEC §2). In
exact arithmetic that is ``||x - c||^2``; in floating point its error is about
``eps (||x||^2 + ||c||^2)``, so it fails when the data sit far from the origin
compared with their extent (data shifted by 1e9 with a spread of 0.3: the
error, ~1e2, swamps every distance), and its squares overflow or underflow
near the ends of float64's range (data at 1e160 or 1e-300).

So the data are first moved into a **frame**, as part of the embedding
(SPEC §3, "(open)": the project's own convention)::

    x~ = (x - s) / 2^e,   c~ = (c - s) / 2^e          (every algorithm, every circuit)
    c  = 2^e c~ + s                                  (read-out of the centers)

- ``s`` (shift): zero when the midpoint of the data's bounding box lies within
  ``SHIFT_RATIO`` = 16 half-extents of the origin, ``||mid||_inf <= 16 r``
  with ``r = ||hi - lo||_inf / 2`` the largest half-extent (the expansion is
  then well conditioned enough, below); otherwise that midpoint, per
  dimension. (Midpoint at 15 half-extents: no shift; at 17: shifted.)
- ``e`` (exponent): with ``R`` the data's largest coordinate measured from
  ``s``, ``R = max_i ||x_i - s||_inf`` (computed as the largest of
  ``|hi - s|`` and ``|lo - s|``), ``e`` is zero when
  ``2^-200 <= R < 2^201`` (``RESCALE_BELOW <= R < RESCALE_AT_OR_ABOVE``;
  squares of such numbers are far from float64's overflow and underflow);
  otherwise ``e`` is the binary exponent of ``R`` (``R = f 2^e`` with ``f``
  in ``[1/2, 1)``, ``np.frexp``), which brings the largest ``|x~|`` into
  ``[1/2, 1)``. ``R = 0`` (also from the centers, below) gives ``e = 0``.
  Scaling by a power of two is exact.

On data of ordinary position and scale the frame is the identity and changes
no bit of any result (but the sign of a zero: ``-0.0`` enters as ``+0.0``,
:meth:`Frame.to_frame`). Data whose points are all the same have no extent
(``R = 0``): then ``R`` is taken from the initial centers instead, their
largest coordinate ``|c - s|``, and sets ``e`` by the same rule. Labels are
invariant under shifting the data (up to the rounding of the shifted points
themselves) and bit-for-bit invariant under scaling by powers of two.

**The error bound** (the project's own derivation, in the standard model of
floating point: every operation is its exact result times ``(1 + eps_r)``,
with a rounding error ``|eps_r| <= u = eps/2``; ``h_d = d u / (1 - d u)``
is Higham's bound on the relative error of a sum of ``d`` products). For a
point ``x`` and a center ``c`` in the frame, put ``a = ||x||^2``,
``b = ||c||^2``, ``p = c.x`` and ``D = ||x - c||^2 = a + b - 2p``. The
computed squared norms are ``a (1 + theta_a)``, ``b (1 + theta_b)`` with
``|theta| <= h_d``, and the computed product has error at most
``h_d |c|.|x| <= h_d (a + b)/2`` (``|.|`` taken entrywise)
(Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1: any order of
summation, with or without fused multiply-adds). The sum ``a + b`` is rounded
once, ``2p`` is exact, and the difference is rounded once, so the computed
``D^`` satisfies::

    |D^ - D| <= (1 + u) (2 h_d + u + u h_d) (a + b) + u D
             =  ((d + 1/2)(||x||^2 + ||c||^2) + D/2) eps   (to first order in eps).

In the frame every coordinate of a point, and of a center in the data's
bounding box (every mean of data points), is at most ``17 r`` in absolute
value: unshifted, at most ``||mid||_inf + r <= 16 r + r``; shifted, each
coordinate of ``x - s`` is at most ``2 r`` (each computed midpoint
coordinate lies between that dimension's ``lo`` and ``hi``). And
``D <= 4 d r^2``. So ``a, b <= 289 d r^2`` and, to first order in eps::

    |D^ - D| <= (578 d^2 + 291 d) eps r^2          (869 eps r^2 for d = 1),

on every such input, whatever its position and scale (``r`` in the units
of the data: the bound is homogeneous and the power-of-two scaling exact).
Measured against exact rational arithmetic, on points and centers drawn in
the box ``[15 r, 17 r]^d`` (midpoint at the 16 half-extents where no shift
is made; tests/test_frame.py): up to 704 eps r^2 for d = 1 (0.89 of the
first inequality's bound), 1895 for d = 2, 5072 for d = 5. An initial
center outside the bounding box adds its own ``||c||^2`` term, as the first
inequality says.

Distances are translation invariant, so squared distances in the frame are
``2^{-2e}`` times those in data units: an inverse temperature that multiplies
a squared distance of the data (soft k-means' beta, block 1's gamma) enters
the frame as ``gamma 2^{2e}`` (:meth:`Frame.gamma`), and the objective leaves
it as ``J~ 2^{2e}`` (:meth:`Frame.objective`).

The classical references and the transformers use the same frame, so the
bit-for-bit equalities between them hold in it (and therefore after the
read-out). Any finite X has a frame (``|x - s|`` never exceeds ``max |x|``,
even when ``max - min`` overflows). Limits (``ValueError`` naming the
argument and its value): an initial center with a coordinate ``|c~|`` above
``CENTER_BOUND = 2^400``, i.e. ``|c - s| > 2^400 2^e`` (measured from the
frame's origin ``s``, in the frame's unit ``2^e``; for data of ordinary
scale, ``e = 0``, that is ``|c - s| > 2^400``, about 2.6e120, whatever the
data's extent; the bound keeps squared norms finite in any dimension
``d < 2^220``); and an inverse temperature that overflows when carried into
the frame (:meth:`Frame.gamma`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Frame", "data_frame", "SHIFT_RATIO", "RESCALE_BELOW", "RESCALE_AT_OR_ABOVE", "CENTER_BOUND"]

#: half-extent ratio beyond which the data are shifted to their bounding-box midpoint
SHIFT_RATIO = 16.0
#: the data are rescaled (e != 0) when R, their largest coordinate measured from the shift s, is
#: below RESCALE_BELOW or at or above RESCALE_AT_OR_ABOVE: no rescaling exactly when 2^-200 <= R < 2^201
RESCALE_BELOW = 2.0 ** -200
RESCALE_AT_OR_ABOVE = 2.0 ** 201
#: the same rule in np.frexp exponents (R = f 2^e, f in [1/2, 1)): no rescaling exactly when -199 <= e <= 201
EXPONENT_RANGE = (-199, 201)
#: bound on every |c~| of the initial centers (squares of 2^400 stay finite for any d < 2^220)
CENTER_BOUND = 2.0 ** 400


@dataclass(frozen=True)
class Frame:
    """A shift ``s`` (d,) and a power-of-two scale ``2^e``: ``x~ = (x - s) / 2^e``.

    Attributes
    ----------
    shift : ndarray, shape (d,)
    exponent : int
    initial : ndarray, shape (d, k), or None
        The initial centers as given (data units), for :meth:`read_out`.
    """

    shift: np.ndarray
    exponent: int
    initial: np.ndarray = field(default=None, compare=False, repr=False)

    @property
    def is_identity(self):
        return self.exponent == 0 and not np.any(self.shift)

    def to_frame(self, A):
        """``(A - s) / 2^e`` for A of shape (d, ncol), with ``-0.0`` written as ``+0.0``.

        The sign of a zero is dropped on the way in (``a + 0.0``), so that it
        cannot depend on arithmetic: a transformer's residual update of a kept
        center, ``(c - c) + c``, is ``+0.0`` where ``c = -0.0``. An initial
        center comes back with its sign (:meth:`read_out`).
        """
        if self.is_identity:
            return A + 0.0
        return np.ldexp(A - self.shift[:, None], -self.exponent) + 0.0

    def from_frame(self, A):
        """``2^e A + s`` for A of shape (..., d, ncol): centers back in data units."""
        if self.is_identity:
            return A
        with np.errstate(over="ignore", under="ignore"):
            return np.ldexp(A, self.exponent) + self.shift[:, None]

    def read_out(self, centers):
        """Centers (T+1, d, k) in the frame, back in data units: :meth:`from_frame`, initial centers kept as given.

        A center that equals its initial center in the frame (kept, e.g. an
        empty cluster's) reads out as that initial center as the caller gave it,
        bit for bit, where ``2^e c~ + s`` would round it (``0.1`` read out of a
        frame shifted by 1e8 is ``0.09999999403953552``); ``centers[0]`` is
        therefore ``C0`` itself.
        """
        out = self.from_frame(centers)
        if self.initial is None:
            return out
        start = self.to_frame(self.initial)  # (d, k) the initial centers in the frame
        kept = np.all(centers == start[None], axis=-2)  # (T+1, k)
        if kept.any():
            out = np.array(out, copy=True)
            t, j = np.nonzero(kept)
            out[t, :, j] = self.initial[:, j].T
        return out

    def gamma(self, g, name="gamma"):
        """An inverse temperature on squared data distances, in frame units: ``g 2^{2e}``.

        Raises ``ValueError`` if a finite ``g`` overflows (the data are so
        large that ``g`` times any squared distance is beyond float64).
        """
        if self.exponent == 0 or g == 0 or np.isinf(g):
            return g
        with np.errstate(over="ignore"):
            out = float(np.ldexp(g, 2 * self.exponent))
        if np.isinf(out):
            raise ValueError(
                f"{name}={g!r} times the squared extent of X (about 2^{2 * self.exponent}) overflows float64: "
                f"every weight would be exactly one-hot; use a smaller {name} or rescale X"
            )
        return out

    def objective(self, J):
        """A sum of squared distances back in data units (``inf``/``0`` where float64 cannot hold it)."""
        if self.exponent == 0:
            return J
        with np.errstate(over="ignore", under="ignore"):
            return np.ldexp(J, 2 * self.exponent)

    def log_objective(self, J):
        """``log(J~ 2^{2e})`` computed as ``log J~ + 2 e log 2``: finite even where the objective is not."""
        J = np.asarray(J, dtype=float)
        with np.errstate(divide="ignore"):
            return np.log(J) + 2 * self.exponent * np.log(2.0)


def data_frame(X, C0=None, names=("X", "C0")):
    """The frame of data X (d, n): see the module docstring.

    Parameters
    ----------
    X : ndarray, shape (d, n)
        Finite float64 data (validated).
    C0 : ndarray, shape (d, k), optional
        Initial centers: every coordinate ``|c~| = |c - s| / 2^e`` is checked
        to be at most ``CENTER_BOUND = 2^400``.
    names : (str, str)
        The arguments' names, for the error message.

    Returns
    -------
    Frame

    Raises
    ------
    ValueError
        If a center of C0 has a coordinate ``|c - s| / 2^e`` above ``2^400``
        (or one beyond float64's range).
    """
    xname, cname = names
    lo, hi = X.min(axis=1), X.max(axis=1)  # (d,)
    mid = lo / 2 + hi / 2  # (d,) no overflow
    half = hi / 2 - lo / 2  # (d,) >= 0
    r = float(np.max(half))
    shift = mid if float(np.max(np.abs(mid))) > SHIFT_RATIO * r else np.zeros_like(mid)
    R = float(np.max(np.maximum(np.abs(hi - shift), np.abs(lo - shift))))  # <= max(|lo|, |hi|): finite
    if R == 0 and C0 is not None:  # zero extent (every point the same): the centers set the scale
        with np.errstate(over="ignore"):
            R = float(np.max(np.abs(C0 - shift[:, None])))
        R = R if np.isfinite(R) else 0.0  # a center beyond float64 from the points: refused below
    exponent = 0
    if R > 0 and not RESCALE_BELOW <= R < RESCALE_AT_OR_ABOVE:  # outside [2^-200, 2^201): rescale
        exponent = int(np.frexp(R)[1])  # R = f 2^e, f in [1/2, 1): the largest |x~| lands in [1/2, 1)
    frame = Frame(shift=shift, exponent=exponent, initial=C0)
    if C0 is not None:
        with np.errstate(over="ignore", invalid="ignore"):
            far = np.max(np.abs(frame.to_frame(C0)), axis=0)  # (k,)
        bad = np.flatnonzero(~(far <= CENTER_BOUND))
        if bad.size:
            j = int(bad[0])
            origin = (f"the one point that every column of {xname} equals" if r == 0 else
                      "0" if not np.any(shift) else f"the midpoint of {xname}'s bounding box")
            unit = "2^0 = 1" if exponent == 0 else f"2^{exponent}, set by {xname}'s scale"
            value = f"{far[j]:.3g}" if np.isfinite(far[j]) else "beyond float64's range"
            raise ValueError(
                f"{cname}[:, {j}]={C0[:, j].tolist()!r:.80} is too far out: kmt_ref accepts an initial center "
                f"when each coordinate of (c - s) / 2^e is at most 2^400 (about 2.6e120) in absolute value, "
                f"with s the frame's origin (here {origin}) and 2^e its unit (here {unit}); for this center "
                f"the largest is {value} (the bound keeps squared norms finite in any dimension d < 2^220)"
            )
    return frame
