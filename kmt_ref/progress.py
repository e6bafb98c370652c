"""Progress of long commands: one status line with the time elapsed and an estimate of the time left.

``train`` prints its elapsed time and estimate with :func:`format_duration`;
``sweep`` and ``evaluate`` show a :class:`Progress` line on stderr while they
work. The estimate assumes the rest of the work goes at the pace measured so
far, each unit weighted by its expected cost (the caller's model of it).
"""
from __future__ import annotations

import math
import time

__all__ = ["format_duration", "Progress"]


def format_duration(seconds):
    """``"1h02m03s"`` or ``"2m05s"``; ``"?"`` when the time is not known (NaN or infinite)."""
    if not math.isfinite(seconds):
        return "?"
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


class Progress:
    """One status line on ``stream``: rewritten in place on a terminal, every 5% of the work otherwise.

    Parameters
    ----------
    what : str
        The command (``"sweep"``), the start of the line.
    unit : str
        What is counted (``"cells"``).
    weights : sequence of float
        The expected cost of each unit, in any scale; units are done in order.
    stream : file-like
        Where the line goes (stderr, so that stdout keeps only the results).

    Notes
    -----
    After ``elapsed`` seconds with a fraction ``f`` of the weighted work done,
    the time left is estimated as ``elapsed * (1 - f) / f``.
    """

    def __init__(self, what, unit, weights, stream):
        self.what, self.unit = what, unit
        self.weights = [float(w) for w in weights]
        self.total = sum(self.weights) or 1.0
        self.stream, self.tty = stream, bool(getattr(stream, "isatty", lambda: False)())
        self.t0, self.last, self.shown = time.perf_counter(), -1, 0
        self.done, self.done_weight = 0, 0.0

    def step(self):
        """The current unit is finished (the next one starts)."""
        self.done_weight += self.weights[self.done]
        self.done += 1
        self._show(self.done_weight)

    def part(self, frac):
        """The current unit is ``frac`` done (0 <= frac <= 1; :meth:`step` finishes it)."""
        self._show(self.done_weight + min(max(frac, 0.0), 1.0) * self.weights[self.done])

    def _show(self, weight):
        frac = min(weight / self.total, 1.0)
        elapsed = time.perf_counter() - self.t0
        left = elapsed * (1 - frac) / frac if frac > 0 else math.inf
        finished = self.done == len(self.weights)
        msg = (f"{self.what}: {self.done}/{len(self.weights)} {self.unit} ({100 * frac:.1f}% of the work), "
               f"{format_duration(elapsed)} elapsed, about {format_duration(left)} left")
        if self.tty:
            self.clear()
            print(msg, end="\n" if finished else "", file=self.stream, flush=True)
            self.shown = 0 if finished else len(msg)
        elif int(20 * frac) > self.last or finished:
            self.last = int(20 * frac)
            print(msg, file=self.stream, flush=True)

    def clear(self):
        """Erase the status line on a terminal (before printing something else there)."""
        if self.tty and self.shown:
            print("\r" + " " * self.shown + "\r", end="", file=self.stream, flush=True)
            self.shown = 0
