# %% [markdown]
# # 01 — Lloyd's algorithm *is* a transformer layer
#
# This notebook steps through **Theorem 2.1** of *Transformer Circuits Can Realize Clustering
# Algorithms* (arXiv 2506.19125; the title as in the authors' README, `rithram/kmeans-trf`):
# an encoder–decoder layer with four attention blocks and hand-set weights performs **one
# iteration of Lloyd's algorithm**, exactly, when the attention is in its γ = ∞ (hardmax) limit.
#
# What you will see, each step checked by an `assert`:
#
# 1. the tokens: points and centers as **columns** `Xbar = [X; Y]`, `Cbar = [C; I_k]`;
# 2. the four blocks one at a time — each block's output computed with the generic
#    `kmt_ref.core.attention.attention` equals the step of Lloyd's algorithm it claims to do;
# 3. the twelve hand-set Q, K, V drawn as block matrices, and the attention matrices of one layer;
# 4. the layer-by-layer match with `kmt_ref.lloyd` (exact labels, centers to 1e-12);
# 5. an empty cluster, kept exactly thanks to the project's *flag* token (SPEC §3, "(open)");
# 6. finite γ versus γ = ∞.
#
# Everything is imported from `kmt_ref`; nothing is re-implemented here. Conventions the paper
# leaves open (ties, empty clusters) are the project's own and are fixed in `docs/SPEC.md` §3.
# *Remarks by the annotator are in italics*. The paper's own text was not available to us: the
# theorem is stated as the project brief gives it, and the weights and the validation protocol are
# read from the authors' code (`cnst_model.py`, `numerical_validation.ipynb`). The equations here are
# the project's transcription (SPEC §1 and §3), not quotations.

# %%
import numpy as np
import matplotlib.pyplot as plt

import kmt_ref
from kmt_ref import (lloyd, kmeans_transformer, lloyd_weights, lloyd_layer, projector,
                     attention, attention_scores, assign, run_layers, EmptyClusterError)
from kmt_ref.core.attention import Block, Sublayer, layer_forward
from kmt_ref.algorithms.lloyd import lloyd_step
from kmt_ref.data import toy_data
from kmt_ref.viz import plotting

np.set_printoptions(precision=3, suppress=True, linewidth=110)
SEED = 19  # the toy example's seed (kmt_ref.data.toy_data)
print("kmt_ref", kmt_ref.__version__, "| seed", SEED)

# %% [markdown]
# ## 1. A small 2-D example and Lloyd's algorithm
#
# Three Gaussian clusters of 8 points in [0, 1]², shuffled; the initial centers are the first
# k = 3 points (the authors' protocol in `numerical_validation.ipynb`, SPEC §3). Lloyd's iteration:
#
# $$\ell_i^{(t)} = \arg\min_j \|x_i - c_j^{(t)}\|^2 \quad(\text{ties: lowest } j),\qquad
#   c_j^{(t+1)} = \operatorname{mean}\{x_i : \ell_i^{(t)} = j\}.$$

# %%
X, C0 = toy_data(SEED)                     # X: (d, n), C0: (d, k) -- tokens are columns
d, n = X.shape
k = C0.shape[1]
assert (d, n, k) == (2, 24, 3)
ref = lloyd(X, C0, n_iter=4)
print("labels per iteration:\n", ref.labels)
print("log objective:", np.round(ref.log_objective, 4))
assert np.all(np.diff(ref.objective) <= 1e-15)   # Lloyd's objective never rises

# %%
fig, axes = plt.subplots(1, 2, figsize=(8, 3.8))
plotting.plot_center_trajectories(X, ref.centers, ax=axes[0], title="Lloyd: centers (circles = start)")
plotting.plot_assignments(X, ref.labels[-1], ref.centers[-1], ax=axes[1], title="Lloyd: final assignments")
fig.tight_layout()

# %% [markdown]
# *Two initial centers (the first two shuffled points) start in the same cluster; Lloyd's
# algorithm needs two iterations to move one of them to the empty third cluster.*
#
# ## 2. Tokens
#
# The project brief / SPEC §1: encoder (point) tokens $\bar X = [X; Y] \in \mathbb R^{(d+k)\times n}$ with
# $Y^{(0)} = 0$, decoder (center) tokens $\bar C = [C; I_k] \in \mathbb R^{(d+k)\times k}$.
# The project appends one **type flag** row (0 for points, 1 for centers) so that an empty cluster
# behaves exactly like Lloyd's "keep" policy (section 6 below; SPEC §3, "(open)": the project's own
# construction). So here $d_{emb} = d + k + 1$.

# %%
params, emb = lloyd_weights(d, k)          # the hand-set Q1..V4 and the token layout
Xbar = emb.embed_points(X)                 # (d_emb, n)
Cbar = emb.embed_centers(C0)               # (d_emb, k)
print("layout:", emb.layout, "| d_emb =", emb.d_emb)
print("rows:", {name: (s.start, s.stop) for name, s in plotting.embedding_blocks(emb)})
print("Cbar =\n", Cbar)
assert Xbar.shape == (d + k + 1, n) and Cbar.shape == (d + k + 1, k)
assert np.array_equal(Xbar[emb.rows("y")], np.zeros((k, n)))   # Y^(0) = 0
assert np.array_equal(Cbar[emb.rows("y")], np.eye(k))           # I_k
assert np.array_equal(Cbar[emb.rows("flag")], np.ones((1, k)))  # centers are flagged

# %% [markdown]
# ## 3. The layer (Theorem 2.1; the brief says its weights are defined in the paper's eq. (5))
#
# $$\bar X' = \bar X + A(\bar X, \bar C; Q_1, K_1, V_1) + A(\bar X, \bar X; Q_2, K_2, V_2)$$
# $$\bar C' = \bar C + A(\bar C, \bar X'; Q_3, K_3, V_3) + A(\bar C, \bar C; Q_4, K_4, V_4)$$
#
# with attention $A(Z, Z'; Q, K, V) = V Z' \sigma(S)$, Euclidean scores
# $S_{ji} = -\gamma \|K z'_j - Q z_i\|^2$, and $\sigma$ normalizing each column (each query's
# weights over the keys sum to 1). The decoder reads the **updated** points $\bar X'$.
#
# Hand-set weights (SPEC §3 table), with projectors $P_X$ (data rows), $P_Y$ (one-hot rows):
#
# | block | Q | K | V | does |
# |---|---|---|---|---|
# | 1 | $P_X$ | $P_X$ | $+P_Y$ | each point writes $e_{j^*}$ of its nearest center |
# | 2 | $P_X$ | $P_X$ | $-P_Y$ | identity attention: subtracts the old $y_i$ |
# | 3 | $P_Y$ | $P_Y$ (+ flag) | $+P_X$ | each center takes the mean of its members |
# | 4 | $P_Y$ | $P_Y$ | $-P_X$ | identity attention: subtracts the old $c_j$ |

# %%
P_X, P_Y = projector(emb, "x"), projector(emb, "y")
assert np.array_equal(params["Q1"], P_X) and np.array_equal(params["V1"], P_Y)
assert np.array_equal(params["V2"], -P_Y) and np.array_equal(params["V4"], -P_X)
assert np.array_equal(params["K3"], projector(emb, "y", "flag"))   # the project's extension
fig = plotting.plot_weights(params, emb, names=[f"{m}{b}" for m in "QKV" for b in "1234"], ncols=4)
fig.suptitle("Hand-set Q, K, V (rows: Q, K, V; columns: blocks 1-4)")

# %% [markdown]
# ## 4. The four blocks, one at a time
#
# The first layer starts from $Y = 0$, where block 2 has nothing to subtract. To see every block
# at work we take the tokens **entering layer 2** (after one Lloyd step: $Y = Y^{(1)}$, $C = C^{(1)}$)
# and apply each block separately with the generic `attention` function, at γ = ∞.

# %%
Xbar_t = Xbar.copy()
Xbar_t[emb.rows("y")] = np.eye(k)[:, ref.labels[0]]           # Y^(1): one-hot labels of step 1
Cbar_t = emb.embed_centers(ref.centers[1])                     # [C^(1); I_k; 1]
C_t = ref.centers[1]                                           # (d, k)
C_next, labels_next = lloyd_step(X, C_t)                       # what the layer must produce
Y_old = Xbar_t[emb.rows("y")]                                  # (k, n)
E_new = np.eye(k)[:, labels_next]                              # (k, n) one-hot of the new labels
print("labels changed by this step:", np.flatnonzero(labels_next != ref.labels[0]))

# %% [markdown]
# **Block 1 (assign).** Scores $S_{ji} = -\|P_X \bar c_j - P_X \bar x_i\|^2 = -\|c_j - x_i\|^2$:
# the squared distance of point $i$ to center $j$. The lowest-index hardmax picks
# $j^* = \arg\min_j \|x_i - c_j\|^2$ (Lloyd's tie rule, SPEC §3), and $V_1 \bar c_{j^*} = [0; e_{j^*}; 0]$.

# %%
S1 = attention_scores(Xbar_t, Cbar_t, params["Q1"], params["K1"])          # (k, n), gamma left out
_, D = assign(X, C_t)                                                          # (k, n) squared distances
assert np.allclose(S1, -D, atol=1e-12)
A1 = attention(Xbar_t, Cbar_t, params["Q1"], params["K1"], params["V1"], normalizer="hardmax", gamma=np.inf)
assert A1.shape == (emb.d_emb, n)
assert np.array_equal(A1[emb.rows("y")], E_new)                               # writes e_{j*}
assert not A1[emb.rows("x")].any() and not A1[emb.rows("flag")].any()        # and nothing else

# %% [markdown]
# **Block 2 (reset y).** Self-attention on the points with $Q_2 = K_2 = P_X$: the score
# $-\|x_l - x_i\|^2$ is maximal (0) at $l = i$ (and at exact duplicates of $x_i$, which carry the
# same $y$), so the attention is the identity and $V_2 = -P_Y$ writes $-y_i$.

# %%
A2 = attention(Xbar_t, Xbar_t, params["Q2"], params["K2"], params["V2"], normalizer="hardmax",
               gamma=np.inf, self_attention=True)
assert np.array_equal(A2[emb.rows("y")], -Y_old)                              # subtracts y
Xbar_next = Xbar_t + A2 + A1                                                   # the encoder's residual sum
assert np.array_equal(Xbar_next[emb.rows("y")], E_new)                        # = [X; Y^(t+1)]
assert np.array_equal(Xbar_next[emb.rows("x")], X)

# %% [markdown]
# **Block 3 (update).** Queries are the centers, keys/values are the updated points **and** the
# centers (`keys="X+C"`). $Q_3 = P_Y$, $K_3 = P_Y + P_{flag}$: against point $i$ the score is
# $-\|e_j - y_i\|^2$ = 0 for members of cluster $j$ and −2 otherwise; against the center tokens it is
# $-(\|e_l - e_j\|^2 + 1)$ = −1 for its own token. The *averaging* hardmax (uniform over the tied
# maxima; the limit of softmax, SPEC §2) gives the mean of the members, and $V_3 = P_X$ writes it
# into the data rows. *(A cluster without members has its own token, at −1, as maximum: section 6.)*

# %%
keys3 = np.concatenate([Xbar_next, Cbar_t], axis=1)                           # (d_emb, n + k)
A3, W3, S3 = attention(Cbar_t, keys3, params["Q3"], params["K3"], params["V3"],
                       normalizer="hardmax_average", gamma=np.inf, return_weights=True)
assert W3.shape == (n + k, k)
assert set(np.unique(S3)) <= {0.0, -1.0, -2.0, -3.0}
assert np.allclose(A3[emb.rows("x")], C_next, atol=1e-12)                     # the member means
assert np.allclose(W3.sum(axis=0), 1.0)

# %% [markdown]
# **Block 4 (reset c).** Self-attention on the centers with $Q_4 = K_4 = P_Y$: the one-hot rows
# are distinct, so this is the identity, and $V_4 = -P_X$ writes $-c_j$.

# %%
A4 = attention(Cbar_t, Cbar_t, params["Q4"], params["K4"], params["V4"], normalizer="hardmax",
               gamma=np.inf, self_attention=True)
assert np.array_equal(A4[emb.rows("x")], -C_t)
Cbar_next = Cbar_t + A4 + A3                                                   # the decoder's residual sum
assert np.allclose(Cbar_next[emb.rows("x")], C_next, atol=1e-12)
assert np.array_equal(Cbar_next[emb.rows("y")], np.eye(k))                     # I_k is untouched
print("max |C' - Lloyd| =", np.abs(Cbar_next[emb.rows("x")] - C_next).max())

# %% [markdown]
# The same four blocks, run by the generic layer (`layer_forward` with the description
# `lloyd_layer()`), give the same tokens. *The layer lists the reset block first in each sublayer
# so that the residual sum is $(c - c) + m$, which is exactly $m$ in floating point.*

# %%
Xl, Cl, rec = layer_forward(params, Xbar_t, Cbar_t, lloyd_layer(), record=True)
assert np.allclose(Xl, Xbar_next, atol=0) and np.allclose(Cl, Cbar_next, atol=1e-12)
for name, A in {"1": A1, "2": A2, "3": A3, "4": A4}.items():
    assert np.allclose(rec.outputs[name], A, atol=1e-12), name
print({name: W.shape for name, W in sorted(rec.weights.items())})

# %% [markdown]
# ## 5. The attention matrices of one layer
#
# `kmeans_transformer(..., record=True)` keeps every layer's tokens, block outputs and attention
# matrices $\sigma(S)$ (keys down the rows, queries along the columns). We sort the points by
# their final cluster so that the structure is visible (point order changes nothing: the
# encoder is permutation-equivariant and Lloyd's means do not depend on order).

# %%
order = np.argsort(ref.labels[-1], kind="stable")
Xs = X[:, order]                                                  # same points, sorted by cluster
trf_sorted = kmeans_transformer(Xs, C0, n_layers=2, record=True)
assert np.array_equal(trf_sorted.labels, ref.labels[:2][:, order])
layer = trf_sorted.layers[1]                                      # layer 2: the step shown above
fig = plotting.plot_layer_attention(layer.weights, n_points=n)
fig.suptitle("Layer 2 at gamma = inf: attention matrices of blocks 1-4")
W1 = layer.weights["1"]
assert W1.shape == (k, n) and np.array_equal(W1.sum(axis=0), np.ones(n))   # one-hot columns
assert np.array_equal(layer.weights["2"], np.eye(n))                          # identity

# %% [markdown]
# Block 1: each point (column) puts weight 1 on its nearest center. Block 2 and block 4: identity.
# Block 3: each center spreads weight $1/|M_j|$ ($M_j$ the member set) uniformly over its members (and 0 on its own token).
#
# ## 6. Layer by layer: the transformer equals Lloyd's algorithm
#
# Theorem 2.1: $T$ layers with shared weights = $T$ Lloyd iterations. The project checks
# it exactly (SPEC §3, "Exactness"): identical labels, centers to 1e-12.

# %%
trf = kmeans_transformer(X, C0, n_layers=4)
assert np.array_equal(trf.labels, ref.labels)
assert np.allclose(trf.centers, ref.centers, rtol=0, atol=1e-12)
for t in range(trf.n_steps):
    print(f"layer {t + 1}: labels equal: {np.array_equal(trf.labels[t], ref.labels[t])}, "
          f"max |dC| = {np.abs(trf.centers[t + 1] - ref.centers[t + 1]).max():.1e}, "
          f"log J = {trf.log_objective[t + 1]:.4f} (Lloyd {ref.log_objective[t + 1]:.4f})")

# %% [markdown]
# ## 7. An empty cluster, kept thanks to the flag token
#
# The authors' construction has no rule for an empty cluster. Lloyd's algorithm in `kmt_ref` keeps an empty
# cluster's center where it was (policy `"keep"`, SPEC §3). Here the third initial center is far
# from every point, so its cluster is empty from the start.

# %%
X_e = np.array([[0.0, 0.1, 0.2, 1.0, 1.1, 1.2],
                [0.0, 0.1, 0.0, 1.0, 0.9, 1.0]])        # (2, 6): two groups
C0_e = np.array([[0.0, 1.0, 5.0],
                 [0.0, 1.0, 5.0]])                       # (2, 3): center 2 attracts nobody
ref_e = lloyd(X_e, C0_e, 3)
trf_e = kmeans_transformer(X_e, C0_e, 3, record=True)
print("labels:", ref_e.labels[0], "| cluster sizes:", np.bincount(ref_e.labels[0], minlength=3))
assert np.array_equal(trf_e.labels, ref_e.labels)
assert np.allclose(trf_e.centers, ref_e.centers, atol=1e-12)
assert np.array_equal(trf_e.centers[-1][:, 2], [5.0, 5.0])         # kept
W3_e = trf_e.layers[0].weights["3"]                                  # (n + k, k)
print("block 3 weights of the empty center (keys: 6 points, then 3 centers):", W3_e[:, 2])
assert W3_e[6 + 2, 2] == 1.0                                         # all weight on its own token

# %% [markdown]
# Block 3's scores for the empty center are −2 against every point and −1 against its own token
# (whose key carries the flag), so the hardmax puts all the weight on itself and $c_j$ is kept.
# Without the center tokens among the keys — block 3 over points only, as in the authors' code — all points tie at −2
# and the empty center jumps to the mean of **all** points:

# %%
layer_points_only = tuple(
    Sublayer(sub.stream, tuple(Block("3", keys="X", normalizer="hardmax_average", gamma=np.inf)
                               if b.name == "3" else b for b in sub.blocks))
    for sub in lloyd_layer())
params_e, emb_e = lloyd_weights(2, 3)
tr_points_only = run_layers(X_e, params_e, layer_points_only, emb_e, C0_e, 1)
print("center 2 after one layer:", tr_points_only.centers[1][:, 2], "= mean of all points", X_e.mean(axis=1))
assert np.allclose(tr_points_only.centers[1][:, 2], X_e.mean(axis=1))
# the authors' center update (normalized linear attention, `cnst_model.py` `ldp=True`) has no answer for an empty cluster:
try:
    kmeans_transformer(X_e, C0_e, 1, center_update="linear")
except EmptyClusterError as err:
    print("center_update='linear':", str(err)[:80], "...")

# %% [markdown]
# ## 8. Finite γ versus γ = ∞
#
# At finite γ, block 1 is a softmax: point $i$ writes
# $y_{ij} = \exp(-\gamma\|x_i - c_j\|^2) / \sum_l \exp(-\gamma\|x_i - c_l\|^2)$, a *soft* assignment.
# The match with Lloyd then depends on the gap between the nearest and second-nearest center
# relative to $1/\gamma$ (SPEC §3). The authors' validation (`numerical_validation.ipynb`; the brief
# also gives γ = 10⁴) used γ = 10⁴ on 10,000 points
# (`python -m kmt_ref demo` reproduces it; figure 2 in `figures/` sweeps γ, scale, d, k, n).

# %%
gammas = [1.0, 10.0, 100.0, 1e3, 1e4, np.inf]
runs = {g: kmeans_transformer(X, C0, n_layers=4, gamma=g) for g in gammas}
curves = {"Lloyd": ref.log_objective}
for g, tr in runs.items():
    curves[f"gamma={g:g}"] = tr.log_objective
    print(f"gamma={g:>7g}: labels differing from Lloyd's = {int(np.sum(tr.labels != ref.labels)):3d}, "
          f"exactly one-hot after the last layer = {tr.one_hot[-1]:2d}/{n}, "
          f"final log J gap = {tr.log_objective[-1] - ref.log_objective[-1]:+.2e}")
assert np.array_equal(runs[np.inf].labels, ref.labels)
assert runs[np.inf].log_objective[-1] == ref.log_objective[-1]
assert runs[1.0].log_objective[-1] > ref.log_objective[-1]          # gamma = 1 is far from Lloyd
assert np.array_equal(runs[1e3].labels, ref.labels) and runs[1e3].one_hot[-1] < n
fig = plotting.plot_log_objective(curves, title="toy example: finite gamma vs Lloyd")

# %% [markdown]
# *At γ = 1 the weights over unit-scale distances are almost uniform, every center is pulled toward
# the global mean and the objective stalls. On this toy example the final objective equals Lloyd's
# from γ = 100 on and every label matches from γ = 10³ on, although at γ = 10³ only a few
# assignments are exactly one-hot in float64: a weight $e^{-\gamma\,\mathrm{gap}}$ is exactly 0
# only when $\gamma \cdot \mathrm{gap} > 745$.*

# %% [markdown]
# ## Exercises
#
# 1. **Break the tie rule.** Build a point exactly halfway between two centers (e.g. `X = [[0., 1., 2.]]`,
#    `C0 = [[0., 2.]]`). Replace block 1's normalizer `"hardmax"` by `"hardmax_average"` in a copy of
#    `lloyd_layer()` and run it with `run_layers`. What does the point write into its `y`, where do the
#    centers go, and why does `kmt_ref.lloyd` disagree?
# 2. **Remove the flag row.** Take `params, emb = lloyd_weights(d, k)` and set the flag entry of `K3` to 0.
#    Run the toy example (section 1) and the empty-cluster example (section 7). Which one still matches
#    Lloyd's algorithm, which does not, and what are block 3's scores against a center's own token now?
# 3. **Lower γ until the labels differ.** On the toy example, find (by bisection over γ) the largest γ at
#    which `kmeans_transformer(X, C0, 4, gamma=γ).labels` differs from Lloyd's. Compare it with
#    745 / (smallest gap between a point's nearest and second-nearest squared distance).
# 4. **Reset blocks at finite γ.** Run `kmeans_transformer(X, C0, 4, gamma=np.inf, gamma_reset=50.)`.
#    Plot the attention matrix of block 2 (`record=True`). Why does a finite-γ block 2 mix the `y` of
#    neighbouring points, and why did the authors' validation run blocks 2 and 4 as exact identity attention?
# 5. **The authors' center update.** Replace block 3 by normalized linear attention
#    (`center_update="linear"`). Show it equals Lloyd's means at *any* γ on the toy example, then construct
#    an input on which it raises `EmptyClusterError` after the second layer, not the first.
# 6. **Count the exactly one-hot columns by hand.** For γ = 10⁴ on `kmt_ref.data.validation_data()`,
#    compute with `kmt_ref.assign` how many points have every other center more than 745.13/γ farther than
#    the nearest, and check your count against `kmeans_transformer(...).one_hot[0]`.
