"""Tests for kmt_ref.learning.evaluation: T re-embedded steps against Lloyd (paper §4, Figure 4; SPEC §6).

The float32 evaluation agrees with the stored one on any machine, to a measured tolerance.

The trained layer runs in float32 (as the authors' PyTorch code does). Another CPU or BLAS kernel
sums in another order, so a live re-evaluation differs from the stored curves
(``kmt_ref/models/evaluation.npz``) in the last bits, and over 20 re-embedded steps a near-tie
can send a single task down a slightly different path. An element-wise ``atol=1e-6`` held only
on the machine that wrote the file. Notebook 04 compares, per step t, two robust statistics:

(a) the median over tasks of ``|live - stored|`` (most tasks agree to rounding);
(b) ``|mean over tasks of (live - stored)|`` (the paper's metric; bounds what the jumps do to it).

Measured on blocks of 32 of the 320 stored tasks: the stored run (OpenBLAS 0.3.31
SkylakeX kernel, numpy 2.4, AVX512) against re-runs with

================================================  =======  =======  ============
setting                                           (a) max  (b) max  one task max
================================================  =======  =======  ============
OPENBLAS_CORETYPE=Haswell (same with AVX2 only)   8.0e-7   4.9e-4   1.6e-2
Haswell, OPENBLAS_NUM_THREADS=1, AVX2 only        6.2e-7   1.8e-4   5.7e-3
Sandybridge                                       7.9e-7   2.2e-4   7.0e-3
Nehalem, SSE only                                 6.9e-7   1.4e-4   4.6e-3
Katmai, SSE only (64 tasks)                       8.2e-7   3.3e-4   1.1e-2
SSE only (SkylakeX kernel)                        2.9e-7   1.9e-4   6.0e-3
numpy 1.26, OpenBLAS 0.3.23 (Prescott), 1 thread  8.9e-7   1.3e-4   4.1e-3
numpy 1.26, OpenBLAS 0.3.23, Haswell              7.6e-7   3.0e-4   9.7e-3
weights moved by one float32 ulp                  9.1e-7   2.2e-4   7.0e-3
SkylakeX kernel, 1 thread                         0        0        0
================================================  =======  =======  ============

(numpy's AVX2 path is set with ``NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR"``, the
SSE path by adding ``X86_V3``.) In every block at most one task moved by more than 8.2e-4. Hence
MEDIAN_TOL = 1e-5 (11x the largest (a)) and MEAN_TOL = 5e-3 (10x the largest (b); a single task
would have to move by 0.16, 10x the largest jump in 2,624 re-run tasks). Against the stored curves
a wrong task seed gives (a) >= 0.12 at every step and a wrong model (the d-only ablation, or Lloyd)
(a) >= 0.13, (b) >= 0.1 at every step after t = 0: the tests below show both fail.

The d-only ablation (``paper_d_only``, ``embedding="none"``) needs its own, wider (b). Measured the
same way (blocks of 32 of the 320 tasks, against the stored curves):

================================================  =======  =======  ============
setting                                           (a) max  (b) max  one task max
================================================  =======  =======  ============
Haswell kernel (this CPU's default), 2 threads  1.9e-6   6.6e-3   0.21
Haswell, OPENBLAS_NUM_THREADS=1                   2.9e-6   7.0e-3   0.22
Sandybridge, 1 thread                             2.8e-6   9.4e-3   0.30
Nehalem, SSE only, 1 thread                       1.6e-6   1.0e-2   0.32
the model in float64 (Haswell; 32 tasks)          8.0e-7   2.8e-4   5.6e-3
SkylakeX kernel, 1 thread (2 threads: 32 tasks)   0        1e-16    8.9e-16
================================================  =======  =======  ============

The stored file is the current code's: with the SkylakeX kernel the live curves equal it to
8.9e-16 (one rounding of the float64 log, as Lloyd's). What differs is the map, not the code
path. After one step both models differ from the stored curves by rounding (median 3e-7, largest
9e-6). The one-hot layer then settles (median over tasks of its largest center move: 1.7 at step 1,
1.2e-6 at step 20) and damps the difference (median 1.4e-8 at step 20); the d-only layer keeps
moving its centers (median move 0.014 at step 20; 60 of the first 64 tasks still move by more than
1e-3) and on some tasks doubles a difference at every step (task 88: centers 2e-6 apart at step 1,
0.1 at step 18). In float64 the same map takes two BLAS kernels from 1e-16 to 1.1e-11 apart over
20 steps (32 tasks). So 26-32 of the 320 tasks move by more than 1e-3, and the 320-task mean per
step by up to 1.2e-3: 5.36202 stored at t = 20; 5.36292, 5.36271, 5.36248 and 5.36164 in the four
re-runs, so its third decimal is not reproducible. Hence D_ONLY_MEDIAN_TOL = 3e-5 (10x the largest
(a)) and D_ONLY_MEAN_TOL = 5e-2 (5x the largest (b): a single task would have to move by 1.6, 5x
the largest jump in 1,280 re-run tasks). Against the stored d-only curves, the one-hot model or
Lloyd on the same tasks gives (a) >= 0.10, other tasks (a) >= 0.13, and the authors' evaluation
dropout 0.01 (a) >= 6e-3 at every step after t = 0: the tests below show all three fail.
"""
import json
import re
from pathlib import Path

import numpy as np
import pytest

from kmt_ref import kmeans_objective
from kmt_ref.learning.checkpoint import MODELS_DIR, load_checkpoint, load_evaluation
from kmt_ref.learning.evaluation import EVAL_SEED, evaluate, run_model, setting_label
from kmt_ref.learning.model import init_params, model_step
from kmt_ref.learning.tasks import sample_tasks


def test_run_model_re_embeds_between_steps():
    rng = np.random.default_rng(4)
    X, C0 = sample_tasks(rng, 3, 12, 2, 3)
    params = init_params(5, rng, "float64")
    obj, centers = run_model(params, X, C0, 2, dtype="float64", task_chunk=2)
    C1 = model_step(params, X, C0)
    C2 = model_step(params, X, C1)  # Y reset to 0, centers rebuilt as [C1; I_k]
    np.testing.assert_allclose(centers[2], C2, rtol=1e-13)
    np.testing.assert_allclose(obj[:, 2], [kmeans_objective(X[b], C2[b]) for b in range(3)], rtol=1e-12)


def test_evaluation_dropout_option_changes_only_the_model():
    rng = np.random.default_rng(0)
    params = init_params(5, rng)
    a = evaluate(params, n_tasks=3, n=20, d=2, k=3, n_steps=2)
    b = evaluate(params, n_tasks=3, n=20, d=2, k=3, n_steps=2, dropout=0.3)
    np.testing.assert_array_equal(a["lloyd"], b["lloyd"])  # same tasks, same initial centers
    np.testing.assert_array_equal(a["model"][:, 0], b["model"][:, 0])
    assert not np.allclose(a["model"][:, 1:], b["model"][:, 1:])
    with pytest.raises(ValueError, match="dropout=1.0"):
        evaluate(params, n_tasks=3, n=20, d=2, k=3, n_steps=2, dropout=1.0)



# --------------------------------------------------------------------------
# float32 re-evaluation against the stored curves (see the module docstring)
# --------------------------------------------------------------------------
#: tolerances of notebook 04's live re-evaluation (measured; see the module docstring)
MEDIAN_TOL, MEAN_TOL = 1e-5, 5e-3
NOTEBOOK_SRC = Path(__file__).parents[2] / "notebooks" / "src" / "04_learning_to_cluster.py"
NOTEBOOK = Path(__file__).parents[2] / "notebooks" / "04_learning_to_cluster.ipynb"


def deviations(live, stored):
    """Per step: median over tasks of |live - stored| and |mean over tasks of (live - stored)|."""
    diff = np.asarray(live) - np.asarray(stored)  # (tasks, T+1)
    return np.median(np.abs(diff), axis=0), np.abs(diff.mean(axis=0))


def agrees(live, stored, tols=(MEDIAN_TOL, MEAN_TOL)):
    median_dev, mean_dev = deviations(live, stored)
    return bool(np.all(median_dev <= tols[0]) and np.all(mean_dev <= tols[1]))


@pytest.fixture(scope="module")
def base():
    ev, _ = load_evaluation(MODELS_DIR / "evaluation.npz")
    return ev[setting_label("random", 512, "normal")]


@pytest.fixture(scope="module")
def paper():
    return load_checkpoint(MODELS_DIR / "paper.npz", d=32, k=10)


def test_notebook_04_uses_these_tolerances():
    pattern = re.compile(r"^MEDIAN_TOL, MEAN_TOL = (\S+), (\S+)$", re.M)
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    stored = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    for text in (NOTEBOOK_SRC.read_text(), stored):  # the source and the executed notebook (rebuild it)
        found = pattern.findall(text)
        assert [tuple(map(float, f)) for f in found] == [(MEDIAN_TOL, MEAN_TOL)]


def test_stored_curves_agree_with_themselves(base):
    assert agrees(base["paper"][:32], base["paper"][:32])


def test_one_ulp_change_of_the_weights_stays_within_the_tolerance(base, paper):
    """A rounding difference like another machine's: move every weight by one float32 ulp.

    Some tasks then differ from the stored curves by more than 1e-6 (the old element-wise check
    fails), but both robust statistics stay within their tolerances, on any machine.
    """
    rng = np.random.default_rng(123)
    params = {key: np.nextafter(v, np.where(rng.random(v.shape) < 0.5, np.inf, -np.inf).astype(v.dtype))
              for key, v in paper.params.items()}
    assert all(v.dtype == np.float32 for v in params.values())
    assert all(np.all(params[key] != paper.params[key]) for key in params)
    live = evaluate(params, "onehot", n_tasks=32, n=512, d=32, k=10, n_steps=20)
    stored = base["paper"][:32]
    assert np.max(np.abs(live["model"] - stored)) > 1e-6  # not bit-identical: the test has something to absorb
    median_dev, mean_dev = deviations(live["model"], stored)
    assert np.all(median_dev <= MEDIAN_TOL), median_dev.max()
    assert np.all(mean_dev <= MEAN_TOL), mean_dev.max()
    np.testing.assert_allclose(live["lloyd"], base["lloyd"][:32], rtol=0, atol=1e-12)  # float64: untouched


@pytest.mark.parametrize("wrong", ["paper_d_only", "lloyd"])
def test_a_wrong_model_falls_outside_the_tolerance(base, wrong):
    """The d-only ablation (or Lloyd) on the same tasks: far outside, at every step after t = 0."""
    median_dev, mean_dev = deviations(base[wrong][:32], base["paper"][:32])
    assert median_dev[0] == mean_dev[0] == 0.0  # t = 0: the same tasks and initial centers
    assert np.all(median_dev[1:] > 1e4 * MEDIAN_TOL) and np.all(mean_dev[1:] > 20 * MEAN_TOL)
    assert not agrees(base[wrong][:32], base["paper"][:32])


def test_a_wrong_task_seed_falls_outside_the_tolerance(base, paper):
    """The right model on tasks of another seed (or other stored tasks): median >= 0.1 at every step."""
    wrong = evaluate(paper.params, "onehot", n_tasks=32, n=512, d=32, k=10, n_steps=1, seed=EVAL_SEED + 1)
    median_dev, _ = deviations(wrong["model"], base["paper"][:32, :2])
    assert np.all(median_dev > 1e4 * MEDIAN_TOL)
    for start in range(32, 320, 32):  # every other block of stored tasks stands in for another seed
        median_dev, _ = deviations(base["paper"][start:start + 32], base["paper"][:32])
        assert np.all(median_dev > 1e4 * MEDIAN_TOL), start
        assert not agrees(base["paper"][start:start + 32], base["paper"][:32])


# --------------------------------------------------------------------------
# the d-only ablation: the same statistics, its own measured (b) (see the module docstring)
# --------------------------------------------------------------------------
#: tolerances of a live re-evaluation of the d-only ablation (measured; see the module docstring)
D_ONLY_MEDIAN_TOL, D_ONLY_MEAN_TOL = 3e-5, 5e-2
D_ONLY_TOLS = (D_ONLY_MEDIAN_TOL, D_ONLY_MEAN_TOL)


@pytest.fixture(scope="module")
def d_only():
    return load_checkpoint(MODELS_DIR / "paper_d_only.npz", d=32, k=10)


def test_d_only_live_evaluation_agrees_with_the_stored_curves(base, d_only):
    """Tasks 64-95, the block with the largest measured (b) (task 88 moves by up to 0.32).

    Measured on this block: (a) <= 8.1e-7 and (b) <= 1.0e-2 in the four re-runs of the module
    docstring, so the one-hot model's MEAN_TOL = 5e-3 fails here on those machines; 0 with the
    SkylakeX kernel that wrote the file.
    """
    X, C0 = sample_tasks(np.random.default_rng(EVAL_SEED), 96, 512, 32, 10)  # evaluate()'s first 96 tasks
    obj, _ = run_model(d_only.params, X[64:], C0[64:], 20, embedding="none")  # float32, as evaluate()
    stored = base["paper_d_only"][64:96]
    np.testing.assert_allclose(np.log(obj[:, 0]), stored[:, 0], rtol=0, atol=1e-12)  # float64: the same tasks
    median_dev, mean_dev = deviations(np.log(obj), stored)
    assert np.all(median_dev <= D_ONLY_MEDIAN_TOL), median_dev.max()  # measured <= 8.1e-7 (any block: 2.9e-6)
    assert np.all(mean_dev <= D_ONLY_MEAN_TOL), mean_dev.max()  # measured <= 1.0e-2 (any block: the same)


def test_d_only_tolerance_rejects_a_wrong_model_seed_or_dropout(base, d_only):
    """The wider (b) still fails the wrong model, other tasks and the authors' evaluation dropout."""
    stored = base["paper_d_only"][:32]
    wrong = [base["paper"][:32], base["lloyd"][:32]]  # another model on the same tasks: (a) >= 0.10
    wrong += [base["paper_d_only"][a:a + 32] for a in range(32, 320, 32)]  # other tasks: (a) >= 0.13
    for other in wrong:
        median_dev, _ = deviations(other, stored)
        assert np.all(median_dev[1:] > 3000 * D_ONLY_MEDIAN_TOL)
        assert not agrees(other, stored, D_ONLY_TOLS)
    live = evaluate(d_only.params, "none", n_tasks=32, n=512, d=32, k=10, n_steps=20, dropout=0.01)
    median_dev, _ = deviations(live["model"], stored)
    assert np.all(median_dev[1:] > 100 * D_ONLY_MEDIAN_TOL), median_dev  # measured >= 6e-3 at every step
    assert not agrees(live["model"], stored, D_ONLY_TOLS)


# --------------------------------------------------------------------------
# Lloyd's empty clusters: keep (kmt_ref) or reseed (the authors' baseline)
# --------------------------------------------------------------------------
def test_lloyd_baseline_keep_is_lloyd_batch_and_reseed_changes_only_the_tasks_that_empty():
    from kmt_ref.learning.evaluation import lloyd_baseline
    from kmt_ref.learning.loss import lloyd_batch
    X, C0 = sample_tasks(np.random.default_rng(2), 12, 20, 2, 6)
    C0[::3, :, 0] = 100.0  # tasks 0, 3, 6, 9: a center far from every point, empty from the first step
    keep, hit = lloyd_baseline(X, C0, 5)
    np.testing.assert_array_equal(keep, lloyd_batch(X, C0, 5))
    re, hit_re = lloyd_baseline(X, C0, 5, "reseed", np.random.default_rng(0))
    assert set(np.flatnonzero(hit)) >= {0, 3, 6, 9}
    np.testing.assert_array_equal(hit_re, hit)  # identical until the first empty step
    np.testing.assert_array_equal(re[~hit], keep[~hit])
    assert not np.array_equal(re[hit], keep[hit])
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        lloyd_baseline(X, C0, 5, "reseed")
    with pytest.raises(ValueError, match="empty='drop'"):
        lloyd_baseline(X, C0, 5, "drop")


def test_evaluate_lloyd_empty_option_changes_only_lloyd():
    params = init_params(16 + 10, np.random.default_rng(0))
    kw = dict(n_tasks=12, n=40, d=16, k=10, n_steps=3)  # one of these tasks empties a cluster
    a = evaluate(params, **kw)
    b = evaluate(params, **kw, lloyd_empty="reseed")
    c = evaluate(params, **kw, lloyd_empty="reseed")
    np.testing.assert_array_equal(a["model"], b["model"])
    np.testing.assert_array_equal(b["lloyd"], c["lloyd"])  # seeded by the task seed
    assert a["lloyd_empty_tasks"] == b["lloyd_empty_tasks"] == 1 and not np.array_equal(a["lloyd"], b["lloyd"])
    with pytest.raises(ValueError, match="lloyd_empty='none'"):
        evaluate(params, **kw, lloyd_empty="none")
