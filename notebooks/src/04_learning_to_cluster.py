# %% [markdown]
# # 04 — Learning the algorithm: training the one-layer transformer
#
# *Transformer Circuits Can Realize Clustering Algorithms* (Clarkson, Horesh, Ito, Park, Ram, ICML 2026;
# preliminary version arXiv 2506.19125), its learning
# experiment as a summary of the paper and the authors' code describe it: take **the same
# encoder–decoder layer** as Theorem 2.1, forget the hand-set weights, learn all twelve Q, K, V (with
# biases) by gradient descent on random clustering tasks, and apply the trained layer T = 20 times.
# A summary of the paper reports that the trained layer **beats Lloyd's algorithm** on tasks from the
# training distribution (mean log objective ≈ 5.0 vs ≈ 5.25 for Lloyd), and that without the one-hot rows
# (the *d-only* ablation) it does worse than Lloyd (≈ 5.35); we could not check this against the paper's text.
#
# **Learning objectives.** After this notebook you can
#
# - describe the task distribution (Gaussian mixtures, min-max scaled, a random k-subset as the start)
#   and measure how often Lloyd's algorithm from such a start ends in a worse local minimum;
# - state the training loss, a smoothed upper bound of the k-means objective, and bound its gap;
# - train the layer with `kmt_ref.learning.train`, read its validation curve (a plateau, then a drop) and
#   compare a trained layer with Lloyd's algorithm over 20 re-embedded steps (`evaluate`);
# - compare learned with hand-set weights, and read the learned layer as a *soft* Lloyd at a finite
#   temperature;
# - explain with measurements why a layer can end below Lloyd, why the d-only ablation cannot, and why the
#   quick run needs d = 8 rather than d = 4;
# - read the paper's Figure 9 (the loss's λ, with and without the one-hot rows) at a reduced scale, and say
#   what 600 steps can and cannot show.
#
# *Prerequisites:* notebook 01 (the hand-set layer of Theorem 2.1), gradient descent. *Time:* about 50 minutes to
# read and run, including three short self-checks (04.9–04.11, after sections 2, 3 and 6; 5 minutes in all);
# the eight exercises at the end take about 100 minutes more.
#
# This notebook
#
# 1. samples the training tasks (`kmt_ref.learning.tasks`, after the authors' `ctasks.py`);
# 2. builds the trainable layer (`kmt_ref.learning.model`) — `kmt_ref.layer_forward` with learned weights, no second model;
# 3. checks the loss (a smoothed upper bound of the k-means objective);
# 4. **trains the small configuration live** (the run of `python -m kmt_ref train`) and compares it with
#    Lloyd's algorithm;
# 5. loads the **committed paper-scale models** (`kmt_ref/models/`, trained with
#    `python -m kmt_ref train --config paper`) and their stored 320-task evaluation;
# 6. compares the trained layer with Lloyd's algorithm (20 re-embedded steps);
# 7. evaluates it out of distribution;
# 8. compares learned with hand-set weights;
# 9. looks at the learned attention and at what block 1 assigns;
# 10. shows how training depends on the loss's λ and on the one-hot rows: the paper's Figure 9 at a reduced
#     scale, from committed runs.
#
# *Annotator's remarks are in italics.* Everything is imported from `kmt_ref`.

# %%
import time

import numpy as np
import matplotlib.pyplot as plt

import kmt_ref
from kmt_ref import lloyd, lloyd_weights
from kmt_ref.learning import (
    sample_task, sample_tasks, FAMILIES, CONFIGS, MODELS_DIR, PAPER_SUITE, BLOCKS, init_params, model_layer,
    model_step, soft_kmeans_loss, batch_objective, batch_loss, train, evaluate, load_checkpoint, load_evaluation,
    setting_label, attention_maps, tune_malloc,
)
from kmt_ref.viz.learning_figures import (
    plot_training_history, plot_evaluation_curves, plot_final_vs_n, plot_weight_grid,
)
from kmt_ref.viz.plotting import plot_attention

np.set_printoptions(precision=3, suppress=True, linewidth=110)
SEED = 0
print("kmt_ref", kmt_ref.__version__, "| seed", SEED)

# %% [markdown]
# ## 1. Clustering tasks (the authors' task generator, `ctasks.py`)
#
# The protocol of this notebook: [SPEC, "Learning the algorithm"](../docs/SPEC.md#6-learning-the-algorithm-the-papers-training-experiment).
#
# A task: draw k means uniformly in $[0,1]^d$; draw n points from the equal-weight mixture with
# isotropic scale 0.1; min-max scale every dimension to $[0, 1]$; shuffle; the initial centers
# are the first k points, i.e. a random k-subset of the data. Tokens are columns: `X` is (d, n).

# %%
rng = np.random.default_rng(SEED)
X, C0 = sample_task(rng, n=512, d=32, k=10)
assert X.shape == (32, 512) and C0.shape == (32, 10)
assert np.allclose(X.min(axis=1), 0) and np.allclose(X.max(axis=1), 1)   # min-max scaled per dimension
assert np.array_equal(C0, X[:, :10])                                      # the first k points
ref = lloyd(X, C0, 20)
print("Lloyd, log objective at t = 0, 1, 2, 20:", np.round(ref.log_objective[[0, 1, 2, 20]], 3))

fig, axs = plt.subplots(1, len(FAMILIES), figsize=(15, 2.8))
for ax, fam in zip(axs, FAMILIES):
    Xf, Cf = sample_task(np.random.default_rng(1), n=512, d=2, k=4, family=fam)
    ax.scatter(*Xf, s=3)
    ax.scatter(*Cf, marker="x", c="r")
    ax.set_title(f"{fam} (d=2, k=4)", fontsize=9)
    ax.set_xlabel("$x_1$")
axs[0].set_ylabel("$x_2$")
axs[0].legend(["points", "initial centers"], fontsize=7, loc="lower right")
fig.tight_layout()

# %% [markdown]
# ## 2. The trainable layer (the authors' `kmt.py`)
#
# $$\bar X' = \bar X + A(\bar X, \bar C; Q_1,K_1,V_1) + A(\bar X, \bar X; Q_2,K_2,V_2),\qquad
#   \bar C' = \bar C + A(\bar C, \bar X'; Q_3,K_3,V_3) + A(\bar C, \bar C; Q_4,K_4,V_4)$$
#
# with $A(Z, Z') = (V Z' + b_V \mathbf 1^\top)\,\sigma(S)$, Euclidean scores
# $S_{ji} = -\|K z'_j + b_K - Q z_i - b_Q\|^2/\sqrt{d_{emb}}$, γ = 1, σ = softmax over the keys
# (each value carries its bias $b_V$, as `nn.Linear` does in `kmt.py`), $\bar X = [X; 0]$,
# $\bar C = [C; I_k]$, $d_{emb} = d + k$.
# `model_layer` is only a layer *description* for the generic `layer_forward`.

# %%
layer = model_layer(42, dropout=0.01)
for sub in layer:
    print(sub.stream, [(b.name, b.keys, b.normalizer, round(b.scale, 3), b.dropout) for b in sub.blocks])
params0 = init_params(42, np.random.default_rng(SEED))
n_params = sum(v.size for v in params0.values())
assert n_params == 12 * (42**2 + 42) == 21_672          # 12 (d_emb^2 + d_emb) at d=32, k=10
print("parameters:", n_params)
C1 = model_step(params0, X[None], C0[None])             # one application, untrained
assert C1.shape == (1, 32, 10)

# %% [markdown]
# ### Exercise 04.9
#
# A self-check on §2: how many parameters has the trainable layer of the small configuration (d = 8, k = 3)?
# `answer` = an integer.

# %%
### BEGIN SOLUTION
d_emb_q = 8 + 3                                            # d + k
answer = 12 * (d_emb_q ** 2 + d_emb_q)                     # twelve matrices and their biases
assert answer == sum(v.size for v in init_params(d_emb_q, np.random.default_rng(0)).values())
### END SOLUTION

# %%
from kmt_ref.exercises import check
check("04.9", answer)

# %% [markdown]
# ## 3. The loss: a smoothed upper bound (the authors' `losses.py`)
#
# $$L = \sum_i \sum_j \operatorname{softmax}_j(-\lambda \|x_i - \hat c_j\|^2)\,\|x_i - \hat c_j\|^2
#   \;\ge\; \sum_i \min_j \|x_i - \hat c_j\|^2, \qquad \lambda = 10.$$
#
# Each inner sum is a convex combination of the distances, so it is at least their minimum.

# %%
for lam in (1.0, 10.0, 100.0, 1e4):
    L = soft_kmeans_loss(X[None], C0[None], lam)[0]
    hard = batch_objective(X[None], C0[None])[0]
    assert L >= hard - 1e-9
    print(f"lambda = {lam:>7}: smoothed {L:9.3f}  >=  k-means objective {hard:9.3f}")

# %% [markdown]
# The gradient comes from `autograd` through the very same `layer_forward`
# (the test suite checks it against finite differences with `autograd.test_util.check_grads`).

# %% [markdown]
# ### Exercise 04.10
#
# A self-check on §3: one point at 0 on a line (d = 1) and two centers at 0 and 0.5. What is the smoothed loss $L$
# at λ = 10? `answer` = a number (4 significant digits).

# %%
### BEGIN SOLUTION
dist_q = np.array([0.0, 0.25])                             # squared distances to the two centers
w_q = np.exp(-10.0 * dist_q) / np.exp(-10.0 * dist_q).sum()
answer = float(w_q @ dist_q)
assert np.isclose(answer, soft_kmeans_loss(np.zeros((1, 1, 1)), np.array([[[0.0, 0.5]]]), 10.0)[0])
### END SOLUTION

# %%
check("04.10", answer)

# %% [markdown]
# ## 4. Train the small configuration live
#
# `CONFIGS["small"]` is the authors' protocol at n = 64, d = 8, k = 3, batch 16, 3,000 steps: Adam,
# learning rate 0.01 halved on plateaus of the validation score (objective after one layer ÷ objective
# after one Lloyd step, on 64 fixed tasks; below 1, one step of the layer does better than one step of
# Lloyd's algorithm). With seed 0 it is exactly the run of `python -m kmt_ref train`. Then the evaluation
# of section 6:
# the trained layer against Lloyd's algorithm, 20 steps from the same starts, on the 320 seeded tasks
# that `train` evaluates at its end, so the numbers printed here are the ones `python -m kmt_ref train`
# prints.

# %%
tune_malloc()   # glibc only: faster training steps, the same results (its docstring says why)
small = CONFIGS["small"]
assert (small.n, small.d, small.k, small.batch, small.steps) == (64, 8, 3, 16, 3000)
t0 = time.perf_counter()
ck_small = train(small, seed=SEED, log=lambda s: None)
steps, val = ck_small.history["step"], ck_small.history["val"]        # (61,) each: every 50 steps
plateau, late = val[(steps >= 150) & (steps <= 800)], val[steps >= 1500]
print(f"trained {ck_small.step} steps in {time.perf_counter() - t0:.0f} s. Validation score: {val[0]:.2f} at the "
      f"start; {plateau.min():.2f}-{plateau.max():.2f} on steps 150-800; first below 1.3 at step "
      f"{steps[np.argmax(val < 1.3)]:.0f}; median {np.median(late):.3f} after step 1,500; {val[-1]:.3f} at the end")
# Training runs in float32: another CPU or BLAS kernel rounds differently, and from the drop on the run takes
# another path. Measured for this run (seed 0) with OpenBLAS's Haswell, SkylakeX, Sandybridge, Nehalem and
# Katmai kernels (OPENBLAS_CORETYPE), 1 and 2 threads, and numpy's baseline SIMD code
# (NPY_DISABLE_CPU_FEATURES): 6 distinct results (the thread count changes nothing). On steps 150-800 the
# scores agree to 3e-7 (1.662-1.993), every run first falls below 1.3 at step 900, and the median after
# step 1,500 is 0.899-1.046 (seeds 1-4: 0.874-1.011).
assert np.all(plateau > 1.5)      # the plateau: measured minimum 1.662; margin 0.16; the settings differ by 3e-7
assert np.median(late) < 1.25     # then below it: measured median <= 1.046; margin 0.20, > the spread 0.147

# %%
res_small = evaluate(ck_small.params, n_tasks=320, n=64, d=8, k=3, n_steps=20)   # the tasks `train` evaluates
gap_small = res_small["model"][:, -1] - res_small["lloyd"][:, -1]                # (320,)
print(f"mean log objective after 20 steps, 320 tasks: start {res_small['lloyd_mean'][0]:.3f}, "
      f"Lloyd {res_small['lloyd_mean'][-1]:.3f}, trained layer {res_small['model_mean'][-1]:.3f}; "
      f"trained - Lloyd {gap_small.mean():+.3f}.\nPer task: lower on {np.mean(gap_small < 0):.0%} of the tasks "
      f"(by {-gap_small[gap_small < 0].mean():.3f} on average), higher on {np.mean(gap_small > 0):.0%} "
      f"(by {gap_small[gap_small > 0].mean():.3f}; median of trained - Lloyd {np.median(gap_small):+.3f})")
# Measured (the settings of the cell above): trained - Lloyd from -0.143 to -0.121 over the 6 results
# (a spread of 0.023; Lloyd's 2.239 is float64, the same everywhere), and from -0.138 to -0.117 over
# seeds 0-4. The assert is the claim itself: it holds with a margin of at least 0.117, over 5x either spread.
assert gap_small.mean() < 0
fig, axs = plt.subplots(1, 2, figsize=(11, 3.6))
plot_training_history({"small, seed 0": ck_small.history}, "val", axs[0])
axs[0].axvspan(150, 800, color="0.85", zorder=0)
axs[0].set_title("validation score while training (grey: the plateau, steps 150-800)", fontsize=9)
plot_evaluation_curves({"Lloyd": res_small["lloyd"], "trained": res_small["model"]}, axs[1],
                       title="trained layer vs Lloyd, 320 tasks (band: min-max over tasks)")
fig.tight_layout()

# %% [markdown]
# *The curve falls fast from the random start, then sits on a **plateau** for hundreds of steps (the
# range printed for steps 150–800: one step of the layer leaves an objective 66–99% above one Lloyd
# step). Then it drops (below 1.3 from the step printed) to about 1 and stays near it (the median
# printed): one step of the trained layer does about as well as one Lloyd step. After 3,000 steps and
# applied 20 times, the trained layer ends below Lloyd's algorithm in the mean (printed above), like the
# paper's trained layer in its own setting (reported by the paper, from a summary). The mean hides two kinds of
# task: on most, the layer ends a little above Lloyd; on about a fifth, far below. Exercise 04.5 shows
# where a soft Lloyd gains: on the tasks where Lloyd's algorithm is stuck in a worse local minimum.*
#
# Other seeds: `python -m kmt_ref train --seed N` (3,000 steps) prints the comparison above at its end,
# on the same 320 seeded tasks, and `python -m kmt_ref train --seed N --d 4` runs the same at d = 4
# (exercise 04.8 trains that run). Training runs in float32, so on another machine a re-run rounds
# differently: compare the sign and size of trained − Lloyd, not its digits.
#
# The follow-up paper, *Leaner Transformers Can Easily Learn to Cluster* (arXiv 2610.09760, its Section 3
# and Figure 2), reports that at small d its binary-code model converges more slowly than the one-hot
# one, a difference that vanishes as d grows; it does not compare one-hot runs at d = 4 and d = 8.
# Exercises 04.1, 04.3, 04.5 and 04.8 measure why small d is harder.
#
# ## 5. The paper-scale models (committed)
#
# `kmt_ref/models/paper.npz` and `paper_d_only.npz` were trained in this repository with
#
# ```
# python -m kmt_ref train --config paper --seed 0 --out runs/paper.npz
# python -m kmt_ref train --config paper_d_only --seed 0 --out runs/paper_d_only.npz
# ```
#
# Each file holds the weights, the configuration, the seed and the training history. The configuration
# `paper` is the authors' main setting (their `expts.md`: n = 512, d = 32, k = 10, 10,000 steps, loss
# inverse temperature λ = 10, `LI=10.0`; batch 32 in their `expt-run.sh`); the cell prints the steps of each model, and, beside them, those of the quick
# run of section 4. The paper-scale model has the same plateau as the quick run; its validation score
# falls below 1.3 later (the last column).

# %%
paper = load_checkpoint(MODELS_DIR / "paper.npz", d=32, k=10)
donly = load_checkpoint(MODELS_DIR / "paper_d_only.npz", d=32, k=10)
for name, c in (("paper", paper), ("d-only", donly), ("small", ck_small)):
    h = c.history
    print(f"{name:7s}: embedding={c.config.embedding}, d_emb={c.config.d_emb}, {c.n_params} parameters, "
          f"{c.step} steps, seed {c.seed}, final validation score {h['val'][-1]:.4f}, "
          f"first below 1.3 at step {h['step'][np.argmax(h['val'] < 1.3)]:.0f}")
assert paper.n_params == 21_672
fig, axs = plt.subplots(1, 2, figsize=(11, 3.6))
plot_training_history({"d+k (paper)": paper.history, "d-only": donly.history}, "val", axs[0])
plot_training_history({"d+k (paper)": paper.history, "d-only": donly.history}, "loss", axs[1])
fig.tight_layout()

# %% [markdown]
# ## 6. Evaluation: 20 re-embedded steps vs 20 Lloyd iterations
#
# Each step re-embeds: $\bar X = [X; 0]$, $\bar C = [C^{(t)}; I_k]$, one layer, read $C^{(t+1)}$.
# Metric: $\log \sum_i \min_j \|x_i - c_j^{(t)}\|^2$, mean over tasks, Lloyd from the same
# initial centers. Dropout is **off** at evaluation (the authors' code leaves it on).
#
# The 320-task numbers are computed by
#
# ```
# python -m kmt_ref evaluate paper paper_d_only --save kmt_ref/models/evaluation.npz
# python -m kmt_ref evaluate paper --suite --save kmt_ref/models/evaluation.npz
# ```
#
# and are loaded here; the cell after recomputes the first 32 of those tasks live (fewer than 320,
# to keep this notebook short) and checks that they agree.
#
# *Agree how closely? Lloyd's curves are float64 and come out the same on every machine. The trained
# layer runs in float32: another CPU or BLAS kernel sums in another order, the last bits differ, and
# over 20 steps a near-tie can send one task down a slightly different path. So the check compares two
# robust statistics per step, with measured tolerances (the comment in the cell says how), not every
# element; the cell prints the largest single difference of this run beside them.*

# %%
ev, info = load_evaluation(MODELS_DIR / "evaluation.npz")
base = ev[setting_label("random", 512, "normal")]
print("evaluation file:", info)
for name in ("lloyd", "paper", "paper_d_only"):
    L = base[name]
    print(f"{name:13s} t=0 {L[:, 0].mean():.3f}   t=1 {L[:, 1].mean():.3f}   t=20 {L[:, -1].mean():.3f}"
          f"   ({L.shape[0]} tasks)")
fig = plot_evaluation_curves({"Lloyd": base["lloyd"], "trained (d+k)": base["paper"],
                              "d-only": base["paper_d_only"]},
                             title="320 tasks, d=32, k=10, n=512 (band: min-max over tasks)")

# %%
live = evaluate(paper.params, "onehot", n_tasks=32, n=512, d=32, k=10, n_steps=20)  # same seed: the first 32 tasks
np.testing.assert_allclose(live["lloyd"], base["lloyd"][:32], rtol=0, atol=1e-12)      # float64: any machine
# The float32 model: per step t, (a) the median over the 32 tasks of |live - stored| and (b) |mean over
# tasks of (live - stored)|, the metric of [SPEC, "Learning the algorithm"](../docs/SPEC.md#6-learning-the-algorithm-the-papers-training-experiment). Measured: the stored run against re-runs with OpenBLAS's
# Haswell, Sandybridge, Nehalem and Katmai kernels (OPENBLAS_CORETYPE), 1 and 2 threads, numpy's SSE
# code path (NPY_DISABLE_CPU_FEATURES), numpy 1.26 with its own OpenBLAS, and weights moved by one
# float32 ulp: 9 settings, 82 blocks of 32 tasks (2,624 re-run tasks). Largest (a): 9.1e-7; largest
# (b): 4.9e-4 (one task of 32 off by 0.016, every other task within 8e-4). Tolerances: (a) 1e-5, 11x
# the largest; (b) 5e-3, 10x the largest: one task would have to move by 0.16, 10x the largest jump.
# A wrong task seed lies far outside, (a) >= 0.12 at every step; so does a wrong model (the d-only one, or
# Lloyd's curves), (a) >= 0.13 and (b) >= 0.1 at every step after t = 0 (tests/learning/test_evaluation.py).
MEDIAN_TOL, MEAN_TOL = 1e-5, 5e-3
diff = live["model"] - base["paper"][:32]                         # (32, 21)
median_dev = np.median(np.abs(diff), axis=0)                      # (21,)
mean_dev = np.abs(diff.mean(axis=0))                              # (21,)
assert np.all(median_dev <= MEDIAN_TOL) and np.all(mean_dev <= MEAN_TOL), (median_dev.max(), mean_dev.max())
print(f"live re-evaluation of 32 tasks vs the stored curves: median |difference| <= {median_dev.max():.1e}, "
      f"|mean difference| <= {mean_dev.max():.1e}, largest single difference {np.abs(diff).max():.1e}")

# %% [markdown]
# *The spread: per task, how often does the trained layer end below Lloyd?*

# %%
gap = base["paper"][:, -1] - base["lloyd"][:, -1]
print(f"model - Lloyd after 20 steps: mean {gap.mean():+.3f}, median {np.median(gap):+.3f}, "
      f"model better on {np.mean(gap < 0):.0%} of tasks")
fig, ax = plt.subplots(figsize=(5, 3))
ax.hist(gap, bins=40)
ax.axvline(0, color="k", lw=0.8)
ax.set_xlabel("log objective: trained − Lloyd (t = 20)")
ax.set_ylabel("tasks")
ax.set_title("320 tasks: below 0, the trained layer ends lower", fontsize=9);

# %% [markdown]
# ### Exercise 04.11
#
# A self-check on §6: to compute $C^{(t+1)}$ from $C^{(t)}$, the evaluation applies the trained layer to
#
# - (a) the tokens it wrote at step t, y rows included
# - (b) $[X; Y^{(t)}]$ and $[C^{(t)}; I_k]$
# - (c) $[X; 0]$ and $[C^{(0)}; I_k]$
# - (d) $[X; 0]$ and $[C^{(t)}; I_k]$
#
# `answer` = the letter, as a string.

# %%
### BEGIN SOLUTION
# each step re-embeds: the y rows start at 0 and the center tokens are rebuilt from C^(t) alone. Check: step 2 of
# the evaluation (run_model) is one model_step, which embeds [X; 0] and [C; I_k], applied to C^(1) alone
from kmt_ref.learning import run_model
_, path_q = run_model(paper.params, X[None], C0[None], 2)                  # (3, 1, d, k): C^(0), C^(1), C^(2)
p32_q = {m: np.asarray(v, dtype=np.float32) for m, v in paper.params.items()}   # run_model's float32 arithmetic
again_q = model_step(p32_q, X[None].astype(np.float32), path_q[1].astype(np.float32))
assert np.array_equal(again_q.astype(float), path_q[2])
answer = "d"
### END SOLUTION

# %%
check("04.11", answer)

# %% [markdown]
# ## 7. Generalisation: k-means++ initial centers, other n, other families
#
# The paper reports evaluations with k-means++ starts and other sample sizes (reported by the paper, from a
# summary); the other noise families follow the authors' `ctasks.py`.

# %%
rows = []
for init, n, fam in PAPER_SUITE:
    r = ev[setting_label(init, n, fam)]
    rows.append((f"{init}, n={n}, {fam}", r["lloyd"][:, 0].mean(), r["lloyd"][:, -1].mean(), r["paper"][:, -1].mean()))
print(f"{'setting':28s} {'t=0':>7s} {'Lloyd':>7s} {'model':>7s}")
for label, a, b, c in rows:
    print(f"{label:28s} {a:7.3f} {b:7.3f} {c:7.3f}")
fig, axs = plt.subplots(1, 2, figsize=(11, 3.6))
kpp = ev[setting_label("kmeans++", 512, "normal")]
plot_evaluation_curves({"Lloyd": kpp["lloyd"], "trained (d+k)": kpp["paper"]}, axs[0], title="k-means++ initial centers")
ns = [128, 256, 512, 1024, 2048]
plot_final_vs_n(ns, {"Lloyd": [ev[setting_label("random", n, "normal")]["lloyd"][:, -1].mean() for n in ns],
                     "trained (d+k)": [ev[setting_label("random", n, "normal")]["paper"][:, -1].mean() for n in ns]},
                axs[1])
fig.tight_layout()

# %% [markdown]
# ## 8. Learned vs hand-set weights
#
# ([SPEC, "Learning the algorithm"](../docs/SPEC.md#6-learning-the-algorithm-the-papers-training-experiment), "Weights".) The hand-set weights of Theorem 2.1 in the layout $d_{emb} = d + k$ of the
# authors' `cnst_model.py`
# (`lloyd_weights(d, k, "linear")`): $Q_1 = K_1 = Q_2 = K_2 = P_X$, $V_1 = P_Y$, $V_2 = -P_Y$,
# $Q_3 = K_3 = Q_4 = K_4 = P_Y$, $V_3 = P_X$, $V_4 = -P_X$. The Euclidean score's bilinear part
# is $z'^\top K^\top Q z$, so $Q^\top K$ is what to compare (biases aside).

# %%
hand, emb = lloyd_weights(32, 10, "linear")
assert hand["Q1"].shape == paper.params["Q1"].shape == (42, 42)
fig = plot_weight_grid(paper.params, hand, 32, 10)
# The grid's colours look like noise; the same data blocks entry by entry show the diagonal standing apart
# (the ranges of the diagonal and off-diagonal entries are printed by the next cell).
from kmt_ref.viz.learning_figures import plot_diagonal_vs_off
fig = plot_diagonal_vs_off(paper.params, 32)

# %%
xs, ys = emb.rows("x"), emb.rows("y")
for b in BLOCKS:
    M = paper.params["Q" + b].T @ paper.params["K" + b]
    V = paper.params["V" + b]
    diag = np.mean(np.diag(M[xs, xs]))
    off = np.mean(np.abs(M[xs, xs] - np.diag(np.diag(M[xs, xs]))))
    print(f"block {b}: Q^T K data block: mean diagonal {diag:+.3f}, mean |off-diagonal| {off:.3f};"
          f"  V data block: mean diagonal {np.mean(np.diag(V[xs, xs])):+.3f};"
          f"  V one-hot block: mean diagonal {np.mean(np.diag(V[ys, ys])):+.3f}")
for b in "12":   # the data block of Q_b^T K_b entry by entry
    D_b = (paper.params["Q" + b].T @ paper.params["K" + b])[xs, xs]
    off_b = D_b[~np.eye(32, dtype=bool)]
    print(f"block {b}: Q^T K data block: diagonal {np.diag(D_b).min():.1f} to {np.diag(D_b).max():.1f}, "
          f"off-diagonal {off_b.min():.1f} to {off_b.max():.1f}")
V1_y = paper.params["V1"][ys, ys]                                 # (k, k): what block 1 writes into the y rows
mean_abs_diag, mean_abs_off = np.mean(np.abs(np.diag(V1_y))), np.mean(np.abs(V1_y[~np.eye(10, dtype=bool)]))
print(f"V1 one-hot block: mean |diagonal| {mean_abs_diag:.3f}, mean |off-diagonal| {mean_abs_off:.3f} "
      f"(hand-set: 1 and 0)")

# %% [markdown]
# *Read against the theory. What Theorem 2.1 predicts and the learned layer shows:*
#
# - *Blocks 1 and 2 score in part by distances in data space: the data block of $Q_1^\top K_1$ and
#   $Q_2^\top K_2$ is strongly diagonal (a scaled $P_X$; the scale plays the role of γ). Only in part: with
#   $Q \ne K$ and biases the score has other terms, and on the task of §9 they send about a third of the points
#   to another center than their nearest in block 1.*
# - *Block 4 removes the old center: $V_4 \approx -P_X$ on the data block, and its attention is
#   ≈ the identity (below).*
# - *Block 3 writes a weighted mean of the points: $V_3$ has a positive diagonal on the data block.*
#
# *Where it departs from the hand-set layer: $V_1$ writes into the k scratch rows through a dense
# matrix, not $P_Y$ (on its one-hot block the off-diagonal entries are as large as the diagonal ones:
# about equal mean absolute values, printed above, where $P_Y$ has 1 and 0), and block 3 reads them
# through a dense $Q_3^\top K_3$: the layer uses the scratch rows with its own code rather than
# the one-hot $e_j$. And $V_2$ has a positive diagonal on the **data** block: block 2 adds to each
# point a multiple of the average of its neighbours (its attention sits on nearby points), so block 3
# averages locally smoothed points — one possible reading of why the trained layer ends below Lloyd
# (a smoothing step Lloyd does not have; the annotator's interpretation, not a claim of the authors).
# A layer that beats Lloyd's algorithm cannot be exactly Lloyd's algorithm.*

# %%
M1, M2 = (paper.params[q].T @ paper.params[k] for q, k in (("Q1", "K1"), ("Q2", "K2")))
for M in (M1, M2):   # diagonal data block: mean diagonal far above the off-diagonal entries
    assert np.mean(np.diag(M[xs, xs])) > 3 * np.mean(np.abs(M[xs, xs] - np.diag(np.diag(M[xs, xs]))))
assert np.mean(np.diag(paper.params["V4"][xs, xs])) < -0.5     # V4 ~ -P_X on the data block
assert np.mean(np.diag(paper.params["V3"][xs, xs])) > 0.3      # V3 ~ +P_X (scaled) on the data block

# %% [markdown]
# ## 9. Learned attention maps on one task
#
# The four attention matrices of the trained layer on one task (no dropout), each column a query's
# weights over the keys. The points are sorted by the cluster of their nearest initial center, so that
# attention between members of one cluster shows as blocks. Each matrix has its own colour scale, from 0
# to its largest weight: blocks 2 and 3 spread a query's weight over dozens of points, so their largest
# weights are about 0.1 (printed below), and on a common [0, 1] scale they would look black.

# %%
Xe, Ce = sample_task(np.random.default_rng(5), n=512, d=32, k=10)
order = np.argsort(lloyd(Xe, Ce, 1).labels[0], kind="stable")
W = attention_maps(paper.params, Xe[:, order], Ce)
assert W["1"].shape == (10, 512) and W["2"].shape == (512, 512) and W["3"].shape == (512, 10) and W["4"].shape == (10, 10)
assert np.allclose(W["2"].sum(axis=0), 1)                      # each query's weights sum to one
ROLES = {"1": ("points, sorted by cluster", "centers", "learned block 1: points → centers"),
         "2": ("points, sorted by cluster", "points, sorted", "learned block 2: points → points"),
         "3": ("centers", "points, sorted by cluster", "learned block 3: centers → points"),
         "4": ("centers", "centers", "learned block 4: centers → centers")}
fig, axs = plt.subplots(1, 4, figsize=(17, 3.6), layout="constrained")
for ax, b in zip(axs, BLOCKS):
    q_label, k_label, title = ROLES[b]
    plot_attention(W[b], ax=ax, title=title, query_label=q_label, key_label=k_label, colorbar=False)
    ax.images[-1].set_clim(0, W[b].max())    # each block its own scale: blocks 2 and 3 peak near 0.1
    fig.colorbar(ax.images[-1], ax=ax, fraction=0.046, label="attention weight")
print("largest weight per block:", {b: round(float(W[b].max()), 3) for b in BLOCKS})
print("block 4 attention (≈ I_k is the hand-set behaviour):")
print(np.round(W["4"], 2))
assert np.all(np.diag(W["4"]) > 0.9)                           # block 4 attention ~ I_k

# %% [markdown]
# ### What block 1 assigns, and what block 3 reads back
#
# In block 1's map above, many points put their largest weight on another center than their nearest initial
# one. The three tables below count, for each point of the task, two labels at once:
#
# - *left*, the hand-set layer (Theorem 2.1's weights with Q and K times s = 100, no biases): block 1 puts every
#   point's largest weight on its nearest initial center;
# - *middle*, the learned layer: about a third of the points go elsewhere, and not by a relabelling of the centers:
#   cells of the nearest-center partition are split between centers, and centers collect points from several cells;
# - *right*, the center whose mean a point weighs in most (its largest block-3 weight): the center of its largest
#   block-1 weight, for nearly every point. $V_1$ writes a dense code, not $e_j$ (§8), and block 3 reads it back
#   as block 1's groups.
#
# Why, when the data block of $Q_1^\top K_1$ is diagonal (§8)? Up to terms equal for every center, the score
# $-\|K_1\bar c_j + b_K - Q_1\bar x_i - b_Q\|^2/\sqrt{d_{emb}}$ is $-m\|x_i - c_j\|^2/\sqrt{d_{emb}} + r_j(x_i)$:
# a scaled distance (m, the mean diagonal of the data block) plus a rest $r_j$, affine in $x_i$, from the
# spread of the diagonal around m, from the off-diagonal entries, from the biases, from $\|K_1\bar c_j + b_K\|^2$ differing from $m\|c_j\|^2$, and from
# the one-hot columns of $K_1$ (a direction for each center index). The distance part alone picks the nearest center;
# the rest varies over the centers by more than the distance part separates a point's two nearest ones
# (the medians printed).
#
# So on this task the layer applies Lloyd's update to a partition of its own: each new center is close to the
# mean of its block-1 group. On this task that partition is much better than the nearest-center one (the one-step
# objectives printed). The task is a favourable one: over the first 32 tasks of §6 the means of block 1's
# groups beat Lloyd's step on about three tasks in five, by far less on average, and by less than half of what
# the learned layer itself gains over Lloyd's step there (the last line): on most tasks its one step is more than
# the mean of a partition. *The annotator's reading: block 1 assigns by distance plus a learned correction per
# center; on this task that partition is most of what the layer does; what in the data the correction responds
# to, and what else the layer does on other tasks, is not measured here.*

# %%
from kmt_ref.viz.learning_figures import plot_assignment_counts
from kmt_ref.learning import EVAL_SEED, embed_batch


def groups(params, X, C):
    """Per point: its nearest center, the center of its largest block-1 weight, of its largest block-3 weight."""
    A = attention_maps(params, X, C)
    return lloyd(X, C, 1).labels[0], A["1"].argmax(axis=0), A["3"].argmax(axis=1)


def group_means(X, C, g):
    """Each center moved to the mean of its group g (kept where the group is empty)."""
    return np.stack([X[:, g == j].mean(axis=1) if np.any(g == j) else C[:, j] for j in range(C.shape[1])], axis=1)


near, g1, g3 = groups(paper.params, Xe, Ce)
h100 = {name: 100 * M if name[0] in "QK" else M for name, M in hand.items()} | {"b" + n: np.zeros(42) for n in hand}
_, h1, h3 = groups(h100, Xe, Ce)                  # Theorem 2.1's weights, Q and K times s = 100, no biases
fig, axs = plt.subplots(1, 3, figsize=(15, 4.4), layout="constrained")
plot_assignment_counts(near, h1, 10, axs[0], "nearest initial center", "center of the largest block-1 weight",
                       "hand-set layer (s = 100): block 1")
plot_assignment_counts(near, g1, 10, axs[1], "nearest initial center", "center of the largest block-1 weight",
                       "learned layer: block 1")
plot_assignment_counts(g1, g3, 10, axs[2], "center of the largest block-1 weight",
                       "center of the largest block-3 weight", "learned layer: block 3 reads block 1's groups")
counts = np.zeros((10, 10), int)
np.add.at(counts, (near, g1), 1)                  # the middle table
big = counts >= 0.1 * counts.sum(axis=1, keepdims=True)
print(f"block 1, largest weight on the nearest initial center: hand-set {np.mean(h1 == near):.0%} of the points, "
      f"learned {np.mean(g1 == near):.0%}; {np.sum(big.sum(axis=1) >= 2)} of the 10 cells split between two or "
      f"more centers (10% of the cell each), {np.sum((counts > 0).sum(axis=0) >= 2)} centers collect from two or more")
print(f"block 3, largest weight: learned, on the block-1 center for {np.mean(g3 == g1):.0%} of the points; "
      f"hand-set, on the nearest center for {np.mean(h3 == near):.0%}")
assert np.array_equal(h1, near) and np.array_equal(h3, near)
assert 0.3 < np.mean(g1 != near) < 0.4                               # about a third go elsewhere
assert np.sum(big.sum(axis=1) >= 2) >= 2 and np.sum((counts > 0).sum(axis=0) >= 2) >= 2   # not a relabelling
assert np.mean(g3 == g1) > 0.95                                       # block 3 reads block 1's groups
# the score of point i for center j, and its distance part -m ||x_i - c_j||^2 / sqrt(d_emb)
P1 = {p: np.asarray(paper.params[p], float) for p in ("Q1", "K1", "bQ1", "bK1")}
Xbar, Cbar = (Z[0] for Z in embed_batch(Xe[None], Ce[None]))
S1 = kmt_ref.attention_scores(Xbar, Cbar, P1["Q1"], P1["K1"], scale=np.sqrt(42), bQ=P1["bQ1"], bK=P1["bK1"])  # (k, n)
m1 = np.mean(np.diag((P1["Q1"].T @ P1["K1"])[xs, xs]))
dist1 = -m1 * np.sum((Xe[:, None, :] - Ce[:, :, None]) ** 2, axis=0) / np.sqrt(42)                          # (k, n)
rest1 = S1 - dist1                                 # r_j(x_i) plus a term equal for every center
sorted1 = np.sort(dist1, axis=0)
margin1 = sorted1[-1] - sorted1[-2]               # distance part: nearest minus second nearest
print(f"block-1 score, distance part (m = {m1:.1f}): median margin between a point's two nearest centers "
      f"{np.median(margin1):.1f}; the rest: median range over the centers {np.median(np.ptp(rest1, axis=0)):.1f}")
assert np.array_equal(dist1.argmax(axis=0), near) and np.array_equal(S1.argmax(axis=0), g1)
assert np.median(np.ptp(rest1, axis=0)) > np.median(margin1)
C1_learned = model_step(paper.params, Xe[None], Ce[None])[0]
off1 = np.sqrt(np.max(np.sum((C1_learned - group_means(Xe, Ce, g1)) ** 2, axis=0)))
close0 = np.sqrt(np.min(np.sum((Ce[:, :, None] - Ce[:, None, :]) ** 2, axis=0)[~np.eye(10, dtype=bool)]))
print(f"new centers and the means of block 1's groups: at most {off1:.2f} apart (the two closest initial "
      f"centers: {close0:.2f})")
assert off1 < 0.5 * close0                        # measured 0.151 against 0.616
one_step = {"Lloyd's step": lloyd(Xe, Ce, 1).log_objective[1],
            "means of block 1's groups": np.log(batch_objective(Xe[None], group_means(Xe, Ce, g1)[None])[0]),
            "the learned layer": np.log(batch_objective(Xe[None], C1_learned[None])[0])}
print("log objective after one step:", ", ".join(f"{name} {v:.3f}" for name, v in one_step.items()))
gain_here = one_step["Lloyd's step"] - one_step["means of block 1's groups"]
assert gain_here > 0.5 and abs(one_step["the learned layer"] - one_step["means of block 1's groups"]) < 0.05
Xs, Cs = sample_tasks(np.random.default_rng(EVAL_SEED), 32, n=512, d=32, k=10)   # the first 32 tasks of section 6
agree32, gain32, layer32 = np.zeros(32), np.zeros(32), np.zeros(32)
for t, (X_t, C_t) in enumerate(zip(Xs, Cs)):
    near_t, g1_t, _ = groups(paper.params, X_t, C_t)
    agree32[t] = np.mean(g1_t == near_t)
    lloyd_t = lloyd(X_t, C_t, 1).log_objective[1]
    gain32[t] = lloyd_t - np.log(batch_objective(X_t[None], group_means(X_t, C_t, g1_t)[None])[0])
    layer32[t] = lloyd_t - np.log(batch_objective(X_t[None], model_step(paper.params, X_t[None], C_t[None]))[0])
print(f"first 32 tasks of section 6: block 1 on the nearest center for {agree32.mean():.0%} of the points "
      f"({agree32.min():.0%}-{agree32.max():.0%} per task); the means of its groups below Lloyd's step on "
      f"{np.mean(gain32 > 0):.0%} of the tasks, by {gain32.mean():.3f} on average (this task: {gain_here:.3f}); "
      f"the learned layer below Lloyd's step by {layer32.mean():.3f} on average")
assert 0.55 < np.mean(gain32 > 0) < 0.7 and 0 < gain32.mean() < 0.1 * gain_here
assert gain32.mean() < 0.5 * layer32.mean()                          # the partition is less than half the gain


# %% [markdown]
# ## 10. The loss temperature and the one-hot rows: the paper's Figure 9 at a reduced scale
#
# The authors' `expts.md` trains more than the main setting. For the paper's Figure 9 it sweeps the loss's
# λ ∈ {1, 4, 7, 10} (the figure's panels give the *loss temperature* 1/λ) at d = 4 and d = 32, with k = 6 and
# n = 512, each with the one-hot rows (d_emb = d + k) and without them (d_emb = d), 10 trials of 10,000 steps
# each. `python -m kmt_ref train-sweep --figure 9` runs that grid. The runs committed in
# `kmt_ref/datasets/train_sweep.csv` are at a **reduced scale**, 3 seeds × 600 steps (their CPU time: the section
# linked below); everything else is the protocol of the paper-scale models of §5. The cell
# draws them as the authors' `plot_train_id_gen.py` draws theirs: the median over seeds with the 25–75 % band
# (with 3 seeds, halfway from the median to the lowest and the highest seed), log₂ y axes, the dotted line at
# one Lloyd step. What the runs show beside what the follow-up reports of its own, and Figures 10a and 10b:
# [the training sweeps](../docs/RESULTS.md#the-training-sweeps-the-papers-figures-9-10a-10b-at-a-reduced-scale).

# %%
from kmt_ref.learning.train_sweep import COMMITTED_CSV, figure_curves, final_scores, read_train_sweep
from kmt_ref.viz.train_sweep_figures import plot_train_sweep

sweep = read_train_sweep(COMMITTED_CSV)
for name in ("9a", "9b"):
    plot_train_sweep(sweep, name)
    plt.show()
finals = {name: final_scores(sweep, name) for name in ("9a", "9b")}
for name, d in (("9a", 4), ("9b", 32)):
    for lam, by in finals[name].items():
        oh, no = (np.array(list(by[e].values())) for e in ("onehot", "none"))
        print(f"d = {d:2d}, λ = {lam:4.1f}: final score one-hot {np.median(oh):.3f} (seeds {np.round(oh, 3)}), "
              f"d-only {np.median(no):.3f}; one-hot lower in {np.sum(oh < no)} of {oh.size} seeds")
med = {(name, e): {lam: np.median(list(by[e].values())) for lam, by in finals[name].items()}
       for name in finals for e in ("onehot", "none")}
assert all(r["val_score"] > 1 for r in sweep if r["step"] == r["steps"])   # no run reaches one Lloyd step
for e in ("onehot", "none"):
    assert med["9a", e][1.0] > 1 + max(med["9a", e][lam] for lam in (4.0, 7.0, 10.0))    # λ = 1 far worse at d = 4
    assert 0 < med["9b", e][1.0] - max(med["9b", e][lam] for lam in (4.0, 7.0, 10.0)) < 0.05   # a little at d = 32
assert all(by["onehot"][s] < by["none"][s] for by in finals["9b"].values() for s in by["onehot"])
curves = figure_curves(sweep, "9a")[1.0]                               # d = 4, λ = 1: the loss falls, the score rises
assert all(c["loss"][1][-1] < c["loss"][1][0] and c["val"][1][-1] > c["val"][1].min() + 0.5 for c in curves.values())

# %% [markdown]
# *Read the bottom rows. No run reaches the dotted line: after 600 steps every layer is still above one Lloyd
# step. λ = 1 (loss temperature 1) is the one setting that stands out: at d = 4 its validation score **rises**
# while its training loss falls (one reading: at λ = 1 the bound it minimises is loose, and lowering a loose bound
# need not lower the k-means objective), and both embeddings end far above the other λ; at d = 32 λ = 1 is only a little worse. Among λ = 4,
# 7, 10 the curves nearly coincide at this scale. At d = 32 the one-hot layer is ahead of the d-only one in every
# seed; at d = 4 it is lower in 2 of 3 seeds at each λ ≥ 4 and in none at λ = 1 (the printed counts). The follow-up reports the rise at τ = 1 and
# that the larger d needs no low temperature; its other findings are about matching or beating Lloyd's step,
# which these runs do not reach (the comparison, finding by finding, is in the link above).*
#
# How far 600 steps go: the committed models of §5 were trained in the setting of this sweep's runs at d = 32,
# k = 10, λ = 10 (Figure 10a's) with the same seed, for 10,000 steps. The cell checks that over the first 600
# steps they score what the sweep's runs score (two float32 trainings of the same run) and prints where they
# stand at step 600 and at the end.

# %%
for model, embedding in ((paper, "onehot"), (donly, "none")):
    run = [r for r in sweep if (r["d"], r["k"], r["loss_lambda"], r["embedding"], r["seed"]) == (32, 10, 10.0, embedding, 0)]
    h = model.history
    ours = np.array([r["val_score"] for r in run])
    theirs = h["val"][np.searchsorted(h["step"], [r["step"] for r in run])]
    # two float32 trainings of the same run, in two processes: measured at most 2.5e-7 apart (relative)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    print(f"{embedding:6s}: step 600 {theirs[-1]:.3f}; first below 1.3 at step {h['step'][np.argmax(h['val'] < 1.3)]:.0f}; "
          f"step {h['step'][-1]:.0f}: {h['val'][-1]:.3f}")
assert paper.history["val"][-1] < 1 < donly.history["val"][-1] and paper.history["val"][12] > 1.5

# %% [markdown]
# *So 600 steps stop before the drop of §5: in the setting it shares with the sweep, the one-hot layer is still
# far above one Lloyd step at step 600, falls below 1.3 hundreds of steps later and ends below one Lloyd step,
# while the d-only layer does not (the printed steps and scores). What the reduced sweep can show is how λ and the
# one-hot rows shape the first 600 steps; whether a setting ends below Lloyd, the paper's and the follow-up's
# claim, needs the full 10,000 steps: each committed model is one such run.*

# %% [markdown]
# ## Summary
#
# - A training task is a Gaussian mixture, min-max scaled per dimension, with a random k-subset of its
#   points as the start; the paper-scale models here use the authors' main setting (their `expts.md`):
#   n = 512, d = 32, k = 10.
# - The trainable model is the generic `layer_forward` of notebook 01 with twelve learned Q, K, V and
#   biases (21,672 numbers at d = 32, k = 10). The loss is a smoothed upper bound of the k-means
#   objective after **one** application of the layer (λ = 10).
# - After a fast first fall, training sits on a plateau (validation score 1.66–1.99 on steps 150–800 of
#   the live run), then drops to about 1. The quick run trained live (`python -m kmt_ref train`, 3,000
#   steps, d = 8, seed 0) ends below Lloyd's algorithm; what the same run does at d = 4 is exercise 04.8.
# - The committed paper model ends at 5.012 against Lloyd's 5.295 (320 tasks, 20 re-embedded steps, no
#   dropout); the d-only ablation at 5.362. The trained layer keeps its lead with k-means++ starts, for
#   other n and on other noise families except the heavy-tailed Cauchy.
# - The learned weights show Theorem 2.1's structure where the theory predicts it: diagonal data blocks of
#   $Q_1^\top K_1$ and $Q_2^\top K_2$, $V_3 \approx +P_X$, $V_4 \approx -P_X$, block 4 attending ≈ $I_k$.
#   The scratch rows carry the layer's own code, not the one-hot $e_j$.
# - Block 1 adds learned terms to the distance: on the task of §9 it sends about a third of the points to
#   another center than their nearest, and block 3 averages block 1's groups: there the layer applies Lloyd's
#   update to a partition of its own.
# - The paper's Figure 9 at a reduced scale (3 seeds × 600 steps, committed runs): no layer reaches one Lloyd step
#   yet; λ = 1 is far worse at d = 4 (its validation score rises while training) and a little worse at d = 32; at
#   d = 32 the one-hot rows are ahead in every seed.
# - A layer that ends below Lloyd's algorithm cannot *be* Lloyd's algorithm. The exercises measure what it
#   is instead, and why d = 4 is harder than d = 8.

# %% [markdown]
# ## Exercises
#
# How to work them (what `answer` holds, what `check` prints, parts graded apart, the precision a number
# needs): [Working the exercises](../docs/EXERCISES.md).
#
# The notebook's tasks for the exercises: 32 tasks of the small configuration's distribution (n = 64, k = 3)
# at d = 4 and at d = 8, drawn with the evaluation seed (`TASKS[d] = (X, C0)`, X of shape (32, d, 64), C0 of
# shape (32, d, 3)). `lloyd_batch(X, C, T)` runs Lloyd's algorithm on all of them at once and returns the
# objective after 0 … T iterations, shape (32, T + 1). `run_model(params, X, C0, T)` applies a layer T times
# with re-embedding and returns `(objective, centers)`, the objective of shape (32, T + 1). All logs are natural
# logs.
#
# Each code exercise asks for a **function** of a batch of tasks (or of a parameter set), written for any batch
# size B, dimension d, number of points n and number of clusters k (read them off the shapes: k is
# `C0.shape[2]`). `check` runs it on tasks it draws itself, with other seeds, sizes and k than `TASKS`, and
# compares it with kmt_ref; then you apply it to `TASKS` and read the numbers. Your functions may call
# `lloyd_batch`, `lloyd`, `run_model` and `lloyd_weights`, and each other; 04.4 says what it does without.

# %%
from kmt_ref.exercises import check, report
from kmt_ref.learning import EVAL_SEED, lloyd_batch, run_model

TASKS = {d: sample_tasks(np.random.default_rng(EVAL_SEED), 32, n=64, d=d, k=3) for d in (4, 8)}
assert TASKS[8][0].shape == (32, 8, 64) and TASKS[4][1].shape == (32, 4, 3)
assert np.array_equal(TASKS[8][1], TASKS[8][0][:, :, :3])     # the start C0 is the first k = 3 points

# %% [markdown]
# ### Exercise 04.1
#
# The data of a task are shuffled, so the columns kr, …, kr + k − 1 of `X` are a random start for each
# r = 0, …, 7, and r = 0 is `C0` itself. The task's *gap* is log J after 20 Lloyd iterations from `C0`, minus
# the smallest log J after 20 iterations over the 8 starts. It is zero when `C0` already leads to the best of
# the 8 local minima. Call a task *stuck* when its gap exceeds 1e-6.
#
# Write a function `task_gaps(X, C0)` that returns the gap of every task of the batch, an array of shape (B,).
# `answer` is the function. The check compares it with kmt_ref's gaps, to 1e-9, on fresh tasks at d = 4 and
# at d = 8 (one part each), with k = 3 and with k = 4. Then print, for `TASKS[4]` and `TASKS[8]`, the mean gap
# and the share of stuck tasks: 04.5 and 04.8 use them.

# %%
### BEGIN SOLUTION
def task_gaps(X, C0, starts=8):
    """Per task: log J after 20 Lloyd iterations from C0 minus the smallest over the starts X[:, :, k r : k (r + 1)]."""
    k = C0.shape[2]
    ends = np.stack([np.log(lloyd_batch(X, X[:, :, k * r:k * (r + 1)], 20)[:, -1]) for r in range(starts)],
                    axis=1)  # (B, starts); column 0: from C0
    return ends[:, 0] - ends.min(axis=1)


GAP = {d: task_gaps(*TASKS[d]) for d in (4, 8)}                               # (32,) each
LLOYD = {d: np.log(lloyd_batch(*TASKS[d], 20)[:, -1]) for d in (4, 8)}       # log J of Lloyd from C0, (32,) each
for d in (4, 8):
    print(f"d = {d}: mean gap {GAP[d].mean():.4f}; stuck on {np.mean(GAP[d] > 1e-6):.0%} of the tasks; "
          f"Lloyd from C0 ends at {LLOYD[d].mean():.3f}")
answer = task_gaps
### END SOLUTION

# %%
check("04.1", answer)

# %% [markdown]
# ### Exercise 04.2
#
# Prove that for every data set and centers, $0 \le L_\lambda - J \le n \log(k)/\lambda$. Then explain
# why the gaps printed in §3 (n = 512, k = 10) are far below this bound at λ = 10 and 100: which points
# contribute most to $L_\lambda - J$? (The cell below is for your measurements.)
#
# Write the proof and the explanation in the answer cell below the check. Two checked numbers come first,
# each to 4 significant digits; `answer = (gap, largest)`:
#
# 1. `gap`: $L_\lambda - J$ for a single point whose squared distances to the k = 3 centers are
#    (1, 1.2, 3), at λ = 5.
# 2. `largest`: the largest possible $L_\lambda - J$ over all data sets of n = 100 points and k = 2
#    centers, at λ = 10. Is it the bound $n\log(k)/\lambda$?

# %%
### BEGIN SOLUTION
D_q = np.sum((X[:, :, None] - C0[:, None, :]) ** 2, axis=0)                 # (n, k) squared distances, §3's task
D_sorted = np.sort(D_q, axis=1)
print(f"median (2nd - 1st nearest) {np.median(D_sorted[:, 1] - D_sorted[:, 0]):.2f}, "
      f"median (3rd - 1st nearest) {np.median(D_sorted[:, 2] - D_sorted[:, 0]):.2f}")
J_q = batch_objective(X[None], C0[None])[0]
for lam in (1.0, 10.0, 100.0):
    def point_gaps(Dk):                                                     # per point: sum_j p_j d_j - d_min
        P = np.exp(-lam * (Dk - Dk[:, :1]))
        return (P * Dk).sum(axis=1) / P.sum(axis=1) - Dk[:, 0]
    L_q = soft_kmeans_loss(X[None], C0[None], lam)[0]
    assert np.isclose(L_q - J_q, point_gaps(D_sorted).sum())
    print(f"lambda = {lam:5g}: gap per point {(L_q - J_q) / X.shape[1]:.2g} (bound {np.log(10) / lam:.2g}), "
          f"L / J - 1 = {L_q / J_q - 1:.2%}, share of the two nearest centers "
          f"{point_gaps(D_sorted[:, :2]).sum() / point_gaps(D_sorted).sum():.0%}")
u_grid = np.linspace(0, 10, 100_001)                  # lambda * gap of a point whose competitors all sit at u
for n_comp in (9, 1):
    g = n_comp * u_grid * np.exp(-u_grid) / (1 + n_comp * np.exp(-u_grid))
    print(f"{n_comp} competitor(s) at u: lambda * gap at most {g.max():.2f}, at u = {u_grid[g.argmax()]:.1f}")
# the checked numbers: one point's gap, from its shares of L and J; the largest gap for k = 2, from the grid above
d_42, lam_42 = np.array([1.0, 1.2, 3.0]), 5.0
p_42 = np.exp(-lam_42 * d_42) / np.exp(-lam_42 * d_42).sum()
gap_42 = p_42 @ d_42 - d_42.min()
largest_42 = 100 * np.max(u_grid * np.exp(-u_grid) / (1 + np.exp(-u_grid))) / 10.0     # n = 100 points, lambda = 10
print(f"one point: gap {gap_42:.5f} (bound log(3)/5 = {np.log(3) / 5:.4f}); "
      f"largest gap, n = 100, k = 2, lambda = 10: {largest_42:.4f} (bound {100 * np.log(2) / 10:.4f})")
answer = (gap_42, largest_42)
### END SOLUTION

# %%
check("04.2", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* Fix a point $x_i$; let $d_j = \|x_i - c_j\|^2$, $d_{\min} = \min_j d_j$ and
# $p_j = e^{-\lambda d_j}/Z$ with $Z = \sum_l e^{-\lambda d_l}$. The point's share of $L_\lambda$ is
# $\sum_j p_j d_j$, its share of $J$ is $d_{\min}$.
#
# - *Lower bound.* $\sum_j p_j d_j \ge \sum_j p_j d_{\min} = d_{\min}$, because the $p_j$ are non-negative and sum to 1.
# - *Upper bound.* From $\log p_j = -\lambda d_j - \log Z$ we get $d_j = -(\log p_j + \log Z)/\lambda$, so
#   $\sum_j p_j d_j = (H(p) - \log Z)/\lambda$, with $H(p) = -\sum_j p_j \log p_j$ the entropy. The sum
#   $Z$ contains the term $e^{-\lambda d_{\min}}$, so $-\log Z \le \lambda d_{\min}$. Hence
#   $\sum_j p_j d_j \le d_{\min} + H(p)/\lambda \le d_{\min} + \log(k)/\lambda$, since an entropy over k outcomes is at
#   most $\log k$.
#
# Summing over the n points gives $0 \le L_\lambda - J \le n\log(k)/\lambda$.
#
# The bound is never attained for k > 1: $H(p) = \log k$ needs all k distances equal, and then the gap is
# 0. In terms of $u_j = \lambda(d_j - d_{\min}) \ge 0$, a point's gap is $\frac{1}{\lambda}\sum_j p_j u_j$ with
# $p_j \propto e^{-u_j}$. It is small when the other centers are much farther than the nearest one ($u_j$
# large, $p_j \approx e^{-u_j}$), and also when they are all about as near ($u_j \approx 0$). It is largest
# in between: with the other k − 1 centers all at the same $u$, $\lambda \cdot$gap
# $= (k-1)u e^{-u}/(1 + (k-1)e^{-u})$, at most 1.10 for k = 10 (at $u \approx 2.1$), about half of
# $\log 10$. With a single competitor (one other center near, the rest far) it is at most 0.28/λ,
# whatever k (at $u \approx 1.3$): the bound $\log(k)/\lambda$ pays for k − 1 competitors that a point
# rarely has. The cell above measures §3's task: the gap per point, $(L_\lambda - J)/512$, is 0.70 against
# the bound 2.30 at λ = 1, 0.015 against 0.23 at λ = 10, and 2.3e-4 against 0.023 at λ = 100. The start
# `C0` is 10 random data points, so a point's nearest and second-nearest centers are often close (median
# difference of their squared distances 0.23), while the third is typically 1.8 farther than the nearest.
# Most of the gap comes from points with one near competitor: keeping only the two nearest centers of
# each point gives 78% of it at λ = 10 and 98% at λ = 100, each such point contributing at most 0.28/λ.
# At λ = 10 the loss is within 1.4% of J on this task: training descends almost the k-means objective
# itself, smoothed near the boundaries between centers.
#
# The checked numbers: the point with squared distances (1, 1.2, 3) has $p \approx (0.73, 0.27, 0.00)$ at λ = 5
# and a gap of 0.05385, a quarter of $\log(3)/5 = 0.2197$. For k = 2 every point has one competitor, so its gap is
# at most 0.2785/λ, where $u = 1 + e^{-u}$ (u ≈ 1.28); every point can sit at that u (on a level set of
# $d_2 - d_1$), so 100 points at λ = 10 reach 2.785, 40% of the bound $100\log(2)/10 = 6.931$.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 04.3
#
# The trainable model can carry the hand-set weights. `lloyd_weights(d, k, "linear")` gives Q1 … V4 in
# its layout ($d_{emb} = d + k$); add zero biases `bQ1`, `bK1`, `bV1`, …, `bV4` (vectors of length
# d + k). Now scale **only the Q's and K's** of all four blocks by a factor s, and leave V and the
# biases alone.
#
# Write a function `soft_ends(X, C0, s)` that builds this layer for the batch's d and k, applies it 20 times
# (`run_model`) and returns log J after the 20 steps, one value per task (shape (B,)). `answer` is the
# function; the check compares it with kmt_ref's on fresh tasks (d = 5 and d = 8, k = 4 and k = 3, three
# values of s), to 1e-5, so `run_model`'s float32 passes. Then print, for s = 1, 2, 3, 5, 10 and 100, the mean
# over `TASKS[8]`, and compare with Lloyd's algorithm from the same starts and with the start itself. In the
# solutions, a short explanation follows: what s does to the scores, and why scaling V too would break the
# layer.

# %%
### BEGIN SOLUTION
SCALES = (1, 2, 3, 5, 10, 100)


def soft_lloyd(d, k, scale):
    """Theorem 2.1's weights in the trainable layout, Q and K times the scale s, V unchanged, zero biases."""
    W, _ = lloyd_weights(d, k, "linear")
    params = {name: scale * M if name[0] in "QK" else M for name, M in W.items()}
    params.update({"b" + name: np.zeros(d + k) for name in W})
    return params


def soft_ends(X, C0, s):
    """log J per task after 20 re-embedded steps of the s-scaled hand-set layer."""
    return np.log(run_model(soft_lloyd(X.shape[1], C0.shape[2], s), X, C0, 20)[0][:, -1])


X8, C08 = TASKS[8]
SOFT8 = {a: soft_ends(X8, C08, a) for a in SCALES}   # (32,) each
print(f"start {np.log(lloyd_batch(X8, C08, 0)[:, 0]).mean():.3f}, Lloyd {LLOYD[8].mean():.3f}")
for a in SCALES:
    print(f"s = {a:3d}: {SOFT8[a].mean():.3f}  (soft - Lloyd: {np.mean(SOFT8[a] - LLOYD[8]):+.3f})")
params_sv = {name: 3 * M if name[0] in "QKV" else M for name, M in soft_lloyd(8, 3, 1).items()}   # Q, K, V times 3
print(f"s = 3 on Q, K and V: {np.log(run_model(params_sv, X8, C08, 20)[0][:, -1]).mean():.1f}")
answer = soft_ends
### END SOLUTION

# %%
check("04.3", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* The trainable layer's score is $-\|K z' + b_K - Q z - b_Q\|^2/\sqrt{d_{emb}}$ with γ = 1.
# With $Q = K = s P$ and zero biases it is $-s^2 \|P(z' - z)\|^2/\sqrt{d_{emb}}$: s² is the
# inverse temperature of every block, $\gamma = s^2/\sqrt{d_{emb}}$ (≈ 2.7 at s = 3, $d_{emb}$ = 11).
# As s → ∞ the softmax becomes the averaging hardmax of Theorem 2.1, and s = 100 reproduces Lloyd's
# curve. At s = 1 and 2 the temperature is so high that every center moves to a weighted mean of nearly all
# points. The centers collapse towards the data mean and the objective ends *above* the start (3.54 and 3.50
# against 3.28). In between, at s = 3, assignments are soft inside a cluster and still hard between
# well-separated clusters, and the layer ends **0.10 below Lloyd's algorithm** (2.205 against 2.308). It is
# soft k-means at a good temperature: a layer that beats Lloyd's algorithm without any training.
#
# V must stay as it is because it is *what* a block writes, and the residual sums rely on its exact
# values. $V_1 = P_Y$ writes $e_j$ and $V_2 = -P_Y$ removes the old $y$; $V_3 = P_X$ adds the members'
# mean and $V_4 = -P_X$ removes the old center. With s V, block 3 adds s × mean and block 4 removes
# s × c, so the new center is $(1 - s) c + s\,\text{mean}$. That overshoots for s > 1, and the
# iteration diverges: the mean log objective after 20 steps is 29.7 at s = 3 on these tasks (the last line
# printed).
# ### END SOLUTION

# %% [markdown]
# ### Exercise 04.4
#
# The layer is trained on **one** application (the loss of §3 at the centers after one step), but judged
# after **twenty**. Write a function `one_step_loss(X, C0, s, lam)` that applies the s-scaled layer of 04.3
# once (`run_model(params, X, C0, 1)` returns `(objective, centers)`; `centers[1]` holds the centers after one
# step, shape (B, d, k)) and returns the training loss of §3 at those centers, one value per task (shape
# (B,)), at the inverse temperature `lam`. Write the loss yourself in NumPy: your function may not call
# `soft_kmeans_loss` or `batch_loss` (the softmax runs over the centers for each point; subtracting each
# point's smallest distance before `np.exp` keeps it from underflowing). `answer` is the function; the check
# compares it with kmt_ref's on fresh tasks at three pairs (s, lam), to a relative 1e-5.
#
# Then print the mean over `TASKS[8]` at λ = 10 (the training value) for each s of 04.3. Which s would
# training prefer, and is it the s that ends lowest after 20 steps in 04.3?

# %%
### BEGIN SOLUTION
def smoothed_loss(X, C, lam):
    """L per task: sum_i sum_j softmax_j(-lam D_ji) D_ji, D_ji = ||x_i - c_j||^2."""
    D = np.sum((X[:, :, None, :] - C[:, :, :, None]) ** 2, axis=1)    # (B, k, n)
    W = np.exp(-lam * (D - D.min(axis=1, keepdims=True)))             # each point's nearest center: weight 1
    return np.sum(W / W.sum(axis=1, keepdims=True) * D, axis=(1, 2))


def one_step_loss(X, C0, s, lam):
    C1 = run_model(soft_lloyd(X.shape[1], C0.shape[2], s), X, C0, 1)[1][1]   # (B, d, k)
    return smoothed_loss(X, C1, lam)


assert np.allclose(smoothed_loss(X8, C08, 10.0), soft_kmeans_loss(X8, C08, 10.0), rtol=1e-12)  # the library's
LOSS1 = {a: one_step_loss(X8, C08, a, 10.0).mean() for a in SCALES}
for a in SCALES:
    print(f"s = {a:3d}: one-step training loss {LOSS1[a]:.3f};  log J after 20 steps {SOFT8[a].mean():.3f}")
answer = one_step_loss
### END SOLUTION

# %%
check("04.4", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* After one step the loss is lowest at s = 5 (14.52), then s = 10 (14.58); Lloyd's own
# step (s = 100) gives 14.63. s = 3, which ends lowest after 20 steps (04.3), has a one-step loss of
# 15.79, worse than Lloyd's. Training on this loss would therefore move towards s ≈ 5, not s = 3. The
# one-step objective and the 20-step evaluation do not rank the layers the same way: a softer layer loses
# a little on each step but, iterated, escapes Lloyd's bad local minima (04.5). The protocol trains on one
# application of the layer (the authors' `train.py`) and evaluates 20 (`--niters 20` in their `expts.md`),
# so what the trained layer does over 20 steps is a side effect of what it learned for one. (Its validation
# score, one step against one Lloyd step, is 0.90 for the paper model, printed in §5: it is already better
# than Lloyd at one step.)
# ### END SOLUTION

# %% [markdown]
# ### Exercise 04.5
#
# Where does the s = 3 layer of 04.3 gain? Write a function `gain_split(X, C0, s)` that takes, for each task,
# the difference log J(s layer, 20 steps) − log J(Lloyd from `C0`, 20 iterations), and returns the pair
# (its mean over the stuck tasks of 04.1 (gap > 1e-6), its mean over the other tasks). `answer` is the
# function; the check compares it with kmt_ref's on fresh tasks, to 1e-5, one part per mean. Then print the
# pair for `TASKS[8]` at s = 3, with the number of stuck tasks.

# %%
### BEGIN SOLUTION
def gain_split(X, C0, s):
    diff = soft_ends(X, C0, s) - np.log(lloyd_batch(X, C0, 20)[:, -1])    # (B,)
    stuck = task_gaps(X, C0) > 1e-6
    return diff[stuck].mean(), diff[~stuck].mean()


split8 = gain_split(X8, C08, 3)
print(f"{np.sum(GAP[8] > 1e-6)} stuck tasks: {split8[0]:+.4f};  {np.sum(GAP[8] <= 1e-6)} others: {split8[1]:+.4f}")
answer = gain_split
### END SOLUTION

# %%
check("04.5", answer)

# %% [markdown]
# ### Exercise 04.6
#
# For the hand-set layer of 04.3 the data block of $Q_b^\top K_b$ is $s^2 I_d$, and the trained model
# divides its Euclidean scores by $\sqrt{d_{emb}}$, so the layer's inverse temperature is
# $\gamma = s^2/\sqrt{d_{emb}}$. For a learned layer, take $s_b^2$ as the mean of the diagonal of the data
# block (the first d rows and columns) of $Q_b^\top K_b$.
#
# Write a function `learned_gammas(params, d)` that returns the equivalent γ of blocks 1 and 2, an array of
# shape (2,), for any parameter set of the trainable layer whose tokens have d data rows ($d_{emb}$ is
# `params["Q1"].shape[0]`: d + k with the one-hot rows, d in the d-only ablation). `answer` is the function;
# the check runs it on random parameter sets of other sizes and on the committed models, to a relative 1e-6,
# one part per block. Then apply it to the paper model (`paper.params`, d = 32). In the solutions, the model
# answer compares these with the hand-set layer at d = 32.

# %%
### BEGIN SOLUTION
def learned_gammas(params, d):
    d_emb = params["Q1"].shape[0]
    s2 = [np.mean(np.diag(params["Q" + b].T @ params["K" + b])[:d]) for b in "12"]   # s_b^2 of blocks 1, 2
    return np.array(s2) / np.sqrt(d_emb)                                              # gamma = s^2 / sqrt(d_emb)


gamma_paper = learned_gammas(paper.params, 32)
print("equivalent s of blocks 1 and 2:", np.round(np.sqrt(gamma_paper * np.sqrt(42)), 2),
      "| equivalent gamma:", np.round(gamma_paper, 4))
# the hand-set layer at d = 32, k = 10 on the first 16 of section 6's tasks (the evaluation seed), 20 steps
X32, C32 = sample_tasks(np.random.default_rng(EVAL_SEED), 16, n=512, d=32, k=10)
print(f"first 16 tasks of section 6: start {base['lloyd'][:16, 0].mean():.3f}, Lloyd {base['lloyd'][:16, -1].mean():.3f}, "
      f"trained {base['paper'][:16, -1].mean():.3f}")
for s_h in (3.5, 4.0, 4.5, 5.0):
    print(f"hand-set layer, s = {s_h}: {soft_ends(X32, C32, s_h).mean():.3f}")
answer = learned_gammas
### END SOLUTION

# %%
check("04.6", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* Blocks 1 and 2 of the trained layer act like the hand-set ones at γ ≈ 3.822 and 2.057
# ($s = \sqrt{\gamma\sqrt{42}}$ ≈ 5.0 and 3.7). This is a finite temperature, not the hardmax limit of
# Theorem 2.1. Gradient descent found a *soft* Lloyd, like the s = 3 layer of 04.3, and that is how it ends
# below Lloyd's algorithm. The hand-set layer at d = 32, k = 10 shows the same window (the cell above, on
# the first 16 tasks of §6): at s = 3.5 it collapses, above the start; s = 4 ends lowest, below the trained
# layer; from there it rises towards Lloyd, and at s = 5 it ends between the trained layer and Lloyd. The
# learned temperature sits inside that window. The best hand-set temperature (s ≈ 4) does better than the
# trained layer: training found a good soft Lloyd, not the best one. (A learned
# $Q \ne K$ is not exactly a scaled $P_X$, so "equivalent s" is a reading of the bilinear part of the score,
# not an identity.)
# ### END SOLUTION

# %% [markdown]
# ### Exercise 04.7
#
# The d-only ablation has no scratch rows: $\bar X = X$, $\bar C = C$, $d_{emb} = d$. From the layer
# equations and the hand-set construction of Theorem 2.1, explain which blocks lose their job, and what
# block 3 can compute instead. Measured facts to use: the committed d-only model ends at 5.362, above
# Lloyd's 5.295 (§6), and the mean diagonal of the data block of $V_1$ is +0.041 in the paper model and
# +0.585 in the d-only model (the first cell below).
#
# Write the explanation in the answer cell below the check. `answer`: the letter of the statement that says
# what block 3 of the d-only layer can compute for center j, as a string:
#
# - (a) Lloyd's update, the mean of the points nearest to $c_j$: its softmax over the points selects them at a
#   large enough scale
# - (b) a weighted mean of the points near $c_j$, with weights that compare $c_j$ with the points only, never
#   with the other centers (a mean-shift step)
# - (c) Lloyd's update, provided blocks 1 and 2 first move each point onto its nearest center
# - (d) nothing that depends on the data: without the y rows its scores are constant, and it returns the mean
#   of all points

# %%
for name, c in (("paper", paper), ("d-only", donly)):
    print(f"{name:6s}: mean diagonal of V1's data block {np.mean(np.diag(c.params['V1'][:32, :32])):+.3f}")

# %%
### BEGIN SOLUTION
answer = "b"   # block 3's softmax runs over the points, one center at a time: no competition between centers
### END SOLUTION

# %%
check("04.7", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* In Theorem 2.1, blocks 1 and 2 do the assignment step *into the scratch rows*. Block 1's
# softmax runs over the **centers** for each point, and $V_1 = P_Y$ writes the winner's $e_j$ into the point's
# y rows; $V_2 = -P_Y$ removes the old y. Block 3 then reads those rows ($Q_3 = K_3 = P_Y$): center j
# attends exactly to the points labelled j. Without scratch rows, blocks 1 and 2 have nowhere to write a
# label. Whatever they write goes into the data rows and moves the points themselves; the d-only model's
# $V_1$ (diagonal +0.585 against +0.041) pulls each point towards the centers. Block 3 must then select each
# center's members from distances alone. Its softmax runs over the **points**, separately for each center,
# so it computes a kernel-weighted mean of the points near $c_j$ (a mean-shift step). Nothing in it makes
# the centers compete for a point: a point between two centers counts for both, and a center's update
# ignores where the other centers are. The one-hot rows are what carry block 1's competition between
# centers to block 3. Without them the layer can smooth and shift, but it cannot do Lloyd's assignment
# step, and it ends above Lloyd (5.362 against 5.295).
#
# So the statement is (b). (a) and (c) fail for the reasons above: block 3 never compares centers, and a point
# moved onto its center has lost the position Lloyd's mean needs. (d) fails because $Q_3$ and $K_3$ act on the
# data rows, so the scores depend on the points and the center.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 04.8
#
# At d = 8 the quick run ends below Lloyd's algorithm (§4), the result the paper reports for its own
# setting. Does it at d = 4? First measure the prize at both d. Write a function `soft_gain(X, C0, s)` that
# returns the mean over the tasks of log J(s layer of 04.3, 20 steps) − log J(Lloyd from `C0`, 20
# iterations), one number. `answer` is the function; the check compares it with kmt_ref's on fresh tasks at
# d = 4 and at d = 8 (one part each), to 1e-5. Print it for `TASKS[4]` and `TASKS[8]` at s = 3.
#
# Then train the small configuration at d = 4, everything else equal
# (`train(dataclasses.replace(CONFIGS["small"], d=4), seed=0)`, the run of `python -m kmt_ref train --d 4`),
# evaluate it as §4 does (`evaluate(params, n_tasks=320, n=64, d=4, k=3, n_steps=20)`), and compare its
# validation curve with §4's. Write your conclusion in a few sentences, using 04.1 as well. Does a layer that
# beats Lloyd's algorithm exist at d = 4? What does the comparison say about the d = 4 training run?

# %%
### BEGIN SOLUTION
def soft_gain(X, C0, s):
    return float(np.mean(soft_ends(X, C0, s) - np.log(lloyd_batch(X, C0, 20)[:, -1])))


gains = [soft_gain(*TASKS[d], 3) for d in (4, 8)]
print("s = 3 layer - Lloyd (d = 4, d = 8):", np.round(gains, 4), "| mean gaps of 04.1:",
      np.round([GAP[4].mean(), GAP[8].mean()], 3))
# the same training run as section 4 at d = 4, and both evaluated on their 320 seeded tasks
import dataclasses
ck_d4 = train(dataclasses.replace(CONFIGS["small"], d=4), seed=SEED, log=lambda s: None)
res_d4 = evaluate(ck_d4.params, n_tasks=320, n=64, d=4, k=3, n_steps=20)
for name, ck, res in (("d = 4", ck_d4, res_d4), ("d = 8", ck_small, res_small)):
    h = ck.history
    print(f"{name}: trained - Lloyd {np.mean(res['model'][:, -1] - res['lloyd'][:, -1]):+.3f}; validation score "
          f"{h['val'][h['step'] == 600][0]:.2f} at step 600, first below 1.3 at step "
          f"{h['step'][np.argmax(h['val'] < 1.3)]:.0f}, {h['val'][-1]:.2f} at the end")
answer = soft_gain
### END SOLUTION

# %%
check("04.8", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* At d = 4 the prize is about half as large. The best of 8 Lloyd starts beats the given
# start by 0.138 in mean log objective at d = 4 against 0.203 at d = 8 (04.1). A good soft Lloyd, which
# wins only on the stuck tasks (04.5), gains 0.052 at d = 4 against 0.102 at d = 8. A layer that beats
# Lloyd's algorithm **does exist** at d = 4 (the hand-set one at s = 3), so a d = 4 run that ends above Lloyd
# fails for want of learning, not of capacity. The run above (seed 0) is such a run: within the same 3,000
# steps the trained layer does not come close enough to a good soft Lloyd to collect a prize of 0.05 and ends
# above Lloyd's result, while at d = 8 it collects more than half of a prize of about 0.2 (the last two lines
# printed).
# That is in the spirit of the follow-up paper's observation that learning is slower at small d (there: binary
# codes against one-hot). In this run the d = 4 validation score leaves its plateau at about the same step as
# at d = 8 but settles higher. A short run cannot show the difference: at step 600 both are still on the plateau.
# One seed is one draw (`python -m kmt_ref train --seed N --d 4` runs others). A first run meant to show the
# result the paper reports should therefore use d = 8, as the small configuration does.
# ### END SOLUTION

# %%
report("04")
