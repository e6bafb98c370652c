"""kmt_ref.blas: the BLAS thread limit of the loops of small products, and its use by train, evaluate and sweep.

Each loop is checked from the inside: a function it calls is wrapped to read threadpoolctl's report of
the BLAS's thread count while the loop runs. The limit must be 1 by default, the caller's count when
given, the environment's count when OPENBLAS_NUM_THREADS (or another of USER_VARIABLES) is set, and the
count from before once the loop has ended.
"""
import dataclasses

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import kmt_ref.learning.evaluation as evaluation
import kmt_ref.learning.training as training
from kmt_ref import blas
from kmt_ref import sweep as sw
from kmt_ref.cli import main
from kmt_ref.learning import init_params
from learning_cases import TINY


def blas_count():
    """The BLAS's thread count now (the largest over the BLAS libraries loaded)."""
    return max(m["num_threads"] for m in threadpool_info() if m["user_api"] == "blas")


@pytest.fixture
def clean_env(monkeypatch):
    """No thread count in the environment (a CI job may set one)."""
    for var in blas.USER_VARIABLES:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def two_threads(clean_env):
    """The BLAS at two threads around the test, so that a limit to one and its undoing can both be seen."""
    with threadpool_limits(limits=2, user_api="blas"):
        if blas_count() != 2:
            pytest.skip("this BLAS cannot run two threads here")
        yield 2


def spy(monkeypatch, module, name):
    """Wrap ``module.name`` so that each call records the BLAS's thread count; return the list of counts."""
    seen, inner = [], getattr(module, name)

    def wrapped(*args, **kwargs):
        seen.append(blas_count())
        return inner(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)
    return seen


def test_who_decides():
    assert blas.resolve_blas_threads(environ={}) == blas.DEFAULT_LIMIT == 1
    assert blas.resolve_blas_threads(environ={"OPENBLAS_NUM_THREADS": "2"}) is None  # the environment's stands
    assert blas.resolve_blas_threads(environ={"OMP_NUM_THREADS": "4"}) is None
    assert blas.resolve_blas_threads(environ={"OMP_NUM_THREADS": ""}) == 1  # set but empty: not a count
    assert blas.resolve_blas_threads(3, environ={"OPENBLAS_NUM_THREADS": "2"}) == 3  # an explicit count wins
    assert "OPENBLAS_NUM_THREADS=2" in blas.describe_blas_threads(environ={"OPENBLAS_NUM_THREADS": "2"})
    assert "1 thread" in blas.describe_blas_threads(environ={})
    assert "2 threads (--blas-threads 2)" in blas.describe_blas_threads(2, "--blas-threads", environ={})


@pytest.mark.parametrize("bad, error", [(0, ValueError), (-1, ValueError), ("abc", TypeError), (1.5, TypeError),
                                        (True, TypeError)])
def test_bad_counts_are_refused_with_their_name_and_value(bad, error):
    with pytest.raises(error, match=rf"--blas-threads.*{bad!r}" if error is TypeError else r"--blas-threads=-?\d"):
        blas.blas_limit(bad, "--blas-threads")
    with pytest.raises(error, match="blas_threads"):
        training.train(TINY, blas_threads=bad, log=lambda s: None)


def test_the_limit_applies_inside_and_is_undone_after(two_threads):
    limit = blas.blas_limit()
    assert blas_count() == 2  # checked, not yet applied
    with limit:
        assert blas_count() == 1
    assert blas_count() == 2
    with blas.blas_limit(2):
        assert blas_count() == 2
    with pytest.raises(RuntimeError), blas.blas_limit():
        raise RuntimeError
    assert blas_count() == 2  # undone after an error too


def test_an_environment_count_is_left_alone(two_threads, monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    with blas.blas_limit():
        assert blas_count() == 2


def test_training_runs_on_one_thread_and_restores(two_threads, monkeypatch):
    seen = spy(monkeypatch, training, "batch_loss")
    training.train(dataclasses.replace(TINY, steps=3), seed=0, log=lambda s: None)
    assert seen and set(seen) == {1}
    assert blas_count() == 2
    seen.clear()
    training.train(dataclasses.replace(TINY, steps=3), seed=0, log=lambda s: None, blas_threads=2)
    assert set(seen) == {2}


def test_training_keeps_the_environment_count(two_threads, monkeypatch):
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    seen = spy(monkeypatch, training, "batch_loss")
    training.train(dataclasses.replace(TINY, steps=3), seed=0, log=lambda s: None)
    assert set(seen) == {2}


def test_evaluation_runs_on_one_thread_and_restores(two_threads, monkeypatch):
    import numpy as np

    params = init_params(TINY.d + TINY.k, np.random.default_rng(0), "float32")
    model = spy(monkeypatch, evaluation, "model_step")
    ref = spy(monkeypatch, evaluation, "lloyd")
    kwargs = dict(n_tasks=3, n=TINY.n, d=TINY.d, k=TINY.k, n_steps=2)
    res = evaluation.evaluate(params, **kwargs)
    assert set(model) == set(ref) == {1} and blas_count() == 2
    model.clear()
    again = evaluation.evaluate(params, **kwargs, blas_threads=2)
    assert set(model) == {2}
    np.testing.assert_array_equal(res["model"], again["model"])


def test_sweep_limits_the_small_cells_only(two_threads, monkeypatch, tmp_path):
    seen = []
    inner = sw.cell_losses

    def cell_losses(k, d, points, scale, gammas):
        seen.append((points, blas_count()))
        return inner(k, d, points, scale, gammas)

    monkeypatch.setattr(sw, "cell_losses", cell_losses)
    grid = dict(sw.SMALL_GRID, clusters=(5,), dimensions=(2,), points=(100, 278), scale=(1,))
    monkeypatch.setattr(sw, "LARGE_CELL_POINTS", 200)  # 100 counts as small, 278 as large
    sw.run_sweep(tmp_path / "a.csv", grid, log=lambda s: None)
    assert seen == [(100, 1), (278, 2)] and blas_count() == 2
    seen.clear()
    with threadpool_limits(limits=1, user_api="blas"):
        sw.run_sweep(tmp_path / "b.csv", grid, log=lambda s: None, blas_threads=2)  # every cell at the count given
    assert seen == [(100, 2), (278, 2)]
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()


@pytest.mark.parametrize("command", [["train", "--steps", "1"], ["evaluate", "paper"], ["sweep"]])
def test_commands_refuse_a_bad_blas_threads(command, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(command + ["--blas-threads", "0"]) == 2
    assert "--blas-threads=0 should be >= 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(command + ["--blas-threads", "abc"])
    assert "--blas-threads: invalid int value: 'abc'" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())  # refused before any work


def test_commands_say_how_many_threads(clean_env, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "--max-points", "100", "--blas-threads", "2", "--out", "s.csv"]) == 0
    assert "# BLAS limited to 2 threads (--blas-threads 2)" in capsys.readouterr().out
