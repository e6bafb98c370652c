# %% [markdown]
# # 01 — Lloyd's algorithm *is* a transformer layer
#
# This notebook steps through **Theorem 2.1** of K. L. Clarkson, L. Horesh, T. Ito, C. Park, P. Ram,
# *Transformer Circuits Can Realize Clustering Algorithms* (ICML 2026; preliminary version: *Finding
# Clustering Algorithms in the Transformer Architecture*, arXiv 2506.19125):
# an encoder–decoder layer with four attention blocks and hand-set weights performs **one
# iteration of Lloyd's algorithm**, exactly, when the attention is in its γ = ∞ (hardmax) limit.
#
# **Learning objectives.** After this notebook you can
#
# - write one attention block both ways, with row tokens (the textbook's) and with column tokens (the paper's), and
#   say what a distance score adds to a dot-product score;
# - state Theorem 2.1 (its hypotheses and its conclusion) and prove it, block by block;
# - write the point and center tokens of Theorem 2.1 and read the labels and centers back out of them;
# - say what each of the four blocks computes, and why blocks 1 + 2 are Lloyd's assignment step and
#   blocks 3 + 4 its update step;
# - explain why block 1 breaks ties by the lowest index (`hardmax`) while block 3 needs the averaging
#   hardmax (`hardmax_average`);
# - explain how the flag token keeps an empty cluster's center, and what block 3 does without it;
# - predict how a finite γ departs from Lloyd's algorithm: soft assignments, when float64 weights are
#   exactly one-hot, and why the reset blocks must stay exact.
#
# *Prerequisites:* Lloyd's algorithm (k-means), softmax attention, NumPy. *Time:* about 60 minutes to
# read and run, including three short self-checks (01.9–01.11, after sections 2, 4 and 7; 5 minutes in all);
# the eight exercises at the end take about 2 hours more (their minutes are on their tag lines).
#
# The sections, each step checked by an `assert`:
#
# 0. from the attention you know to this notebook's: one block written with row tokens and with column
#    tokens, a distance score as a dot-product score, γ and $\sqrt{d}$; then the circuit in one picture;
# 1. a small 2-D example and Lloyd's algorithm;
# 2. the tokens: points and centers as **columns** `Xbar = [X; Y; 0]`, `Cbar = [C; I_k; 1]`;
# 3. the layer and its twelve hand-set Q, K, V, drawn as block matrices, and the statement of Theorem 2.1;
# 4. its proof in eight steps, one block at a time — each step checked on the example with the generic
#    `kmt_ref.core.attention.attention`;
# 5. the attention matrices of one layer;
# 6. the layer-by-layer match with `kmt_ref.lloyd` (the same labels, the same centers bit for bit);
# 7. an empty cluster, kept exactly thanks to the project's *flag* token ([SPEC, "Ties and empty clusters"](../docs/SPEC.md#ties-and-empty-clusters), "(open)");
# 8. finite γ versus γ = ∞;
#
# then a summary and eight exercises, each checked by `kmt_ref.exercises.check` (the proof 01.3 in its
# checkable parts; its model answer is in the solutions).
#
# Everything is imported from `kmt_ref`; nothing is re-implemented here. Conventions that our sources
# leave open (ties, empty clusters) are the project's own and are fixed in [SPEC, "Ties and empty clusters"](../docs/SPEC.md#ties-and-empty-clusters).
# *Remarks by the annotator are in italics*. The paper's own text was not available to us: the
# theorem is stated as a technical summary reports it, in the project's words (not verified against
# the paper's text), and the weights and the validation protocol are read from the authors' code (`cnst_model.py`,
# `numerical_validation.ipynb`). The equations here are the project's transcription
# ([SPEC, "Notation"](../docs/SPEC.md#1-notation) and [SPEC, "Theorem 2.1"](../docs/SPEC.md#3-theorem-21-the-k-means-transformer-one-layer-per-lloyd-iteration)), not quotations.

# %%
import numpy as np
import matplotlib.pyplot as plt

import kmt_ref
from kmt_ref import (lloyd, kmeans_transformer, lloyd_weights, lloyd_layer, projector,
                     attention, attention_scores, assign, run_layers, softmax, hardmax, hardmax_average,
                     EmptyClusterError)
from kmt_ref.core.attention import Block, Sublayer, layer_forward
from kmt_ref.algorithms.lloyd import lloyd_step
from kmt_ref.data import toy_data
from kmt_ref.viz import plotting

np.set_printoptions(precision=3, suppress=True, linewidth=110)
SEED = 19  # the toy example's seed (kmt_ref.data.toy_data)
print("kmt_ref", kmt_ref.__version__, "| seed", SEED)

# %% [markdown]
# ## 0. From the attention you know to this notebook's
#
# A first course on transformers writes one attention head with tokens as **rows**: queries
# $Z_q \in \mathbb R^{q\times d_{emb}}$, keys and values $Z_k \in \mathbb R^{r\times d_{emb}}$, and
#
# $$\operatorname{Attn}(Z_q, Z_k) = \operatorname{softmax}\Big(\frac{(Z_q W_Q)(Z_k W_K)^\top}{\sqrt{d_h}}\Big) Z_k W_V,$$
#
# the softmax taken along each **row** (one query's weights over the $r$ keys), $W_Q, W_K \in \mathbb R^{d_{emb}\times d_h}$,
# and here $W_V \in \mathbb R^{d_{emb}\times d_{emb}}$ (the output map folded in), so that the output can be added
# to the tokens. kmt_ref writes tokens as **columns**, $Z = Z_q^\top$, $Z' = Z_k^\top$, with the maps acting from
# the left, $Q = W_Q^\top$, $K = W_K^\top$, $V = W_V^\top$
# ([SPEC, "Attention"](../docs/SPEC.md#2-attention-one-definition-several-normalizers), after a summary of the paper):
#
# $$A(Z, Z'; Q, K, V) = V Z' \sigma(S),$$
#
# $$S_{ji} = \gamma\, (K z'_j)^\top (Q z_i),$$
#
# where $S$ is keys × queries and $\sigma$ normalizes each **column**. Transposing the textbook formula gives exactly
# this, with $\gamma = 1/\sqrt{d_h}$. The cell checks it on random tokens (the two compute the same sums in different
# orders, so they agree to rounding, 1e-12).

# %%
rng = np.random.default_rng(0)
d_e, q, r, d_h = 4, 5, 3, 2                                      # token size, queries, keys, head size
Zq, Zk = rng.normal(size=(q, d_e)), rng.normal(size=(r, d_e))    # the textbook's tokens: rows
W_Q, W_K, W_V = rng.normal(size=(d_e, d_h)), rng.normal(size=(d_e, d_h)), rng.normal(size=(d_e, d_e))
logits = (Zq @ W_Q) @ (Zk @ W_K).T / np.sqrt(d_h)                 # (q, r): one row per query
P = np.exp(logits - logits.max(axis=1, keepdims=True))
P /= P.sum(axis=1, keepdims=True)                                 # row-wise softmax
textbook = P @ Zk @ W_V                                           # (q, d_emb)

ours, W, S = attention(Zq.T, Zk.T, W_Q.T, W_K.T, W_V.T, score="dot", normalizer="softmax",
                       gamma=1 / np.sqrt(d_h), return_weights=True)
assert ours.shape == (d_e, q) and W.shape == (r, q)               # columns: queries; W: keys x queries
assert np.allclose(ours, textbook.T, rtol=0, atol=1e-12)          # the same numbers, transposed
assert np.allclose(W, P.T, rtol=0, atol=1e-12) and np.allclose(W.sum(axis=0), 1.0)
same = attention(Zq.T, Zk.T, W_Q.T, W_K.T, W_V.T, score="dot", scale=np.sqrt(d_h))  # gamma = 1, divided by sqrt(d_h)
assert np.allclose(same, ours, rtol=0, atol=1e-12)
print("max |kmt_ref - textbook^T| =", f"{np.abs(ours - textbook.T).max():.1e}")

# %% [markdown]
# **A distance score is a dot-product score plus two terms.** This notebook's blocks score by a distance,
# $S_{ji} = -\gamma\|K z'_j - Q z_i\|^2$ ("Euclidean attention"). Expanding the square,
#
# $$-\gamma\|K z'_j - Q z_i\|^2 = 2\gamma\,(K z'_j)^\top (Q z_i) \;-\; \gamma\|K z'_j\|^2 \;-\; \gamma\|Q z_i\|^2 .$$
#
# The last term is the same for every key of query $i$: it shifts column $i$ of $S$ by a constant, and a softmax
# (or a hardmax) over the column ignores it. The middle term depends on the key: the softmax does not ignore
# it, but a token can **carry** it. Give each key the extra entry $\|K z'_j\|^2$ and each query the entry
# $-\tfrac12$, and a plain dot product at $2\gamma$ gives the same weights. Notebook 02 builds equivalent
# tokens, with the squared norm of each center in a row of its own and the factor 2 moved into the query map
# (query $[2x_i; -1]$, key $[c_j; \|c_j\|^2]$: Theorem 2.2).

# %%
gamma = 0.7
KZ, QZ = W_K.T @ Zk.T, W_Q.T @ Zq.T                                   # (d_h, r), (d_h, q)
W_dist = attention(Zq.T, Zk.T, W_Q.T, W_K.T, W_V.T, score="euclidean", gamma=gamma, return_weights=True)[1]
keys_carry = np.vstack([KZ, (KZ ** 2).sum(axis=0)])                   # each key also carries ||K z'_j||^2
queries_carry = np.vstack([QZ, -0.5 * np.ones((1, q))])               # each query carries -1/2
I_h = np.eye(d_h + 1)
W_dot = attention(queries_carry, keys_carry, I_h, I_h, I_h, score="dot", gamma=2 * gamma, return_weights=True)[1]
assert np.allclose(W_dist, W_dot, rtol=0, atol=1e-12)                 # the same weights
S_dist = attention_scores(Zq.T, Zk.T, W_Q.T, W_K.T)                   # -||K z'_j - Q z_i||^2 (gamma left out)
shift = S_dist - (2 * KZ.T @ QZ - (KZ ** 2).sum(axis=0)[:, None])     # what the expansion leaves: -||Q z_i||^2
assert np.allclose(shift, -(QZ ** 2).sum(axis=0)[None, :], rtol=0, atol=1e-12)  # constant down each column
print("distance weights = dot-product weights with the carried term: max difference",
      f"{np.abs(W_dist - W_dot).max():.1e}")

# %% [markdown]
# **Where γ and $\sqrt{d}$ sit.** kmt_ref's blocks take an inverse temperature γ, the factor in front of the scores
above, which the normalizer applies (`attention_scores` returns the scores without it), and a divisor `scale`: the textbook's $1/\sqrt{d_h}$ is γ = $1/\sqrt{d_h}$ or
# `scale` = $\sqrt{d_h}$ (both checked above). The trained layer of notebook 04 divides its Euclidean scores by
# $\sqrt{d_{emb}}$ at γ = 1 (the authors' `kmt.py`; [SPEC, "Learning the algorithm"](../docs/SPEC.md#6-learning-the-algorithm-the-papers-training-experiment)).
# The hand-set circuit of this notebook has `scale` = 1 and takes γ → ∞. Then the softmax of a column puts all its
# weight on the column's largest score when that score is unique, and shares it equally among tied largest scores:
# the **averaging hardmax** (block 3's). Block 1 uses a hardmax that breaks ties by the lowest index instead, Lloyd's
# rule (§3 says which block uses which; exercise 01.2 asks why block 1 cannot use the limit of softmax).

# %%
col = S_dist[:, 0]                                          # query 0's scores over the 3 keys
for g in [0.1, 1.0, 10.0, 100.0, np.inf]:
    w = hardmax(col[:, None])[:, 0] if g == np.inf else softmax(col[:, None], gamma=g)[:, 0]
    print(f"gamma = {g:>5g}: weights {np.round(w, 3)}")
assert np.array_equal(hardmax(col[:, None])[:, 0], np.eye(r)[np.argmax(col)])           # one largest score
tied = np.array([[1.0], [3.0], [3.0]])                                                   # two largest scores
print("tied scores [1, 3, 3]: softmax at gamma = 100", np.round(softmax(tied, gamma=100.0)[:, 0], 3),
      "| averaging hardmax", hardmax_average(tied)[:, 0], "| lowest-index hardmax", hardmax(tied)[:, 0])
assert np.array_equal(hardmax_average(tied)[:, 0], [0, 0.5, 0.5]) and np.array_equal(hardmax(tied)[:, 0], [0, 1, 0])

# %% [markdown]
# ### The circuit in one picture
#
# One layer of Theorem 2.1, drawn by `kmt_ref.viz.circuit.plot_circuit` from the layer's description, its
# weights and its token layout (so the picture is whatever the code computes): the point tokens and the center
# tokens as columns of row groups, the four blocks with what their Q and K read, what their V writes and their
# normalizer, the residual sums in the order the code adds them, and the decoder reading the points the encoder
# has just updated. Sections 2 to 4 take it apart; section 6 stacks T copies of it.

# %%
from kmt_ref.viz.circuit import plot_circuit

fig = plot_circuit(*lloyd_weights(2, 3), lloyd_layer())
plt.show()

# %% [markdown]
# ## 1. A small 2-D example and Lloyd's algorithm
#
# Three Gaussian clusters of 8 points in [0, 1]², shuffled; the initial centers are the first
# k = 3 points (the authors' protocol in `numerical_validation.ipynb`,
# [SPEC, "The authors' numerical validation"](../docs/SPEC.md#the-authors-numerical-validation)). Lloyd's iteration:
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
fig, axes = plt.subplots(1, 2, figsize=(9, 4.4))
plotting.plot_center_trajectories(X, ref.centers, ax=axes[0], title="Lloyd: the centers over 4 iterations")
plotting.plot_assignments(X, ref.labels[-1], ref.centers[-1], ax=axes[1],
                          title="Lloyd: final assignments (triangles: centers)")
fig.tight_layout()

# %% [markdown]
# *Two initial centers (the first and third shuffled points) start in the same cluster; Lloyd's
# algorithm needs two iterations to move one of them to the empty third cluster.*
#
# ## 2. Tokens
#
# [SPEC, "Notation"](../docs/SPEC.md#1-notation), after a summary of the paper and the authors' code: encoder (point) tokens
# $\bar X = [X; Y] \in \mathbb R^{(d+k)\times n}$ with $Y^{(0)} = 0$, decoder (center) tokens
# $\bar C = [C; I_k] \in \mathbb R^{(d+k)\times k}$.
# The project appends one **type flag** row (0 for points, 1 for centers) so that an empty cluster
# behaves exactly like Lloyd's "keep" policy (section 7 below; [SPEC, "Ties and empty clusters"](../docs/SPEC.md#ties-and-empty-clusters), "(open)": the
# project's own construction). So here $d_{emb} = d + k + 1$.

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
# ### Exercise 01.9
#
# A self-check on §2: how many rows would a token have for data in d = 5 dimensions and k = 4 clusters?
# `answer` = d_emb, an integer.

# %%
### BEGIN SOLUTION
# d data rows, k one-hot rows, and the project's flag row
answer = 5 + 4 + 1
assert answer == lloyd_weights(5, 4)[1].d_emb
### END SOLUTION

# %%
from kmt_ref.exercises import check
check("01.9", answer)

# %% [markdown]
# ## 3. The layer and Theorem 2.1 (the blocks of the authors' `cnst_model.py`)
#
# $$\bar X' = \bar X + A(\bar X, \bar C; Q_1, K_1, V_1) + A(\bar X, \bar X; Q_2, K_2, V_2)$$
# $$\bar C' = \bar C + A(\bar C, \bar X'; Q_3, K_3, V_3) + A(\bar C, \bar C; Q_4, K_4, V_4)$$
#
# with attention $A(Z, Z'; Q, K, V) = V Z' \sigma(S)$, Euclidean scores
# $S_{ji} = -\gamma \|K z'_j - Q z_i\|^2$, and $\sigma$ normalizing each column (each query's
# weights over the keys sum to 1). The decoder reads the **updated** points $\bar X'$.
#
# Hand-set weights (those of the authors' `cnst_model.py`, plus the project's flag term in $K_3$;
# [SPEC, "The hand-set weights"](../docs/SPEC.md#the-hand-set-weights)), with projectors $P_X$ (data rows), $P_Y$ (one-hot rows):
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
fig = plotting.plot_weights(params, emb, names=[f"{w}{b}" for w in "QKV" for b in "1234"], ncols=4)
fig.suptitle("Hand-set Q, K, V (rows: Q, K, V; columns: blocks 1-4)")
plt.show()

# %% [markdown]
# ### Theorem 2.1, as kmt_ref realises it
#
# *The project's statement of a result whose original text we could not read: the paper's theorem is known to us
# from a summary ([SPEC, "Theorem 2.1"](../docs/SPEC.md#3-theorem-21-the-k-means-transformer-one-layer-per-lloyd-iteration)), the
# weights are the authors' `cnst_model.py`, and the flag row and the tie rule are the project's own choices (open).*
#
# **Hypotheses.** $X \in \mathbb R^{d\times n}$ (the points, as columns) and $C^{(0)} \in \mathbb R^{d\times k}$ (the
# initial centers). The tokens enter as $\bar X^{(0)} = [X; 0_{k\times n}; 0_{1\times n}]$ and
# $\bar C^{(0)} = [C^{(0)}; I_k; 1_{1\times k}]$ (rows: data, one-hot, flag). The weights are those of the table above,
# without biases, shared by every layer. Every block is at γ = ∞: block 1 is the lowest-index hardmax, blocks 2 and 4
# too, block 3 the averaging hardmax over the keys $[\bar X', \bar C]$ (the updated points and the center tokens).
#
# **Lloyd's algorithm** as in §1, ties to the lowest index, an empty cluster keeping its center: for $t \ge 0$,
# $\ell^{(t)}_i = \min \arg\min_j \|x_i - c^{(t)}_j\|^2$, and $c^{(t+1)}_j$ is the mean of
# $\{x_i : \ell^{(t)}_i = j\}$, or $c^{(t)}_j$ if that set is empty. For $t \ge 1$ write $Y^{(t)}$ for the $k\times n$
# matrix of the one-hot codes $e_{\ell^{(t-1)}_i}$: the labels that $C^{(t)}$ is the mean of (`lloyd(...).labels[t - 1]`).
#
# **Conclusion.** For every $T \ge 1$, after $T$ layers the tokens are $\bar X^{(T)} = [X; Y^{(T)}; 0]$ and
# $\bar C^{(T)} = [C^{(T)}; I_k; 1]$: the labels read from the $y$ rows are Lloyd's, and the data rows of the center
# tokens are Lloyd's centers. (In real arithmetic exactly. In float64, `kmeans_transformer` gives Lloyd's labels and
# Lloyd's centers bit for bit, at every layer, ties, duplicates and empty clusters included:
# [EXACTNESS](../docs/EXACTNESS.md).)
#
# ## 4. The proof, step by step
#
# By induction on $T$ (the layers share their weights), it is enough to prove one layer: tokens
# $[X; Y^{(t)}; 0]$, $[C^{(t)}; I_k; 1]$ in ($Y^{(0)} = 0$), tokens $[X; Y^{(t+1)}; 0]$, $[C^{(t+1)}; I_k; 1]$ out.
# Steps 3, 4 and 8 rest on two facts that exercise 01.3 asks you to prove: what block 2 does with duplicate points, and
# why the residual sums are exact in floating point. The first layer starts from $Y = 0$, where block 2 has nothing to
# subtract, so to see every step at work we check
# each one on the tokens **entering layer 2** ($t = 1$: $Y^{(1)}$, $C^{(1)}$ from one Lloyd step), applying each block
# separately with the generic `attention` function at γ = ∞.

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
# **Step 1 (block 1 scores by distance).** $Q_1 = K_1 = P_X$ read the data rows only, so
# $S_{ji} = -\|P_X \bar c_j - P_X \bar x_i\|^2 = -\|c_j - x_i\|^2$: minus the squared distance of point $i$ to
# center $j$, whatever the $y$ and flag rows hold.

# %%
S1 = attention_scores(Xbar_t, Cbar_t, params["Q1"], params["K1"])          # (k, n), gamma left out
_, D = assign(X, C_t)                                                          # (k, n) squared distances
assert np.allclose(S1, -D, rtol=0, atol=1e-12)

# %% [markdown]
# **Step 2 (block 1 writes the code of the nearest center).** The lowest-index hardmax puts weight 1 on the
# first maximal score of column $i$, that is on $j^* = \ell^{(t)}_i$ (Lloyd's rule, ties included), and
# $V_1 \bar c_{j^*} = P_Y \bar c_{j^*} = [0; e_{j^*}; 0]$.

# %%
A1 = attention(Xbar_t, Cbar_t, params["Q1"], params["K1"], params["V1"], normalizer="hardmax", gamma=np.inf)
assert A1.shape == (emb.d_emb, n)
assert np.array_equal(A1[emb.rows("y")], E_new)                               # writes e_{j*}
assert not A1[emb.rows("x")].any() and not A1[emb.rows("flag")].any()        # and nothing else

# %% [markdown]
# **Step 3 (block 2 subtracts the old code).** Self-attention on the points with $Q_2 = K_2 = P_X$: the score
# $-\|x_l - x_i\|^2$ is maximal (0) at $l = i$ and at the exact copies of $x_i$, which carry the same $y$. So block 2
# writes $V_2 \bar x_i = [0; -y_i; 0]$ (exercise 01.3 (a) asks for the proof). *`attention` computes this γ = ∞
# self-attention by grouping equal keys, without forming the scores: their expanded form
# $\|x_l\|^2 + \|x_i\|^2 - 2x_l^\top x_i$ is not exactly 0 at $l = i$ in floating point.*

# %%
A2 = attention(Xbar_t, Xbar_t, params["Q2"], params["K2"], params["V2"], normalizer="hardmax",
               gamma=np.inf, self_attention=True)
assert np.array_equal(A2[emb.rows("y")], -Y_old)                              # subtracts y
assert not A2[emb.rows("x")].any() and not A2[emb.rows("flag")].any()

# %% [markdown]
# **Step 4 (the encoder's residual sum).** $\bar x_i + A_2 + A_1 = [x_i;\ (y_i - y_i) + e_{j^*};\ 0] = [x_i; e_{j^*}; 0]$,
# exactly in floating point: $y - y = 0$ and $0 + e = e$ (exercise 01.3 (b)). The point tokens are
# $[X; Y^{(t+1)}; 0]$: Lloyd's assignment step.

# %%
Xbar_next = Xbar_t + A2 + A1                                                   # the encoder's residual sum
assert np.array_equal(Xbar_next[emb.rows("y")], E_new)                        # = [X; Y^(t+1); 0]
assert np.array_equal(Xbar_next[emb.rows("x")], X) and not Xbar_next[emb.rows("flag")].any()

# %% [markdown]
# **Step 5 (block 3 scores membership).** The queries are the centers, the keys are the **updated** points and the
# center tokens (`keys="X+C"`). $Q_3 = P_Y$ and $K_3 = P_Y + P_{flag}$, so center $j$ scores point $i$ by
# $-\|e_j - y_i\|^2$: 0 if $i$ is a member of cluster $j$ ($y_i = e_j$), −2 otherwise. It scores the center token $l$
# by $-(\|e_j - e_l\|^2 + 1)$: −1 for its own token, −3 for the others (the flag of a center token is 1, a point's 0).

# %%
keys3 = np.concatenate([Xbar_next, Cbar_t], axis=1)                           # (d_emb, n + k)
A3, W3, S3 = attention(Cbar_t, keys3, params["Q3"], params["K3"], params["V3"],
                       normalizer="hardmax_average", gamma=np.inf, return_weights=True)
assert W3.shape == (n + k, k)
member = labels_next[:, None] == np.arange(k)[None, :]                        # (n, k): point i in cluster j
assert np.array_equal(S3[:n], np.where(member, 0.0, -2.0))                    # the points' rows
assert np.array_equal(S3[n:], np.where(np.eye(k, dtype=bool), -1.0, -3.0))   # the center tokens' rows

# %% [markdown]
# **Step 6 (block 3 writes the mean of the members, or keeps an empty cluster's center).** If cluster $j$ has members,
# their score 0 is the column's maximum and the averaging hardmax (uniform over the tied maxima; the limit of softmax,
# [SPEC, "Attention"](../docs/SPEC.md#2-attention-one-definition-several-normalizers)) gives each of them $1/|M_j|$ ($M_j$ the
# member set); $V_3 = P_X$ writes their mean $c^{(t+1)}_j$ into the data rows. If it has none, its own token, at −1,
# is the only maximum, and block 3 writes $c^{(t)}_j = c^{(t+1)}_j$ (section 7 runs that case). *`attention` sums
# the members key by key, with the arithmetic of Lloyd's `cluster_means`, so the mean is Lloyd's bit for bit
# ([EXACTNESS](../docs/EXACTNESS.md)).*

# %%
assert np.array_equal(W3[:n], member / member.sum(axis=0)) and not W3[n:].any()   # 1/|M_j| on each member
assert np.array_equal(A3[emb.rows("x")], C_next)                              # the member means, bit for bit
assert not A3[emb.rows("y")].any() and not A3[emb.rows("flag")].any()

# %% [markdown]
# **Step 7 (block 4 subtracts the old center).** Self-attention on the centers with $Q_4 = K_4 = P_Y$: the codes $e_j$
# are distinct, so the only maximum of column $j$ is $l = j$; the attention is the identity and $V_4 = -P_X$
# writes $-c_j$.

# %%
A4 = attention(Cbar_t, Cbar_t, params["Q4"], params["K4"], params["V4"], normalizer="hardmax",
               gamma=np.inf, self_attention=True)
assert np.array_equal(A4[emb.rows("x")], -C_t)
assert not A4[emb.rows("y")].any() and not A4[emb.rows("flag")].any()

# %% [markdown]
# **Step 8 (the decoder's residual sum).** Each sublayer adds its reset block first:
# $(\bar c_j + A_4) + A_3 = [(c_j - c_j) + c^{(t+1)}_j;\ e_j;\ 1] = [c^{(t+1)}_j; e_j; 1]$, exactly in floating point
# (exercise 01.3 (b)). The center tokens are $[C^{(t+1)}; I_k; 1]$: Lloyd's update step. With step 4 this is the
# claim for one layer, and by induction for $T$ layers. ∎

# %%
Cbar_next = (Cbar_t + A4) + A3                                                 # the decoder's residual sum
assert np.array_equal(Cbar_next[emb.rows("x")], A3[emb.rows("x")])           # (c - c) + mu = mu, bit for bit
assert np.array_equal(Cbar_next[emb.rows("x")], C_next)
assert np.array_equal(Cbar_next[emb.rows("y")], np.eye(k))                     # I_k is untouched
assert np.array_equal(Cbar_next[emb.rows("flag")], np.ones((1, k)))
print("max |C' - Lloyd| =", np.abs(Cbar_next[emb.rows("x")] - C_next).max())

# %% [markdown]
# The same four blocks, run by the generic layer (`layer_forward` with the description `lloyd_layer()`), give the
# same tokens; section 6 checks the induction, layer after layer, with the package's `kmeans_transformer`.

# %%
Xl, Cl, rec = layer_forward(params, Xbar_t, Cbar_t, lloyd_layer(), record=True)
assert np.array_equal(Xl, Xbar_next) and np.array_equal(Cl, Cbar_next)
for name, A in {"1": A1, "2": A2, "3": A3, "4": A4}.items():
    assert np.array_equal(rec.outputs[name], A), name
print({name: W.shape for name, W in sorted(rec.weights.items())})

# %% [markdown]
# ### Exercise 01.10
#
# A self-check on §4: a point enters layer 2 with $y_i = y_i^{(1)}$, the code of its label after step 1, and its
# nearest center is $j^*$. After the encoder (blocks 1 and 2 and the residual sum), its y rows hold
#
# - (a) $y_i^{(1)} + e_{j^*}$
# - (b) $e_{j^*}$
# - (c) $e_{j^*} - y_i^{(1)}$
# - (d) $y_i^{(1)}$
#
# `answer` = the letter, as a string (`"a"`, `"b"`, `"c"` or `"d"`).

# %%
### BEGIN SOLUTION
# block 1 writes e_j*, block 2 writes -y_i; the residual sum adds both to y_i: y_i - y_i + e_j* = e_j*
assert np.array_equal(Xbar_next[emb.rows("y")], E_new)
answer = "b"
### END SOLUTION

# %%
check("01.10", answer)

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
fig = plotting.plot_layer_attention(layer.weights, n_points=n)   # each block its own colour scale
fig.suptitle("Layer 2 at gamma = inf: attention matrices of blocks 1-4")
W1 = layer.weights["1"]
assert W1.shape == (k, n) and np.array_equal(W1.sum(axis=0), np.ones(n))   # one-hot columns
assert np.array_equal(layer.weights["2"], np.eye(n))                          # identity
moved = np.flatnonzero(trf_sorted.labels[1] != ref.labels[-1][order])       # assigned elsewhere at layer 2
print("points whose layer-2 cluster is not their final one:", moved, "| layer-2 clusters", trf_sorted.labels[1][moved],
      "| final", ref.labels[-1][order][moved], "| cluster sizes at layer 2:", np.bincount(trf_sorted.labels[1]))
assert moved.tolist() == [20] and ref.labels[2:, order[20]].tolist() == [2, 2]   # it joins cluster 2 at step 3

# %% [markdown]
# Block 1: each point (column) puts weight 1 on its nearest center. Block 2 and block 4: identity.
# Block 3: each center spreads weight $1/|M_j|$ ($M_j$ the member set) uniformly over its members (and 0 on its own token):
# here 1/9, 1/8 and 1/7, written under each column. Each matrix has its own colour scale, from 0 to its largest
# weight: on a common 0–1 scale block 3's weights would look black.
#
# The stripe of point 20 (points sorted by the **final** cluster; a column in block 1, a row in block 3) is a point
# that changes cluster: entering layer 2 its nearest center is still center 0, so block 1 sends it to center 0
# and block 3 counts it among center 0's members; from the third iteration on it belongs to cluster 2, where the
# sorting put it.
#
# ## 6. Layer by layer: the transformer equals Lloyd's algorithm
#
# The induction of §4, run: $T$ layers with shared weights are $T$ Lloyd iterations. `kmeans_transformer`
# computes the blocks with the exact shortcuts of their γ = ∞ limits and gives the same labels and the same centers
# bit for bit ([SPEC, "Exactness"](../docs/SPEC.md#exactness)).

# %%
trf = kmeans_transformer(X, C0, n_layers=4)
assert np.array_equal(trf.labels, ref.labels)
assert np.array_equal(trf.centers, ref.centers)                      # bit for bit, every layer
for t in range(trf.n_steps):
    print(f"layer {t + 1}: labels equal: {np.array_equal(trf.labels[t], ref.labels[t])}, "
          f"max |dC| = {np.abs(trf.centers[t + 1] - ref.centers[t + 1]).max():.1e}, "
          f"log J = {trf.log_objective[t + 1]:.4f} (Lloyd {ref.log_objective[t + 1]:.4f})")

# %% [markdown]
# **Watch it move.** The animation replays the same four layers. Left: the points, coloured by the $y_i$
# that block 1 writes; the transformer's centers as filled dots, Lloyd's as hollow circles drawn on top,
# with the path of each center so far. At γ = ∞ every dot sits inside its circle in every frame: the
# two runs are the same run. Middle: block 1's attention of that layer (centers × points, points grouped
# by Lloyd's last cluster), one-hot columns. Right: both log objectives with the current step marked;
# the curves coincide. (`kmt_ref.viz.animation`; the frames are PNG images in the page, played by
# matplotlib's `to_jshtml` JavaScript.)

# %%
from IPython.display import HTML
from kmt_ref.viz.animation import trace_animation_html

trf_rec = kmeans_transformer(X, C0, n_layers=4, record=True)     # record=True keeps block 1's attention
assert np.allclose(trf_rec.centers, ref.centers, rtol=0, atol=1e-12)
html_inf = trace_animation_html(X, trf_rec, ref, trace_label="transformer, γ = ∞")
print(f"animation: {len(html_inf) / 1e3:.0f} kB of HTML, {trf_rec.n_steps + 1} frames")
HTML(html_inf)

# %% [markdown]
# ## 7. An empty cluster, kept thanks to the flag token
#
# The authors' construction has no rule for an empty cluster. Lloyd's algorithm in `kmt_ref` keeps an empty
# cluster's center where it was (policy `"keep"`, [SPEC, "Ties and empty clusters"](../docs/SPEC.md#ties-and-empty-clusters)). Here the third initial center is far
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
# ### Exercise 01.11
#
# A self-check on §7: suppose $K_3$'s flag entry were $\sqrt 3$ instead of 1, so that center $j$'s own token scores
# −3 (and the other center tokens −5), while the points still score 0 (members) and −2 (the others). After one layer,
# the empty cluster's center (center 2 of the example above) would be
#
# - (a) kept at (5, 5)
# - (b) the mean of all points and all center tokens
# - (c) the mean of all points
# - (d) undefined: block 3 would have no maximal key
#
# `answer` = the letter, as a string.

# %%
### BEGIN SOLUTION
# every point ties at -2, above the own token's -3 and the other tokens' -5: the averaging hardmax takes all points
params_w, emb_w = lloyd_weights(2, 3)
K3_w = params_w["K3"].copy()
flag_row = emb_w.rows("flag")
K3_w[flag_row, flag_row] = np.sqrt(3.0)
weak = run_layers(X_e, {**params_w, "K3": K3_w}, lloyd_layer(), emb_w, C0_e, 1)
assert np.allclose(weak.centers[1][:, 2], X_e.mean(axis=1))
answer = "c"
### END SOLUTION

# %%
check("01.11", answer)

# %% [markdown]
# ## 8. Finite γ versus γ = ∞
#
# At finite γ, block 1 is a softmax: point $i$ writes
# $y_{ij} = \exp(-\gamma\|x_i - c_j\|^2) / \sum_l \exp(-\gamma\|x_i - c_l\|^2)$, a *soft* assignment.
# The match with Lloyd then depends on the gap between the nearest and second-nearest center
# relative to $1/\gamma$ ([SPEC, "The authors' numerical validation"](../docs/SPEC.md#the-authors-numerical-validation)). The authors' validation
# (`numerical_validation.ipynb`) runs γ = 10⁴ on 10,000 points (γ = 10⁴ is also reported by the paper, from
# a summary; `python -m kmt_ref demo` reproduces the validation; figure 2 in `figures/` sweeps γ, scale, d, k, n).

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
styles = {"Lloyd": {"lw": 6, "color": "0.8", "marker": "", "zorder": 0,   # wide and grey, under the others
                   "label": "Lloyd (wide, grey):\ngamma = inf lies exactly on it"}}
fig = plotting.plot_log_objective(curves, title="toy example: finite gamma vs Lloyd", styles=styles)
fig.axes[0].legend(fontsize=8, loc="center right")                    # between gamma = 1 (top) and the rest
assert np.array_equal(runs[np.inf].log_objective, ref.log_objective)   # bit for bit: the curves coincide
# exp(-t) is exactly 0 in float64 once e^-t is below half the smallest subnormal 2^-1074, i.e. for t > 1075 ln 2
print(f"exp(-t) underflows to 0 in float64 for t > 1075 ln 2 = {1075 * np.log(2):.4f}: "
      f"exp(-745.13) = {np.exp(-745.13):.1e}, exp(-745.14) = {np.exp(-745.14)}")
assert np.exp(-745.13) > 0 and np.exp(-745.14) == 0

# %% [markdown]
# *At γ = 1 the weights over unit-scale distances are almost uniform, every center is pulled toward
# the global mean and the objective stalls. On this toy example the final objective equals Lloyd's
# from γ = 100 on and every label matches from γ = 10³ on, although at γ = 10³ only a few
# assignments are exactly one-hot in float64. Block 1's softmax gives the nearest center the weight
# $1/Z$ and center $j$ the weight $e^{-\gamma\,\mathrm{gap}_j}/Z$, so a point's column is exactly
# $e_{j^*}$ only when $\gamma\,\mathrm{gap}_j > 1075 \ln 2 = 745.1332$ for every $j \ne j^*$: then every
# $e^{-\gamma\,\mathrm{gap}_j}$ underflows to 0 (the threshold printed above) and $Z = 1$. The
# threshold is about the whole column: a single weight can be 0 a little below it, when $Z \ge 2$
# (two tied nearest centers; exercise 01.8).*

# %% [markdown]
# **Where and when they part, at γ = 10.** The same animation for the γ = 10 run
# (`per_block=True` would give two frames per layer: blocks 1 + 2 assign, then blocks 3 + 4 move the
# centers; one frame per layer keeps the page small). Watch the colours: a point between two
# clusters is a blend, because its $y_i$ is a soft assignment, and every center is pulled a little
# toward the non-members that leak into its mean, so the filled dots leave Lloyd's circles from layer 1
# on. A black ring marks a point whose label (the largest entry of $y_i$) differs from Lloyd's. The
# printout gives the count per layer and the log-objective gap after each layer.

# %%
trf_10 = kmeans_transformer(X, C0, n_layers=4, gamma=10.0, record=True)
for t in range(trf_10.n_steps):
    print(f"layer {t + 1}: labels differing from Lloyd's = {int(np.sum(trf_10.labels[t] != ref.labels[t]))}, "
          f"max |c - c_Lloyd| = {np.abs(trf_10.centers[t + 1] - ref.centers[t + 1]).max():.3f}, "
          f"log J gap = {trf_10.log_objective[t + 1] - ref.log_objective[t + 1]:+.4f}")
html_soft = trace_animation_html(X, trf_10, ref, trace_label="transformer, γ = 10")
print(f"animation: {len(html_soft) / 1e3:.0f} kB of HTML, {trf_10.n_steps + 1} frames")
assert np.any(trf_10.labels[1] != ref.labels[1]) and trf_10.log_objective[-1] > ref.log_objective[-1]
HTML(html_soft)

# %% [markdown]
# **Turn the knob yourself.** One function, `kmt_ref.viz.sliders.plot_block1_gamma`, draws what one value of
# block 1's γ does: top, block 1's attention in layer 1 (the soft assignment matrix, points grouped by
# Lloyd's first clusters); middle, each point's *leak*, the weight $\sum_{j\ne\ell_i} y_{ij}$ it gives to
# the centers other than Lloyd's choice $\ell_i$ (log scale, anything below 10⁻²⁰ drawn at 10⁻²⁰);
# bottom, the log-objective gap to Lloyd after each layer. First at four values side by side, then
# behind a slider (it moves in a running notebook; a stored page shows the figures only).

# %%
from kmt_ref.viz.sliders import plot_block1_gamma, small_multiples, parameter_sliders

fig = small_multiples(lambda g, axes: plot_block1_gamma(X, C0, g, n_layers=4, axes=axes),
                      [1.0, 10.0, 100.0, np.inf], rows=3, panel_size=(3.2, 2.4),
                      title="block 1 at gamma = 1, 10, 100, inf (toy example, 4 layers)")
plt.show()
parameter_sliders(lambda gamma: plot_block1_gamma(X, C0, gamma, n_layers=4),
                  {"gamma": [0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1e3, 1e4, np.inf]})

# %% [markdown]
# ## Summary
#
# - Points and centers are the **columns** of two token matrices, $\bar X = [X; Y; 0]$ with
#   $Y^{(0)} = 0$ and $\bar C = [C; I_k; 1]$; the last row is the project's type flag, so
#   $d_{emb} = d + k + 1$. Labels and centers are read back from the $y$ rows and the data rows.
# - Block 1 (points attend to centers) writes the one-hot code $e_{j^*}$ of the nearest center; block 2
#   (points attend to points: the identity at γ = ∞) subtracts the old $y$. Together: Lloyd's
#   assignment step.
# - Block 3 (centers attend to the updated points and to the centers) takes the mean of its members;
#   block 4 (the identity) subtracts the old $c$. Together: the update step. Each sublayer adds the
#   reset first, $(c - c) + \mu$ with $\mu$ the members' mean, which is exactly $\mu$ in floating point.
# - Block 1 uses the lowest-index hardmax, Lloyd's tie rule; block 3 the averaging hardmax, the
#   γ → ∞ limit of softmax, because the members of a cluster tie by design.
# - $T$ layers with shared weights are $T$ Lloyd iterations (Theorem 2.1, proved in §4): identical labels and
#   centers bit for bit, layer by layer.
# - The flag lowers a center's score against its own token to −1: below its members (0), above every
#   other point (−2). An empty cluster therefore keeps its center (Lloyd's "keep"); without the center
#   tokens among the keys it jumps to the mean of all points, and the authors' linear update raises.
# - At finite γ block 1 writes soft assignments. A point's column is exactly one-hot in float64 only
#   when $\gamma\,\mathrm{gap}_j > 1075 \ln 2 = 745.1332$ for every other center $j$, yet on the toy example the labels
#   match Lloyd's long before every column is one-hot.

# %% [markdown]
# **What comes next.** Notebooks 02, 03 and 05 change this circuit in a few places each: another score, another
# normalizer, another block 3, an extra row of the tokens. The figure compares each variant's weights, token
# layout and layer description with Lloyd's and marks in orange what differs (`plot_variant_circuits`; the trimmed,
# robust and k-medoids weights are drawn at example values of their parameters, named in the function's docstring).

# %%
from kmt_ref.viz.circuit import plot_variant_circuits

fig = plot_variant_circuits()
plt.show()

# %% [markdown]
# ## Exercises
#
# How to work them (what `answer` holds, what `check` prints, parts graded apart, the precision a number
# needs): [Working the exercises](../docs/EXERCISES.md).
# Where the answer is a function, `check` calls it on inputs of its own, most of which the notebook never
# shows (other sizes and dimensions, a point tied between two centers, a duplicate point, an empty cluster),
# and while it runs the library functions that would compute the answer for you raise an error. In this
# notebook those are the **layer functions**: `kmeans_transformer`, `run_layers`, `layer_forward`,
# `attention`, `soft_kmeans` and the kernels they call (`fast_layer_forward`, `attention_scores`,
# `_euclidean_softmax`, `softmax_attention`), in every exercise below but 01.7; 01.8 adds `softmax`. Tools you will need beyond the ones imported above:
# `with_block(layer, name, **changes)` (a copy of a layer description with one block changed) and
# `lloyd_step(X, C)` (one Lloyd iteration: `(C_new, labels)`).

# %%
from kmt_ref.exercises import check, report
from kmt_ref.core.tokens import with_block

# %% [markdown]
# ### Exercise 01.1
#
# Write a function `tokens_after_one_layer(X, C)` that returns the pair `(Xbar1, Cbar1)`: the point
# tokens, shape `(d_emb, n)`, and the center tokens, shape `(d_emb, k)`, that one layer of Theorem 2.1
# (with the project's flag row) outputs when it starts from `emb.embed_points(X)` and
# `emb.embed_centers(C)`, for any `d`, `n` and `k`. Build them with NumPy and `lloyd_step`: your function
# may not call the layer functions. Return float64 arrays: the $y$ and flag rows must be exact, the centers
# right to 1e-12.
# `answer` is the function.

# %%
### BEGIN SOLUTION
def tokens_after_one_layer(X, C):
    d, n = X.shape
    k = C.shape[1]
    C1, labels = lloyd_step(X, C)                                      # the step the layer performs
    Xbar1 = np.vstack([X, np.eye(k)[:, labels], np.zeros((1, n))])    # [X; Y^(1); 0], (d + k + 1, n)
    Cbar1 = np.vstack([C1, np.eye(k), np.ones((1, k))])                # [C^(1); I_k; 1], (d + k + 1, k)
    return Xbar1, Cbar1


Xb1, Cb1 = tokens_after_one_layer(X, C0)
Xl1, Cl1 = layer_forward(params, emb.embed_points(X), emb.embed_centers(C0), lloyd_layer())
assert np.array_equal(Xb1, Xl1) and np.allclose(Cb1, Cl1, rtol=0, atol=1e-12)
answer = tokens_after_one_layer
### END SOLUTION

# %%
check("01.1", answer)

# %% [markdown]
# ### Exercise 01.2
#
# Take `X = [[0., 1., 2.]]` and `C0 = [[0., 2.]]`: the middle point is exactly halfway between the two
# centers. Replace block 1's normalizer `"hardmax"` by `"hardmax_average"` (the limit of softmax) with
# `with_block(lloyd_layer(), "1", normalizer="hardmax_average")` and run **one** layer with
# `run_layers` (weights from `lloyd_weights(1, 2)`). *First predict, then run:* what does the middle
# point write into its $y$, what score (γ left out) does block 3 give it against each center, and where do the
# centers go? `answer` is a triple `(y, scores, centers)`: the middle point's $y$ after block 1
# (shape `(2,)`), block 3's scores of the middle point's token against the two centers (shape
# `(2,)`), and the centers after one layer (shape `(1, 2)`), each to 4 significant digits. Then, in a few
# sentences: why does `kmt_ref.lloyd` disagree, and why must block 3 nevertheless keep the averaging
# hardmax?

# %%
### BEGIN SOLUTION
X_tie, C0_tie = np.array([[0.0, 1.0, 2.0]]), np.array([[0.0, 2.0]])
params_tie, emb_tie = lloyd_weights(1, 2)
layer_avg = with_block(lloyd_layer(), "1", normalizer="hardmax_average")
tr_tie = run_layers(X_tie, params_tie, layer_avg, emb_tie, C0_tie, 1, record=True)
print("Y after one layer:\n", tr_tie.assignments)                         # the middle column is (1/2, 1/2)
print("block 3 scores (keys: 3 points, 2 centers; queries: 2 centers):\n", tr_tie.layers[0].scores["3"] + 0.0)
print("centers:", tr_tie.centers[1], "| Lloyd:", lloyd(X_tie, C0_tie, 1).centers[1])
answer = (tr_tie.assignments[:, 1], tr_tie.layers[0].scores["3"][1] + 0.0, tr_tie.centers[1])  # (2,), (2,), (1, 2)
### END SOLUTION

# %%
check("01.2", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* With the averaging hardmax the middle point puts weight 1/2 on each center and
# writes $y = (1/2, 1/2)$. Block 3 scores it $-\|e_j - y\|^2 = -1/2$ against both centers, below
# the members' 0, so at γ = ∞ it is in **neither** mean: the centers stay at 0 and 2 (the label read
# by `argmax` is still 0, so the labels agree with Lloyd's while the centers do not). Lloyd's
# `argmin` gives the point to the lowest index, center 0, which moves to 0.5. The lowest-index
# hardmax in block 1 reproduces that rule exactly; it is a convention, not the limit of softmax.
# Block 3 cannot use it: a cluster's members all score exactly 0 by construction, and only the
# averaging hardmax spreads the weight uniformly over them, which is the mean.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 01.3
#
# (a) Prove that at γ = ∞ block 2's attention is the identity when the $n$ points are distinct. What
# does block 2 write into point $i$ when some points are exact duplicates? Prove it. Do the same for
# block 4 (is a duplicate possible there?).
#
# (b) Each sublayer adds its reset block first, so a center becomes $(c + (-c)) + \mu$ where $\mu$ is
# block 3's mean. Prove that this equals $\mu$ exactly in IEEE float64, and give two floats $c, \mu$ for
# which $(c + \mu) - c \ne \mu$ (check them in the cell below). Why does this exactness matter for the
# *next* layer? (Hint: what does block 3 at γ = ∞ do with a $y$ that is one-hot only up to rounding?)
#
# (c) Points 2 and 3 are exact duplicates, $x_2 = x_3$ (γ = ∞, $Y^{(0)} = 0$). Which statement is true?
#
# - (A) after a layer the two can carry different codes, $y_2 \ne y_3$, so block 2 can subtract the wrong code
#   from point 3
# - (B) the two carry the same code in every layer, so block 2 writes $-y_3$ into point 3 although point 3's
#   weight sits on key 2
# - (C) block 2 splits point 3's weight equally between keys 2 and 3
# - (D) block 2's weights are then not the identity, so its output differs from $-Y$
#
# `answer` = `((c, μ), letter)`: your two floats of (b) and the letter (A to D) of (c), as a string. `check`
# grades the two apart; the proofs of (a) and (b) are graded by reading.

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* (a) Block 2 has $Q_2 = K_2 = P_X$, keys = queries = the point tokens, so
# $S_{li} = -\|x_l - x_i\|^2 \le 0$, with equality exactly when $x_l = x_i$. If the points are
# distinct, the maximum of column $i$ is attained at $l = i$ only; both hardmaxes then put weight 1 on
# key $i$: $W = I_n$, and the output is $V_2 \bar X = -P_Y \bar X$, i.e. $-y_i$ in the $y$ rows and 0
# elsewhere. With duplicates, the maxima of column $i$ are the copies of $x_i$; the hardmax selects
# one of them, $l$. All copies carry the same $y$: $y^{(0)} = 0$ for every point, and after each layer
# $y_i = e_{j^*}$ with $j^* = \arg\min_j \|x_i - c_j\|^2$, a function of $x_i$ (and $C$) alone. So
# $-y_l = -y_i$. Block 4 has $Q_4 = K_4 = P_Y$ on the center tokens: $S_{lj} = -\|e_l - e_j\|^2$ is 0
# for $l = j$ and $-2$ otherwise. The codes $e_j$ are always distinct (block 4 never changes the $y$
# rows of the centers), so no duplicate is possible, $W = I_k$, and it writes $-c_j$.
# (`kmt_ref.core.exact.self_attention_limit` computes exactly this, by grouping equal keys, without
# forming the scores, whose expanded form is not exactly 0 on the diagonal.)
#
# (b) The reset writes exactly $-c$ (an exact copy with its sign flipped). In IEEE arithmetic
# $c + (-c) = +0$ exactly for every finite $c$, and $0 + \mu = \mu$ exactly. So $(c - c) + \mu = \mu$,
# bit for bit, and likewise $(y - y) + e = e$. In the other order $c + \mu$ is rounded first, and the
# rounding error does not cancel: $c = 0.1$, $\mu = 0.2$ gives $(c + \mu) - c = 0.20000000000000004$
# (printed by the cell below). Exactness
# matters because block 3 at γ = ∞ selects the keys whose score $-\|e_j - y_i\|^2$ is **exactly**
# the maximum 0. A $y_i$ that is one-hot only up to rounding scores $-10^{-32}$ or so, no longer ties
# with the other members, and drops out of the mean (exercise 01.6 shows what that does).
#
# (c) Statement B, by the argument of (a): equal points carry equal codes, so the copy the hardmax selects
# (key 2, the lowest index) writes $-y_2 = -y_3$. Block 2's weights are not the identity then (D), but its
# output is still $-Y$; it uses the lowest-index hardmax, which puts all of a query's weight on one key (C).
# ### END SOLUTION

# %%
### BEGIN SOLUTION
c, mu = 0.1, 0.2
assert (c + mu) - c != mu and (c - c) + mu == mu
print(f"(c + mu) - c = {(c + mu) - c!r}, (c - c) + mu = {(c - c) + mu!r}")
answer = ((c, mu), "B")
### END SOLUTION

# %%
check("01.3", answer)

# %% [markdown]
# ### Exercise 01.4
#
# Remove the flag from block 3's keys: `params_nf = dict(params_e); params_nf["K3"] = projector(emb_e, "y")`
# (the weights of section 7's example). (a) What is block 3's score (γ left out) of center $j$
# against its own token without the flag, and against its members? (b) Write a function `flagless_centers(X, C)`
# that returns the centers after **one** flagless layer, shape `(d, k)`, for any `X` and `C`, computed with
# `lloyd_step` and NumPy only (to 1e-12): it may not call the layer functions. Compare it, outside the
# function, with
# `run_layers(X, params_nf, lloyd_layer(), emb_e, C, 1)`. `answer` is the function. (c) Run both
# examples of this notebook (section 1's toy example, section 7's) for 4 flagless layers: does
# either still match Lloyd's algorithm?

# %%
### BEGIN SOLUTION
def flagless_centers(X, C):
    C1, labels = lloyd_step(X, C)                       # C1: member means (empty: kept)
    counts = np.bincount(labels, minlength=C.shape[1])  # (k,)
    return (C1 * counts + C) / (counts + 1)             # the own token ties with the members


for name, (XX, CC) in {"toy": (X, C0), "empty cluster": (X_e, C0_e)}.items():
    p_nf, e_nf = lloyd_weights(*CC.shape)
    p_nf = dict(p_nf)
    p_nf["K3"] = projector(e_nf, "y")
    tr_nf = run_layers(XX, p_nf, lloyd_layer(), e_nf, CC, 4, record=True)
    ref_nf = lloyd(XX, CC, 4)
    assert np.allclose(tr_nf.centers[1], flagless_centers(XX, CC), rtol=0, atol=1e-12)
    print(f"{name}: labels equal per layer {[bool(np.array_equal(a, b)) for a, b in zip(tr_nf.labels, ref_nf.labels)]}, "
          f"max |dC| = {np.abs(tr_nf.centers - ref_nf.centers).max():.3f}")
print("block 3 scores of center 0 (keys: 6 points, 3 centers):", tr_nf.layers[0].scores["3"][:, 0] + 0.0)
answer = flagless_centers
### END SOLUTION

# %%
check("01.4", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* (a) Without the flag a center's key is $[0; e_j; 0]$: its score against its own token
# is $-\|e_j - e_j\|^2 = 0$, the same as against a member ($y_i = e_j$), and $-2$ against the other
# tokens. (b) The averaging hardmax therefore averages the members **and** the old center:
# $c_j' = (\sum_{i \in M_j} x_i + c_j)/(|M_j| + 1)$. (c) Neither example matches. On the toy example
# the centers are off by up to 0.075 and a label differs at layer 2; on section 7's example the labels
# agree but the two populated centers are off by up to 0.025 (the own token pulls each center a quarter
# of the way back). The empty cluster itself is still kept (its own token, at 0,
# beats the points at −2). The flag moves the own token to −1: below every member, so it never joins
# a non-empty mean, and above every non-member, so it wins when there are no members.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 01.5
#
# The authors' block 3 (`center_update="linear"`) is normalized linear attention: scores
# $e_j \cdot y_i$, divided by their sum over the points. (a) Write `soft_means(X, C, gamma)`: the centers
# after **one** layer with block 1 at a finite `gamma` and the linear center update, shape `(d, k)`,
# computed with `assign` and NumPy (it may not call the layer functions), to 1e-10. `answer` is the function. (b) Over 4 layers on the toy example,
# measure max |ΔC| against Lloyd's centers for `kmeans_transformer(X, C0, 4, gamma=10., center_update="linear")`
# and for `gamma=np.inf` with `gamma_update` = 0.1, 1, 10. "The linear update gives Lloyd's means at
# any γ": for which of the two temperatures is that true, and why?

# %%
### BEGIN SOLUTION
def soft_means(X, C, gamma):
    _, D = assign(X, C)                          # (k, n) squared distances
    Y = np.exp(-gamma * (D - D.min(axis=0)))     # block 1: softmax over the centers, per point
    Y /= Y.sum(axis=0)                           # (k, n), columns sum to 1
    return (X @ Y.T) / Y.sum(axis=1)             # (d, k): the y-weighted means


assert np.allclose(soft_means(X, C0, 10.0),
                   kmeans_transformer(X, C0, 1, gamma=10.0, center_update="linear").centers[1], atol=1e-12)
dC_gamma = np.abs(kmeans_transformer(X, C0, 4, gamma=10.0, center_update="linear").centers - ref.centers).max()
dC_update = {gu: np.abs(kmeans_transformer(X, C0, 4, gamma_update=gu, center_update="linear").centers
                        - ref.centers).max() for gu in (0.1, 1.0, 10.0)}
print(f"gamma = 10: max |dC| = {dC_gamma:.2f};  gamma = inf, gamma_update = 0.1, 1, 10: max |dC| =",
      ", ".join(f"{v:.1e}" for v in dC_update.values()))
answer = soft_means
### END SOLUTION

# %%
check("01.5", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* The linear block 3 computes $c_j' = \sum_i y_{ij} x_i / \sum_i y_{ij}$. With block 1 at
# γ = ∞ the $y_i$ are one-hot and this is exactly Lloyd's mean; block 3 has no temperature, so
# `gamma_update` changes nothing (max |ΔC| = 0 at 0.1, 1 and 10). With block 1 at finite γ the $y_i$
# are soft and every point pulls on every center: max |ΔC| = 0.32 at γ = 10. So the claim holds for
# `gamma_update` and is false for block 1's `gamma`.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 01.6
#
# Write `reset_output(X, Y, gamma_reset)`: what block 2 writes into the $y$ rows of the points when it
# runs at a finite `gamma_reset` (softmax over the keys of $-\gamma\|x_l - x_i\|^2$), shape `(k, n)`,
# for any `X` and any `Y` of shape `(k, n)`, computed with `assign` and NumPy (it may not call the layer
# functions), to 1e-12. `answer` is the function. Then run
# `kmeans_transformer(X, C0, 4, gamma=np.inf, gamma_reset=50., record=True)`: how many columns of $Y$
# are exactly one-hot after each layer, and in which layer do the labels first differ from Lloyd's?
# Why is layer 1 still exact, and why does the authors' validation run blocks 2 and 4 as exact
# identity attention?

# %%
### BEGIN SOLUTION
def reset_output(X, Y, gamma_reset):
    _, D = assign(X, X)                                   # (n, n): D[l, i] = ||x_l - x_i||^2 (keys l)
    W = np.exp(-gamma_reset * (D - D.min(axis=0)))        # softmax over the keys, per query i
    W /= W.sum(axis=0)
    return -Y @ W                                         # V2 = -P_Y: minus a blend of the keys' y


tr_r = kmeans_transformer(X, C0, 4, gamma=np.inf, gamma_reset=50.0, record=True)
print("exactly one-hot columns per layer:", tr_r.one_hot, "of", n)
print("layers whose labels differ:", [t + 1 for t in range(4) if not np.array_equal(tr_r.labels[t], ref.labels[t])])
print("max |dC| per layer:", np.round(np.abs(tr_r.centers - ref.centers).max(axis=(1, 2)), 3))
print("block 3 keys with weight > 0 per center, layer 2:", (tr_r.layers[1].weights["3"] > 0).sum(axis=0),
      "| cluster sizes:", np.bincount(tr_r.labels[1], minlength=k))
_, D_pts = assign(X, X)                                   # (n, n) squared distances between the points
print(f"smallest squared distance between two points: {D_pts[~np.eye(n, dtype=bool)].min():.1e}")
trs = kmeans_transformer(Xs, C0, 2, gamma_reset=50.0, record=True)       # points sorted by cluster
fig = plotting.plot_attention(trs.layers[1].weights["2"], title="block 2 at gamma_reset = 50 (layer 2)",
                              query_label="point (query)", key_label="point (key)")
answer = reset_output
### END SOLUTION

# %%
check("01.6", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* At γ_reset = 50 the columns of $Y$ are all one-hot after layer 1 and none after
# layers 2 to 4; the labels first differ at layer 3. Layer 1 is exact because $Y^{(0)} = 0$: block 2
# subtracts a blend of zeros, whatever its weights (and block 4's off-diagonal weights, $e^{-100}$,
# are far below the rounding of the centers). From layer 2 on, block 2 subtracts
# $\sum_l w_{li} y_l$ instead of $y_i$. The picture shows where that hurts: each point attends to the
# points of its own cluster, but layer 1 had split one cluster between two centers (section 1), so
# there the neighbours carried *different* codes, and $y_i$ keeps part of them. Every column also
# keeps small but nonzero weights $e^{-50\,\|x_l - x_i\|^2}$ on the other clusters, so no column is
# exactly one-hot. Block 3 at γ = ∞ then takes only the keys whose score is exactly the maximum: in
# layer 2 center 0 and center 2 each average **one** point (of 9 and 7 members), and the centers
# move by 0.14. The authors' validation runs the resets as exact identity attention
# because the construction needs $y_i - y_i = 0$ exactly; a finite-γ reset mixes neighbours unless
# $\gamma\,\min_{l \ne i}\|x_l - x_i\|^2 \gg 1$, and on clustered data the nearest neighbours are
# very close (the smallest squared distance printed above).
# ### END SOLUTION

# %% [markdown]
# ### Exercise 01.7
#
# Write `gamma_star(X, C0, n_layers, lo, hi)`: the **largest** γ at which
# `kmeans_transformer(X, C0, n_layers, gamma=γ).labels` differs from Lloyd's labels
# `lloyd(X, C0, n_layers).labels`, found by bisection on $\log\gamma$ in the bracket `[lo, hi]` (the labels
# differ at `lo` and match at `hi`, and on the examples `check` uses they match at every γ above the one you
# find) to a relative 5e-3. It may call `kmeans_transformer` and `lloyd`. `answer` is the function.
# Run it on the toy example with 4 layers (section 8 gives a bracket). Then compare its γ* with
# $1075 \ln 2 / \mathrm{gap}$, where gap is the smallest difference, over the points and Lloyd's 4 steps,
# between a point's second-nearest and nearest squared distance. Why are the two so different? Which
# point flips, and in which layer?

# %%
### BEGIN SOLUTION
def gamma_star(X, C0, n_layers, lo, hi):
    ref_labels = lloyd(X, C0, n_layers).labels

    def labels_differ(g):
        return not np.array_equal(kmeans_transformer(X, C0, n_layers, gamma=g).labels, ref_labels)

    while hi / lo > 1 + 1e-4:
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if labels_differ(mid) else (lo, mid)
    return lo


star = gamma_star(X, C0, 4, 100.0, 1e3)   # section 8: labels differ at 100, match at 1000
gaps = np.array([np.min(np.diff(np.sort(assign(X, C)[1], axis=0)[:2], axis=0)) for C in ref.centers[:4]])
tr_lo = kmeans_transformer(X, C0, 4, gamma=star)
flips = [(t + 1, np.flatnonzero(tr_lo.labels[t] != ref.labels[t])) for t in range(4)]
print(f"gamma* = {star:.1f};  smallest gap per step: {', '.join(f'{g:.2g}' for g in gaps)};  "
      f"1075 ln 2 / smallest gap = {1075 * np.log(2) / gaps.min():.2g}")
print("at gamma*, (layer, points that flip):", [f for f in flips if f[1].size])
print(f"max |dC| after layer 1 at gamma*: {np.abs(tr_lo.centers[1] - ref.centers[1]).max():.1e}")
answer = gamma_star
### END SOLUTION

# %%
check("01.7", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* γ* ≈ 600, while $1075 \ln 2/\mathrm{gap} \approx 6 \times 10^6$ (the smallest gap,
# $1.3\times 10^{-4}$, is point 20's at Lloyd's second step). The bound $\gamma\cdot\mathrm{gap} > 1075 \ln 2$
# for every point and step makes every column of block 1 exactly one-hot, hence the whole computation
# exactly Lloyd's: it is sufficient, far from necessary. The labels only need every argmin preserved. Just below γ*, layer 1's soft
# weights move the centers by about $4\times 10^{-4}$, enough to reverse point 20's
# $1.3\times 10^{-4}$ margin in layer 2; above γ* the drift is too small to flip it, and no other
# point is close to a tie.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 01.8
#
# Write `n_one_hot(X, C, gamma)`: the number of points whose column of $Y$ is **exactly** one-hot in
# float64 after the first layer at inverse temperature `gamma`, for any `X` and `C`, predicted with `assign`
# and NumPy only, from the threshold of section 8: your function may not call the layer functions or
# `softmax`. `answer` is the function. Check your prediction,
# outside the function, for γ = 10⁴ on `kmt_ref.data.validation_data()` against
# `kmeans_transformer(X, C0, 1, gamma=1e4).one_hot[0]`. Why is the threshold what it is?

# %%
### BEGIN SOLUTION
from kmt_ref.data import validation_data


def n_one_hot(X, C, gamma):
    _, D = assign(X, C)                             # (k, n)
    gap = D - D.min(axis=0)                         # (k, n): 0 at the nearest center
    # exp(-t) is exactly 0 in float64 for t > 1075 ln 2 = 745.1332 (below half the smallest subnormal)
    zero = gamma * gap > 1075 * np.log(2)
    return int(np.sum(zero.sum(axis=0) == C.shape[1] - 1))   # every other weight is 0


X_v, C0_v = validation_data()
count = n_one_hot(X_v, C0_v, 1e4)
assert count == kmeans_transformer(X_v, C0_v, 1, gamma=1e4).one_hot[0]
print(f"gamma = 1e4: {count} of {X_v.shape[1]} columns exactly one-hot after layer 1")
_, D_v = assign(X_v, C0_v)
count_745 = int(np.sum(1e4 * (np.sort(D_v, axis=0)[1] - D_v.min(axis=0)) > 745.0))   # the rounded threshold
print(f"with 745 in place of 1075 ln 2: {count_745}")
assert count_745 == count + 1
# the threshold is about a whole column: with two tied nearest centers (Z = 2) a third weight at
# gamma * gap = 744.6 < 1075 ln 2 is exactly 0, since exp(-744.6) is a subnormal that rounds to 0 when halved
tied = kmt_ref.softmax(np.array([[0.0], [0.0], [-744.6]]), 1.0)[:, 0]
print("softmax of the scores (0, 0, -744.6):", tied, "| exp(-744.6) =", np.exp(-744.6))
assert tied[2] == 0.0 and np.exp(-744.6) > 0
answer = n_one_hot
### END SOLUTION

# %%
check("01.8", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* 3,900 of the 10,000 points. Block 1's softmax subtracts the maximum score, so the
# nearest center gets $e^0 = 1$ and center $j$ gets $e^{-\gamma\,\mathrm{gap}_j}$. The smallest
# positive float64 is $2^{-1074} \approx 4.9\times 10^{-324} = e^{-744.44}$; `exp` rounds to 0
# below half of it, $2^{-1075} = e^{-1075 \ln 2} = e^{-745.1332}$. So column $i$ is exactly $e_{j^*}$ iff
# $\gamma\,\mathrm{gap}_j > 1075 \ln 2$ for every $j \ne j^*$ (the nearest weight is then $1/(1 + 0) = 1$).
# The digits matter: with 745 in place of $1075 \ln 2$ the count at γ = 10⁴ is one too many (printed above).
# A column with a weight of $10^{-300}$ is not one-hot, though that weight changes nothing visible. The
# threshold counts columns, not single weights: when two centers tie for the nearest, $Z = 2$, and a third
# weight $e^{-744.6}/2$ is exactly 0 although $e^{-744.6}$ is not (the second line printed above); such a
# column has two nonzero weights and is not one-hot either.
# ### END SOLUTION

# %%
report("01")
