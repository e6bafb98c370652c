# %% [markdown]
# # 03 — Sparse and sampling variants: trimmed k-means, robust k-means, randomized k-medoids
#
# Notebooks 01 and 02 built Lloyd's algorithm (Theorem 2.1 of Clarkson, Horesh, Ito, Park, Ram,
# *Transformer Circuits Can Realize Clustering Algorithms*, ICML 2026; preliminary version arXiv
# 2506.19125) and its soft and
# spherical variants from one generic transformer layer. Here only **block 3** — the center update,
# in which each center token attends to the point tokens — changes its normalizer ([SPEC, "Variants"](../docs/SPEC.md#5-variants-small-named-changes-to-the-layer)):
#
# | variant | block 3 | classical reference |
# |---|---|---|
# | trimmed k-means **(open)** | α = ∞ normmax over −γ₁‖e_j−y_i‖² − γ₂‖c_j−x_i‖² | the same rule as a plain loop; compared with Cuesta-Albertos et al. (1997) and the authors' quantile rule (§8b: no circuit) |
# | robust k-means | sparsemax over −γ‖x_i−c_j‖²/√d (members) | the authors' rule (their code) |
# | randomized k-medoids **(open)** | an extra block writes the member mean μ_j, then **hard Gumbel** attention | sample a member with probability softmax(−γ‖x_i−μ_j‖²) |
#
# **Learning objectives.** After this notebook you can
#
# 1. compute the simplex threshold τ of a score vector and say which scores sparsemax, α = ∞ normmax and
#    the Gumbel-max sampler keep (§1);
# 2. read block 3's hand-set weights: what the √γ₂, √γ₁ and flag entries do, and the four kinds of scores they
#    produce (§3), and what the extra μ block of k-medoids adds (§5);
# 3. explain why a score gap of 1 keeps non-members out of a sparse normalizer, and that the separating
#    inequalities are sufficient, not necessary (§3, exercises 03.2–03.3);
# 4. run trimmed and robust k-means as transformers, check them against their classical loops, and tell how
#    γ₂ and γ set the trimming level (§3, §4, §7);
# 5. compare the attention rule with the textbook trimmed k-means of Cuesta-Albertos et al. and with the
#    authors' quantile rule, and say why the latter has no exact circuit (§8, §8b);
# 6. test that the k-medoids circuit samples each center from the softmax over its members (§5, §9).
#
# *Prerequisites:* notebook 01; a little convex optimisation helps with the proofs. *Time:* about 60 minutes
# to read and run, including three short self-checks (03.9–03.11, after §1, §4 and §5; 5 minutes in all);
# the eight exercises at the end take about 2½ hours more.
#
# *Annotator's remark:* the paper describes these variants as changes of the attention's normalizer
# (reported by the paper, from a summary; not verified against its text); the explicit weights (the
# member penalty γ₁, the default-token flag for empty clusters, the extra decoder block for μ_j) and
# their proofs are the project's own constructions, marked "(open)" in [SPEC, "Variants"](../docs/SPEC.md#5-variants-small-named-changes-to-the-layer). Everything is imported from `kmt_ref`; nothing is re-implemented here.
# Tokens are **columns**: X is (d, n), C is (d, k).

# %%
import numpy as np
import matplotlib.pyplot as plt

import kmt_ref
from kmt_ref import lloyd, kmeans_transformer, kmeans_objective
from kmt_ref.core.normalizers import sparsemax, normmax, softmax, simplex_threshold, GUMBEL_RANGE
from kmt_ref.algorithms.trimmed import trimmed_kmeans_attention, trimmed_kmeans, trimmed_kmeans_transformer
from kmt_ref.algorithms.trimmed import trimmed_kmeans_quantile
from kmt_ref.algorithms.robust import robust_kmeans, robust_kmeans_transformer
from kmt_ref.algorithms.kmedoids import randomized_kmedoids, randomized_kmedoids_transformer, kmedoids_weights
from kmt_ref.algorithms.sparse_update import (separating_penalties, sparse_update_weights, member_distance_bound,
                                              GUMBEL_WIDTH, RELATIVE_MARGIN)
from kmt_ref.data import blobs_with_outliers
from kmt_ref.viz.plotting import plot_weights, plot_attention, plot_assignments, CLUSTER_COLORS
from kmt_ref.viz.variant_figures import plot_variants_outliers

np.set_printoptions(precision=4, suppress=True, linewidth=110)
SEED = 4
print("kmt_ref", kmt_ref.__version__, "| seed", SEED)

# %% [markdown]
# ## 1. Three new normalizers
#
# Each maps a column of scores to the probability simplex, like softmax, but can return **exact zeros**
# ([SPEC, "Attention"](../docs/SPEC.md#2-attention-one-definition-several-normalizers)):
#
# * **sparsemax** (Martins & Astudillo 2016): $\mathrm{sparsemax}(z) = \arg\min_{p\in\Delta}\|p - z\|^2 = [z - \tau]_+$,
#   with $\tau = \max_s (z_{1:s} - 1)/s$, $z_{1:s}$ the sum of the $s$ largest scores;
# * **α-normmax** (Santos et al. 2024): $\arg\max_{p\in\Delta}\langle p, z\rangle - \|p\|_\alpha$; for α = ∞ it is the
#   **uniform** distribution on $\{z_i \ge \tau\}$ (the α → ∞ limit), except that it is one-hot on the maximum when
#   $\tau = \max z - 1$ (the top score at least 1 above the rest): sparsemax's support, plus the scores at τ;
# * **Gumbel-max**: one-hot on $\arg\max_i (z_i + g_i)$ with i.i.d. standard Gumbel $g_i$: a sample from softmax(z).
#
# Since $\max z - 1 \le \tau < \max z$, a score **1 or more below the maximum always gets weight exactly 0** in both
# sparse maps: the fact every circuit below is built on (exercise 03.3 proves it).
# The golden values of [SPEC, "Attention"](../docs/SPEC.md#2-attention-one-definition-several-normalizers) (the second row is `entmax`'s own test):

# %%
z = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
print("sparsemax     ", sparsemax(z))
print("normmax a=2   ", normmax(z, alpha=2.0))
print("normmax a=1000", normmax(z, alpha=1000.0))
print("normmax a=inf ", normmax(z, alpha=np.inf))
assert np.allclose(sparsemax(z), [0, 0, 1 / 12, 1 / 3, 7 / 12])
assert np.allclose(normmax(z, alpha=2.0), [0, .0239, .1746, .3254, .4761], atol=6e-5)
assert np.allclose(normmax(z, alpha=np.inf), [0, 0, 1 / 3, 1 / 3, 1 / 3])
tau = simplex_threshold(z)                       # (1,): the shared threshold, here 5/12
assert np.isclose(tau[0], 5 / 12) and np.array_equal(normmax(z, alpha=np.inf) > 0, z > tau[0])
assert np.array_equal(sparsemax(z) > 0, z > tau[0])

# %% [markdown]
# How the maps differ, as the gap θ between two scores grows (two scores $[0, -\theta]$):

# %%
thetas = np.linspace(0, 3, 301)
S = np.stack([np.zeros_like(thetas), -thetas])   # (2, 301): one score column per gap θ
fig, ax = plt.subplots(figsize=(5.5, 3.2))
for name, W in [("softmax", softmax(S)), ("sparsemax", sparsemax(S)),
                ("normmax α=2", normmax(S, alpha=2.0)), ("normmax α=∞", normmax(S, alpha=np.inf))]:
    assert W.shape == S.shape and np.allclose(W.sum(axis=0), 1)
    ax.plot(thetas, W[1], label=name)
ax.set_xlabel("gap θ between the two scores")
ax.set_ylabel("weight of the lower score")
ax.legend(fontsize=8)
ax.set_title("sparse maps give exactly 0 once the gap reaches 1")
plt.show()

# %% [markdown]
# ### Exercise 03.9
#
# A self-check on §1: what is sparsemax(z) for z = [1, 0.5, −1]? Work out τ first. `answer` = the three weights
# (4 significant digits).

# %%
### BEGIN SOLUTION
z_q = np.array([1.0, 0.5, -1.0])
# (z_1:s - 1)/s = 0, 1/4, -1/6 for s = 1, 2, 3: tau = 1/4
terms = (np.cumsum(np.sort(z_q)[::-1]) - 1) / np.arange(1, 4)
print("(z_1:s - 1)/s for s = 1, 2, 3:", terms, "-> tau =", terms.max())
assert np.allclose(terms, [0.0, 1 / 4, -1 / 6])
answer = np.maximum(z_q - 0.25, 0.0)
assert np.allclose(answer, sparsemax(z_q)) and np.isclose(simplex_threshold(z_q)[0], 0.25)
### END SOLUTION

# %%
from kmt_ref.exercises import check
check("03.9", answer)

# %% [markdown]
# ## 2. Data with a few far outliers
#
# Three Gaussian blobs in the unit square (30 points each) and four outliers at distance 1.5 from its center; the
# initial centers `C0` are one point of each blob. Lloyd's first assignment gives every outlier to some cluster —
# that is what lets an outlier drag a mean, and what the sparse variants prevent. Left: everything; right: the
# blobs up close (the outliers lie beyond the frame).

# %%
X, C0, is_out = blobs_with_outliers(rng=np.random.default_rng(SEED))
d, n = X.shape
k = C0.shape[1]
assert (d, n, k) == (2, 94, 3) and is_out.sum() == 4
T = 5
GAMMA2, GAMMA_ROBUST, GAMMA_MEDOID = 3.0, 4.0, 20.0
labels0 = lloyd(X, C0, 1).labels[0]                # (n,): Lloyd's first assignment
print("members per cluster:", np.bincount(labels0, minlength=k),
      "| outliers join clusters", labels0[is_out])

fig, axes = plt.subplots(1, 2, figsize=(10, 4.6))
for ax, title in zip(axes, ["the data: 3 blobs and 4 outliers", "the blobs up close"]):
    plot_assignments(X, labels0, ax=ax, title=title)
    ax.collections[-1].set_sizes([10])             # larger dots than the default
    ax.scatter(X[0, is_out], X[1, is_out], marker="X", s=110, c=[CLUSTER_COLORS[j] for j in labels0[is_out]],
               edgecolors="k", label="outliers (in their cluster's colour)")
    ax.scatter(C0[0], C0[1], marker="o", s=90, facecolors="none", edgecolors=[CLUSTER_COLORS[j] for j in range(k)],
               linewidths=2, label="initial centers C0")
    ax.set_xlabel("$x_1$")
    ax.set_ylabel("$x_2$")
lo, hi = X[:, ~is_out].min(axis=1) - 0.05, X[:, ~is_out].max(axis=1) + 0.05
axes[1].set_xlim(lo[0], hi[0])
axes[1].set_ylim(lo[1], hi[1])
axes[1].legend(loc="upper right", fontsize=8, title="colour: Lloyd's first cluster", title_fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 3. Trimmed k-means as normmax attention (**(open)**)
#
# Block 3's score for center $j$ and point $i$ is **one** Euclidean score
# $-\|K_3\bar x_i - Q_3 \bar c_j\|^2 = -\gamma_1\|e_j-y_i\|^2-\gamma_2\|c_j-x_i\|^2$ with
# $Q_3 = \mathrm{diag}(\sqrt{\gamma_2} I_d, \sqrt{\gamma_1} I_k, 0)$ and
# $K_3 = \mathrm{diag}(\sqrt{\gamma_2} I_d, \sqrt{\gamma_1} I_k, \sqrt{\gamma_\mathrm{flag}})$: the tokens are
# $\bar x_i = [x_i; y_i; 0]$ (points) and $\bar c_j = [c_j; e_j; 1]$ (centers, the last row the **flag**). The
# weights, with the penalties `separating_penalties` picks for this data:

# %%
tr_trim = trimmed_kmeans_transformer(X, C0, T, GAMMA2, record=True)
ref_trim = trimmed_kmeans_attention(X, C0, T, GAMMA2)
assert np.array_equal(tr_trim.labels, ref_trim.labels)
assert np.allclose(tr_trim.centers, ref_trim.centers, atol=1e-12)
gamma1, gamma_flag = separating_penalties(X, C0, GAMMA2)
assert (tr_trim.info["gamma1"], tr_trim.info["gamma_flag"]) == (gamma1, gamma_flag)
D2 = member_distance_bound(X, C0)   # bounds every member's squared distance to its center, at every layer
assert D2 >= np.sum(np.ptp(X, axis=1) ** 2)   # at least the squared diameter of the data's bounding box
assert gamma1 == GAMMA2 * D2 * (1 + RELATIVE_MARGIN) + 2   # 2^-20 g D^2 to spare for rounding
print(f"gamma2 = {GAMMA2:g}, gamma1 = gamma_flag = gamma2 D^2 (1 + 2^-20) + 2 = {gamma1:.2f}   (D^2 = {D2:.2f})")
params_trim, emb = sparse_update_weights(d, k, GAMMA2, gamma1, gamma_flag)   # Theorem 2.1's weights, block 3 changed
assert np.allclose(params_trim["Q3"][:d, :d], np.sqrt(GAMMA2) * np.eye(d))
assert params_trim["Q3"][-1, -1] == 0 and np.isclose(params_trim["K3"][-1, -1], np.sqrt(gamma_flag))

# %% [markdown]
# Robust k-means (§4) uses the same matrices with $\gamma_2$ replaced by $\gamma/\sqrt d$ and its own penalties;
# both are drawn below (the entries rounded to 2 decimals; one colour scale per figure, set by its largest entry,
# so the small entries are pale: read the magnitudes off the numbers). What each special entry does:
#
# * **√γ₂ on the x block** of $Q_3$ and $K_3$: gives the data term $-\gamma_2\|c_j - x_i\|^2$, the only term that
#   differs between members; it sets the trimming level.
# * **√γ₁ on the y block**: $-\gamma_1\|e_j - y_i\|^2$ is 0 for a member ($y_i = e_j$) and $-2\gamma_1$ for a
#   non-member; with $2\gamma_1 \ge \gamma_2 D^2 + 1$ ($D^2$ bounds every member's squared distance to its center) that puts every other cluster's
#   point 1 or more below the best member: weight exactly 0.
# * **the flag entry √γ_flag** (in $K_3$ only; the query's flag column is 0): every **center** key pays
#   $-\gamma_\mathrm{flag}$, so center $j$'s own token scores $-\gamma_\mathrm{flag}$ and the others less. With
#   members present it loses ($\gamma_\mathrm{flag} \ge \gamma_2 D^2 + 1$); in an **empty** cluster every other key is
#   at least $2\gamma_1 \ge \gamma_\mathrm{flag} + 1$ down, so the center attends to itself alone and keeps $c_j$
#   (Lloyd's "keep" policy).
# * $V_3 = P_X$ reads out $x_i$ (or $c_j$ from the own token); block 4 subtracts the old $c_j$.
#
# The transformer runs these scores in another form (`sparse_update.direct_weights`): 1 on the x block and the
# penalties times $1/\gamma_2$, and block 3 divides the distances, taken from the tokens' differences, by
# $1/\gamma_2$. In exact arithmetic that is the same score; in floating point a member's score is the very number
# the reference computes, so that both decide every tie alike.

# %%
g_rob = GAMMA_ROBUST / np.sqrt(d)                 # the robust score's coefficient of ||x_i - c_j||^2
params_rob, _ = sparse_update_weights(d, k, g_rob, *separating_penalties(X, C0, g_rob))
fig, axes = plt.subplots(2, 3, figsize=(9.0, 5.6), layout="constrained")
for row, (name, params) in zip(axes, [("trimmed", params_trim), ("robust", params_rob)]):
    shown = {f"{name}: {w}": np.round(params[w], 2) for w in ("Q3", "K3", "V3")}
    plot_weights(shown, emb, names=list(shown), axes=row)
fig.suptitle("block 3 of trimmed (γ₂ = 3) and robust (γ = 4, g = γ/√2) k-means: x | y (one-hot) | flag\n"
             "(one colour scale, set by the largest entry; the numbers are the entries)")
plt.show()

# %% [markdown]
# **The four kinds of scores.** The layer record keeps block 3's raw scores (`layers[t].scores["3"]`, keys
# $[\bar x_1 .. \bar x_n, \bar c_1 .. \bar c_k]$ down the rows, one column per center). In layer 1, with
# $y_i$ = Lloyd's first assignment and $c_j$ = `C0`:
#
# | key | score |
# |---|---|
# | point $i$, member of $j$ | $-\gamma_2\|x_i - c_j\|^2$ |
# | point $i$, non-member | $-\gamma_2\|x_i - c_j\|^2 - 2\gamma_1$ |
# | own center token $j$ | $-\gamma_\mathrm{flag}$ |
# | other center token $l$ | $-\gamma_2\|c_l - c_j\|^2 - 2\gamma_1 - \gamma_\mathrm{flag}$ |

# %%
S3 = tr_trim.layers[0].scores["3"]                 # (n + k, k)
D_pc = np.sum((X[:, :, None] - C0[:, None, :]) ** 2, axis=0)       # (n, k): ||x_i - c_j||^2
D_cc = np.sum((C0[:, :, None] - C0[:, None, :]) ** 2, axis=0)      # (k, k): ||c_l - c_j||^2
member = labels0[:, None] == np.arange(k)          # (n, k)
expected = np.vstack([-GAMMA2 * D_pc - 2 * gamma1 * ~member,
                      -GAMMA2 * D_cc - (2 * gamma1 + gamma_flag) * (1 - np.eye(k)) - gamma_flag * np.eye(k)])
assert S3.shape == (n + k, k) and np.allclose(S3, expected, atol=1e-12)
best_member = np.array([S3[:n][member[:, j], j].max() for j in range(k)])
rest = np.array([max(S3[:n][~member[:, j], j].max(), S3[n:, j].max()) for j in range(k)])
print("best member score per center:    ", best_member + 0.0)     # + 0.0: a score -0.0 prints as 0.
print("best other key (non-member/token):", rest)
assert np.all(rest <= best_member - 1)              # a gap of at least 1: exactly 0 weight (§1)

# %% [markdown]
# With the non-members out, normmax sees only the member scores $z_i = -\gamma_2\|x_i - c_j\|^2$ and each center moves
# to the uniform mean of its $s^*$ closest members:
#
# $$c_j \leftarrow \frac{1}{s^*}\sum_{i \in \text{top } s^* \text{ members}} x_i, \qquad z_i \ge \tau = \max_s \frac{z_{1:s} - 1}{s}
#   \text{ for the kept members } (s^* \text{ of them}).$$

# %%
W3 = tr_trim.layers[-1].weights["3"]             # (n + k, k): keys = [points, centers], queries = centers
assert W3.shape == (n + k, k) and np.allclose(W3.sum(axis=0), 1)
print("points each center averages in the last layer:", (W3[:n] > 0).sum(axis=0),
      "of", np.bincount(tr_trim.labels[-1], minlength=k))
print("outliers kept by any center:", int((W3[:n][is_out] > 0).sum()))

# %% [markdown]
# ## 4. Robust k-means as sparsemax attention (the authors' rule)
#
# Assign as Lloyd; then $c_j \leftarrow \sum_{i\in M_j} p_i x_i$ with
# $p = \mathrm{sparsemax}_{i\in M_j}(-\gamma\|x_i-c_j\|^2/\sqrt d)$ (their default γ = 0.01, `utils.rkm_iters`; we use γ = 4 so
# that the sparsity shows on unit-scale data, and exercise 03.5 measures what 0.01 does). The weights are the ones
# drawn in §3's second row: sparsemax instead of normmax.

# %%
tr_rob = robust_kmeans_transformer(X, C0, T, GAMMA_ROBUST, record=True)
ref_rob = robust_kmeans(X, C0, T, GAMMA_ROBUST)
assert np.array_equal(tr_rob.labels, ref_rob.labels)
assert np.allclose(tr_rob.centers, ref_rob.centers, atol=1e-12)
W3r = tr_rob.layers[-1].weights["3"]
print("nonzero weights per center:", (W3r[:n] > 0).sum(axis=0), "| largest weight:", np.round(W3r.max(axis=0), 3))

# %% [markdown]
# **How the two rules weigh the members.** Block 3's weight of every member against its squared distance to the
# center, last layer, one colour per cluster: normmax (trimmed) is **flat** — a uniform mean of the kept members —
# and then drops to exactly 0; sparsemax (robust) is $[z_i - \tau]_+$, a **straight line** in the squared distance
# that reaches 0 at the threshold. Both give the outliers (drawn on the right edge) weight 0. The weights, about 1/30, would be
# invisible on an attention heatmap's [0, 1] colour scale, hence a scatter plot.

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
for ax, (name, tr) in zip(axes, [(f"trimmed (normmax α=∞, γ₂={GAMMA2:g})", tr_trim),
                                 (f"robust (sparsemax, γ={GAMMA_ROBUST:g})", tr_rob)]):
    W, C_in, lab = tr.layers[-1].weights["3"][:n], tr.centers[-2], tr.labels[-1]
    dist = np.sum((X - C_in[:, lab]) ** 2, axis=0)                # (n,) squared distance to the own center
    edge = 1.1 * dist[~is_out].max()                              # the axis ends here; outliers drawn on the edge
    for j in range(k):
        m_in, m_out = (lab == j) & ~is_out, (lab == j) & is_out
        ax.scatter(dist[m_in], W[m_in, j], s=12, color=CLUSTER_COLORS[j], label=f"cluster {j}")
        ax.scatter(np.full(m_out.sum(), edge), W[m_out, j], s=70, marker="X", color=CLUSTER_COLORS[j],
                   edgecolors="k", clip_on=False, zorder=5)
    ax.set_xlim(0, edge)
    ax.set_xlabel("squared distance to its center")
    ax.set_title(f"{name}\noutliers (X; squared distances {dist[is_out].min():.1f}–{dist[is_out].max():.1f}) "
                 "drawn on the right edge", fontsize=9)
    ax.grid(alpha=0.3)
axes[0].set_ylabel("block 3 weight, last layer")
axes[0].legend(fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ### Exercise 03.10
#
# A self-check on §4: a cluster has three members at squared distances 0, 0.1 and 0.5 from its center. With this
# notebook's γ = 4 and d = 2, which weights does the robust block 3 give them? `answer` = the three weights
# (4 significant digits).

# %%
### BEGIN SOLUTION
scores_q = -GAMMA_ROBUST / np.sqrt(d) * np.array([0.0, 0.1, 0.5])   # -gamma ||x - c||^2 / sqrt(d)
answer = sparsemax(scores_q)
print("scores", scores_q + 0.0, "-> weights", answer)            # + 0.0: the score -0.0 prints as 0.
### END SOLUTION

# %%
check("03.10", answer)

# %% [markdown]
# ## 5. Randomized k-medoids: an extra decoder block, then hard Gumbel attention (**(open)**)
#
# A first decoder sublayer writes the member mean $\mu_j$ into extra rows of center token $j$ (Theorem 2.1's
# averaging block 3 with $V$ copying $x$ into those rows). Block 3 then scores members by
# $-\gamma\|x_i-\mu_j\|^2$ and takes the **hard Gumbel** sample: the new center is the member
#
# $$i^* = \arg\max_{i \in M_j}\big(-\gamma\|x_i-\mu_j\|^2 + g_{ij}\big) \sim \mathrm{softmax}_{i\in M_j}(-\gamma\|x_i-\mu_j\|^2).$$
#
# The reference draws the same Gumbel array from the same `Generator`, so the same seed gives the **identical** result.

# %%
tr_med = randomized_kmedoids_transformer(X, C0, T, GAMMA_MEDOID, np.random.default_rng(SEED), record=True)
ref_med = randomized_kmedoids(X, C0, T, GAMMA_MEDOID, np.random.default_rng(SEED))
assert np.array_equal(tr_med.centers, ref_med.centers) and np.array_equal(tr_med.labels, ref_med.labels)
print("medoid indices per step:\n", ref_med.info["medoids"])
print("blocks of one layer:", sorted(tr_med.layers[0].weights))

# %% [markdown]
# **The weights.** The embedding gains a **μ block** (d rows, 0 at embedding): tokens are $[x; y; \text{flag}; \mu]$.
#
# * block **mu** ($Q_\mu = P_Y$, $K_\mu = P_Y + P_\mathrm{flag}$, averaging hardmax): Theorem 2.1's update with the
#   flag (own token at −1, so an empty cluster averages itself); $V_\mu$ copies the **x rows into the μ rows**
#   (the identity in the lower-left block): center $j$ receives the member mean $\mu_j$ in its μ rows. A reset
#   block (`Vmu_reset` $= -P_\mu$) first removes the previous layer's μ.
# * block **3**: $Q_3$ copies the query's **μ rows into the x slot**, times √γ (upper-right block), so the data term
#   is $-\gamma\|x_i - \mu_j\|^2$ — distances to the mean, not to the old center; √γ₁ on the y block and
#   √γ_flag in $K_3$'s flag entry play their §3 roles, with margins widened by the width W ≈ 40.3 of the Gumbel
#   noise range (`separating_penalties(..., noise_width=GUMBEL_WIDTH)`), so noise can never lift a non-member
#   above a member. $V_3 = P_X$ writes the sampled member.

# %%
gamma1_med, gamma_flag_med = separating_penalties(X, C0, GAMMA_MEDOID, GUMBEL_WIDTH)
assert (tr_med.info["gamma1"], tr_med.info["gamma_flag"]) == (gamma1_med, gamma_flag_med)
params_med, emb_med = kmedoids_weights(d, k, GAMMA_MEDOID, gamma1_med, gamma_flag_med)
print(f"W = {GUMBEL_WIDTH:.2f} (GUMBEL_RANGE = {np.round(GUMBEL_RANGE, 2)}), gamma1 = gamma_flag = {gamma1_med:.1f}")
names = ["Qmu", "Kmu", "Vmu", "Q3", "K3", "V3"]
fig, axes = plt.subplots(2, 3, figsize=(10.5, 6.6), layout="constrained")
plot_weights({w: np.round(params_med[w], 2) for w in names}, emb_med, names=names, axes=axes)
fig.suptitle("k-medoids: the μ block (top) and the sampling block 3 (bottom); blocks x | y | flag | mu\n"
             "(one colour scale, set by the largest entry; the numbers are the entries)")
plt.show()

# %% [markdown]
# Block 3's attention in layer 1 is one-hot per center (the sampled member), and block mu's is uniform on the
# members. Keys sorted by cluster (Lloyd's first assignment), the center tokens last. Each panel has its own
# colour scale, from 0 to its largest weight, and each center's largest weight is written under its column:
# on a common 0–1 scale block mu's weights $1/n_j$ would look black.

# %%
by_cluster = np.argsort(labels0, kind="stable")   # point order grouped by cluster
counts0 = np.bincount(labels0, minlength=k)
starts = np.concatenate([[0], np.cumsum(counts0)])
key_blocks = [(f"cl. {j}", slice(starts[j], starts[j + 1])) for j in range(k)] + [("centers", slice(n, n + k))]
fig, axes = plt.subplots(1, 2, figsize=(8, 4.2), layout="constrained")
for ax, block, title in [(axes[0], "mu", "block mu: the member mean (1/n_j each)"),
                         (axes[1], "3", "block 3: the sampled member (one-hot)")]:
    Wb = tr_med.layers[0].weights[block]           # (n + k, k)
    plot_attention(np.vstack([Wb[:n][by_cluster], Wb[n:]]), ax=ax, title=title, key_blocks=key_blocks,
                   query_label="centers", key_label="points (by cluster) | centers", vmax=None, label_columns=True)
axes[1].set_ylabel("")                             # the same keys as on the left
W3m = tr_med.layers[0].weights["3"][:n]
assert np.all(W3m.sum(axis=0) == 1) and np.all(labels0[np.argmax(W3m, axis=0)] == np.arange(k))
plt.show()

# %% [markdown]
# ### Exercise 03.11
#
# A self-check on §5: after a layer of the k-medoids circuit, the new center of a cluster that has members is always
#
# - (a) one of its member points
# - (b) the member mean $\mu_j$
# - (c) the point of any cluster nearest to $\mu_j$
# - (d) a softmax-weighted mean of its members
#
# `answer` = the letter, as a string.

# %%
### BEGIN SOLUTION
# block 3's hard Gumbel attention is one-hot on a member (non-members are penalized beyond the noise range)
C_med = tr_med.centers[1]                                  # (d, k)
assert all(any(np.array_equal(C_med[:, j], X[:, i]) for i in np.flatnonzero(tr_med.labels[0] == j))
           for j in range(k))
answer = "a"
### END SOLUTION

# %%
check("03.11", answer)

# %% [markdown]
# ## 6. Side by side: which points each center listens to
#
# Figure 4's drawing (`kmt_ref.viz.variant_figures.plot_variants_outliers`). Top: the center paths over the 5 layers;
# the titles give the log objective of the **inliers** at the final centers. Bottom: lines from each center entering
# the last layer (circle) to every point with a nonzero weight in block 3; the triangle is the new center. The axes
# are set by the inliers; the outliers sit beyond them and are drawn on the border, where the ray from the middle of
# the axes to them leaves the frame (a line to an outlier ends at its cross). Lloyd listens to every member,
# outliers included; trimmed and robust drop the far members; k-medoids listens to one sampled member.

# %%
tr_lloyd = kmeans_transformer(X, C0, T, record=True)
assert np.array_equal(tr_lloyd.labels, lloyd(X, C0, T).labels)
traces = {"Lloyd": tr_lloyd, f"trimmed (γ₂={GAMMA2:g})": tr_trim, f"robust (γ={GAMMA_ROBUST:g})": tr_rob,
          f"k-medoids (γ={GAMMA_MEDOID:g})": tr_med}
fig = plot_variants_outliers(X, is_out, traces)
plt.show()
log_j_in = {name: np.log(kmeans_objective(X[:, ~is_out], tr.centers[-1])) for name, tr in traces.items()}
assert all(log_j_in[name] < log_j_in["Lloyd"] for name in traces if name != "Lloyd")

# %% [markdown]
# ## 7. How γ₂ sets the trimming level
#
# Normmax keeps member $i$ exactly when $z_i \ge \tau = (z_{1:s^*}-1)/s^*$, i.e. when
# $\gamma_2\,(\|x_i-c_j\|^2 - \bar d_j) \le 1/s^*$ with $\bar d_j$ the mean squared distance of the kept members. So a
# cluster with many members trims anything noticeably farther than average unless $\gamma_2$ is small: $\gamma_2 = 0$
# keeps everyone (Lloyd), $\gamma_2 \to \infty$ keeps only the closest member. The fraction of points that enter some
# center's mean in the last layer:

# %%
gammas = np.logspace(-3, 3, 25)
kept_last = np.array([trimmed_kmeans_attention(X, C0, T, g).info["kept"][-1] for g in gammas])   # (25, n)
kept, kept_out = kept_last.mean(axis=1), kept_last[:, is_out].mean(axis=1)
assert np.all(np.diff(kept) <= 1e-12) and trimmed_kmeans_attention(X, C0, T, 0.0).info["kept"][-1].all()
fig, ax = plt.subplots(figsize=(5.5, 3.2))
ax.semilogx(gammas, kept, "o-", label="all points")
ax.semilogx(gammas, kept_out, "s--", label="outliers")
ax.set_xlabel("γ₂")
ax.set_ylabel("fraction kept (last layer)")
ax.axvline(GAMMA2, color="0.5", lw=0.8, ls=":")
ax.set_title(f"trimming level against γ₂ (dotted: the γ₂ = {GAMMA2:g} used above)", fontsize=9)
ax.legend()
plt.show()

# %% [markdown]
# **Turn γ₂ yourself, and the robust γ beside it.** `kmt_ref.viz.sliders.plot_sparse_supports` draws, after
# T layers, which points block 3 lets into some center's mean in the last layer (in their cluster's colour;
# grey crosses get weight 0 in every mean), where the centers went (triangles, with their paths) and
# Lloyd's centers (hollow circles): top, the trimmed circuit (normmax) at γ₂; bottom, the robust circuit
# (sparsemax, the authors' rule) at its γ. The outliers lie beyond the frame; each title counts how many of
# them enter a mean. Side by side at three values, then behind two sliders (they move in a running
# notebook).

# %%
from kmt_ref.viz.sliders import plot_sparse_supports, small_multiples, parameter_sliders

fig = small_multiples(lambda g, axes: plot_sparse_supports(X, C0, g, g, n_layers=T, is_out=is_out, axes=axes),
                      [0.3, GAMMA2, 30.0], rows=2, panel_size=(3.4, 3.6),
                      title=f"gamma2 (top) and the robust gamma (bottom) at 0.3, {GAMMA2:g}, 30")
plt.show()
parameter_sliders(lambda gamma2, gamma: plot_sparse_supports(X, C0, gamma2, gamma, n_layers=T, is_out=is_out),
                  {"gamma2": [0.0, 0.1, 0.3, 1.0, GAMMA2, 10.0, 30.0, 100.0],
                   "gamma": [0.01, 0.1, 0.3, 1.0, GAMMA_ROBUST, 10.0, 30.0, 100.0]})

# %% [markdown]
# ## 8. Comparison with Cuesta-Albertos, Gordaliza & Matrán (1997)
#
# Classical trimmed k-means with trimming proportion ρ (here 0.05) keeps a **global** number $h = \lceil(1-\rho)n\rceil$
# of points — those closest to their
# nearest center — and alternates concentration steps: trim, assign, average. The attention rule trims **per cluster**
# and its level is set by γ₂, not by a proportion. Both ignore the outliers here:

# %%
ca = trimmed_kmeans(X, C0, T, rho=0.05)
print("h =", ca.info["h"], "| trimmed points:", np.flatnonzero(ca.labels[-1] < 0))
assert set(np.flatnonzero(is_out)) <= set(np.flatnonzero(ca.labels[-1] < 0))
assert np.all(np.diff(ca.info["trimmed_objective"]) <= 1e-12)
print("centers, Cuesta-Albertos:\n", ca.centers[-1])
print("centers, normmax attention:\n", tr_trim.centers[-1])
print("largest center difference:", np.abs(ca.centers[-1] - tr_trim.centers[-1]).max().round(4))

# %% [markdown]
# ## 8b. The authors' trimmed k-means: a per-cluster quantile
#
# The authors' code has a third rule (`utils.trimmed_iters`, a baseline in their repository; the summary of the paper
# we could read does not mention it): assign as Lloyd, then per cluster take the threshold $\kappa_j$ = the 0.95-quantile (linear interpolation, `torch.quantile`'s
# default) of the members' squared distances, and move $c_j$ to the mean of the members **strictly below** it. With
# distinct distances exactly $\lceil 0.95\,(n_j-1)\rceil$ of the $n_j$ members are kept, the closest: up to 20 members
# only the farthest is dropped. A singleton, or a cluster whose members are all at one distance, keeps no one: the
# authors' mean is NaN and they re-seed it with a random point; `kmt_ref` keeps the center (`info["stalled"]`).

# %%
qr = trimmed_kmeans_quantile(X, C0, T, q=0.95)
n_j = np.bincount(qr.labels[-1], minlength=C0.shape[1])                 # cluster sizes
print("members per cluster:", n_j, "| kept:", [int(qr.info["kept"][-1][qr.labels[-1] == j].sum()) for j in range(len(n_j))])
assert all(qr.info["kept"][-1][qr.labels[-1] == j].sum() == np.ceil(0.95 * (n_j[j] - 1)) for j in range(len(n_j)))
print("outliers kept by the quantile rule:", int(qr.info["kept"][-1][is_out].sum()), "of", int(is_out.sum()))
for name, other in (("normmax attention", tr_trim), ("Cuesta-Albertos", ca)):
    print(f"largest center difference with {name}:", np.abs(qr.centers[-1] - other.centers[-1]).max().round(4))

# %% [markdown]
# **When the three coincide.** All three share Lloyd's assignment and move $c_j$ to the mean of a subset $R_j$ of
# its members, so at a step they give the same centers when they pick the same $R_j$ (or subsets with the same mean):
#
# * quantile = normmax attention exactly when, in every cluster, $s^*_j = |\{i : D_i < \kappa_j\}|$ —
#   for distinct distances $s^*_j = \lceil q(n_j-1)\rceil$. For $2 \le n_j \le 20$ that is "drop exactly the
#   farthest member": $\gamma_2\,(D_{(n_j)} - \bar D_{\text{others}}) > 1/(n_j-1)$ and no smaller $s$ scores higher.
#   The quantile count depends on $n_j$ alone, normmax's on the gaps times γ₂, so a single γ₂ matches only when
#   every cluster's gaps happen to fall in the window;
# * quantile = Cuesta-Albertos exactly when $h = \sum_j |R_j|$ and every kept point is closer to its center than every
#   dropped point (CA trims by a global rank, the quantile per cluster);
# * none of them is Lloyd on a cluster of two or more distinct distances: the quantile always drops the farthest.
#
# Scaling shows the difference: shrink one cluster around its center by a factor ε. The quantile rule keeps the same members at
# every scale; normmax at a fixed γ₂ keeps more and more, until it keeps all of them (Lloyd).

# %%
u = np.array([[0.0, 0.3, -0.5, 0.9, -1.4, 4.0]])        # (1, 6): one cluster around 0, one far member
C_ONE = np.array([[0.0]])                               # (1, 1)
for eps in (10.0, 1.0, 0.1, 0.01):
    n_q = trimmed_kmeans_quantile(eps * u, C_ONE, 1).info["kept"][0].sum()
    n_a = trimmed_kmeans_attention(eps * u, C_ONE, 1, 1.0).info["kept"][0].sum()
    print(f"ε = {eps:5g}: quantile keeps {n_q}, normmax (γ₂ = 1) keeps {n_a}")
    assert n_q == 5
assert trimmed_kmeans_attention(0.01 * u, C_ONE, 1, 1.0).info["kept"][0].all()

# %% [markdown]
# **No exact circuit.** Block 3 can only give $c_j$ a normalizer of its scores, each a fixed continuous function of
# the tokens. Shrink a cluster ($x_i = c_j + \varepsilon u_i$, ε → 0): the members' scores become equal, so any continuous
# normalizer (softmax, sparsemax, normmax with α < ∞, linear) tends to equal weights — the full mean, while the rule
# keeps dropping the farthest point at every ε; α = ∞ normmax keeps every member once the gaps are below $1/(s(s+1))$
# (the cell above); and hardmax keeps only the best-scored members, which would need the score of a point $b$ both to
# beat and to tie a farther point $e$ (clusters $\{a, b, e\}$ and $\{b, e, g\}$). An exact σ would have to count the
# members and keep a fixed fraction by rank — the rule itself moved into σ — so `kmt_ref` writes the argument (in
# `trimmed_kmeans_quantile`'s docstring) instead of building one.

# %% [markdown]
# ## 9. The sampler: medoid frequencies against the softmax probabilities
#
# One cluster, one layer, 2,000 independent seeded draws through the **transformer**; the sampled member's frequency
# is compared with $\mathrm{softmax}(-\gamma\|x_i-\mu\|^2)$ by a chi-square test.

# %%
from scipy.stats import chisquare

x1 = np.array([[0.0, 0.4, 0.5, 1.0, 1.7]])         # (1, 5): one cluster
c1 = np.array([[0.6]])
gamma = 2.0
p = softmax(-gamma * (x1[0] - x1[0].mean()) ** 2)
rng = np.random.default_rng(SEED)
draws = 2000
picked = [randomized_kmedoids_transformer(x1, c1, 1, gamma, rng).centers[1, 0, 0] for _ in range(draws)]
counts = np.array([np.sum(np.array(picked) == v) for v in x1[0]])
stat, pvalue = chisquare(counts, draws * p)
print("counts:", counts, "| expected:", np.round(draws * p, 1), "| chi-square p-value:", round(pvalue, 3))
assert counts.sum() == draws and pvalue > 1e-3
fig, ax = plt.subplots(figsize=(5, 3))
ax.bar(np.arange(5) - 0.2, counts / draws, width=0.4, label="sampled (transformer)")
ax.bar(np.arange(5) + 0.2, p, width=0.4, label="softmax(−γ‖x−μ‖²)")
ax.set_xticks(range(5), [f"x={v:g}" for v in x1[0]])
ax.set_ylabel("probability")
ax.set_ylim(0, 1.4 * max(p.max(), counts.max() / draws))
ax.set_title(f"the member each draw picks: {draws} draws, γ = {gamma:g}", fontsize=9)
ax.legend(fontsize=8, ncol=2, loc="upper center")
plt.show()

# %% [markdown]
# ## Summary
#
# * **Sparse normalizers share one threshold.** $\tau = \max_s (z_{1:s}-1)/s$: sparsemax is $[z-\tau]_+$, α = ∞
#   normmax is uniform on $\{z \ge \tau\}$ (or one-hot when $\tau = \max z - 1$). Since $\tau \ge \max z - 1$, a score 1
#   or more below the maximum gets weight **exactly 0** — what lets attention drop points, not just down-weight them.
# * **Trimmed and robust k-means are Theorem 2.1 with block 3 rescaled**: √γ₂ (or √(γ/√d)) on the x block sets the
#   data term, √γ₁ on the y block puts every non-member 2γ₁ down, and the flag entry √γ_flag of $K_3$ makes a
#   center's own token the default for an empty cluster. Layer by layer they equal their classical loops
#   (labels exactly, centers to 1e-12).
# * **Trimmed moves each center to the uniform mean of its closest members, robust to a weighted mean with weights
#   linear in the squared distance**; both give the outliers weight 0 here and end with a lower inlier objective
#   than Lloyd. γ₂ (γ) sets the trimming level per cluster: 0 is Lloyd, ∞ keeps the closest member.
# * **Three trimmed k-means are not one.** The attention rule trims by a score gap per cluster, Cuesta-Albertos et al.
#   by a global proportion, the authors' quantile rule by a rank per cluster; the last is scale-free, and no
#   normalizer of the layer realises it exactly.
# * **Randomized k-medoids adds a block**: a μ block writes the member mean into extra rows, and hard Gumbel attention
#   samples a member with probability softmax(−γ‖x_i − μ_j‖²). With a shared seed the circuit and the loop are
#   identical, and the draws pass a chi-square test against the softmax.
# * **The penalties are sufficient, not necessary**: the separating inequalities buy a gap of 1 with room to spare;
#   exercise 03.2 measures how much room.

# %% [markdown]
# ## Exercises
#
# How to work them (what `answer` holds, what `check` prints, parts graded apart, the precision a number
# needs): [Working the exercises](../docs/EXERCISES.md).
# A code exercise asks for a function: `check` calls it on data of its own, which this notebook does not show,
# so test it on the data of §2 first. The proofs and the explore have a checked part and a written answer; the written
# answers have a model answer in `notebooks/solutions/`. The data `X, C0, is_out`, the constants
# `SEED, T, GAMMA2, GAMMA_ROBUST, GAMMA_MEDOID` and the imports of the notebook are available.

# %%
from kmt_ref.exercises import check, report

# %% [markdown]
# ### Exercise 03.1
#
# Write a function `disagreeing_scores(m)` that returns a score vector `z` of length `m` (a 1-D float array; the
# checker calls it for several `m` ≥ 3) on which sparsemax and α = ∞ normmax keep **different** entries, i.e.
# `sparsemax(z) > 0` differs from `normmax(z, alpha=np.inf) > 0`. Work it out with τ first (§1): which scores
# does normmax keep that sparsemax drops, and what does a further score far below τ do to τ (exercise 03.3 (d))?
# Your function builds `z` by hand, without `simplex_threshold`, `sparsemax` or `normmax` (the checker makes them
# raise while it runs); check its output with them outside the function. (With two scores the two maps always
# agree: a score at τ then has τ = max z − 1, where normmax is one-hot.) `answer` is the function.

# %%
### BEGIN SOLUTION
# Normmax keeps the scores *at* tau, sparsemax drops them: put a score exactly at tau, with tau > max z - 1.
# z = (1, 1, 1/2): (z_{1:s} - 1)/s = 0, 1/2, 1/2 for s = 1, 2, 3, so tau = 1/2 = z_3 (exact in binary).
# Further scores at or below tau leave tau unchanged (03.3 (d)); put them 1 below it, where neither map keeps them.
def disagreeing_scores(m):
    return np.concatenate([[1.0, 1.0, 0.5], np.full(m - 3, -0.5)])


for m in (3, 5, 12):
    z_ex = disagreeing_scores(m)
    print(f"m = {m:2d}: tau = {simplex_threshold(z_ex)[0]}, sparsemax keeps {int((sparsemax(z_ex) > 0).sum())}, "
          f"normmax keeps {int((normmax(z_ex, alpha=np.inf) > 0).sum())}")
    assert not np.array_equal(sparsemax(z_ex) > 0, normmax(z_ex, alpha=np.inf) > 0)
answer = disagreeing_scores
### END SOLUTION

# %%
check("03.1", answer)

# %% [markdown]
# ### Exercise 03.2
#
# §3 chose the member penalty γ₁ with `separating_penalties` so that $2\gamma_1 \ge \gamma_2 D^2 + 1$ ($D^2$ of
# `member_distance_bound`: the larger of the data's squared bounding-box diameter and every point's squared distance
# to its nearest initial center): then every non-member is at least 1 below the members and gets weight 0.
# That inequality is **sufficient, not necessary**. Find the actual threshold γ₁\*: for data `X`, initial centers
# `C0`, a data weight γ₂ and T layers of `trimmed_kmeans_transformer(X, C0, T, γ₂, gamma1=γ₁, record=True)`, for γ₁
# below γ₁\* some point gets a nonzero block-3 weight (`layers[t].weights["3"]`) from a center it is not assigned to
# (`labels[t]`) in some layer, and for γ₁ above it no point does. Write a function `gamma1_star(X, C0, gamma2, T)`
# that returns γ₁\* as a float (0.5 % is close enough); the checker calls it on data of its own. Two routes: bisect
# on the transformer, or reason with each center's member threshold τ (what does a score below τ do to τ?) in
# **every** layer: the centers move, and the first layer need not be the one that leaks last. The transformers, the
# loops and the normalizers of kmt_ref may all be used. `answer` is the function. Then, on the data of §2 at the
# smaller data weight **γ₂ = 0.5** and T = 5, compare γ₁\* with the inequality's bound $(\gamma_2 D^2 + 1)/2$: why is
# the bound so loose, and which layer sets γ₁\*?

# %%
### BEGIN SOLUTION
GAMMA2_LEAK = 0.5


def gamma1_per_layer(X, C0, gamma2, T):
    """Per layer, the largest gamma1 at which a non-member enters some center's normmax support."""
    # Until something leaks the transformer follows the reference, so read the thresholds on its trajectory. A
    # non-member's score is b_i - 2 gamma1 (b_i = -gamma2 ||x_i - c_j||^2, ||e_j - y_i||^2 = 2); a score below the
    # members' tau leaves tau unchanged (exercise 03.3), so it enters normmax's support iff b_i - 2 gamma1 >= tau.
    ref = trimmed_kmeans_attention(X, C0, T, gamma2)
    k = C0.shape[1]
    out = []
    for t in range(T):
        b = -gamma2 * np.sum((X[:, :, None] - ref.centers[t][:, None, :]) ** 2, axis=0)     # (n, k)
        own = ref.labels[t][:, None] == np.arange(k)                                        # (n, k)
        out.append(max((b[~own[:, j], j].max() - simplex_threshold(b[own[:, j], j])[0]) / 2 for j in range(k)))
    return np.array(out)


def gamma1_star(X, C0, gamma2, T):
    return float(gamma1_per_layer(X, C0, gamma2, T).max())


def leaks(gamma1_try):
    """How many (point, center) pairs give a non-member a nonzero block-3 weight, per layer (the data of §2)."""
    tr = trimmed_kmeans_transformer(X, C0, T, GAMMA2_LEAK, gamma1=gamma1_try, record=True)
    return [int(np.sum((rec.weights["3"][:n] > 0) & (tr.labels[t][:, None] != np.arange(k))))
            for t, rec in enumerate(tr.layers)]


per_layer = gamma1_per_layer(X, C0, GAMMA2_LEAK, T)
gamma1_s = gamma1_star(X, C0, GAMMA2_LEAK, T)
print("threshold per layer:", np.round(per_layer, 5), "-> gamma1* =", round(gamma1_s, 6),
      "set by layer", int(np.argmax(per_layer)) + 1)

# Confirmed on the transformer: something leaks just below, nothing just above; layer 1's own threshold is too low.
assert sum(leaks(0.99 * gamma1_s)) > 0 and sum(leaks(1.01 * gamma1_s)) == 0
assert leaks(1.01 * per_layer[0])[0] == 0 and sum(leaks(1.01 * per_layer[0])) > 0
gamma1_leak = separating_penalties(X, C0, GAMMA2_LEAK)[0]
bound = (GAMMA2_LEAK * D2 + 1) / 2
print(f"inequality bound (gamma2 D^2 + 1)/2 = {bound:.2f}, separating_penalties' gamma1 = {gamma1_leak:.2f}: "
      f"{bound / gamma1_s:.0f} and {gamma1_leak / gamma1_s:.0f} times gamma1*")
# where gamma1* comes from: the layer t and center j whose nearest non-member rises highest above the members' tau
t_s = int(np.argmax(per_layer))
ref = trimmed_kmeans_attention(X, C0, T, GAMMA2_LEAK)
C_t = ref.centers[t_s]                                                                 # (d, k)
b = -GAMMA2_LEAK * np.sum((X[:, :, None] - C_t[:, None, :]) ** 2, axis=0)             # (n, k)
own = ref.labels[t_s][:, None] == np.arange(k)
rise = [b[~own[:, j], j].max() - simplex_threshold(b[own[:, j], j])[0] for j in range(k)]
j_s = int(np.argmax(rise))
print(f"layer {t_s + 1}, center {j_s}: its nearest non-member at squared distance "
      f"{-b[~own[:, j_s], j_s].max() / GAMMA2_LEAK:.4f} scores {rise[j_s]:.4f} above the members' tau; distances "
      f"to the other centers:", np.round(np.linalg.norm(C_t - C_t[:, [j_s]], axis=0), 3))
answer = gamma1_star
### END SOLUTION

# %%
check("03.2", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Why the bound is so loose, and why every layer counts.* The inequality guards against the worst case the bounding
# box allows: a non-member at distance 0 from the center, a member at distance $D$. Here the threshold is set by the
# two blobs that nearly touch (clusters 0 and 2, centers about 0.2 apart: the last line printed above): the nearest
# non-member of center 2 lies at squared distance about 0.013, inside the range of the members center 2 keeps, so its
# score is about 0.03 **above** the members' τ, and the penalty $2\gamma_1$ only has to make up that gap:
# γ₁\* ≈ 0.016, about 200 times below the bound and 500 times below `separating_penalties`' choice. The gap is not
# largest in layer 1: as the centers move, center 2 drops a member and its τ falls, and its nearest non-member comes
# closer, so layer 3 needs about 5 % more penalty than layer 1 (the thresholds per layer, printed first). Far-apart blobs would need no penalty at all. The circuit keeps the bound because it must hold
# for every input and every layer, not only for this one.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 03.3
#
# Prove, for a score vector $z \in \mathbb{R}^r$ with $z_{(1)} \ge z_{(2)} \ge \dots$ and $z_{1:s} = z_{(1)} + \dots + z_{(s)}$:
#
# - (a) $\mathrm{sparsemax}(z) = \arg\min_{p \in \Delta}\|p - z\|^2 = [z - \tau]_+$ with $\tau = \max_s (z_{1:s}-1)/s$;
# - (b) every $z_i \le \tau$ gets weight exactly 0;
# - (c) $\max z - 1 \le \tau < \max z$: a score 1 or more below the maximum always gets weight 0 — the gap the
#   circuits' penalties must buy;
# - (d) appending a score $w \le \tau$ to $z$ leaves τ unchanged, and $w$ gets weight 0; a score $w > \tau$ enters
#   the support (the fact exercise 03.2 uses).
#
# Write the proof in the answer cell below the check. Then use (c) and (d) on $z = (2, 1.5, 1.2, w)$: `answer` = the
# **largest** $w$ for which sparsemax gives $w$ weight exactly 0 (4 significant digits). Is it $\max z - 1$?

# %%
### BEGIN SOLUTION
z_33 = np.array([2.0, 1.5, 1.2])
terms_33 = (np.cumsum(np.sort(z_33)[::-1]) - 1) / np.arange(1, 4)          # (z_1:s - 1)/s = 1, 1.25, 1.2333
w_max = terms_33.max()                                                    # tau of the other three scores, by (d)
print("(z_1:s - 1)/s:", np.round(terms_33, 4), "-> largest w with weight 0 =", w_max)
for w, zero in ((w_max, True), (w_max + 1e-9, False), (1.0, True)):
    assert (sparsemax(np.append(z_33, w))[-1] == 0) == zero
answer = w_max
### END SOLUTION

# %%
check("03.3", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# **(a)** The problem $\min_p \tfrac12\|p - z\|^2$ subject to $p \ge 0$, $\sum_i p_i = 1$ is strictly convex with linear
# constraints, so the KKT conditions characterise its unique solution: $p_i - z_i + \eta - \nu_i = 0$, $\nu_i \ge 0$,
# $\nu_i p_i = 0$ (multipliers $\eta$ and $\nu_i$; the value of $\eta$ at the solution is the threshold τ). Where $p_i > 0$: $p_i = z_i - \eta$; where $p_i = 0$: $z_i - \eta = -\nu_i \le 0$. So $p = [z - \eta]_+$,
# with $\eta$ fixed by $\varphi(\eta) = \sum_i [z_i - \eta]_+ - 1 = 0$. A sum of positive parts is the largest sum over a subset
# of the terms $z_i - \eta$, and the best subset of each size $s$ is a top set, so
# $\varphi(\eta) = \max_{s \ge 0}(z_{1:s} - s \eta) - 1$. Hence $\varphi(\eta) = 0$ iff $z_{1:s} - 1 \le s \eta$ for every $s \ge 1$
# with equality for some $s$, i.e. $\eta = \max_s (z_{1:s} - 1)/s = \tau$.
#
# **(b)** $p_i = [z_i - \tau]_+ = \max(z_i - \tau, 0) = 0$ when $z_i \le \tau$: an exact zero, not a small number
# (softmax never gives one).
#
# **(c)** The term $s = 1$ gives $\tau \ge z_{(1)} - 1$. Each term is below the mean of the top $s$:
# $(z_{1:s} - 1)/s < z_{1:s}/s \le z_{(1)}$, so $\tau < \max z$ (the support is never empty). If
# $z_i \le \max z - 1 \le \tau$, then $p_i = 0$ by (b). In the circuits every non-member (and every center token) scores
# at least 1 below the best member, so block 3 sees the members only.
#
# **(d)** With $z' = (z, w)$: $\varphi_{z'}(\eta) = \varphi_z(\eta) + [w - \eta]_+$. If $w \le \tau$, $\varphi_{z'}(\tau) =
# \varphi_z(\tau) = 0$, so $\tau' = \tau$ and $w$'s weight is $[w - \tau]_+ = 0$. If $w > \tau$, $\varphi_{z'}(\tau) =
# w - \tau > 0$, so $\tau' > \tau$; were $w \le \tau'$, then $\varphi_{z'}(\tau') = \varphi_z(\tau') < \varphi_z(\tau) = 0$
# ($\varphi_z$ strictly decreases where it is $> -1$), a contradiction: $w > \tau'$ and $w$ is in the support. For α = ∞
# normmax the same τ decides, with $w \ge \tau$ (it keeps the scores at τ).
#
# *The checked number.* For $z = (2, 1.5, 1.2)$ the terms are 1, 1.25, 1.2333, so τ = 1.25 and by (d) exactly the
# $w \le 1.25$ get weight 0: the gap of 1 of (c) ($w \le \max z - 1 = 1$) is sufficient, not necessary.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 03.4
#
# The authors' quantile rule (§8b) keeps, in a cluster of $n_j$ members at distinct distances, its
# $\lceil q\,(n_j - 1)\rceil$ closest members, whatever the scale (`trimmed_kmeans_quantile(X, C0, 1, q=q)`;
# $q = 0.95$ in their code); α = ∞ normmax keeps a number set by γ₂ (§7). Take the **first step**: Lloyd's assignment
# of `X` to `C0`. For each cluster $j$ the window $(lo_j, hi_j]$ of γ₂ in which `trimmed_kmeans_attention(X, C0, 1, γ₂)`
# keeps exactly the members the quantile rule keeps: write a function `quantile_windows(X, C0, q)` that returns
# these windows as a (k, 2) array `[[lo_0, hi_0], [lo_1, hi_1], ...]` (0.5 % is close enough; the checker calls it on
# data of its own, every cluster with 25 or more members). The loops and the normalizers of kmt_ref may all be used.
# `answer` is the function.
# Then, on the data of §2 with q = 0.95: is there one γ₂ that matches the quantile rule on all three clusters at once?

# %%
### BEGIN SOLUTION
# The members in increasing distance D_(1) < D_(2) < ...: member s is kept iff its score reaches tau, i.e.
# gamma2 * f(s) <= 1 with f(s) = sum_{i<s} (D_(s) - D_(i)) = s D_(s) - D_{1:s} (nondecreasing in s; the support is a
# prefix). So exactly `keep` are kept iff 1/f(keep + 1) < gamma2 <= 1/f(keep).
def quantile_windows(X, C0, q):
    labels = lloyd(X, C0, 1).labels[0]
    q_kept = trimmed_kmeans_quantile(X, C0, 1, q=q).info["kept"][0]             # (n,) the quantile rule's choice
    windows = []
    for j in range(C0.shape[1]):
        Dj = np.sort(np.sum((X[:, labels == j] - C0[:, [j]]) ** 2, axis=0))
        keep = int(q_kept[labels == j].sum())                                   # ceil(q (n_j - 1)) here
        f = lambda s: s * Dj[s - 1] - Dj[:s].sum()                               # noqa: E731
        windows.append((1 / f(keep + 1), 1 / f(keep)))
    return np.array(windows)


windows = quantile_windows(X, C0, 0.95)
q_kept = trimmed_kmeans_quantile(X, C0, 1).info["kept"][0]
for j, (lo_j, hi_j) in enumerate(windows):                                       # confirmed by the loop itself
    assert q_kept[labels0 == j].sum() == np.ceil(0.95 * (np.sum(labels0 == j) - 1))
    inside = trimmed_kmeans_attention(X, C0, 1, np.sqrt(lo_j * hi_j)).info["kept"][0]
    assert np.array_equal(inside[labels0 == j], q_kept[labels0 == j])
    for g_out in (0.99 * lo_j, 1.01 * hi_j):
        outside = trimmed_kmeans_attention(X, C0, 1, g_out).info["kept"][0]
        assert not np.array_equal(outside[labels0 == j], q_kept[labels0 == j])
print("members:", np.bincount(labels0), "| kept by the quantile rule:",
      [int(q_kept[labels0 == j].sum()) for j in range(k)], "| outliers among the dropped:",
      [int((~q_kept & is_out)[labels0 == j].sum()) for j in range(k)])
print("windows (lo, hi]:\n", windows)
print(f"common window: ({windows[:, 0].max():.4f}, {windows[:, 1].min():.4f}]",
      "-> empty" if windows[:, 0].max() >= windows[:, 1].min() else "")
answer = quantile_windows
### END SOLUTION

# %%
check("03.4", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# The clusters have 32, 32 and 30 members, so the quantile rule keeps 30, 30 and 28: it drops the two outliers of
# clusters 0 and 1, and two ordinary points of cluster 2. Normmax drops the two outliers for any γ₂ from about 0.02-0.03
# up to 1.4-2.0, but it drops two *inliers* of the tight cluster 2 only for γ₂ in (1.91, 2.42]; cluster 1 already loses
# a third point above 1.43. The windows of clusters 1 and 2 do not overlap, so no single γ₂ reproduces the quantile
# rule here: one counts by rank, the other by score gaps.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 03.5
#
# The authors run robust k-means with γ = 0.01 (§4 used 4). At the **first step**, what is the smallest γ at which
# block 3 of `robust_kmeans_transformer(X, C0, 1, γ, record=True)` gives **every** outlier weight exactly 0? Write a
# function `outlier_gamma(X, C0, is_out)` that returns it as a float, to a relative 0.5 % (a bisection's width;
# 3 significant digits are enough), for data of any dimension d; the checker calls it on data of its own. The
# transformers, the loops and the normalizers of kmt_ref may all be used. `answer` is the function. Then, on the data of §2: is the authors' default enough on
# this unit-scale data?

# %%
### BEGIN SOLUTION
# Sparsemax keeps the member of rank s (increasing distance) iff g sum_{i<s} (D_(s) - D_(i)) < 1, g = gamma/sqrt(d)
# (exercise 03.3 (d) applied to the members in order): monotone in gamma. So outlier o is dropped iff
# gamma >= sqrt(d) / sum_{D_i < D_o} (D_o - D_i); the outlier closest to its center is the last to go.
def outlier_gammas(X, C0, is_out):
    """{outlier index: the smallest gamma at which it gets weight 0 at the first step}."""
    labels = lloyd(X, C0, 1).labels[0]
    need = {}
    for j in range(C0.shape[1]):
        members = np.flatnonzero(labels == j)
        Dj = np.sum((X[:, members] - C0[:, [j]]) ** 2, axis=0)
        for o in np.flatnonzero(is_out[members]):
            need[int(members[o])] = np.sqrt(X.shape[0]) / np.sum(Dj[o] - Dj[Dj < Dj[o]])
    return need


def outlier_gamma(X, C0, is_out):
    return float(max(outlier_gammas(X, C0, is_out).values()))


need = outlier_gammas(X, C0, is_out)
gamma_star = outlier_gamma(X, C0, is_out)
print("gamma needed per outlier:", {i: round(float(v), 4) for i, v in need.items()}, "-> gamma* =", round(gamma_star, 5))
D_first = np.sum((X - C0[:, labels0]) ** 2, axis=0)                    # (n,) squared distance to the own center
print("outliers' squared distances to their centers:", np.round(D_first[is_out], 2),
      "| largest inlier's:", np.round(D_first[~is_out].max(), 3))
w_001 = robust_kmeans_transformer(X, C0, 1, 0.01, record=True).layers[0].weights["3"][:n][is_out].max(axis=1)
print("outlier weights at gamma = 0.01:", np.round(w_001, 4), "| 1 / members:", np.round(1 / np.bincount(labels0), 4))
for g_try, zero in ((0.01, False), (0.999 * gamma_star, False), (gamma_star, True)):
    w_out = robust_kmeans_transformer(X, C0, 1, g_try, record=True).layers[0].weights["3"][:n][is_out]
    print(f"gamma = {g_try:.5f}: largest outlier weight {w_out.max():.4f}")
    assert (w_out.max() == 0) == zero
answer = outlier_gamma
### END SOLUTION

# %%
check("03.5", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# No. At γ = 0.01 the member scores $-\gamma\|x_i - c_j\|^2/\sqrt2$ of a cluster span less than 0.02 (the squared
# distances printed above are below 2.5), far less than the gap of 1 sparsemax needs, so every member keeps a weight:
# the outliers get 0.015–0.023 each, half to three quarters of an average member's 1/32, and robust k-means is then
# almost Lloyd. It takes γ ≈ 0.03864 to drop every outlier at the first step (the outlier nearest its center, at
# squared distance 1.23, is the last to go). In a cluster of $n_j$ members an outlier is dropped once
# $\gamma \sum_i (D_o - D_i) \ge \sqrt d$, i.e. once its squared distance exceeds the members' mean by about
# $\sqrt d/(\gamma n_j)$, which is 4.4 at γ = 0.01 and $n_j$ = 32 (the clusters that hold the outliers): γ has to be chosen for the scale of the data's
# squared distances.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 03.6
#
# Let $g_1, \dots, g_r$ be i.i.d. standard Gumbel, $P[g \le x] = \exp(-e^{-x})$. Prove that
# $P[\arg\max_i (z_i + g_i) = j] = \mathrm{softmax}(z)_j$. Then explain why the k-medoids circuit's sample is exactly a
# draw from $\mathrm{softmax}_{i \in M_j}(-\gamma\|x_i - \mu_j\|^2)$ even though block 3 also scores non-members and
# center tokens: what does the noise range `GUMBEL_RANGE` (width W ≈ 40.3) have to do with the penalties?
#
# Write the proof in the answer cell below the check. `answer` is a pair: (1) $P[\max_i (z_i + g_i) \le 0]$ for
# $z = (0, \ln 2)$, to 4 significant digits (the product of the CDFs in your proof gives it); (2) the letter of the
# statement that says why the circuit never samples a non-member, as a string:
#
# - (a) block 3 gives every non-member and every other center token the score −∞
# - (b) every non-member and center token scores more than 1 + W below the best member, and the noise, confined to an
#   interval of width W, changes a difference of two logits by at most W
# - (c) standard Gumbel noise is bounded, so any positive penalty keeps the non-members below the members
# - (d) block 3 normalizes over the members of cluster j only

# %%
### BEGIN SOLUTION
# max_i (z_i + g_i) <= 0 iff every g_i <= -z_i: prod_i exp(-e^{z_i}) = exp(-Z), Z = sum_i e^{z_i} = 1 + 2 = 3
z_36 = np.array([0.0, np.log(2.0)])
p_max = np.exp(-np.sum(np.exp(z_36)))
g_36 = -np.log(-np.log(np.random.default_rng(SEED).uniform(size=(2, 200_000))))   # standard Gumbel draws
p_draws = np.mean((z_36[:, None] + g_36).max(axis=0) <= 0)
print(f"P[max <= 0] = exp(-3) = {p_max:.5f}; 200,000 draws: {p_draws:.5f}")
assert abs(p_draws - p_max) < 4 * np.sqrt(p_max * (1 - p_max) / 200_000)
answer = (p_max, "b")
### END SOLUTION

# %%
check("03.6", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# **The trick.** The density of $g$ is $f(x) = e^{-x}\exp(-e^{-x})$. Index $j$ wins when $z_j + g_j = y$ and every other
# $z_i + g_i < y$; ties have probability 0. So, with $Z = \sum_i e^{z_i}$,
#
# $$P[j \text{ wins}] = \int_{-\infty}^{\infty} f(y - z_j)\prod_{i \ne j} \exp(-e^{-(y - z_i)})\,dy
#   = \int_{-\infty}^{\infty} e^{z_j} e^{-y}\exp\!\big(-e^{-y} Z\big)\,dy
#   = e^{z_j}\int_0^\infty e^{-u Z}\,du = \frac{e^{z_j}}{Z},$$
#
# substituting $u = e^{-y}$, $du = -e^{-y}dy$ (the product of all $r$ CDFs, $j$ included, is $\exp(-e^{-y}Z)$).
#
# **In the circuit.** Block 3's logit of member $i$ is $-\gamma\|x_i - \mu_j\|^2$; every non-member's is $2\gamma_1$
# lower (plus its own data term), the own token's $\gamma_\mathrm{flag}$ lower. `gumbel_noise` draws
# $-\log(-\log u)$ with $u$ on a grid strictly inside (0, 1), so every noise value lies in `GUMBEL_RANGE`, an interval
# of width W: noise can change any difference of two logits by at most W. `separating_penalties(..., noise_width=W)`
# makes every non-member and center token more than $1 + W$ below the best member, so after the noise the argmax is
# always a member. Over the members the logits are exactly $-\gamma\|x_i - \mu_j\|^2$ with i.i.d. noise, so by the
# trick the winner is a softmax draw over the members (up to the noise's 2⁻⁵³ grid and truncation, far below any
# measurable effect). Different centers use different noise columns, so their draws are independent.
#
# *The checked pair.* (1) The product of the CDFs at $y = 0$: $\exp(-(e^0 + e^{\ln 2})) = e^{-3} \approx 0.04979$.
# (2) is (b): the scores are finite (not (a)) and block 3 attends to every key (not (d)); a standard Gumbel
# variable is unbounded (not (c)): the bound W comes from the grid of `gumbel_noise`.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 03.7
#
# Randomized k-medoids runs for **one** layer from initial centers `C0`. What is the probability that **at least
# one** center becomes an outlier? Write a function `p_outlier(X, C0, is_out, gamma)` that returns the exact
# probability as a float, to 4 significant digits, from the distribution the sampler draws from (§5); a center
# without members stays where it is. The checker calls it on data of its own, and makes `randomized_kmedoids`,
# `randomized_kmedoids_transformer`, `gumbel` and `gumbel_noise` raise while it runs: no draws inside the function.
# `answer` is the function. Then, on the data of §2 with γ = 2 (instead of §5's 20), confirm it by sampling with a
# seeded Generator. An estimate from N draws is not enough: its relative standard error is
# $\sqrt{(1 - P)/(P N)}$, large for a small P; print it for your N and for §9's 2,000 draws.

# %%
### BEGIN SOLUTION
GAMMA_SAMPLE = 2.0


def outlier_probabilities(X, C0, is_out, gamma):
    """Per center, P(it becomes an outlier): the softmax over its members around their mean, at the outliers."""
    labels = lloyd(X, C0, 1).labels[0]
    p = np.zeros(C0.shape[1])
    for j in range(C0.shape[1]):
        members = np.flatnonzero(labels == j)
        if members.size == 0:
            continue                                                      # an empty cluster keeps its center
        mu = X[:, members].mean(axis=1)                                   # the member mean, not C0[:, j]
        z_j = -gamma * np.sum((X[:, members] - mu[:, None]) ** 2, axis=0)
        p[j] = softmax(z_j)[is_out[members]].sum()
    return p


def p_outlier(X, C0, is_out, gamma):
    return float(1 - np.prod(1 - outlier_probabilities(X, C0, is_out, gamma)))   # the centers draw independently


p_out, p_any = outlier_probabilities(X, C0, is_out, GAMMA_SAMPLE), p_outlier(X, C0, is_out, GAMMA_SAMPLE)
print("per center:", np.round(p_out, 6), "-> P(at least one) =", round(p_any, 6))

# Sampling check with kmt_ref's own sampler (block 3's normalizer), N seeded draws per center at once.
from kmt_ref.core.normalizers import gumbel
N = 200_000
rng = np.random.default_rng(SEED)
hit = np.zeros(N, dtype=bool)
for j in range(k):
    members = np.flatnonzero(labels0 == j)
    z_j = -GAMMA_SAMPLE * np.sum((X[:, members] - X[:, members].mean(axis=1, keepdims=True)) ** 2, axis=0)
    one_hot = gumbel(np.repeat(z_j[:, None], N, axis=1), rng=rng, hard=True)   # (n_j, N), one sample per column
    hit |= one_hot[is_out[members]].sum(axis=0) > 0
estimate, sigma = hit.mean(), np.sqrt(p_any * (1 - p_any) / N)
print(f"estimate from {N:,} draws: {estimate:.5f} (exact {p_any:.5f}, standard error {sigma:.1e})")
for n_draws in (N, 2000):
    print(f"relative standard error of an estimate from {n_draws:,} draws: {np.sqrt((1 - p_any) / (p_any * n_draws)):.1%}")
assert abs(estimate - p_any) < 4 * sigma      # fails with probability ~6e-5 for a fresh seed; this seed is fixed
# and one transformer draw agrees with the loop on the same seed (as in §5):
assert np.array_equal(randomized_kmedoids_transformer(X, C0, 1, GAMMA_SAMPLE, np.random.default_rng(0)).centers,
                      randomized_kmedoids(X, C0, 1, GAMMA_SAMPLE, np.random.default_rng(0)).centers)
answer = p_outlier
### END SOLUTION

# %%
check("03.7", answer)

# %% [markdown]
# ### Exercise 03.8
#
# Give the data more outliers: `blobs_with_outliers(n_outliers=n_o, rng=np.random.default_rng(SEED))` keeps the same
# blobs, the same `C0` and the same first four outliers, and adds more far points. For n_o ∈ {4, 10, 20, 40} outliers run Lloyd,
# trimmed (γ₂ = 3), robust (γ = 4), k-medoids (γ = 20) and Cuesta-Albertos (ρ = 0.05) for 5 steps. Record how many
# outliers block 3 listens to in the last layer (for Cuesta-Albertos: how many outliers are not trimmed) and the log
# objective of the inliers. `answer` = the number of outliers Cuesta-Albertos does not trim at n_o = 20 (an
# integer; you can predict it from h before you run it). Then, in the answer cell below the check: which rule breaks
# first, and why? What would Cuesta-Albertos need? Is k-medoids' result a property of the rule or of one draw?

# %%
### BEGIN SOLUTION
rows = []
for n_out in (4, 10, 20, 40):
    Xm, Cm, om = blobs_with_outliers(n_outliers=n_out, rng=np.random.default_rng(SEED))
    nm, Xin = Xm.shape[1], Xm[:, ~om]
    runs = {"Lloyd": kmeans_transformer(Xm, Cm, T, record=True),
            "trimmed": trimmed_kmeans_transformer(Xm, Cm, T, GAMMA2, record=True),
            "robust": robust_kmeans_transformer(Xm, Cm, T, GAMMA_ROBUST, record=True),
            "k-medoids": randomized_kmedoids_transformer(Xm, Cm, T, GAMMA_MEDOID, np.random.default_rng(SEED),
                                                         record=True)}
    row = {name: (int((tr.layers[-1].weights["3"][:nm][om] > 0).any(axis=1).sum()),
                  np.log(kmeans_objective(Xin, tr.centers[-1]))) for name, tr in runs.items()}
    ca_m = trimmed_kmeans(Xm, Cm, T, rho=0.05)
    row["Cuesta-Albertos"] = (int((ca_m.labels[-1][om] >= 0).sum()), np.log(kmeans_objective(Xin, ca_m.centers[-1])))
    rows.append(row)
    print(f"{n_out:2d} outliers: " + " | ".join(f"{name} {h} out, {lj:+.3f}" for name, (h, lj) in row.items()))
    rho_m = n_out / nm                                                   # Cuesta-Albertos told the outlier share
    ca_ok = trimmed_kmeans(Xm, Cm, T, rho=rho_m)
    print(f"        Cuesta-Albertos with rho = outliers/n = {rho_m:.3f}: {int((ca_ok.labels[-1][om] >= 0).sum())} out, "
          f"{np.log(kmeans_objective(Xin, ca_ok.centers[-1])):+.3f}")
# k-medoids over 20 seeds, with no outliers and with 4: its inlier objective is a random variable
for n_out in (0, 4):
    Xm, Cm, om = blobs_with_outliers(n_outliers=n_out, rng=np.random.default_rng(SEED))
    spread = [np.log(kmeans_objective(Xm[:, ~om], randomized_kmedoids(Xm, Cm, T, GAMMA_MEDOID,
                                                                       np.random.default_rng(s)).centers[-1]))
              for s in range(20)]
    print(f"k-medoids, {n_out} outliers, 20 seeds: inlier log J from {min(spread):+.3f} to {max(spread):+.3f} "
          f"(Lloyd: {np.log(kmeans_objective(Xm[:, ~om], lloyd(Xm, Cm, T).centers[-1])):+.3f})")
# why: at the first step, each cluster's softmax over its members around the member mean (4 outliers)
lab_m = lloyd(Xm, Cm, 1).labels[0]
for j in range(k):
    mem = np.flatnonzero(lab_m == j)
    sq = np.sum((Xm[:, mem] - Xm[:, mem].mean(axis=1, keepdims=True)) ** 2, axis=0)     # (n_j,)
    inl = Xm[:, mem][:, ~om[mem]]
    spread_in = np.mean(np.sum((inl - inl.mean(axis=1, keepdims=True)) ** 2, axis=0))
    print(f"cluster {j}: P(sampling an outlier) = {softmax(-GAMMA_MEDOID * sq)[om[mem]].sum():.1e}, "
          f"gamma x the blob's mean squared spread = {GAMMA_MEDOID * spread_in:.3f}")
# the checked count: n = 110 points at n_o = 20, h = ceil(0.95 n) = 105 kept, so at most 5 outliers trimmed
n_20 = 90 + 20
assert rows[2]["Cuesta-Albertos"][0] == 20 - (n_20 - int(np.ceil(0.95 * n_20)))
answer = rows[2]["Cuesta-Albertos"][0]
### END SOLUTION

# %%
check("03.8", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Measured (the cell above).* Trimmed and robust ignore every outlier for every n_o tested, and their inlier objective
# does not move (−0.898 and −0.889): they trim by a **score gap** per cluster, and a far point is far however many
# far points there are. Lloyd listens to all outliers and its inlier objective climbs from −0.40 to +1.50.
# Cuesta-Albertos with ρ = 0.05 keeps $h = \lceil 0.95\,n\rceil$ points: with 94 points it trims exactly the 4
# outliers, but at n_o = 10 it keeps 5 of them, at n_o = 20 it keeps 15 (it trims only n − h = 5 points: the checked
# count), and at n_o = 40 its objective (+1.48) is as bad as Lloyd's: it breaks first, as soon as the outliers
# outnumber the trimming proportion. It needs ρ ≥ n_o/n, the share of outliers, known in
# advance; with ρ = n_o/n it trims every outlier again (−0.908 at every n_o). k-medoids never samples an outlier (at
# γ = 20 and the first step with 4 outliers their probability is at most about 3e-12, printed last), but its objective is
# the worst of the robust rules for a reason unrelated to the outliers: γ times a blob's mean squared spread is about
# 0.1 (printed), so the softmax over a blob is nearly uniform and each
# center is an almost random member. Without any outlier its inlier log J over 20 seeds ranges from −0.48 to +0.22
# (Lloyd: −0.91), with 4 from −0.85 to +0.26. Its row in the table is one draw, not a property of the rule; a larger
# γ (or more steps and keeping the best draw) would be needed for medoids that sit at the blob centers.
# ### END SOLUTION

# %%
report("03")
