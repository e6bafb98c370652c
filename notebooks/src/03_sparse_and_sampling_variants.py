# %% [markdown]
# # 03 — Sparse and sampling variants: trimmed k-means, robust k-means, randomized k-medoids
#
# Notebooks 01 and 02 built Lloyd's algorithm (Theorem 2.1 of Park, Clarkson, Horesh, Ram, Ito,
# *Transformer Circuits Can Realize Clustering Algorithms*, arXiv 2506.19125) and its soft and
# spherical variants from one generic transformer layer. Here only **block 3** — the center update,
# in which each center token attends to the point tokens — changes its normalizer (SPEC §5):
#
# | variant | block 3 | classical reference |
# |---|---|---|
# | trimmed k-means **(open)** | α = ∞ normmax over −γ₁‖e_j−y_i‖² − γ₂‖c_j−x_i‖² | the same rule as a plain loop; compared with Cuesta-Albertos et al. (1997) and the authors' quantile rule (§8b: no circuit) |
# | robust k-means | sparsemax over −γ‖x_i−c_j‖²/√d (members) | the authors' rule (their code) |
# | randomized k-medoids **(open)** | an extra block writes the member mean μ_j, then **hard Gumbel** attention | sample a member with probability softmax(−γ‖x_i−μ_j‖²) |
#
# *Annotator's remark:* the paper describes these variants as changes of the center-update
# normalizer; the explicit weights (the member penalty γ₁, the default-token flag for empty clusters,
# the extra decoder block for μ_j) and their proofs are the project's own constructions,
# marked "(open)" in SPEC §5. Everything is imported from `kmt_ref`; nothing is re-implemented here.
# Tokens are **columns**: X is (d, n), C is (d, k).

# %%
import numpy as np
import matplotlib.pyplot as plt

import kmt_ref
from kmt_ref import lloyd, kmeans_transformer
from kmt_ref.core.normalizers import sparsemax, normmax, softmax, simplex_threshold
from kmt_ref.algorithms.trimmed import trimmed_kmeans_attention, trimmed_kmeans, trimmed_kmeans_transformer
from kmt_ref.algorithms.trimmed import trimmed_kmeans_quantile
from kmt_ref.algorithms.robust import robust_kmeans, robust_kmeans_transformer
from kmt_ref.algorithms.kmedoids import randomized_kmedoids, randomized_kmedoids_transformer
from kmt_ref.algorithms.sparse_update import separating_penalties
from kmt_ref.data import blobs_with_outliers
from kmt_ref.viz.variant_figures import plot_listening

np.set_printoptions(precision=4, suppress=True, linewidth=110)
SEED = 4
print("kmt_ref", kmt_ref.__version__, "| seed", SEED)

# %% [markdown]
# ## 1. Three new normalizers (SPEC §2)
#
# Each maps a column of scores to the probability simplex, like softmax, but can return **exact zeros**:
#
# * **sparsemax** (Martins & Astudillo 2016): $\mathrm{sparsemax}(z) = \arg\min_{p\in\Delta}\|p - z\|^2 = [z - \tau]_+$,
#   with $\tau = \max_s (z_{1:s} - 1)/s$, $z_{1:s}$ the sum of the $s$ largest scores;
# * **α-normmax** (Santos et al. 2024): $\arg\max_{p\in\Delta}\langle p, z\rangle - \|p\|_\alpha$; for α = ∞ it is the
#   **uniform** distribution on the $s^*$ largest scores, $s^*$ the largest maximiser of $(z_{1:s}-1)/s$ (the α → ∞
#   limit; one-hot when the top score is at least 1 above the rest): sparsemax's support, plus the scores at τ;
# * **Gumbel-max**: one-hot on $\arg\max_i (z_i + g_i)$ with i.i.d. standard Gumbel $g_i$: a sample from softmax(z).
#
# The golden values of SPEC §2 (the second row is `entmax`'s own test):

# %%
z = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
print("sparsemax     ", sparsemax(z))
print("normmax a=2   ", normmax(z, alpha=2.0))
print("normmax a=1000", normmax(z, alpha=1000.0))
print("normmax a=inf ", normmax(z, alpha=np.inf))
assert np.allclose(sparsemax(z), [0, 0, 1 / 12, 1 / 3, 7 / 12])
assert np.allclose(normmax(z, alpha=2.0), [0, .0239, .1746, .3254, .4761], atol=6e-5)
assert np.allclose(normmax(z, alpha=np.inf), [0, 0, 1 / 3, 1 / 3, 1 / 3])
tau = simplex_threshold(z)                       # (1,): the shared threshold
assert np.array_equal(normmax(z, alpha=np.inf) > 0, z > tau[0])

# %% [markdown]
# How the maps differ, as the gap between two scores grows (two scores $[0, -\delta]$):

# %%
deltas = np.linspace(0, 3, 301)
S = np.stack([np.zeros_like(deltas), -deltas])   # (2, 301): one score column per delta
fig, ax = plt.subplots(figsize=(5.5, 3.2))
for name, W in [("softmax", softmax(S)), ("sparsemax", sparsemax(S)),
                ("normmax α=2", normmax(S, alpha=2.0)), ("normmax α=∞", normmax(S, alpha=np.inf))]:
    assert W.shape == S.shape and np.allclose(W.sum(axis=0), 1)
    ax.plot(deltas, W[1], label=name)
ax.set_xlabel("gap δ between the two scores")
ax.set_ylabel("weight of the lower score")
ax.legend(fontsize=8)
ax.set_title("sparse maps give exactly 0 once the gap exceeds 1")
plt.show()

# %% [markdown]
# ## 2. Data with a few far outliers
#
# Three Gaussian blobs in the unit square and four outliers at distance 1.5 from its center; the
# initial centers are one point of each blob.

# %%
X, C0, is_out = blobs_with_outliers(rng=np.random.default_rng(SEED))
d, n = X.shape
k = C0.shape[1]
assert (d, n, k) == (2, 94, 3) and is_out.sum() == 4
T = 5
GAMMA2, GAMMA_ROBUST, GAMMA_MEDOID = 3.0, 4.0, 20.0

# %% [markdown]
# ## 3. Trimmed k-means as normmax attention (SPEC §5, **(open)**)
#
# Block 3's score for center $j$ and point $i$ is **one** Euclidean score
# $-\|K_3\bar x_i - Q_3 \bar c_j\|^2 = -\gamma_1\|e_j-y_i\|^2-\gamma_2\|c_j-x_i\|^2$ with
# $Q_3 = K_3 = \mathrm{diag}(\sqrt{\gamma_2} I_d, \sqrt{\gamma_1} I_k)$ (and a flag row in $K_3$ for the empty-cluster
# token). With $\gamma_1 \gg \gamma_2$ non-members are more than 1 below every member, so normmax gives them weight 0,
# and each center moves to the uniform mean of its $s^*$ closest members:
#
# $$c_j \leftarrow \frac{1}{s^*}\sum_{i \in \text{top } s^* \text{ members}} x_i, \qquad s^* = \arg\max_s \frac{z_{1:s} - 1}{s}, \quad z_i = -\gamma_2\|x_i - c_j\|^2 .$$

# %%
tr_trim = trimmed_kmeans_transformer(X, C0, T, GAMMA2, record=True)
ref_trim = trimmed_kmeans_attention(X, C0, T, GAMMA2)
print("penalties gamma1, gamma_flag:", np.round(separating_penalties(X, C0, GAMMA2), 2))
assert np.array_equal(tr_trim.labels, ref_trim.labels)
assert np.allclose(tr_trim.centers, ref_trim.centers, atol=1e-12)
W3 = tr_trim.layers[-1].weights["3"]             # (n + k, k): keys = [points, centers], queries = centers
assert W3.shape == (n + k, k) and np.allclose(W3.sum(axis=0), 1)
print("points each center averages in the last layer:", (W3[:n] > 0).sum(axis=0))
print("outliers kept by any center:", int((W3[:n][is_out] > 0).sum()))

# %% [markdown]
# ## 4. Robust k-means as sparsemax attention (the authors' rule)
#
# Assign as Lloyd; then $c_j \leftarrow \sum_{i\in M_j} p_i x_i$ with
# $p = \mathrm{sparsemax}_{i\in M_j}(-\gamma\|x_i-c_j\|^2/\sqrt d)$ (their default γ = 0.01; we use a larger γ so
# that the sparsity shows on unit-scale data). Same weights as above with $\gamma_2 = \gamma/\sqrt d$, sparsemax instead of normmax.

# %%
tr_rob = robust_kmeans_transformer(X, C0, T, GAMMA_ROBUST, record=True)
ref_rob = robust_kmeans(X, C0, T, GAMMA_ROBUST)
assert np.array_equal(tr_rob.labels, ref_rob.labels)
assert np.allclose(tr_rob.centers, ref_rob.centers, atol=1e-12)
W3r = tr_rob.layers[-1].weights["3"]
print("nonzero weights per center:", (W3r[:n] > 0).sum(axis=0), "| largest weight:", np.round(W3r.max(axis=0), 3))

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
# ## 6. Side by side: which points each center listens to
#
# The lines go from each center entering the last layer (circle) to every point with a nonzero weight in block 3's
# attention matrix `trace.layers[-1].weights["3"]`; the triangle is the new center. Lloyd listens to every member,
# outliers included; trimmed and robust drop the far members; k-medoids listens to one sampled member.

# %%
tr_lloyd = kmeans_transformer(X, C0, T, record=True)
assert np.array_equal(tr_lloyd.labels, lloyd(X, C0, T).labels)
traces = {"Lloyd": tr_lloyd, f"trimmed γ₂={GAMMA2:g}": tr_trim, f"robust γ={GAMMA_ROBUST:g}": tr_rob,
          f"k-medoids γ={GAMMA_MEDOID:g}": tr_med}
fig, axes = plt.subplots(2, 4, figsize=(14, 7))
for col, (name, tr) in enumerate(traces.items()):
    ax = axes[0, col]
    ax.scatter(X[0, ~is_out], X[1, ~is_out], s=5, c="0.6")
    ax.scatter(X[0, is_out], X[1, is_out], s=25, marker="x", c="r")
    ax.plot(tr.centers[-1][0], tr.centers[-1][1], "k^", ms=8)
    ax.set_title(f"{name}\nlog objective {tr.log_objective[-1]:.3f}", fontsize=9)
    ax.set_aspect("equal")
    plot_listening(X, tr.layers[-1].weights["3"], tr.centers[-2], tr.centers[-1], ax=axes[1, col])
    axes[1, col].set_xlim(0.3, 1.1)
    axes[1, col].set_ylim(0.0, 0.8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 7. How γ₂ sets the trimming level
#
# Normmax keeps member $i$ exactly when $z_i > \tau = (S_{s^*}-1)/s^*$, i.e. when
# $\gamma_2\,(\|x_i-c_j\|^2 - \bar d_j) < 1/s^*$ with $\bar d_j$ the mean squared distance of the kept members. So a
# cluster with many members trims anything noticeably farther than average unless $\gamma_2$ is small: $\gamma_2 = 0$
# keeps everyone (Lloyd), $\gamma_2 \to \infty$ keeps only the closest member. The fraction of points that enter some
# center's mean in the last layer:

# %%
gammas = np.logspace(-3, 3, 25)
kept = np.array([trimmed_kmeans_attention(X, C0, T, g).info["kept"][-1].mean() for g in gammas])
kept_out = np.array([trimmed_kmeans_attention(X, C0, T, g).info["kept"][-1][is_out].mean() for g in gammas])
assert np.all(np.diff(kept) <= 1e-12) and trimmed_kmeans_attention(X, C0, T, 0.0).info["kept"][-1].all()
fig, ax = plt.subplots(figsize=(5.5, 3.2))
ax.semilogx(gammas, kept, "o-", label="all points")
ax.semilogx(gammas, kept_out, "s--", label="outliers")
ax.set_xlabel("γ₂")
ax.set_ylabel("fraction kept (last layer)")
ax.legend()
plt.show()

# %% [markdown]
# ## 8. Comparison with Cuesta-Albertos, Gordaliza & Matrán (1997)
#
# Classical trimmed k-means keeps a **global** number $h = \lceil(1-\alpha)n\rceil$ of points — those closest to their
# nearest center — and alternates concentration steps: trim, assign, average. The attention rule trims **per cluster**
# and its level is set by γ₂, not by a proportion. Both ignore the outliers here:

# %%
ca = trimmed_kmeans(X, C0, T, alpha=0.05)
print("h =", ca.info["h"], "| trimmed points:", np.flatnonzero(ca.labels[-1] < 0))
assert set(np.flatnonzero(is_out)) <= set(np.flatnonzero(ca.labels[-1] < 0))
assert np.all(np.diff(ca.info["trimmed_objective"]) <= 1e-12)
print("centers, Cuesta-Albertos:\n", ca.centers[-1])
print("centers, normmax attention:\n", tr_trim.centers[-1])
print("largest center difference:", np.abs(ca.centers[-1] - tr_trim.centers[-1]).max().round(4))

# %% [markdown]
# ## 8b. The authors' trimmed k-means: a per-cluster quantile
#
# The authors' code has a third rule (`utils.trimmed_iters`, a baseline in their repository, not in the paper): assign as
# Lloyd, then per cluster take the threshold $\tau_j$ = the 0.95-quantile (linear interpolation, `torch.quantile`'s
# default) of the members' squared distances, and move $c_j$ to the mean of the members **strictly below** it. With
# distinct distances exactly $\lceil 0.95\,(m_j-1)\rceil$ of the $m_j$ members are kept, the closest: up to 20 members
# only the farthest is dropped. A singleton, or a cluster whose members are all at one distance, keeps no one: the
# authors' mean is NaN and they re-seed it with a random point; `kmt_ref` keeps the center (`info["stalled"]`).

# %%
qr = trimmed_kmeans_quantile(X, C0, T, q=0.95)
m = np.bincount(qr.labels[-1], minlength=C0.shape[1])
print("members per cluster:", m, "| kept:", [int(qr.info["kept"][-1][qr.labels[-1] == j].sum()) for j in range(len(m))])
assert all(qr.info["kept"][-1][qr.labels[-1] == j].sum() == np.ceil(0.95 * (m[j] - 1)) for j in range(len(m)))
print("outliers kept by the quantile rule:", int(qr.info["kept"][-1][is_out].sum()), "of", int(is_out.sum()))
for name, other in (("normmax attention", tr_trim), ("Cuesta-Albertos", ca)):
    print(f"largest center difference with {name}:", np.abs(qr.centers[-1] - other.centers[-1]).max().round(4))

# %% [markdown]
# **When the three coincide.** All three share Lloyd's assignment and move $c_j$ to the mean of a subset $K_j$ of
# its members, so at a step they give the same centers when they pick the same $K_j$ (or subsets with the same mean):
#
# * quantile = normmax attention exactly when, in every cluster, $s^*_j = |\{i : D_i < \tau_j\}|$ —
#   for distinct distances $s^*_j = \lceil q(m_j-1)\rceil$. For $2 \le m_j \le 20$ that is "drop exactly the
#   farthest member": $\gamma_2\,(D_{(m)} - \bar D_{\text{others}}) > 1/(m_j-1)$ and no smaller $s$ scores higher.
#   The quantile count depends on $m_j$ alone, normmax's on the gaps times γ₂, so a single γ₂ matches only when
#   every cluster's gaps happen to fall in the window;
# * quantile = Cuesta-Albertos exactly when $h = \sum_j |K_j|$ and every kept point is closer to its center than every
#   dropped point (CA trims by a global rank, the quantile per cluster);
# * none of them is Lloyd on a cluster of two or more distinct distances: the quantile always drops the farthest.
#
# Scaling shows the difference: shrink one cluster around its center by λ. The quantile rule keeps the same members at
# every scale; normmax at a fixed γ₂ keeps more and more, until it keeps all of them (Lloyd).

# %%
u = np.array([[0.0, 0.3, -0.5, 0.9, -1.4, 4.0]])        # (1, 6): one cluster around 0, one far member
C_ONE = np.array([[0.0]])                               # (1, 1)
for lam in (10.0, 1.0, 0.1, 0.01):
    n_q = trimmed_kmeans_quantile(lam * u, C_ONE, 1).info["kept"][0].sum()
    n_a = trimmed_kmeans_attention(lam * u, C_ONE, 1, 1.0).info["kept"][0].sum()
    print(f"λ = {lam:5g}: quantile keeps {n_q}, normmax (γ₂ = 1) keeps {n_a}")
    assert n_q == 5
assert trimmed_kmeans_attention(0.01 * u, C_ONE, 1, 1.0).info["kept"][0].all()

# %% [markdown]
# **No exact circuit.** Block 3 can only give $c_j$ a normalizer of its scores, each a fixed continuous function of
# the tokens. Shrink a cluster ($x_i = c_j + \lambda u_i$, λ → 0): the members' scores become equal, so any continuous
# normalizer (softmax, sparsemax, normmax with α < ∞, linear) tends to equal weights — the full mean, while the rule
# keeps dropping the farthest point at every λ; α = ∞ normmax keeps every member once the gaps are below $1/(s(s+1))$
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
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## Exercises
#
# 1. Replace α = ∞ by a finite α in the trimmed variant (`normmax(..., alpha=4)`): the center becomes a *weighted* mean.
#    Which members get the largest weights? Is there still a classical rule it equals?
# 2. Make γ₁ too small (e.g. `gamma1=0.2`) in `trimmed_kmeans_transformer`. Which non-members start to leak into block 3,
#    and which inequality of `separating_penalties` fails?
# 3. The robust rule with the authors' default γ = 0.01 on data in [0, 1]²: how many members get weight 0? Why?
# 4. Show that α = ∞ normmax keeps {z ≥ τ} and sparsemax {z > τ}: when do their supports differ? (Hint: `simplex_threshold`.)
# 5. For which α does Cuesta-Albertos trimmed k-means trim exactly the four outliers here? Compare its centers with
#    the attention rule's for γ₂ ∈ {1, 3, 10}.
# 6. Run the k-medoids transformer with γ = 0 and with γ = 1000. What does each do, and what does the second one equal?
# 7. Find, for the cluster `u` of §8b at λ = 1, the interval of γ₂ in which normmax keeps exactly the quantile rule's five
#    members. Is there one γ₂ that matches the quantile rule on every cluster of `X` at the first step?
