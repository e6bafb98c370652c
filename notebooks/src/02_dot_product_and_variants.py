# %% [markdown]
# # 02 — Dot-product attention (Theorem 2.2), soft k-means and spherical k-means
#
# Notebook 01 built Lloyd's algorithm from *distance* attention (Theorem 2.1 of Clarkson, Horesh, Ito,
# Park, Ram, *Transformer Circuits Can Realize Clustering Algorithms*, ICML 2026; preliminary version
# arXiv 2506.19125).
# Here we change that construction in small, named ways, each checked by an `assert` against an
# independent classical reference (`kmt_ref.lloyd`, `kmt_ref.soft_kmeans`, `kmt_ref.spherical_kmeans`):
#
# 1. **Theorem 2.2** — plain dot-product attention suffices if every token carries its squared norm
#    and a feed-forward block with the rectified quadratic unit ReQU(z) = max(z, 0)² keeps the
#    centers' norms up to date ([SPEC, "Theorem 2.2"](../docs/SPEC.md#4-theorem-22-dot-product-attention-and-a-requ-feed-forward-block-construction-open)): stated in section 1 and proved
#    in six steps in sections 1–4, an empty cluster in section 5;
# 2. **soft k-means** — a finite inverse temperature β in the assignment block and the authors'
#    normalized linear attention in the update block (their `cnst_model.py`, `ldp=True`; [SPEC, "Variants"](../docs/SPEC.md#5-variants-small-named-changes-to-the-layer)), section 6;
# 3. **spherical k-means** — unit-norm data, cosine scores, RMSNorm on the update ([SPEC, "Variants"](../docs/SPEC.md#5-variants-small-named-changes-to-the-layer); the
#    placement of the RMSNorm is the project's choice, **(open)**), section 7.
#
# **Learning objectives.** After this notebook you can
#
# - state Theorem 2.2 as kmt_ref realises it (tokens, weights, which hardmax in which block) and check
#   each step of its proof on an example;
# - expand $-\|x-c\|^2$ and explain why a dot product with a squared-norm row selects the nearest
#   center (the *norm trick*), and which of the two norms the circuit may leave out;
# - build a ReQU feed-forward block that writes $\|c\|^2$ exactly, and say why it needs two units
#   per coordinate;
# - read block 3's scores (1, ½, 0, −½) and explain how the default token keeps an empty cluster;
# - check a construction against its classical reference layer by layer (labels exactly, centers to 1e-12);
# - describe how soft k-means depends on β (one merged center at small β, Lloyd's algorithm at
#   large β) and turn "the clusters stay apart" into a measured number;
# - run spherical k-means as a transformer and state its policies for zero-length points and
#   members that cancel.
#
# *Prerequisites:* notebook 01. *Time:* about 55 minutes to read and run, including three short self-checks
# (02.9–02.11, after sections 1, 3 and 6; 6 minutes in all); the eight exercises at the end take about
# 2½ hours more.
#
# Tokens are **columns**: X is (d, n), C is (d, k). Every transformer below is run by the one
# generic layer `kmt_ref.core.attention.layer_forward`.

# %%
import numpy as np
import matplotlib.pyplot as plt

import kmt_ref
from kmt_ref import (lloyd, soft_kmeans, spherical_kmeans, dot_product_transformer,
                     soft_kmeans_transformer, spherical_kmeans_transformer, softmax)
from kmt_ref.core.attention import attention_scores, layer_forward, FeedForward, requ
from kmt_ref.core.normalizers import hardmax
from kmt_ref.core.tokens import projector, run_layers
from kmt_ref.algorithms.dot_product import dot_product_weights, dot_product_layer
from kmt_ref.data import toy_data
from kmt_ref.viz.plotting import (plot_weights, plot_attention, plot_layer_attention, embedding_blocks,
                                  CLUSTER_COLORS)
from kmt_ref.viz.variant_figures import plot_soft_beta_sweep

%matplotlib inline
np.set_printoptions(precision=4, suppress=True, linewidth=110)
SEED = 19  # the toy example's seed (kmt_ref.data.toy_data); section 7 draws its data from rng below
rng = np.random.default_rng(2)
X, C0 = toy_data(SEED)  # three clusters of 8 points in [0, 1]^2; the first 3 points are the initial centers
d, n = X.shape
k = C0.shape[1]
assert (d, n, k) == (2, 24, 3)
print("kmt_ref", kmt_ref.__version__, "| X:", X.shape, "C0:", C0.shape, "| seed", SEED)

# %% [markdown]
# ## 1. The squared-norm trick
#
# Theorem 2.1 scores center $j$ for point $i$ by the negative squared distance. Expanding it gives the idea
# of Theorem 2.2:
#
# $$-\|x_i - c_j\|^2 = \underbrace{-\|x_i\|^2}_{\text{same for every } j} + 2\,x_i\cdot c_j - \|c_j\|^2 .$$
#
# Only the last two terms depend on $j$, and both are dot products if the tokens carry the right
# extra rows. Point tokens are $[x_i; \|x_i\|^2; 1; y_i; 0]$ and center tokens
# $[c_j; \|c_j\|^2; 1; e_j; 1]$ (rows `x`, `norm`, `one`, `y`, `flag`; the flag marks center tokens,
# step 3).

# %%
params, emb = dot_product_weights(d, k)    # the hand-set Q1..V4, W1, W2 and the token layout
Xbar, Cbar = emb.embed_points(X), emb.embed_centers(C0)                  # (d_emb, n), (d_emb, k)
print("layout:", emb.layout, "| d_emb =", emb.d_emb)
print("rows:", {name: (s.start, s.stop) for name, s in embedding_blocks(emb)})
x_rows, norm, one, y, flag = (emb.rows(b) for b in ("x", "norm", "one", "y", "flag"))   # row slices
assert Xbar.shape == (d + k + 3, n) and Cbar.shape == (d + k + 3, k)
assert np.array_equal(Xbar[emb.rows("norm")][0], np.sum(X * X, axis=0))   # ||x_i||^2
assert np.array_equal(Cbar[emb.rows("norm")][0], np.sum(C0 * C0, axis=0))  # ||c_j||^2
assert np.array_equal(Cbar[emb.rows("y")], np.eye(k)) and np.all(Cbar[emb.rows("flag")] == 1)

# %% [markdown]
# ### Theorem 2.2, as kmt_ref realises it
#
# A technical summary of the paper reports Theorem 2.2 in words: plain dot-product attention runs k-means
# exactly if the token embeddings carry their squared norms and a feed-forward block with the activation
# ReQU updates them (**[summary]**: the paper's own text was not available to us, so its statement is neither
# quoted nor verified). The statement below is therefore the project's, and so is its construction (token
# layout, weights, the empty-cluster token, block 2), **(open)** ([SPEC, "Theorem 2.2"](../docs/SPEC.md#4-theorem-22-dot-product-attention-and-a-requ-feed-forward-block-construction-open)); the
# authors' code has no Theorem 2.2 model.
#
# **Theorem 2.2 (the project's statement).** Let $X = [x_1, \dots, x_n] \in \mathbb R^{d\times n}$ and
# $C^{(0)} \in \mathbb R^{d\times k}$, and let $C^{(t)}$ and $Y^{(t)} \in \{0, 1\}^{k\times n}$ (columns $y^{(t)}_i$,
# one-hot for $t \ge 1$; $Y^{(0)} = 0$) be the centers and labels of $t$ steps of Lloyd's algorithm from $C^{(0)}$, ties to the lowest index,
# an empty cluster keeping its center (`lloyd`, policy `"keep"`; [SPEC, "Ties and empty clusters"](../docs/SPEC.md#ties-and-empty-clusters)).
# Assume
#
# 1. *the tokens*: rows `x`, `norm`, `one`, `y`, `flag` ($d + k + 3$ rows), point tokens
#    $[x_i; \|x_i\|^2; 1; y_i; 0]$ with $y_i = y^{(0)}_i = 0$, center tokens $[c_j; \|c_j\|^2; 1; e_j; 1]$ with
#    $c_j$ column $j$ of $C^{(0)}$;
# 2. *the layer* of Theorem 2.1 (notebook 01) followed by a feed-forward block on the center tokens:
#    $\bar X' = \bar X + A_2 + A_1$, then $\bar C' = \bar C + A_4 + A_3$ (the reset added first), then
#    $\bar C'' = \bar C' + W_2\,\mathrm{ReQU}(W_1\bar C')$ with $\mathrm{ReQU}(z) = \max(z, 0)^2$, where
#    $A_1 = A(\bar X, \bar C; Q_1, K_1, V_1)$, $A_2 = A(\bar X, \bar X; Q_2, K_2, V_2)$,
#    $A_3 = A(\bar C, [\bar X'\ \bar C]; Q_3, K_3, V_3)$ (block 3's keys: the updated point tokens and the center
#    tokens) and $A_4 = A(\bar C, \bar C; Q_4, K_4, V_4)$;
# 3. *the weights* of `dot_product_weights(d, k)` (drawn in section 2), the same in every layer;
# 4. *dot-product attention at γ = ∞*: scores $S_{ji} = (K z'_j)\cdot(Q z_i)$; blocks 1, 2 and 4 take the
#    lowest-index hardmax (weight 1 on each query's largest score, ties to the lowest key index), block 3 the
#    averaging hardmax (equal weights on all of a query's tied largest scores).
#
# Then, in exact arithmetic, after $T$ layers ($T \ge 0$) the point tokens are $[x_i; \|x_i\|^2; 1; y^{(T)}_i; 0]$
# and the center tokens are $[C^{(T)}; \|C^{(T)}\|^2; 1; I_k; 1]$ ($\|C\|^2$ the row of the squared norms of
# the columns): each layer is one Lloyd iteration.
#
# *In floating point*, which is what kmt_ref computes, the equality holds to rounding, not bit for bit: the dot
# score $2x\cdot c - \|c\|^2$ and Lloyd's $\|x\|^2 + \|c\|^2 - 2x\cdot c$ are equal in exact arithmetic but are
# rounded differently, so a label can part from Lloyd's where a point's two nearest centers are equidistant to
# within rounding. How close, and on which inputs it is tested:
# [EXACTNESS, "Theorem 2.2"](../docs/EXACTNESS.md#theorem-22). On this notebook's example the labels are equal and
# the centers agree to 1e-12 (step 6 asserts it).
#
# **Proof, in six steps.** Steps 1–5 take one layer whose input has the form of the conclusion for some $t$
# (Lloyd's $C^{(t)}$ in the center tokens, $Y^{(t)}$ in the point tokens) and show that its output has that form
# for $t + 1$; step 6 is the induction over the layers. The cell after each step checks it on the running
# example: step 1 on the tokens built above (the input of layer 1), steps 2–5 on layer 2 of a recorded run,
# whose input already carries Lloyd's first labels.
#
# **Step 1: block 1 writes the code of the nearest center.** The query of point $i$ is
# $Q_1\bar x_i = [2x_i; -1]$ (the −1 is read from the `one` row into the `norm` row) and the key of center $j$ is
# $K_1\bar c_j = [c_j; \|c_j\|^2]$:
#
# $$ (K_1\bar c_j)\cdot(Q_1\bar x_i) = 2\,x_i\cdot c_j - \|c_j\|^2 = \|x_i\|^2 - \|x_i - c_j\|^2 .$$
#
# So the dot score minus Theorem 2.1's Euclidean score is $\|x_i\|^2$: one number per point (per column).

# %%
S_dot = attention_scores(Xbar, Cbar, params["Q1"], params["K1"], score="dot")          # (k, n)
P_X = projector(emb, "x")
S_euc = attention_scores(Xbar, Cbar, P_X, P_X, score="euclidean")                      # (k, n): -||x - c||^2
constant = S_dot - S_euc                                                                 # (k, n)
assert S_dot.shape == (k, n)
np.testing.assert_allclose(constant, np.tile(np.sum(X * X, axis=0), (k, 1)), rtol=1e-13)
print("dot - Euclidean score of point 0, each center:", constant[:, 0], "| ||x_0||^2 =", X[:, 0] @ X[:, 0])

# %% [markdown]
# Adding the same number to every score of a query changes the weights of no normalizer that is shift
# invariant per query, which softmax at every γ and both hardmax forms are (a lemma left to you: exercise 02.2 (a)). So the
# dot scores give the weights of distance attention: the lowest-index hardmax of block 1 puts weight 1 on the
# nearest center $j^*_i$, ties to the lowest index, as Lloyd's assignment does, and $V_1 = P_Y$ writes its code
# $e_{j^*_i}$ into the `y` rows and 0 into every other row.

# %%
for gamma in (1.0, 10.0, 1000.0):
    np.testing.assert_allclose(softmax(S_dot, gamma), softmax(S_euc, gamma), rtol=1e-10, atol=1e-15)
assert np.array_equal(hardmax(S_dot), hardmax(S_euc))                                    # gamma = inf
A1 = params["V1"] @ Cbar @ hardmax(S_dot)                                                # (d_emb, n): block 1's output
labels_1 = lloyd(X, C0, 1).labels[0]                                                     # (n,) Lloyd's first labels
assert np.array_equal(A1[y], np.eye(k)[:, labels_1]) and not np.delete(A1, np.r_[y], axis=0).any()
print("softmax of both scores: equal for gamma = 1, 10, 1000; hardmax: identical")
print("block 1 writes the codes of Lloyd's first labels:", labels_1)

# %% [markdown]
# ### Exercise 02.9
#
# A self-check on §1: for the point $x = (0.6, 0.8)$ and the center $c = (1, 0)$, what is block 1's dot score
# $(K_1\bar c)\cdot(Q_1\bar x)$? `answer` = a number (4 significant digits).

# %%
### BEGIN SOLUTION
x_q, c_q = np.array([0.6, 0.8]), np.array([1.0, 0.0])
answer = 2 * x_q @ c_q - c_q @ c_q                        # 1.2 - 1
assert np.isclose(answer, x_q @ x_q - np.sum((x_q - c_q) ** 2))   # ||x||^2 - ||x - c||^2 = 1 - 0.8
### END SOLUTION

# %%
from kmt_ref.exercises import check
check("02.9", answer)

# %% [markdown]
# ## 2. The twelve hand-set matrices of Theorem 2.2, and blocks 2–4
#
# Compare with notebook 01 (rows: Q, K, V; columns: blocks 1–4). Blocks 1 and 2 read the `norm`
# and `one` rows (the −1 of $Q$ and the `norm` entry of $K$ are the norm trick); block 3's key
# subtracts ½ · flag from the one-hot rows (the empty-cluster token, step 3); block 4's value
# clears the stale `norm` row together with the old center (step 4). Q has entries 2, so the colour scale
# runs to 2.

# %%
fig = plot_weights(params, emb, names=[f"{w}{b}" for w in "QKV" for b in "1234"], ncols=4)
fig.suptitle("Theorem 2.2: hand-set Q, K, V (rows: Q, K, V; columns: blocks 1-4)")
assert params["Q1"][norm, one] == -1.0 and np.array_equal(params["K1"], P_X + projector(emb, "norm"))
assert np.all(params["K3"][y, flag] == -0.5)                         # the default token's offset
assert np.array_equal(params["V4"], -(P_X + projector(emb, "norm")))  # clears c and ||c||^2

# %% [markdown]
# **Step 2: block 2 subtracts the old code.** Block 2 has block 1's score maps, over the points: point $i$
# scores point $l$ by $\|x_i\|^2 - \|x_i - x_l\|^2$, which is largest where $x_l = x_i$ ($l = i$, or a copy of
# $x_i$). Copies of a point carry the same $y$ (all start at 0, and in every layer block 1 gives them the same
# scores), so the lowest-index hardmax picks a token whose $y$ is $y_i$, and $V_2 = -P_Y$ writes $-y_i$. With
# step 1 the point tokens leave the encoder as $[x_i; \|x_i\|^2; 1; y_i - y_i + e_{j^*_i}; 0]$, that is, with
# Lloyd's next labels $y^{(t+1)}_i$; no other row is written ($V_1$ and $V_2$ are zero outside the `y` rows).

# %%
ref = lloyd(X, C0, 5)
rec = dot_product_transformer(X, C0, 5, record=True)   # each layer's tokens, scores, weights and block outputs
L2 = rec.layers[1]                                     # layer 2: its input carries Lloyd's first labels
Y1, Y2 = (np.eye(k)[:, ref.labels[t]] for t in (0, 1)) # (k, n) each: Y^(1), Y^(2)
D_xx = np.sum((X[:, :, None] - X[:, None, :]) ** 2, axis=0)                           # (n, n) ||x_i - x_l||^2
np.testing.assert_allclose(L2.scores["2"], np.sum(X * X, axis=0) - D_xx, rtol=0, atol=1e-13)
assert np.array_equal(L2.weights["2"], np.eye(n))      # no two points coincide here: each picks itself
assert np.array_equal(L2.Xbar_in[y], Y1) and np.array_equal(L2.outputs["2"][y], -Y1)
assert np.array_equal(L2.outputs["1"][y], Y2)          # step 1 in this layer
X_next = L2.Xbar_in.copy()
X_next[y] = Y2
assert np.array_equal(L2.Xbar_out, X_next)             # only the y rows changed, to Lloyd's next labels
print("point 0 in layer 2: y", L2.Xbar_in[y, 0], "+ block 2", L2.outputs["2"][y, 0], "+ block 1",
      L2.outputs["1"][y, 0], "=", L2.Xbar_out[y, 0])

# %% [markdown]
# **Step 3: block 3 takes the members' mean, or keeps an empty cluster's center.** Its queries are the center
# tokens, its keys the point tokens of step 2 and the center tokens. With $Q_3 = P_Y$ and
# $K_3\bar z = y - \tfrac12\,\mathrm{flag}\,\mathbf 1_k$, center $j$ scores
#
# | key | score $e_j\cdot K_3\bar z$ |
# |---|---|
# | a member of cluster $j$ ($y_i = e_j$) | 1 |
# | its own center token ($e_j - \tfrac12\mathbf 1$) | ½ |
# | a point of another cluster | 0 |
# | another center token | −½ |
#
# If cluster $j$ has members $M_j$, they tie at the largest score 1 and the averaging hardmax gives each of them
# weight $1/|M_j|$; $V_3 = P_X$ then writes their mean $\mu_j$, Lloyd's $c^{(t+1)}_j$, into the `x` rows. If it
# has none, its own token (½) beats every point (0) and every other center token (−½), and block 3 writes
# $c_j$: the empty cluster keeps its center, Lloyd's "keep" policy (section 5 shows one; exercise 02.4 asks
# which offsets other than ½ would do). $V_3$ is zero outside the `x` rows.

# %%
S3 = L2.scores["3"]                                    # (n + k, k): keys (points, then center tokens) down
members = ref.labels[1][:, None] == np.arange(k)       # (n, k): the members of each cluster in layer 2
assert np.array_equal(S3, np.vstack([members.astype(float), np.eye(k) - 0.5]))
np.testing.assert_allclose(L2.weights["3"], np.vstack([members / members.sum(axis=0), np.zeros((k, k))]))
np.testing.assert_allclose(L2.outputs["3"][x_rows], ref.centers[2], rtol=0, atol=1e-12)   # the members' means
assert not np.delete(L2.outputs["3"], np.r_[x_rows], axis=0).any()
print("block 3's scores in layer 2:", np.unique(S3), "| cluster sizes:", members.sum(axis=0))

# %% [markdown]
# **Step 4: block 4 clears the old center and its norm.** $Q_4 = K_4 = P_Y$: center $l$ scores center $j$ by
# $e_l\cdot e_j$, which is 1 for $l = j$ and 0 otherwise, so the lowest-index hardmax is the identity, and
# $V_4 = -(P_X + P_\mathrm{norm})$ writes $-[c_j; \|c_j\|^2]$. With step 3 the center tokens leave the decoder as
# $[c^{(t+1)}_j; 0; 1; e_j; 1]$: the centers are Lloyd's, the `norm` row is cleared and no other row is written.
# (The code adds block 4's output before block 3's, so that $(c - c) + \mu$ is $\mu$ exactly in floating point:
# [EXACTNESS](../docs/EXACTNESS.md).)

# %%
assert np.array_equal(L2.scores["4"], np.eye(k)) and np.array_equal(L2.weights["4"], np.eye(k))
cleared = np.r_[x_rows, norm]                          # the rows block 4 writes
assert np.array_equal(L2.outputs["4"][cleared], -L2.Cbar_in[cleared])
assert not np.delete(L2.outputs["4"], cleared, axis=0).any()
C_decoded = L2.Cbar_in + L2.outputs["4"] + L2.outputs["3"]   # (d_emb, k): the decoder's output
assert np.array_equal(C_decoded[x_rows], L2.outputs["3"][x_rows]) and not C_decoded[norm].any()
print("center tokens after the decoder of layer 2 (columns):\n", C_decoded)

# %% [markdown]
# ## 3. A ReQU feed-forward block refreshes ‖c‖²
#
# **Step 5: the feed-forward block writes $\|c_j\|^2$.** After the update the center has moved, so its stored
# $\|c_j\|^2$ is stale: block 4 clears it (step 4), and a feed-forward block $\mathrm{FFN}(z) = W_2\,\mathrm{ReQU}(W_1 z)$ writes the new one ([SPEC, "Theorem 2.2"](../docs/SPEC.md#4-theorem-22-dot-product-attention-and-a-requ-feed-forward-block-construction-open)). ReQU
# gives half of a square; two of them give it all:
#
# $$\mathrm{ReQU}(z) + \mathrm{ReQU}(-z) = z^2 \quad\text{for every real } z .$$

# %%
z = np.linspace(-2, 2, 201)
fig, ax = plt.subplots(figsize=(4.5, 3))
ax.plot(z, requ(z), label="ReQU(z)")
ax.plot(z, requ(-z), label="ReQU(-z)")
ax.plot(z, requ(z) + requ(-z), "k--", label="sum = z²")
ax.set_xlabel("z"); ax.set_ylabel("value"); ax.legend(); ax.set_title("two ReQU units make a square")
np.testing.assert_array_equal(requ(z) + requ(-z), z * z)

# %% [markdown]
# With $W_1 = [I_d; -I_d]$ on the data rows ($2d$ hidden units) and $W_2$ summing them into the
# `norm` row,
#
# $$\sum_{p=1}^d \mathrm{ReQU}(c_p) + \mathrm{ReQU}(-c_p) = \sum_p c_p^2 = \|c\|^2 ,$$
#
# exactly, and the block changes no other row (a lemma left to you: exercise 02.2 (b)). So the center tokens leave the layer
# as $[c^{(t+1)}_j; \|c^{(t+1)}_j\|^2; 1; e_j; 1]$. Below, center tokens with a cleared `norm` row (what block 4
# leaves) go through the FFN alone, first with dyadic centers, then those of layer 2.

# %%
C_new = np.array([[0.5, -1.25, 3.0], [2.0, 0.75, -0.5]])  # (d, k): dyadic, so "exactly" is testable
Cbar_stale = emb.embed_centers(C_new)                        # (d_emb, k)
Cbar_stale[norm] = 0.0                                       # what block 4 leaves
_, Cbar_fresh = layer_forward(params, Xbar, Cbar_stale, (FeedForward("C", activation="requ"),))
print("W1:", params["W1"].shape, " W2:", params["W2"].shape)
print("FFN wrote:", Cbar_fresh[norm][0], "| ||c_j||^2 =", np.sum(C_new**2, axis=0))
assert np.array_equal(Cbar_fresh[norm][0], np.sum(C_new**2, axis=0))
others = np.setdiff1d(np.arange(emb.d_emb), np.arange(emb.d_emb)[norm])
assert np.array_equal(Cbar_fresh[others], Cbar_stale[others])  # and nothing else changed
assert np.array_equal(L2.outputs["FFN"][norm][0], np.sum(ref.centers[2] ** 2, axis=0))   # layer 2
assert np.array_equal(L2.Cbar_out, C_decoded + L2.outputs["FFN"])
print("layer 2: FFN wrote", L2.outputs["FFN"][norm][0], "| ||c_j||^2 of Lloyd's centers:", np.sum(ref.centers[2] ** 2, axis=0))

# %% [markdown]
# ### Exercise 02.10
#
# A self-check on §3 (and the token layout of §1): for data in d = 5 dimensions and k = 4 clusters, what is the
# shape of $W_1$? `answer` = (rows, columns), a pair of integers.

# %%
### BEGIN SOLUTION
# 2d hidden units (ReQU(c_m) and ReQU(-c_m) per coordinate), acting on tokens of d + k + 3 rows
answer = (2 * 5, 5 + 4 + 3)
assert dot_product_weights(5, 4)[0]["W1"].shape == answer
### END SOLUTION

# %%
check("02.10", answer)

# %% [markdown]
# ## 4. Theorem 2.2 is Lloyd's algorithm, layer by layer
#
# **Step 6: induction over the layers.** Steps 1–5 show that a layer whose input has the form of the conclusion
# for Lloyd's state after $t$ steps returns that form for $t + 1$: the point tokens with $y^{(t+1)}_i$ (steps 1, 2),
# the center tokens with $C^{(t+1)}$ (steps 3, 4) and its norms (step 5). The embedding has that form for $t = 0$
# ($C^{(0)}$, and $Y^{(0)} = 0$, for which steps 2 and 3 hold as they stand: block 2 subtracts 0), so by
# induction it holds after every layer, which proves the theorem. $\square$
#
# The cell compares every token of every layer of the recorded run with the embedding of Lloyd's state, then
# runs the circuit unrecorded (the fast path of the γ = ∞ limit) and compares its labels and centers.

# %%
token_gap = []                                                              # per layer: max |token - Lloyd's|
for t, layer_t in enumerate(rec.layers):
    X_lloyd = emb.embed_points(X)
    X_lloyd[y] = np.eye(k)[:, ref.labels[t]]                                # [x_i; ||x_i||^2; 1; y_i; 0]
    C_lloyd = emb.embed_centers(ref.centers[t + 1])                         # [c_j; ||c_j||^2; 1; e_j; 1]
    np.testing.assert_allclose(layer_t.Xbar_out, X_lloyd, rtol=0, atol=1e-12)
    np.testing.assert_allclose(layer_t.Cbar_out, C_lloyd, rtol=0, atol=1e-12)
    token_gap.append(max(np.abs(layer_t.Xbar_out - X_lloyd).max(), np.abs(layer_t.Cbar_out - C_lloyd).max()))
trf = dot_product_transformer(X, C0, 5)
np.testing.assert_array_equal(trf.labels, ref.labels)
np.testing.assert_allclose(trf.centers, ref.centers, rtol=0, atol=1e-12)
for t in range(trf.n_steps):
    print(f"layer {t + 1}: tokens - Lloyd's state: {token_gap[t]:.1e}, "
          f"labels equal: {np.array_equal(trf.labels[t], ref.labels[t])}, "
          f"max |dC| = {np.abs(trf.centers[t + 1] - ref.centers[t + 1]).max():.1e}, "
          f"log J = {trf.log_objective[t + 1]:.4f} (Lloyd {ref.log_objective[t + 1]:.4f})")

# %% [markdown]
# **The attention matrices of the last layer.** We sort the points by their final cluster before
# running (the encoder is permutation-equivariant and Lloyd's means do not depend on the order, so
# nothing else changes) and draw the four blocks, each with its own colour scale (from 0 to its largest weight).

# %%
order = np.argsort(ref.labels[-1], kind="stable")               # points grouped by final cluster
trf_sorted = dot_product_transformer(X[:, order], C0, 5, record=True)
np.testing.assert_array_equal(trf_sorted.labels, ref.labels[:, order])
layer = trf_sorted.layers[-1]
fig = plot_layer_attention(layer.weights, n_points=n)
fig.suptitle("Theorem 2.2, layer 5: attention of blocks 1-4 (points sorted by cluster)")
assert np.array_equal(layer.weights["1"].sum(axis=0), np.ones(n))   # one-hot columns
assert np.array_equal(layer.weights["2"], np.eye(n))               # identity
np.testing.assert_allclose(layer.weights["3"].sum(axis=0), 1.0)    # each center: a mean
print("cluster sizes:", np.bincount(ref.labels[-1]), "| block 3 weights per member:",
      np.unique(np.round(layer.weights["3"][:n][layer.weights["3"][:n] > 0], 6)))

# %% [markdown]
# Block 1: each point puts weight 1 on its nearest center. Blocks 2 and 4: identity. Block 3: each
# center spreads weight $1/|M_j|$ over its members $M_j$ (1/8 here: written under each column; on a common
# 0–1 scale these weights would look black) and nothing on the center tokens.
#
# ## 5. An empty cluster: the default token at score ½
#
# Step 3 covered a cluster without members: its own center token, at score ½, beats every point (0), so it
# **keeps** $c_j$. The toy example has no empty cluster; we add a far-away fourth center to see one.

# %%
C0_empty = np.column_stack([C0, [3.0, 3.0]])   # (2, 4): no point is nearer to center 3
ref_e = lloyd(X, C0_empty, 5)
trf_e = dot_product_transformer(X, C0_empty, 5, record=True)
np.testing.assert_array_equal(trf_e.labels, ref_e.labels)
np.testing.assert_allclose(trf_e.centers, ref_e.centers, rtol=0, atol=1e-12)
assert np.array_equal(trf_e.centers[-1][:, 3], [3.0, 3.0])            # the empty cluster kept its center
print("cluster sizes after layer 1:", np.bincount(ref_e.labels[0], minlength=4))

# %% [markdown]
# The recorded scores of block 3 in layer 1 (keys: the 24 points, then the 4 center tokens) are the
# numbers of step 3's table:

# %%
S3 = trf_e.layers[0].scores["3"]                                        # (n + 4, 4)
members0 = ref_e.labels[0] == 0
print("center 0 (populated): members", np.unique(S3[:n][members0, 0]), "| others", np.unique(S3[:n][~members0, 0]),
      "| own token", S3[n + 0, 0])
print("center 3 (empty):     points", np.unique(S3[:n, 3]), "| own token", S3[n + 3, 3],
      "| other tokens", np.unique(S3[n:n + 3, 3]))
assert set(np.unique(S3[:n, 3])) == {0.0} and S3[n + 3, 3] == 0.5
assert np.all(S3[:n][members0, 0] == 1.0) and S3[n + 0, 0] == 0.5

# %% [markdown]
# Block 3's attention in the last layer, with the points sorted by cluster: the empty center
# (column 3) puts all its weight on its own token. Its weight 1 sets the colour scale, so the members'
# weights 1/8 are dark: each column's largest weight is written under it.

# %%
order_e = np.argsort(ref_e.labels[-1], kind="stable")
trf_e_sorted = dot_product_transformer(X[:, order_e], C0_empty, 5, record=True)
W3 = trf_e_sorted.layers[-1].weights["3"]                               # (n + 4, 4)
fig, ax = plt.subplots(figsize=(4.5, 4.2))
plot_attention(W3, ax=ax, title="block 3, layer 5: an empty cluster (center 3)",
               key_blocks=[("points", slice(0, n)), ("centers", slice(n, n + 4))],
               query_label="centers", key_label="keys", label_columns=True)
fig.axes[-1].set_ylabel("attention weight")                              # the colorbar
assert W3[n + 3, 3] == 1.0 and not W3[:n, 3].any()

# %% [markdown]
# ## 6. Soft k-means: a finite β in block 1
#
# Keep Theorem 2.1's distance scores but stop at a finite inverse temperature β, and use the authors'
# normalized *linear* attention for the update (their `cnst_model.py`, `ldp=True`; [SPEC, "Variants"](../docs/SPEC.md#5-variants-small-named-changes-to-the-layer), soft k-means):
#
# $$r_{ij} = \frac{\exp(-\beta\|x_i - c_j\|^2)}{\sum_l \exp(-\beta\|x_i - c_l\|^2)},\qquad
# c_j' = \frac{\sum_i r_{ij}\,x_i}{\sum_i r_{ij}} .$$
#
# Block 1 writes $y_i = r_i$; block 3 scores $e_j\cdot y_i = r_{ij}$ and divides by their sum. The
# responsibility matrix *is* block 1's attention matrix. First, the transformer equals the classical
# loop over eight orders of magnitude of β:

# %%
betas = [1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6]
for beta in betas:
    r_ref, r_trf = soft_kmeans(X, C0, 10, beta), soft_kmeans_transformer(X, C0, 10, beta)
    np.testing.assert_allclose(r_trf.centers, r_ref.centers, rtol=0, atol=1e-10)
    np.testing.assert_allclose(r_trf.assignments, r_ref.assignments, rtol=0, atol=1e-10)
print("transformer = soft_kmeans (centers and responsibilities to 1e-10) for beta =", betas)

# %% [markdown]
# As β grows the responsibilities become one-hot and soft k-means becomes Lloyd's algorithm:

# %%
ref10 = lloyd(X, C0, 10)
err = np.array([np.abs(soft_kmeans_transformer(X, C0, 10, b).centers - ref10.centers).max(axis=(1, 2))
                for b in betas])                                         # (9, 11): per beta, per layer
errors = err.max(axis=1)                                                 # the largest over the 10 layers
# the plateau: a near tie. Entering layer 2, one point is almost as near to two of Lloyd's centers
D2 = ((X[:, :, None] - ref10.centers[1][:, None, :]) ** 2).sum(axis=0)  # (n, k) squared distances
two = np.sort(D2, axis=1)[:, :2]
tie = int(np.argmin(two[:, 1] - two[:, 0]))
gap = two[tie, 1] - two[tie, 0]
print(f"point {tie}: squared distances {two[tie].round(5)} to its two nearest centers entering layer 2, gap {gap:.2e}")
for t in (1, 2):
    print(f"max |c_soft - c_Lloyd| after layer {t}, beta = 1e-2 ... 1e6:", " ".join(f"{e:.2g}" for e in err[:, t]))
fig, ax = plt.subplots(figsize=(6, 3.6))
ax.loglog(betas, np.maximum(errors, 1e-17), "o-", label="largest over the 10 layers")
ax.loglog(betas, np.maximum(err[:, 2], 1e-17), "s--", mfc="none", label="after layer 2")
ax.loglog(betas, np.maximum(err[:, -1], 1e-17), "^:", label="after layer 10")
ax.axvline(1 / gap, color="0.5", lw=0.8, ls=":")
ax.text(1 / gap, 1e-14, " beta = 1/gap", fontsize=8, color="0.3")
ax.set_xlabel("beta"); ax.set_ylabel("max |c_soft - c_Lloyd|")
ax.set_title("soft k-means -> Lloyd as beta grows (below 1e-17 drawn at 1e-17)", fontsize=9)
ax.legend(fontsize=8)
assert errors[-1] < 1e-12 and errors[0] > 0.1
assert gap < 1e-3 and np.all(errors[5:7] == err[5:7, 2])   # beta = 1e3, 1e4: the largest error is layer 2's
assert np.all(err[4:7, -1] < 1e-10)                         # ... and from beta = 100 it is gone by layer 10

# %% [markdown]
# *The plateau near 1e-2 from β = 100 to 10⁴ is one point.* Entering layer 2, point 20 is almost exactly as near
# to two of Lloyd's centers (the gap printed above), so its responsibilities stay close to ½ and ½ until β is well
# above 1/gap (the dotted line), and layer 2's new centers are off by about 1e-2 (printed above): from β = 10³ to
# 10⁴ that is the largest error (at β = 100 the first layer, still soft for other points too, is off by more).
# The error does not last: once every point's nearest center is the same as Lloyd's again, the next layer's means
# are Lloyd's, and after layer 10 the error is below 1e-10 from β = 100 on (asserted in the cell).
#
# In between, nearby clusters share points. Top row: each point coloured by the mixture of its
# clusters' colours, with the center paths; bottom row: block 1's attention matrix in the last layer
# (the responsibilities, points grouped by Lloyd's clusters).

# %%
fig = plot_soft_beta_sweep(X, C0, betas=(1.0, 10.0, 100.0, 1000.0), n_layers=10)

# %% [markdown]
# **Turn β yourself.** `kmt_ref.viz.sliders.plot_soft_beta` draws one β: the points in their mixed colours,
# each center's path to where soft k-means leaves it after 10 layers (filled dots), Lloyd's centers after
# 10 steps as hollow circles (the hard limit, β = ∞), and the responsibilities below. Side by side at four
# values, the last the limit itself, then behind a slider (it moves in a running notebook).

# %%
from kmt_ref.viz.sliders import plot_soft_beta, small_multiples, parameter_sliders

fig = small_multiples(lambda b, axes: plot_soft_beta(X, C0, b, n_layers=10, axes=axes),
                      [3.0, 30.0, 300.0, np.inf], rows=2, panel_size=(3.2, 3.0),
                      title="soft k-means at beta = 3, 30, 300 and the hard limit")
plt.show()
parameter_sliders(lambda beta: plot_soft_beta(X, C0, beta, n_layers=10),
                  {"beta": [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1e3, np.inf]})

# %% [markdown]
# **Small β: one merged center.** When β → 0 every responsibility tends to $1/k$, and after one
# step every center is the mean of all the data:

# %%
tiny = soft_kmeans_transformer(X, C0, 1, 1e-9)
np.testing.assert_allclose(tiny.centers[1], np.tile(X.mean(axis=1)[:, None], (1, k)), atol=1e-8)
print("beta = 1e-9: after one layer every center is the data mean", X.mean(axis=1))

# %% [markdown]
# **How far apart are the centers?** "The clusters stay apart" becomes a number once we measure
# it: the three distances between the centers, after 10 layers (the sweep above) and after 500
# steps (close to a fixed point). After 10 layers the distances grow smoothly with β. After 500
# steps they jump: below some β all centers sit on the data mean, then two distinct centers
# appear, then three. These are the phase transitions of *deterministic annealing* (Rose, 1998),
# which lowers the temperature $1/\beta$ on purpose. Exercises 02.5 and 02.6 locate them.

# %%
def center_distances(beta, n_steps):
    C = soft_kmeans(X, C0, n_steps, beta).centers[-1]                    # (d, k)
    return np.sort([np.linalg.norm(C[:, a] - C[:, b]) for a in range(k) for b in range(a + 1, k)])

beta_grid = np.geomspace(1.0, 100.0, 61)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), sharey=True)
for ax, n_steps in zip(axes, (10, 500)):
    dist = np.array([center_distances(b, n_steps) for b in beta_grid])  # (61, 3) sorted
    for col, name in enumerate(("smallest", "middle", "largest")):
        ax.semilogx(beta_grid, dist[:, col], label=f"{name} distance")
    ax.set_xlabel("beta"); ax.set_title(f"distances between the 3 centers after {n_steps} steps")
    ax.grid(alpha=0.3)
axes[0].set_ylabel("||c_j - c_l||"); axes[0].legend(fontsize=8)
fig.tight_layout()
assert dist[0].max() < 1e-9 and dist[-1].min() > 0.5                     # merged at beta = 1, apart at 100

# %% [markdown]
# ### Exercise 02.11
#
# A self-check on §6: a point at (0, 0), two centers at (0, 0) and (2, 0), and β = ln 3. What is the point's
# responsibility $r$ for the center at (0, 0)? `answer` = a number (4 significant digits).

# %%
### BEGIN SOLUTION
# squared distances 0 and 4: r = 1 / (1 + exp(-4 beta)) = 1 / (1 + 3^-4) = 81/82
answer = 1 / (1 + np.exp(-4 * np.log(3.0)))
C_q = np.array([[0.0, 2.0], [0.0, 0.0]])                  # the two centers, also used as the data
assert np.isclose(answer, soft_kmeans(C_q, C_q, 1, np.log(3.0)).assignments[0, 0])
### END SOLUTION

# %%
check("02.11", answer)

# %% [markdown]
# ## 7. Spherical k-means on directional data
#
# Dhillon & Modha's spherical k-means clusters *directions*: points and centers live on the unit
# sphere, a point joins the center of largest cosine, and the new center is the normalized mean of
# its members ([SPEC, "Variants"](../docs/SPEC.md#5-variants-small-named-changes-to-the-layer); $M_j$ the member set, $\mu_j$ the member mean):
#
# $$l_i = \arg\max_j x_i\cdot c_j,\qquad c_j' = \frac{\mu_j}{\|\mu_j\|},\quad \mu_j = \frac{1}{|M_j|}\sum_{i\in M_j} x_i .$$
#
# The transformer changes three things in Theorem 2.1: the embedding scales every point to unit
# length, block 1 uses dot-product scores (cosines), and block 3's output $[\mu_j; 0]$ goes
# through RMSNorm without centering and gain $1/\sqrt{d_{emb}}$, which is exactly $[\mu_j/\|\mu_j\|; 0]$.
# *Where* the RMSNorm sits is the project's choice **(open)**: a summary of the paper mentions only
# dot-product attention and a token-wise normalization such as RMSNorm for spherical k-means, and gives
# no place for it.
# The data: three groups of directions on the circle, with random lengths (which must not matter).

# %%
angles = np.concatenate([rng.normal(a, 0.25, 30) for a in (0.3, 2.2, 4.1)])  # (90,)
lengths = rng.uniform(0.3, 3.0, angles.size)                                 # (90,)
Xdir = lengths * np.vstack([np.cos(angles), np.sin(angles)])                 # (2, 90)
Cdir = Xdir[:, [0, 1, 2]]                  # three initial centers, all from the first group
s_ref = spherical_kmeans(Xdir, Cdir, 8)
s_trf = spherical_kmeans_transformer(Xdir, Cdir, 8)
np.testing.assert_array_equal(s_trf.labels, s_ref.labels)
np.testing.assert_allclose(s_trf.centers, s_ref.centers, rtol=0, atol=1e-10)
np.testing.assert_allclose(np.linalg.norm(s_trf.centers, axis=1), 1.0, atol=1e-14)
print("labels equal; centers to", np.abs(s_trf.centers - s_ref.centers).max(), "; all centers unit length")

# %% [markdown]
# Left: the raw data. Right: the same points on the unit circle, coloured by their final cluster, and
# the centers of every layer (fainter: earlier layers).

# %%
U = s_trf.info["X_unit"]  # (2, n) the data on the circle
fig, axes = plt.subplots(1, 2, figsize=(9, 4.3))
axes[0].scatter(Xdir[0], Xdir[1], s=10, c="0.6")
axes[0].set_title("raw data (lengths vary)")
t = np.linspace(0, 2 * np.pi, 200)
axes[1].plot(np.cos(t), np.sin(t), "k-", lw=0.5)
axes[1].scatter(U[0], U[1], s=14, c=[CLUSTER_COLORS[j] for j in s_trf.labels[-1]])
for step, C in enumerate(s_trf.centers):
    alpha = 0.25 + 0.75 * step / (len(s_trf.centers) - 1)
    for j in range(3):
        axes[1].plot([0, C[0, j]], [0, C[1, j]], color=CLUSTER_COLORS[j], alpha=alpha, lw=1 + 1.5 * (step == 8))
axes[1].set_title("spherical k-means transformer: centers per layer")
for ax in axes:
    ax.set_aspect("equal"); ax.set_xlabel("x1"); ax.set_ylabel("x2")
fig.tight_layout()

# %% [markdown]
# **Degenerate cases are policy.** A zero-length point has no direction: both implementations refuse
# it. A cluster whose members cancel (antipodal points x and −x) has member sum 0 and no direction:
# both give the zero vector (RMSNorm maps 0 to 0), never NaN.

# %%
try:
    spherical_kmeans_transformer(np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[1.0], [0.0]]), 1)
except ValueError as err:
    print("ValueError:", str(err)[:100], "...")
anti = np.array([[1.0, -1.0], [0.0, 0.0]])  # x and -x, k = 1
for tr in (spherical_kmeans(anti, anti[:, :1], 2), spherical_kmeans_transformer(anti, anti[:, :1], 2)):
    assert np.array_equal(tr.centers[1:], np.zeros((2, 2, 1)))
print("antipodal members: center", spherical_kmeans_transformer(anti, anti[:, :1], 1).centers[1].ravel())

# %% [markdown]
# ## Summary
#
# - Theorem 2.2, as the project states it (the paper's text was not available; the construction is the
#   project's own, (open)): with point tokens $[x_i; \|x_i\|^2; 1; y_i; 0]$, center tokens
#   $[c_j; \|c_j\|^2; 1; e_j; 1]$, the weights of `dot_product_weights`, dot-product attention at γ = ∞ and a
#   ReQU block after the decoder, $T$ layers leave Lloyd's state after $T$ steps in the tokens, exactly in exact
#   arithmetic and to rounding in floating point; its proof in six steps, each checked (sections 1–4).
# - $-\|x-c\|^2 = 2x\cdot c - \|c\|^2 - \|x\|^2$: with a `norm` and a `one` row, block 1's dot score
#   is the Euclidean score plus $\|x_i\|^2$, a constant per query, which no shift-invariant
#   normalizer sees (section 1).
# - A ReQU feed-forward block with $2d$ units writes $\|c\|^2$ exactly, since
#   $\mathrm{ReQU}(z) + \mathrm{ReQU}(-z) = z^2$; block 4 clears the stale norm first (section 3).
# - On the toy data every token of every layer is the embedding of Lloyd's state: labels exactly,
#   centers to 1e-12 (section 4).
# - Block 3's key $y - \tfrac12\,\mathrm{flag}$ gives the scores 1 (members) > ½ (own token) > 0 > −½,
#   so an empty cluster keeps its center (step 3, section 5).
# - Soft k-means is Theorem 2.1 at a finite β with a linear block 3: one merged center for small β,
#   Lloyd's algorithm for large β, and sharp transitions between (section 6).
# - Spherical k-means: unit-norm embedding, cosine scores and an RMSNorm on block 3; zero-length
#   points are refused and cancelling members give the zero vector (section 7).

# %% [markdown]
# ## Exercises
#
# How to work them (what `answer` holds, what `check` prints, parts graded apart, the precision a number
# needs): [Working the exercises](../docs/EXERCISES.md).

# %%
from kmt_ref.exercises import check, report

# %% [markdown]
# ### Exercise 02.1
#
# Section 1 showed that the circuit may leave out $\|x_i\|^2$. What about the other norm? Break the
# key: in a copy of the weights set `K1 = projector(emb, "x")` (the key loses its `norm` row, so block 1
# scores $2x_i\cdot c_j$). Write a function `moved_points(X, C)` for data `X` (d, n) and centers `C`
# (d, k) that runs one layer of Theorem 2.2 (`params, emb = dot_product_weights(d, k)`,
# `layer_forward(params, emb.embed_points(X), emb.embed_centers(C), dot_product_layer())`) with the
# right key and with the broken one, reads each point's label from the `y` rows of the new point tokens
# (argmax), and returns the points whose label differs. Then run it on the **converged** centers
# `lloyd(X, C0, 5).centers[-1]`: to which centers do the moved points go?
#
# `answer`: the function. It returns the indices of the moved points (a list or 1-D array of ints, any
# order; empty if none) or a boolean mask over the n points, and may use any kmt_ref function outside
# `kmt_ref.exercises`, or NumPy alone. `check` calls it on the notebook's example and on data and centers
# of its own (d = 3 with two equal centers, centers of equal norm); labels are integers, so the answer is
# exact.

# %%
### BEGIN SOLUTION
def moved_points(X, C):
    params, emb = dot_product_weights(X.shape[0], C.shape[1])
    Xbar, Cbar = emb.embed_points(X), emb.embed_centers(C)
    broken = dict(params, K1=projector(emb, "x"))                       # the key without its norm row
    labels = [np.argmax(layer_forward(p, Xbar, Cbar, dot_product_layer())[0][emb.rows("y")], axis=0)
              for p in (params, broken)]                                # (n,) each
    return np.flatnonzero(labels[0] != labels[1])


answer = moved_points
C = lloyd(X, C0, 5).centers[-1]                                         # (d, k), converged
moved = moved_points(X, C)
labels_broken = np.argmax(2 * C.T @ X, axis=0)                          # (n,) the broken score's argmax
print(f"moved ({moved.size} of {n}):", moved, "| ||c_j||^2 =", np.sum(C * C, axis=0),
      "| new labels of them:", labels_broken[moved])
### END SOLUTION

# %%
check("02.1", answer)

# %% [markdown]
# ### Exercise 02.2
#
# Prove, for tokens and weights as in sections 1–3:
#
# (a) for any normalizer σ that is shift invariant per query ($\sigma(z + a\mathbf 1) = \sigma(z)$),
# the weights of block 1 from the dot scores $2x_i\cdot c_j - \|c_j\|^2$ equal those from the
# Euclidean scores $-\|x_i - c_j\|^2$, at every γ; in particular the argmax over $j$ does not
# depend on $\|x_i\|^2$. Why may $\|c_j\|^2$ *not* be dropped in the same way?
#
# (b) $\sum_{p=1}^{d}\mathrm{ReQU}(c_p) + \mathrm{ReQU}(-c_p) = \|c\|^2$ for every $c\in\mathbb R^d$,
# and the FFN of section 3 leaves every row except `norm` unchanged.
#
# Write the proof in the answer cell below the check. Two checked questions come first;
# `answer = (letter, value)`:
#
# 1. Which score, used by block 1 in place of $-\|x_i - c_j\|^2$, gives the same weights at every γ under
#    every shift-invariant normalizer, for all data and centers? (a) $2x_i\cdot c_j$ (the key without its
#    norm row); (b) $4x_i\cdot c_j - 2\|c_j\|^2$; (c) $2x_i\cdot c_j - \|c_j\|^2 - 3\|x_i\|^2$;
#    (d) $2x_i\cdot c_j - \sum_p \mathrm{ReQU}(c_{jp})$ (a norm row written by one ReQU unit per coordinate).
# 2. Suppose block 4 had not cleared the `norm` row of a center token, which still holds 4. What does the FFN
#    of section 3, $z + W_2\,\mathrm{ReQU}(W_1 z)$ with the weights of `dot_product_weights(3, 1)`, leave in
#    that row for $c = (0.3, -1.2, 2.5)$? (a number, to 4 significant digits)

# %%
### BEGIN SOLUTION
# (1): the three other scores against the Euclidean one, on a center with a negative coordinate
x_22, C_22 = np.array([0.6, 0.8]), np.array([[1.0, -0.5, 0.2], [0.0, 0.9, -0.4]])      # (2,), (2, 3)
euclid = -np.sum((x_22[:, None] - C_22) ** 2, axis=0)                                  # (3,)
scores_22 = {"a": 2 * x_22 @ C_22, "b": 2 * (2 * x_22 @ C_22 - np.sum(C_22**2, axis=0)),
             "c": 2 * x_22 @ C_22 - np.sum(C_22**2, axis=0) - 3 * x_22 @ x_22,
             "d": 2 * x_22 @ C_22 - np.sum(requ(C_22), axis=0)}
for letter, s_22 in scores_22.items():
    print(letter, "minus the Euclidean score:", np.round(s_22 - euclid, 4))       # the same for every j: a shift
# (2): the hidden vector is [c; -c]; W2 adds the ReQU sum to what the row holds
params_22, emb_22 = dot_product_weights(3, 1)
z_22 = emb_22.embed_centers(np.array([[0.3], [-1.2], [2.5]]))
z_22[emb_22.rows("norm")] = 4.0
norm_row = float((z_22 + params_22["W2"] @ requ(params_22["W1"] @ z_22))[emb_22.rows("norm")][0, 0])
print("the norm row after the FFN:", norm_row)
answer = ("c", norm_row)
### END SOLUTION

# %%
check("02.2", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# **(a)** Expand: $-\|x_i - c_j\|^2 = -\|x_i\|^2 + 2x_i\cdot c_j - \|c_j\|^2$, so the dot score of
# query $i$ and key $j$ is $s^{dot}_{ij} = s^{euc}_{ij} + \|x_i\|^2$. For a fixed query $i$ the added
# term $a_i = \|x_i\|^2$ is the same for every key $j$: the column
# $s^{dot}_{\cdot i} = s^{euc}_{\cdot i} + a_i\mathbf 1$. With $z = s^{euc}_{\cdot i}$, the scores of query $i$
# at inverse temperature γ are $\gamma z$, and $\gamma(z + a\mathbf 1) = \gamma z + (\gamma a)\mathbf 1$ is again a
# shift, so by shift invariance $\sigma(\gamma s^{dot}_{\cdot i}) = \sigma(\gamma s^{euc}_{\cdot i})$ for every γ. For
# softmax: $e^{\gamma(z_j + a)}/\sum_l e^{\gamma(z_l + a)} = e^{\gamma a}e^{\gamma z_j}/(e^{\gamma a}\sum_l e^{\gamma z_l})$.
# For the argmax: $z_j + a > z_l + a \iff z_j > z_l$, with the same ties, so the lowest-index rule picks
# the same $j$.
#
# The term $\|c_j\|^2$ depends on the **key** $j$: dropping it adds $\|c_j\|^2$ to entry $j$ of each
# column, a different number per row, which is not a shift and can change the argmax (exercise 02.1:
# 8 of 24 points move, towards the center of largest norm).
#
# **(b)** For a real $z$: if $z \ge 0$, $\mathrm{ReQU}(z) = z^2$ and $\mathrm{ReQU}(-z) = \max(-z,0)^2 = 0$;
# if $z < 0$, $\mathrm{ReQU}(z) = 0$ and $\mathrm{ReQU}(-z) = (-z)^2 = z^2$. In both cases the sum is $z^2$.
# $W_1 = [I_d; -I_d]$ (on the data rows) gives the hidden vector $h = [c; -c]$, so
# $\mathbf 1^\top\mathrm{ReQU}(h) = \sum_p \mathrm{ReQU}(c_p) + \mathrm{ReQU}(-c_p) = \sum_p c_p^2 = \|c\|^2$.
# $W_2$ has ones in the `norm` row only and zeros elsewhere, so the residual $z + W_2\,\mathrm{ReQU}(W_1 z)$
# changes only that row, which block 4 has set to 0: it then holds $\|c\|^2$. (In floating point each
# nonzero term is the rounded $c_p^2$ and adding the zero terms is exact, so the FFN writes a sum of the
# $d$ rounded squares; for $d = 2$ that is bit for bit the rounded $c_1^2 + c_2^2$, in any order.)
#
# **The checked questions.** (1) Only (c) differs from the Euclidean score by a term of the query alone,
# $-2\|x_i\|^2$ (the cell prints the differences): (a) adds $\|c_j\|^2$, which changes with the key;
# (b) doubles the scores, which is the score at $2\gamma$, not a shift; (d) misses $c_{jp}^2$ for every negative
# coordinate, again a term of the key. (2) The FFN is a residual: it adds $\|c\|^2 = 7.78$ to the 4 already in
# the row, 11.78. That is why block 4 clears the row first.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 02.3
#
# Theorem 2.2 spends $2d$ ReQU units on $\|c\|^2$. The toy data lie in $[0, 1]^2$, so every center
# (a mean of points) has non-negative coordinates. Write a function `small_ffn(emb)` that, for the token
# layout `emb` of `dot_product_weights(d, k)` (any d and k; `emb.d`, `emb.d_emb`, `emb.rows("x")`,
# `emb.rows("norm")`), returns a feed-forward block `(W1, W2)` with **at most d hidden units** that
# writes $\|c\|^2$ into the `norm` row of the center tokens whenever $c \ge 0$, and changes no other row.
# Then think: what does it write for a center with a negative coordinate?
#
# `answer`: the function, returning `W1` of shape (h, d_emb) and `W2` of shape (d_emb, h), h ≤ d. It may not
# call `dot_product_weights` (whose `W1` holds Theorem 2.2's 2d units): build the matrices with NumPy.
# `check` calls it for d, k = (2, 3), (1, 1), (3, 2) and (5, 4) and compares what the block writes into the
# `norm` row with $\|c\|^2$ to a relative 1e-13 (a sum of d rounded squares, in float64); every other row
# must stay exactly as it was.

# %%
### BEGIN SOLUTION
def small_ffn(emb):
    W1 = np.zeros((emb.d, emb.d_emb))
    W1[:, emb.rows("x")] = np.eye(emb.d)          # one unit per coordinate: ReQU(c_p) = c_p^2 when c_p >= 0
    W2 = np.zeros((emb.d_emb, emb.d))
    W2[emb.rows("norm"), :] = 1.0                 # sum them into the norm row
    return W1, W2


answer = small_ffn
# it runs Lloyd's algorithm on the (non-negative) toy data, empty cluster included:
params_e, emb_e = dot_product_weights(d, 4)
W1_e, W2_e = small_ffn(emb_e)
tr_half = run_layers(X, dict(params_e, W1=W1_e, W2=W2_e), dot_product_layer(), emb_e, C0_empty, 5)
assert np.array_equal(tr_half.labels, ref_e.labels)
# a negative coordinate is lost: ReQU(-0.5) = 0
W1_half, W2_half = small_ffn(emb)
c_neg = np.array([[-0.5, 1.0, 2.0], [1.0, 0.0, 1.0]])
Z = emb.embed_centers(c_neg); Z[norm] = 0.0
print("written:", (Z + W2_half @ requ(W1_half @ Z))[norm][0], "| ||c||^2:", np.sum(c_neg**2, axis=0))
### END SOLUTION

# %%
check("02.3", answer)

# %% [markdown]
# ### Exercise 02.4
#
# Block 3's key subtracts $a = ½$ times the flag. Write a function `offset_centers(X, C, a)` that returns
# the centers (d, k) after **one** layer of Theorem 2.2 whose block-3 key subtracts $a$ times the flag
# instead, computed from block 3's scores (members, other points, the center's own token, the other
# center tokens) without the transformer. Compare it with the circuit: in a copy of the weights,
# `params4["K3"][emb4.rows("y"), emb4.rows("flag")] = -a` with `params4, emb4 = dot_product_weights(d, 4)`,
# and `run_layers(X, params4, dot_product_layer(), emb4, C0_empty, 1)` on the empty-cluster example of
# section 5. Where does the empty center go at $a = 1.5$, and why? Then state for which offsets $a$ the
# circuit equals Lloyd's algorithm (with "keep") on every input, and what goes wrong at the ends of
# that range.
#
# `answer`: the function. It may not call `layer_forward`, `fast_layer_forward`, `attention`, `run_layers`,
# `dot_product_transformer` or the blocks' kernels `attention_scores` and `softmax_attention` (NumPy and
# `lloyd` are allowed). `check` compares it with the circuit, to
# 1e-12, at offsets of its own on the example of section 5 and on 3-d data with two empty clusters.

# %%
### BEGIN SOLUTION
def offset_centers(X, C, a):
    n, k = X.shape[1], C.shape[1]
    labels = np.argmax(2 * C.T @ X - np.sum(C * C, axis=0)[:, None], axis=0)   # block 1, lowest index on ties
    keys = np.hstack([X, C])                                  # block 3's keys: the points, then the center tokens
    C_new = np.empty_like(C)
    for j in range(k):
        scores = np.concatenate([(labels == j).astype(float), np.full(k, -a)])  # members 1, points 0, tokens -a
        scores[n + j] = 1.0 - a                                                  # the center's own token
        C_new[:, j] = keys[:, scores == scores.max()].mean(axis=1)              # the averaging hardmax
    return C_new


answer = offset_centers
emb4 = dot_product_weights(d, 4)[1]
for a in (1.5, 0.5, 0.0, 1.0):                                # the function against the circuit
    params4 = {name: W.copy() for name, W in dot_product_weights(d, 4)[0].items()}
    params4["K3"][emb4.rows("y"), emb4.rows("flag")] = -a
    tr4 = run_layers(X, params4, dot_product_layer(), emb4, C0_empty, 1)
    np.testing.assert_allclose(offset_centers(X, C0_empty, a), tr4.centers[1], rtol=0, atol=1e-12)
print("empty center after one layer at a = 1.5:", offset_centers(X, C0_empty, 1.5)[:, 3],
      "| mean of all points:", X.mean(axis=1))
ref5 = lloyd(X, C0_empty, 5)
for a in (0.0, 0.25, 0.5, 0.75, 0.999, 1.0, 1.5):           # which offsets give Lloyd's algorithm for 5 layers?
    params_a = {name: W.copy() for name, W in dot_product_weights(d, 4)[0].items()}
    params_a["K3"][emb4.rows("y"), emb4.rows("flag")] = -a
    tr_a = run_layers(X, params_a, dot_product_layer(), emb4, C0_empty, 5)
    same = np.array_equal(tr_a.labels, ref5.labels) and np.allclose(tr_a.centers, ref5.centers, rtol=0, atol=1e-12)
    print(f"offset a = {a:5g}: equals Lloyd for 5 layers: {same}")
### END SOLUTION

# %%
check("02.4", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# With offset $a$ the empty center $j$ scores 0 against every point (none is a member), $1 - a$
# against its own token and $-a$ against the other center tokens. At $a = 1.5$ the own token scores
# −½ < 0, so all 24 points tie for the maximum and the averaging hardmax moves the center to the mean
# of all the data, (0.419, 0.452).
#
# The circuit is Lloyd's algorithm with "keep" exactly when $1 > 1 - a > 0$, i.e. $0 < a < 1$:
# members (1) must beat the own token, and the own token must beat the non-members (0). At $a = 0$
# the own token ties with the members and every populated center becomes
# $(\sum_{i\in M_j} x_i + c_j)/(|M_j| + 1)$; at $a = 1$ it ties with all points and the empty center
# becomes $(\sum_i x_i + c_j)/(n + 1)$. On this example (the cell above) $a \in \{0.25, 0.5, 0.75, 0.999\}$
# match Lloyd for 5 layers, $a \in \{0, 1, 1.5\}$ do not. ½ sits in the middle of the range.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 02.5
#
# The β-sweep figure (section 6) suggests that at small β the soft clusters merge. Make that
# measurable: let $\mathrm{sep}(\beta)$ be the **smallest distance between two of the centers after
# 10 layers** of `soft_kmeans_transformer(X, C0, 10, beta)` (or of `soft_kmeans`, which gives the same
# centers to 1e-10). Write a function `beta_star(X, C0, threshold, lo, hi)` that finds by bisection, to
# within 0.01, the β in $[lo, hi]$ at which $\mathrm{sep}(\beta) = $ `threshold`, for a bracket with
# $\mathrm{sep}(lo) < $ `threshold` $\le \mathrm{sep}(hi)$ and one crossing in between. On the toy data
# $\mathrm{sep}$ is increasing in β between 5 and 10 (see the left panel of the distance figure), with
# $\mathrm{sep}(5) < 0.3 < \mathrm{sep}(10)$: print `beta_star(X, C0, 0.3, 5.0, 10.0)`. (Is β = 10 below or
# above it?)
#
# `answer`: the function. `check` calls it on this question and on three data sets of its own (2-d and 3-d,
# k = 2 and 3, each with its threshold and bracket), and compares it with its own bisection.

# %%
### BEGIN SOLUTION
def beta_star(X, C0, threshold, lo, hi):
    def sep(beta):
        C = soft_kmeans_transformer(X, C0, 10, beta).centers[-1]             # (d, k)
        k = C.shape[1]
        return min(np.linalg.norm(C[:, a] - C[:, b]) for a in range(k) for b in range(a + 1, k))

    assert sep(lo) < threshold <= sep(hi)
    while hi - lo > 0.005:                       # the midpoint is then within 0.0025 of the crossing
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if sep(mid) >= threshold else (mid, hi)
    return 0.5 * (lo + hi)


answer = beta_star
C10 = soft_kmeans_transformer(X, C0, 10, 10.0).centers[-1]
print(f"beta* = {beta_star(X, C0, 0.3, 5.0, 10.0):.3f} (within 0.0025); sep(10) = "
      f"{min(np.linalg.norm(C10[:, a] - C10[:, b]) for a in range(k) for b in range(a + 1, k)):.3f}")
### END SOLUTION

# %%
check("02.5", answer)

# %% [markdown]
# ### Exercise 02.6
#
# The right panel of the distance figure shows that, near a fixed point, all centers sit on the data
# mean $\mu$ for small β and split at some $\beta_c$. Derive $\beta_c$: write $c_j = \mu + u_j$, with
# $u_j$ a small displacement, expand the soft k-means update to first order in the $u_j$, and find when
# the merged state stops being stable. Express $\beta_c$ through $s_{\max}$, the largest eigenvalue of
# the data covariance $\Sigma = \frac1n\sum_i (x_i - \mu)(x_i - \mu)^\top$. Write a function `beta_c(X)`
# that computes it for data `X` (d, n), print it for the toy data, and check it with `soft_kmeans` (1000
# steps) a few per cent below and above.
#
# `answer`: the function. `check` calls it on the toy data and on three data sets of its own (2-d and
# 3-d, one not centered) and compares it with $\beta_c$ to a relative 1e-10 (float64, no rounding).

# %%
### BEGIN SOLUTION
def beta_c(X):
    Xc = X - X.mean(axis=1, keepdims=True)               # (d, n)
    Sigma = Xc @ Xc.T / X.shape[1]                       # (d, d), covariance with 1/n
    return 1.0 / (2.0 * np.linalg.eigvalsh(Sigma)[-1])   # eigvalsh: ascending, the last is s_max


answer = beta_c
s_max = np.linalg.eigvalsh(np.cov(X, bias=True))[-1]
for f, steps in ((0.95, 1000), (1.05, 1000), (0.98, 300)):
    C_end = soft_kmeans(X, C0, steps, f * beta_c(X)).centers[-1]
    print(f"beta = {f:.2f} beta_c, {steps} steps: largest spread of the centers {np.ptp(C_end, axis=1).max():.2e}")
print(f"s_max = {s_max:.4f}, beta_c = {beta_c(X):.4f}")
### END SOLUTION

# %%
check("02.6", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# Let $\tilde x_i = x_i - \mu$ (so $\sum_i \tilde x_i = 0$) and $c_j = \mu + u_j$. Then
# $-\beta\|x_i - c_j\|^2 = -\beta\|\tilde x_i\|^2 + 2\beta\,\tilde x_i\cdot u_j - \beta\|u_j\|^2$.
# The first term is the same for every $j$ and cancels in the softmax; the last is second order. So,
# to first order, with $\bar u = \frac1k\sum_l u_l$,
# $$r_{ij} = \frac{e^{2\beta\tilde x_i\cdot u_j}}{\sum_l e^{2\beta\tilde x_i\cdot u_l}}
#   \approx \frac1k\bigl(1 + 2\beta\,\tilde x_i\cdot(u_j - \bar u)\bigr).$$
# Then $\sum_i r_{ij} \approx n/k$ (the linear term sums to 0) and
# $\sum_i r_{ij}\,x_i \approx \frac1k\bigl(n\,\mu + 2\beta\sum_i \tilde x_i\tilde x_i^\top(u_j - \bar u)\bigr)$,
# so
# $$c_j' \approx \mu + 2\beta\,\Sigma\,(u_j - \bar u), \qquad u_j' - \bar u' = 2\beta\,\Sigma\,(u_j - \bar u).$$
# The common part $\bar u$ disappears in one step; the differences between centers are multiplied
# by $2\beta\Sigma$ at every step. They shrink to 0 (the merged state is stable) when every eigenvalue
# of $2\beta\Sigma$ is below 1, and a difference along the top eigenvector grows as soon as
# $2\beta s_{\max} > 1$:
# $$\beta_c = \frac{1}{2s_{\max}(\Sigma)} \approx 3.460 \text{ on the toy data}
#   \quad(s_{\max} = 0.1445,\ \text{printed above}).$$
# Measured (the cell above): at $0.95\,\beta_c$ the spread after 1000 steps is at rounding level, at
# $1.05\,\beta_c$ it is 0.32. Near $\beta_c$ the factor $2\beta s_{\max}$ is close to 1 and convergence
# is slow (at $0.98\,\beta_c$, 300 steps still leave a spread of 0.08): "critical slowing down". This is
# the first phase transition of deterministic annealing (Rose, Gurewitz and Fox, 1990). The second split
# in the figure (right panel) is a transition of the two-center state, not of the merged one.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 02.7
#
# Write one step of spherical k-means as a plain NumPy function `step(X, C)` for data `X` (d, n)
# with nonzero columns of any length and centers `C` (d, k), nonzero, of any length, returning the
# new centers (d, k): scale points and centers to unit length, assign each point to the center of
# largest cosine (ties: the lowest index), and set each center to its normalized member mean. The
# policies of section 7 and of `spherical_kmeans`: an empty cluster keeps its (unit) center; a zero
# member mean gives the zero vector.
#
# `answer`: the function. It may not call `spherical_kmeans`, `spherical_kmeans_transformer`, the
# circuit's runners (`run_layers`, `layer_forward`, `fast_layer_forward`, `attention`) or the blocks'
# kernels (`attention_scores`, `softmax_attention`). `check` compares it
# with `spherical_kmeans(X, C, 1).centers[1]`, to 1e-12, on inputs of its own: 3-d points with random
# lengths, two equal centers (a tie), a center no point is nearest to, antipodal members.

# %%
### BEGIN SOLUTION
def step(X, C):
    Xu = X / np.linalg.norm(X, axis=0)                   # (d, n) unit points
    Cu = C / np.linalg.norm(C, axis=0)                   # (d, k) unit centers
    labels = np.argmax(Cu.T @ Xu, axis=0)                # (n,) largest cosine, lowest index on ties
    C_new = Cu.copy()                                    # empty clusters keep their center
    for j in range(C.shape[1]):
        members = labels == j
        if members.any():
            mu = Xu[:, members].mean(axis=1)             # (d,)
            norm_mu = np.linalg.norm(mu)
            C_new[:, j] = mu / norm_mu if norm_mu > 0 else 0.0
    return C_new

answer = step
np.testing.assert_allclose(step(Xdir, Cdir), s_ref.centers[1], atol=1e-12)
### END SOLUTION

# %%
check("02.7", answer)

# %% [markdown]
# ### Exercise 02.8
#
# Antipodal members (section 7) have a member sum of exactly 0. Now take three unit vectors at
# 0°, 120° and 240° (`np.cos`, `np.sin` of `2 * np.pi * np.arange(3) / 3`) as the data and one
# center (k = 1). In exact arithmetic their sum is 0. What do `spherical_kmeans` and the transformer
# return after one step? Does the result change if you list the points in another order, or rotate
# all three by the same angle? Explain what you see, and why no implementation can give a meaningful
# answer here.
#
# `answer`: the letter of the statement that describes the center `spherical_kmeans` returns, as a string
# (then write your explanation in the answer cell below the check):
#
# - (a) the zero vector: the members sum to 0, and the zero-sum policy applies
# - (b) the old center (1, 0): a sum without a direction keeps the center, as an empty cluster does
# - (c) a unit vector that turns with the data: rotating the three points by φ turns it by φ
# - (d) a unit vector in the direction of the rounding error of the member sum, which does not turn with the data

# %%
### BEGIN SOLUTION
import itertools
t3 = 2 * np.pi * np.arange(3) / 3
U3 = np.vstack([np.cos(t3), np.sin(t3)])                              # (2, 3)
print("float sum of the three vectors:", U3.sum(axis=1).tolist())
for perm in itertools.permutations(range(3)):
    c_ref = spherical_kmeans(U3[:, perm], U3[:, :1], 1).centers[1][:, 0]
    c_trf = spherical_kmeans_transformer(U3[:, perm], U3[:, :1], 1).centers[1][:, 0]
    print(perm, "center angle:", round(float(np.degrees(np.arctan2(c_ref[1], c_ref[0]))), 2), "deg",
          "| transformer equal:", np.array_equal(c_ref, c_trf), "| length", round(float(np.linalg.norm(c_ref)), 12))
for phi in (0.1, 0.3, 1.0):
    U_rot = np.vstack([np.cos(t3 + phi), np.sin(t3 + phi)])
    c_rot = spherical_kmeans(U_rot, U_rot[:, :1], 1).centers[1][:, 0]
    print(f"rotated by {phi}: center angle {np.degrees(np.arctan2(c_rot[1], c_rot[0])):.1f} deg")
answer = "d"   # a unit vector, not (1, 0), that does not turn with the data
### END SOLUTION

# %%
check("02.8", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# In floating point the three vectors do not sum to 0 but to a vector of order $10^{-16}$: the
# rounding errors of `cos` and `sin`, and of the additions. The print above is numpy's `sum`;
# `spherical_kmeans` adds the members its own way, which can round to another such vector. That tiny
# vector is not zero, so it is normalized, and the "center" is a **unit vector pointing in the
# direction of the rounding error** of the sum that was formed. Rotated by 0.1, 0.3 or 1.0 rad, the
# data keep their symmetry, but the center does not turn with them: its angles above are not the first
# ones plus the rotation. Which angles come out depends on how the sum is rounded, so another numpy can
# print other angles (the run above prints two angles, depending on the order); the center does not turn with the rotated data either way. The
# transformer gives exactly the same numbers as `spherical_kmeans`, because both sum in the same order
# (the code documents that choice), but that agreement is about summation order, not about the data.
#
# The map $v \mapsto v/\|v\|$ ($v$ the members' float sum) has an infinite condition number at $v = 0$: a relative perturbation
# of the inputs of size $\varepsilon \approx 10^{-16}$ changes $v$ by about $\varepsilon$, and when
# $\|v\| \approx \varepsilon$ that perturbation is as large as $v$ itself, so any direction is possible.
# Only the exact zero can be detected (the zero-vector policy); a sum that should be zero but is
# rounding error cannot be told apart from a genuinely tiny sum without a tolerance, which would be a
# new policy. The honest reading: this cluster has no direction, and its reported center carries no
# information.
#
# So the statement is (d): the float sum is not exactly 0, so neither the zero-vector policy (a) nor the
# keep policy (b) applies, and the printed angles do not follow the rotation (c).
# ### END SOLUTION

# %%
report("02")
