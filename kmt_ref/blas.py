"""The BLAS thread count inside the loops of many small matrix products (``train``, ``evaluate``, ``sweep``).

A training step, an evaluation step and a small sweep cell are thousands of
small matrix products (a training step at the authors' main setting, n = 512,
d = 32, k = 10 from their ``expts.md``: batches of 32 products of (42, 512)
by (512, 512) and smaller). A threaded BLAS wakes all
its threads for each of them. On a quiet machine that saves little (at most
18 % of the wall time, for 1.6-1.8 times the CPU time, measured); on a machine
that is busy with something else a product can wait for a thread that the
other work has taken off its core (2-11 times the wall time, measured). :func:`blas_limit` is the one place where
kmt_ref limits the BLAS for such a loop, with threadpoolctl's
``threadpool_limits(limits=1, user_api="blas")``; the limit is lifted when the
loop ends. scikit-learn does the same in ``sklearn/cluster/_kmeans.py``: its
Lloyd loop, ``_kmeans_single_lloyd``, is decorated with
``_threadpool_controller_decorator(limits=1, user_api="blas")`` to keep the BLAS
from oversubscribing the cores its own OpenMP threads already use. The
measurements behind the limit here are in docs/PERFORMANCE.md ("BLAS threads",
``benchmarks/bench_threads.py``).

Who decides, first match wins:

1. an explicit count (``blas_limit(2)``; the commands' ``--blas-threads N``);
2. the environment: if any of :data:`USER_VARIABLES` (``OPENBLAS_NUM_THREADS``,
   ``OMP_NUM_THREADS``, ...) is set, the BLAS keeps the count it started
   with, and nothing is limited;
3. otherwise :data:`DEFAULT_LIMIT` (one thread).

The forward pass of ``kmeans_transformer`` and ``lloyd`` on large n is not
limited here: its products are large, and two threads shorten it
(``benchmarks/bench_forward.py``). The k-means objective is the same bit for bit
at any thread count (``tests/core/test_exact_layer.py``); the last bits of a
finite-gamma transformer's or a float64 training run's products can change
with it (docs/PERFORMANCE.md, "BLAS threads").
"""
from __future__ import annotations

import contextlib
import os

from .validation import check_count

__all__ = ["USER_VARIABLES", "DEFAULT_LIMIT", "resolve_blas_threads", "blas_limit", "describe_blas_threads"]

#: environment variables by which a user sets the BLAS's thread count (OpenBLAS, OpenMP, MKL, BLIS, Accelerate)
USER_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                  "VECLIB_MAXIMUM_THREADS")

#: the BLAS threads of a loop of small products when neither the caller nor the environment chose
DEFAULT_LIMIT = 1


def _user_variable(environ=None):
    """The first of :data:`USER_VARIABLES` set (non-empty) in ``environ``, or None."""
    environ = os.environ if environ is None else environ
    return next((v for v in USER_VARIABLES if environ.get(v, "").strip()), None)


def resolve_blas_threads(threads=None, name="blas_threads", environ=None):
    """The limit :func:`blas_limit` applies: an int, or None when the environment's count stands.

    Parameters
    ----------
    threads : int >= 1, optional
        An explicit count (wins over the environment).
    name : str
        The argument's name in error messages (``"--blas-threads"`` for a command).
    environ : mapping, optional
        Default ``os.environ``.

    Raises
    ------
    TypeError, ValueError
        ``threads`` is not an integer, or is below 1.
    """
    if threads is not None:
        return check_count(threads, name, minimum=1)
    return None if _user_variable(environ) else DEFAULT_LIMIT


def blas_limit(threads=None, name="blas_threads"):
    """A context manager: the BLAS limited to :func:`resolve_blas_threads` threads inside, restored after.

    ``with blas_limit(): ...`` runs the block on one BLAS thread unless the
    environment names a count; ``blas_limit(2)`` on two. The arguments are
    checked when it is called; the limit applies only when the block starts.
    """
    return _limited(resolve_blas_threads(threads, name))


@contextlib.contextmanager
def _limited(limit):
    if limit is None:
        yield
        return
    from threadpoolctl import threadpool_limits  # reads the loaded BLAS libraries only when a limit applies

    with threadpool_limits(limits=limit, user_api="blas"):
        yield


def describe_blas_threads(threads=None, name="blas_threads", environ=None):
    """One line for a command's header: how many BLAS threads its loop uses, and who chose."""
    environ = os.environ if environ is None else environ
    limit = resolve_blas_threads(threads, name, environ)
    if threads is not None:
        return f"BLAS limited to {limit} thread{'s' * (limit > 1)} ({name} {limit})"
    var = _user_variable(environ)
    if var:
        return f"BLAS threads as the environment sets them ({var}={environ[var]})"
    return (f"BLAS limited to {DEFAULT_LIMIT} thread in the loop of small products (override: {name} N or "
            "OPENBLAS_NUM_THREADS)")
