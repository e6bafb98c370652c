# %% [markdown]
# # 2. Dot-product attention (Theorem 2.2), soft k-means and spherical k-means
#
# Notebook 1 built Lloyd's algorithm from *distance* attention (Theorem 2.1 of Park, Clarkson,
# Horesh, Ram, Ito, "Transformer Circuits Can Realize Clustering Algorithms", arXiv 2506.19125).
# Here we change that construction in small, named ways:
#
# 1. **Theorem 2.2** — plain dot-product attention is enough if every token carries its squared
#    norm and a feed-forward block with the rectified quadratic unit ReQU(z) = max(z, 0)² keeps the
#    centers' norms up to date (SPEC §4).
# 2. **Soft k-means** — a finite inverse temperature β in the assignment block and the authors'
#    normalized linear attention in the update block (their `cnst_model.py`, `ldp=True`) (SPEC §5).
# 3. **Spherical k-means** — unit-norm data, cosine scores in the assignment block, RMSNorm on the
#    update (SPEC §5; its placement is the project's choice, **(open)**).
#
# Every transformer below is run by the one generic layer `kmt_ref.core.attention.layer_forward`; each is
# checked against a classical reference written independently (`kmt_ref.lloyd`, `kmt_ref.soft_kmeans`,
# `kmt_ref.spherical_kmeans`). Tokens are **columns**: X is (d, n), C is (d, k).
#
# *Annotator's remark:* Theorem 2.2 is stated here as the project brief gives it (dot-product attention
# runs k-means exactly when the tokens carry their squared norms and a ReQU feed-forward block updates
# them). The explicit construction (token layout, weights, the empty-cluster token, block 2) is the
# project's own (SPEC §4, "(open)"); the authors' code has no Theorem 2.2 model.

# %%
import numpy as np
import matplotlib.pyplot as plt

import kmt_ref
from kmt_ref import (lloyd, soft_kmeans, spherical_kmeans, dot_product_transformer,
                     soft_kmeans_transformer, spherical_kmeans_transformer, kmeans_transformer, softmax)
from kmt_ref.core.attention import attention_scores, layer_forward, FeedForward, requ
from kmt_ref.core.tokens import projector
from kmt_ref.data import toy_data
from kmt_ref.viz.plotting import plot_weights, plot_log_objective, plot_attention, CLUSTER_COLORS
from kmt_ref.algorithms.dot_product import dot_product_weights
from kmt_ref.viz.variant_figures import plot_soft_beta_sweep

%matplotlib inline
rng = np.random.default_rng(2)  # the only source of randomness below
X, C0 = toy_data()  # three clusters of 8 points in [0, 1]^2, first 3 points as initial centers
d, n = X.shape
k = C0.shape[1]
print(f"X: {X.shape}, C0: {C0.shape}")

# %% [markdown]
# ## 1. The squared-norm trick
#
# Theorem 2.1 scores center j for point i by the negative squared distance. Expanding it
# (the idea of Theorem 2.2 as the project brief states it; SPEC §4):
#
# $$-\|x_i - c_j\|^2 = \underbrace{-\|x_i\|^2}_{\text{same for every } j} + 2\,x_i\cdot c_j - \|c_j\|^2 .$$
#
# If the point token carries a constant 1 and the center token its squared norm, the dot product of
# the query $q_i = [2x_i; -1]$ with the key $k_j = [c_j; \|c_j\|^2]$ is $2x_i\cdot c_j - \|c_j\|^2
# = \|x_i\|^2 - \|x_i - c_j\|^2$. The leftover $\|x_i\|^2$ is a constant per query, and softmax is
# shift invariant, $\mathrm{softmax}(s + a\mathbf 1) = \mathrm{softmax}(s)$: the attention weights are
# *exactly* those of distance attention. Point tokens are $[x_i; \|x_i\|^2; 1; y_i; 0]$, center tokens
# $[c_j; \|c_j\|^2; 1; e_j; 1]$ (the last row is a type flag, used for empty clusters).

# %%
params, emb = dot_product_weights(d, k)
print("layout:", emb.layout, " d_emb =", emb.d_emb)
Xbar, Cbar = emb.embed_points(X), emb.embed_centers(C0)  # (d_emb, n), (d_emb, k)
S_dot = attention_scores(Xbar, Cbar, params["Q1"], params["K1"], score="dot")  # (k, n): 2 x.c - ||c||^2
P_X = projector(emb, "x")
S_euc = attention_scores(Xbar, Cbar, P_X, P_X, score="euclidean")  # (k, n): -||x - c||^2
constant = S_dot - S_euc  # should be ||x_i||^2 in every row
assert S_dot.shape == (k, n)
np.testing.assert_allclose(constant, np.tile(np.sum(X * X, axis=0), (k, 1)), rtol=1e-13)
for gamma in (1.0, 10.0, 1000.0):
    np.testing.assert_allclose(softmax(S_dot, gamma), softmax(S_euc, gamma), rtol=1e-10, atol=1e-15)
print("dot score - Euclidean score, point 0, every center:", constant[:, 0], " = ||x_0||^2 =", X[:, 0] @ X[:, 0])
print("softmax of both: identical for gamma = 1, 10, 1000")

# %% [markdown]
# The twelve hand-set matrices of Theorem 2.2. Compare with notebook 1: blocks 1 and 2 now read the
# `norm` and `one` rows (Q1 = 2 P_X with a −1 from `one` into `norm`; K1 = P_X + P_norm), block 3's key
# subtracts ½ · flag from the one-hot rows (the empty-cluster token, below), and block 4's value also
# clears the `norm` row.

# %%
fig = plot_weights(params, emb, ncols=6)
fig.set_size_inches(15, 5.5)

# %% [markdown]
# ## 2. A ReQU feed-forward block computes a squared norm
#
# After the update the center has moved, so its stored $\|c_j\|^2$ is stale: block 4 clears it and a
# feed-forward block $\mathrm{FFN}(z) = W_2\,\mathrm{ReQU}(W_1 z)$ writes the new one (SPEC §4). With
# $W_1 = [I_d; -I_d]$ on the data rows and $W_2$ summing the $2d$ hidden units into the norm row,
#
# $$\sum_{m=1}^d \mathrm{ReQU}(c_m) + \mathrm{ReQU}(-c_m) = \sum_m c_m^2 = \|c\|^2 ,$$
#
# exactly, because one of $\max(c_m,0)$, $\max(-c_m,0)$ is 0 and the other is $|c_m|$.

# %%
z = np.linspace(-2, 2, 201)
fig, ax = plt.subplots(figsize=(4, 3))
ax.plot(z, requ(z), label="ReQU(z)")
ax.plot(z, requ(-z), label="ReQU(-z)")
ax.plot(z, requ(z) + requ(-z), "k--", label="sum = z²")
ax.legend(); ax.set_xlabel("z"); ax.set_title("two ReQU units make a square")
np.testing.assert_array_equal(requ(z) + requ(-z), z * z)

C_new = np.array([[0.5, -1.25, 3.0], [2.0, 0.75, -0.5]])  # (d, k): dyadic, so "exactly" is testable
Cbar_stale = emb.embed_centers(C_new)
Cbar_stale[emb.rows("norm")] = 0.0  # what block 4 leaves
_, Cbar_fresh = layer_forward(params, Xbar, Cbar_stale, (FeedForward("C", activation="requ"),))
print("W1:", params["W1"].shape, " W2:", params["W2"].shape)
print("FFN wrote:", Cbar_fresh[emb.rows("norm")][0], " ||c||^2 =", np.sum(C_new**2, axis=0))
assert np.array_equal(Cbar_fresh[emb.rows("norm")][0], np.sum(C_new**2, axis=0))

# %% [markdown]
# ## 3. Theorem 2.2 is Lloyd's algorithm
#
# One layer = one Lloyd iteration (Theorem 2.2, by the project's construction): block 1 assigns by the norm-trick scores, block 2
# removes the old assignment, block 3 averages the members (scores $e_j\cdot y_i$ = 1 for members),
# block 4 removes the old center and its norm, the FFN writes the new norm. An **empty** cluster keeps
# its center through a default token: block 3's key for a center token is $e_l - \tfrac12\mathbf 1$, so
# its own center scores ½ — below any member (1), above any non-member (0 or −½). We add a far-away
# fourth center to see it.

# %%
C0_empty = np.column_stack([C0, [3.0, 3.0]])  # (2, 4): center 3 attracts no point
ref = lloyd(X, C0_empty, 5)
trf = dot_product_transformer(X, C0_empty, 5, record=True)
np.testing.assert_array_equal(trf.labels, ref.labels)
np.testing.assert_allclose(trf.centers, ref.centers, rtol=0, atol=1e-12)
assert np.array_equal(trf.centers[-1][:, 3], [3.0, 3.0])  # the empty cluster kept its center
print("labels equal at every layer; largest center difference:", np.abs(trf.centers - ref.centers).max())
S3 = trf.layers[0].scores["3"]  # (n + k, k): block 3's scores, keys = points then center tokens
print("block 3 scores of center 3 (empty): points", np.unique(S3[:n, 3]), " own token", S3[n + 3, 3])
fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
plot_log_objective({"Lloyd": ref.log_objective, "Theorem 2.2": trf.log_objective}, ax=axes[0],
                   styles={"Theorem 2.2": {"ls": "--"}})
W3 = trf.layers[0].weights["3"]                                   # (n + k, k): keys = points, then centers
by_cluster = np.argsort(trf.labels[0], kind="stable")             # points grouped by their layer-1 cluster
plot_attention(np.vstack([W3[:n][by_cluster], W3[n:]]), ax=axes[1],
               title="block 3 attention, layer 1 (points sorted by cluster)",
               key_blocks=[("points", slice(0, n)), ("centers", slice(n, n + 4))],
               query_label="centers", key_label="keys")
fig.tight_layout()

# %% [markdown]
# *Annotator's remark on rounding.* The dot score $2x\cdot c - \|c\|^2$ and Lloyd's
# $\|x\|^2 + \|c\|^2 - 2x\cdot c$ are equal numbers in exact arithmetic but are rounded differently.
# On the project's table of 214 instances (ties, duplicates, empty clusters, k = 1, k = n) the labels
# agree at every layer except at one rounding-level tie — three coincident centers, one of them a mean
# off by one ulp — where the transformer picks the center that is nearest in exact arithmetic and
# Lloyd's cancellation does not (see `tests/test_standard_variants.py`).
#
# ## 4. Soft k-means: a finite β in block 1
#
# Keep Theorem 2.1's distance scores but stop at a finite inverse temperature β, and use the authors'
# normalized *linear* attention for the update (their `cnst_model.py`, `ldp=True`) (SPEC §5, soft k-means):
#
# $$r_{ij} = \frac{\exp(-\beta\|x_i - c_j\|^2)}{\sum_l \exp(-\beta\|x_i - c_l\|^2)},\qquad
# c_j' = \frac{\sum_i r_{ij}\,x_i}{\sum_i r_{ij}} .$$
#
# Block 1 writes $y_i = r_i$; block 3 scores $e_j\cdot y_i = r_{ij}$ and divides by their sum. The
# responsibility matrix *is* block 1's attention matrix.

# %%
betas = [1e-2, 1e-1, 1.0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6]  # eight orders of magnitude
errors = []
for beta in betas:
    r_ref = soft_kmeans(X, C0, 10, beta)
    r_trf = soft_kmeans_transformer(X, C0, 10, beta)
    np.testing.assert_allclose(r_trf.centers, r_ref.centers, rtol=0, atol=1e-10)
    np.testing.assert_allclose(r_trf.assignments, r_ref.assignments, rtol=0, atol=1e-10)
    errors.append(np.abs(r_trf.centers - lloyd(X, C0, 10).centers).max())
print("transformer = soft_kmeans to 1e-10 for beta =", betas)
fig, ax = plt.subplots(figsize=(4.5, 3))
ax.loglog(betas, np.maximum(errors, 1e-17), "o-")
ax.set_xlabel("beta"); ax.set_ylabel("max |c_soft - c_Lloyd|"); ax.set_title("soft -> Lloyd as beta grows")
assert errors[-1] < 1e-12 and errors[0] > 0.1

# %% [markdown]
# Small β: every responsibility is ≈ 1/k and all centers collapse onto the data mean. Large β: the
# responsibilities become one-hot and soft k-means is Lloyd's algorithm. In between, nearby clusters
# share points. Below, the top row colours each point by the mixture of its clusters' colours; the
# bottom row is block 1's attention matrix in the last layer (points grouped by Lloyd's clusters).

# %%
fig = plot_soft_beta_sweep(X, C0, betas=(1.0, 10.0, 100.0, 1000.0), n_layers=10)
tiny = soft_kmeans_transformer(X, C0, 1, 1e-9)
np.testing.assert_allclose(tiny.centers[1], np.tile(X.mean(axis=1)[:, None], (1, k)), atol=1e-8)
print("beta = 1e-9: after one layer every center is the data mean", X.mean(axis=1))

# %% [markdown]
# ## 5. Spherical k-means on directional data
#
# Dhillon & Modha's spherical k-means clusters *directions*: points and centers live on the unit
# sphere, a point joins the center of largest cosine, and the new center is the normalized sum of
# its members (SPEC §5; $m_j$ is the number of members, $\mu_j$ their mean):
#
# $$l_i = \arg\max_j x_i\cdot c_j,\qquad c_j' = \frac{\mu_j}{\|\mu_j\|},\quad \mu_j = \frac{1}{m_j}\sum_{l_i = j} x_i ,\quad m_j = |\{i : l_i = j\}|$$
#
# (the member mean $\mu_j$ has the direction of the member sum, Dhillon & Modha's concept vector).
#
# The transformer changes three things in Theorem 2.1: the embedding scales every point to unit
# length, block 1 uses dot-product scores (cosines), and block 3's output $[\mu_j; 0]$ goes
# through RMSNorm without centering and gain $1/\sqrt{d_{emb}}$, which is exactly $[\mu_j/\|\mu_j\|; 0]$.
# *Where* the RMSNorm sits (on block 3's output, with that gain) is the project's choice **(open)**:
# the project brief says only "dot-product attention and token-wise normalization (e.g. RMSNorm)".
# The data: three groups of directions on the circle, with random lengths (which must not matter).

# %%
angles = np.concatenate([rng.normal(a, 0.25, 30) for a in (0.3, 2.2, 4.1)])  # (90,)
lengths = rng.uniform(0.3, 3.0, angles.size)
Xdir = lengths * np.vstack([np.cos(angles), np.sin(angles)])  # (2, 90)
Cdir = Xdir[:, [0, 1, 2]]  # three initial centers, all from the first group
s_ref = spherical_kmeans(Xdir, Cdir, 8)
s_trf = spherical_kmeans_transformer(Xdir, Cdir, 8)
np.testing.assert_array_equal(s_trf.labels, s_ref.labels)
np.testing.assert_allclose(s_trf.centers, s_ref.centers, rtol=0, atol=1e-10)
np.testing.assert_allclose(np.linalg.norm(s_trf.centers, axis=1), 1.0, atol=1e-14)
print("labels equal; centers to", np.abs(s_trf.centers - s_ref.centers).max(), "; all centers unit length")

U = s_trf.info["X_unit"]  # (2, n) the data on the circle
fig, axes = plt.subplots(1, 2, figsize=(9, 4.3))
axes[0].scatter(Xdir[0], Xdir[1], s=10, c="0.6")
axes[0].set_title("raw data (lengths vary)")
t = np.linspace(0, 2 * np.pi, 200)
axes[1].plot(np.cos(t), np.sin(t), "k-", lw=0.5)
labels = s_trf.labels[-1]
axes[1].scatter(U[0], U[1], s=14, c=[CLUSTER_COLORS[j] for j in labels])
for step, C in enumerate(s_trf.centers):
    for j in range(3):
        alpha = 0.25 + 0.75 * step / (len(s_trf.centers) - 1)
        axes[1].plot([0, C[0, j]], [0, C[1, j]], color=CLUSTER_COLORS[j], alpha=alpha, lw=1 + (step == 8))
axes[1].set_title("spherical k-means transformer: centers per layer")
for ax in axes:
    ax.set_aspect("equal")
fig.tight_layout()

# %% [markdown]
# **Degenerate cases are policy.** A zero-length point has no direction: both implementations refuse
# it. A cluster whose members cancel (antipodal points x and −x) has member sum 0 and no direction:
# both give the zero vector (RMSNorm maps 0 to 0), never NaN.

# %%
try:
    spherical_kmeans_transformer(np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[1.0], [0.0]]), 1)
except ValueError as err:
    print("ValueError:", err)
anti = np.array([[1.0, -1.0], [0.0, 0.0]])  # x and -x, k = 1
for tr in (spherical_kmeans(anti, anti[:, :1], 2), spherical_kmeans_transformer(anti, anti[:, :1], 2)):
    assert np.array_equal(tr.centers[1:], np.zeros((2, 2, 1)))
print("antipodal members: center", spherical_kmeans_transformer(anti, anti[:, :1], 1).centers[1].ravel())

# %% [markdown]
# ## Exercises
#
# 1. The norm trick put $\|c_j\|^2$ in the key. Why is the query's own $\|x_i\|^2$ never needed, and
#    which normalizer in `kmt_ref.NORMALIZERS` would break if it were left out (hint: `linear`)?
# 2. Replace block 3's key offset −½ · flag by −1.5 · flag in `dot_product_weights` (a copy) and run
#    the empty-cluster example of section 3. What does the empty center do now, and why?
# 3. Theorem 2.2 uses $2d$ ReQU units. Can you compute $\|c\|^2$ with fewer hidden units if the data
#    are known to be non-negative? What goes wrong for negative coordinates?
# 4. At β = 10 the soft k-means transformer merges two of the three clusters on the toy data (section 4
#    figure). Find the smallest β (to a factor of 2) at which the three clusters stay apart.
# 5. Spherical k-means: construct data where a cluster's member sum is zero in exact arithmetic but
#    not in floating point (e.g. three unit vectors at 120°). What do `spherical_kmeans` and the
#    transformer return, and why is that case ill-conditioned?
