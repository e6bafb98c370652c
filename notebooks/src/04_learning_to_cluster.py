# %% [markdown]
# # 04 — Learning the algorithm: training the one-layer transformer
#
# *Transformer Circuits Can Realize Clustering Algorithms* (arXiv 2506.19125), its learning
# experiment as the project brief describes it: take **the same encoder–decoder layer** as Theorem 2.1,
# forget the hand-set weights, learn all twelve Q, K, V (with biases) by gradient descent on
# random clustering tasks, and apply the trained layer T = 20 times. The project brief reports that
# the trained layer **beats Lloyd's algorithm** on tasks from the training distribution (mean log
# objective ≈ 5.0 vs ≈ 5.25 for Lloyd), and that without the one-hot rows (the *d-only* ablation)
# it does worse than Lloyd (≈ 5.35). (5.258, quoted in earlier versions as "the paper's 5.26", was
# our NumPy re-run of the authors' task generator, not a number from the paper.)
#
# This notebook
#
# 1. samples the training tasks (`kmt_ref.learning.tasks`, after the authors' `ctasks.py`);
# 2. builds the trainable layer (`kmt_ref.learning.model`) — `kmt_ref.layer_forward` with learned weights, no second model;
# 3. checks the loss (a smoothed upper bound of the k-means objective) and its gradient;
# 4. **trains a small configuration live** (a few seconds);
# 5. loads the **committed paper-scale models** (`kmt_ref/models/`, trained with
#    `python -m kmt_ref train --config paper`) and their stored 320-task evaluation;
# 6. compares learned with hand-set weights, and looks at the learned attention.
#
# *Annotator's remarks are in italics.* Everything is imported from `kmt_ref`.

# %%
import dataclasses
import time

import numpy as np
import matplotlib.pyplot as plt

import kmt_ref
from kmt_ref import lloyd, lloyd_weights
from kmt_ref.learning import (
    sample_task, sample_tasks, FAMILIES, CONFIGS, MODELS_DIR, PAPER_SUITE, BLOCKS, init_params, model_layer,
    model_step, soft_kmeans_loss, batch_objective, batch_loss, train, evaluate, load_checkpoint, load_evaluation,
    setting_label, attention_maps,
)
from kmt_ref.viz.learning_figures import (
    plot_training_history, plot_evaluation_curves, plot_final_vs_n, plot_weight_grid,
)

np.set_printoptions(precision=3, suppress=True, linewidth=110)
SEED = 0
print("kmt_ref", kmt_ref.__version__, "| seed", SEED)

# %% [markdown]
# ## 1. Clustering tasks (the authors' task generator, `ctasks.py`; SPEC §6)
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
fig.tight_layout()

# %% [markdown]
# ## 2. The trainable layer (the authors' `kmt.py`; SPEC §6)
#
# $$\bar X' = \bar X + A(\bar X, \bar C; Q_1,K_1,V_1) + A(\bar X, \bar X; Q_2,K_2,V_2),\qquad
#   \bar C' = \bar C + A(\bar C, \bar X'; Q_3,K_3,V_3) + A(\bar C, \bar C; Q_4,K_4,V_4)$$
#
# with Euclidean scores $S_{ji} = -\|K z'_j + b_K - Q z_i - b_Q\|^2/\sqrt{d_{emb}}$, γ = 1,
# softmax over the keys, $\bar X = [X; 0]$, $\bar C = [C; I_k]$, $d_{emb} = d + k$.
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
# ## 3. The loss: a smoothed upper bound (SPEC §6)
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
# ## 4. Train a small configuration live
#
# `CONFIGS["small"]` (d = 4, k = 3, n = 64, batch 16) is what `python -m kmt_ref train` runs by
# default. Here a shorter run of 600 steps: Adam, learning rate 0.01 halved on plateaus of the
# validation score (objective after one layer ÷ objective after one Lloyd step, fixed tasks).

# %%
small = dataclasses.replace(CONFIGS["small"], steps=600, eval_every=50)
t0 = time.perf_counter()
ck_small = train(small, seed=SEED, log=lambda s: None)
print(f"trained {ck_small.step} steps in {time.perf_counter() - t0:.1f} s;",
      "validation score", np.round(ck_small.history["val"][[0, 1, -1]], 3), "(start, step 50, end)")
assert ck_small.history["val"][-1] < ck_small.history["val"][0]
res_small = evaluate(ck_small.params, n_tasks=64, n=64, d=4, k=3, n_steps=10)
fig, axs = plt.subplots(1, 2, figsize=(10, 3.5))
plot_training_history({"small": ck_small.history}, "val", axs[0])
plot_evaluation_curves({"Lloyd": res_small["lloyd"], "trained (small)": res_small["model"]}, axs[1],
                       title="small model, 64 tasks")
fig.tight_layout()

# %% [markdown]
# *A few hundred steps on a tiny problem already learn a layer that moves the centers
# sensibly, but it is not yet Lloyd's algorithm. The full-scale setting (SPEC §6) needs its 10,000 steps.*
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
# Each file holds the weights, the configuration, the seed and the training history.

# %%
paper = load_checkpoint(MODELS_DIR / "paper.npz", d=32, k=10)
donly = load_checkpoint(MODELS_DIR / "paper_d_only.npz", d=32, k=10)
for name, c in (("paper", paper), ("d-only", donly)):
    print(f"{name:7s}: embedding={c.config.embedding}, d_emb={c.config.d_emb}, {c.n_params} parameters, "
          f"{c.step} steps, seed {c.seed}, final validation score {c.history['val'][-1]:.4f}")
assert paper.n_params == 21_672
fig, axs = plt.subplots(1, 2, figsize=(11, 3.6))
plot_training_history({"d+k (paper)": paper.history, "d-only": donly.history}, "val", axs[0])
plot_training_history({"d+k (paper)": paper.history, "d-only": donly.history}, "loss", axs[1])
fig.tight_layout()

# %% [markdown]
# ## 6. Evaluation: 20 re-embedded steps vs 20 Lloyd iterations (SPEC §6)
#
# Each step re-embeds: $\bar X = [X; 0]$, $\bar C = [C^{(t)}; I_k]$, one layer, read $C^{(t+1)}$.
# Metric: $\log \sum_i \min_j \|x_i - c_j^{(t)}\|^2$, mean over tasks, Lloyd from the same
# initial centers. Dropout is **off** at evaluation (the authors' code leaves it on).
#
# The 320-task numbers were computed once (about 10 minutes on one core) by
#
# ```
# python -m kmt_ref evaluate paper paper_d_only --save kmt_ref/models/evaluation.npz
# python -m kmt_ref evaluate paper --suite --save kmt_ref/models/evaluation.npz
# ```
#
# and are loaded here; the cell after recomputes the first 32 of those tasks live (fewer than 320,
# to keep this notebook under a minute) and checks that they agree.
#
# *Agree how closely? Lloyd's curves are float64 and come out the same on every machine. The trained
# layer runs in float32: another CPU or BLAS kernel sums in another order, the last bits differ, and
# over 20 steps a near-tie can send one task down a slightly different path (by up to 0.016 in its
# log objective, measured). So the check compares two robust statistics per step, with tolerances
# that were measured (the comment in the cell says how), not every element.*

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
# tasks of (live - stored)|, the metric of SPEC §6. Measured: the stored run against re-runs with OpenBLAS's
# Haswell, Sandybridge, Nehalem and Katmai kernels (OPENBLAS_CORETYPE), 1 and 2 threads, numpy's SSE
# code path (NPY_DISABLE_CPU_FEATURES), numpy 1.26 with its own OpenBLAS, and weights moved by one
# float32 ulp: 9 settings, 82 blocks of 32 tasks (2,624 re-run tasks). Largest (a): 9.1e-7; largest
# (b): 4.9e-4 (one task of 32 off by 0.016, every other task within 8e-4). Tolerances: (a) 1e-5, 11x
# the largest; (b) 5e-3, 10x the largest: one task would have to move by 0.16, 10x the largest jump.
# A wrong task seed lies far outside, (a) >= 0.12 at every step; so does a wrong model (the d-only one, or
# Lloyd's curves), (a) >= 0.13 and (b) >= 0.1 at every step after t = 0 (tests/test_float32_reproducibility.py).
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

# %% [markdown]
# ## 7. Generalisation: k-means++ initial centers, other n, other families (the brief: k-means++ starts and other n; SPEC §6)

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
# ## 8. Learned vs hand-set weights (SPEC §6 "Weights")
#
# The hand-set weights of Theorem 2.1 in the layout $d_{emb} = d + k$ of the brief and the authors' code
# (`lloyd_weights(d, k, "linear")`): $Q_1 = K_1 = Q_2 = K_2 = P_X$, $V_1 = P_Y$, $V_2 = -P_Y$,
# $Q_3 = K_3 = Q_4 = K_4 = P_Y$, $V_3 = P_X$, $V_4 = -P_X$. The Euclidean score's bilinear part
# is $z'^\top K^\top Q z$, so $Q^\top K$ is what to compare (biases aside).

# %%
hand, emb = lloyd_weights(32, 10, "linear")
assert hand["Q1"].shape == paper.params["Q1"].shape == (42, 42)
fig = plot_weight_grid(paper.params, hand, 32, 10)

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

# %% [markdown]
# *Read against the theory (SPEC §6). What Theorem 2.1 predicts and the learned layer shows:*
#
# - *Blocks 1 and 2 score by distances in data space: the data block of $Q_1^\top K_1$ and
#   $Q_2^\top K_2$ is strongly diagonal (a scaled $P_X$; the scale plays the role of γ).*
# - *Block 4 removes the old center: $V_4 \approx -P_X$ on the data block, and its attention is
#   ≈ the identity (below).*
# - *Block 3 writes a weighted mean of the points: $V_3$ has a positive diagonal on the data block.*
#
# *Where it departs from the hand-set layer: $V_1$ writes into the k scratch rows through a dense
# matrix, not $P_Y$ (its off-diagonal entries there are larger than its diagonal), and block 3 reads
# them through a dense $Q_3^\top K_3$: the layer uses the scratch rows with its own code rather than
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
#
# ## 9. Learned attention maps on one task

# %%
Xe, Ce = sample_task(np.random.default_rng(5), n=512, d=32, k=10)
order = np.argsort(lloyd(Xe, Ce, 1).labels[0], kind="stable")
W = attention_maps(paper.params, Xe[:, order], Ce)
assert W["1"].shape == (10, 512) and W["2"].shape == (512, 512) and W["3"].shape == (512, 10) and W["4"].shape == (10, 10)
assert np.allclose(W["2"].sum(axis=0), 1)                      # each query's weights sum to one
fig, axs = plt.subplots(1, 4, figsize=(15, 3.4))
for ax, b in zip(axs, BLOCKS):
    ax.imshow(W[b], aspect="auto", interpolation="nearest")
    ax.set_title(f"block {b}  (keys × queries)", fontsize=9)
fig.tight_layout()
print("block 4 attention (≈ I_k is the hand-set behaviour):")
print(np.round(W["4"], 2))
assert np.all(np.diag(W["4"]) > 0.9)                           # block 4 attention ~ I_k

# %% [markdown]
# ## Exercises
#
# 1. Train the small configuration with `dropout=0` and with `loss_lambda=1`. Which change hurts
#    the evaluation curve more, and why does a small λ make the loss a loose bound?
# 2. Set the trainable model's weights to the hand-set ones of §8 scaled by a factor α (keep the
#    biases at zero). For which α does `run_model` follow Lloyd's curve? What does the factor do
#    to the softmax temperature?
# 3. Evaluate the committed paper model with k = 10 but d = 16 (hint: `load_checkpoint(..., d=16)`).
#    Read the error message: why can the model not transfer to another d or k?
# 4. The d-only ablation has no scratch rows for the assignment. Explain, from the layer equations,
#    which of the four blocks can no longer do its job.
# 5. Plot the validation score of the committed runs with the learning rate on a second axis
#    (`history["lr"]`): when did the plateau rule halve it?
