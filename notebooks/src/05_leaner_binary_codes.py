# %% [markdown]
# # 05 — The leaner transformer: binary codes instead of one-hot assignments
#
# Theorem 2.1 (notebook 01) writes each point's assignment as a one-hot vector $e_{j^*} \in \{0,1\}^k$,
# so the tokens grow with $k$: $d_{emb} = d + k$. The same authors' follow-up (C. Park, K. L. Clarkson,
# L. Horesh, T. Ito, P. Ram, *Leaner Transformers Can Easily Learn to Cluster*, arXiv 2610.09760) writes
# the **binary code** of $j^*$ instead: $d_{emb} = d + \lceil\log_2 k\rceil$ (its Section 2 and
# Appendix B). The paper itself is K. L. Clarkson, L. Horesh, T. Ito, C. Park, P. Ram, *Transformer
# Circuits Can Realize Clustering Algorithms*, ICML 2026 (preliminary version: *Finding Clustering
# Algorithms in the Transformer Architecture*, arXiv 2506.19125). Statements marked *follow-up* are the
# follow-up's, with its section; everything marked **(open)** is this project's own.
#
# What you will see, each step checked by an `assert`:
#
# 1. the codes $B_k$ and what they save;
# 2. the circuit: the same four blocks, with the code projector where Theorem 2.1 has $P_Y$;
# 3. at γ = ∞ it is Lloyd, bit for bit, and its centers are the one-hot circuit's;
# 4. outside the follow-up's assumptions: empty clusters, and kmt_ref's in-budget extension **(open)**;
# 5. ties: an averaged code is no code;
# 6. the leak at finite γ: a non-member's code is 1 bit away, not 2;
# 7. what it costs, against $k$;
# 8. the trained model with binary codes.
#
# **Learning objectives.** After this notebook you can
#
# - write the code matrix $B_k$ and say why $\lceil\log_2 k\rceil$ rows suffice for the decoder;
# - build the binary-code circuit from Theorem 2.1's by swapping $P_Y$ for the code projector, and check
#   it against Lloyd's algorithm bit for bit;
# - explain what an empty cluster and a tie do to a code, and how an extension without an extra row keeps
#   empty clusters exactly;
# - predict and measure the larger leak of the binary decoder at finite γ;
# - weigh what binary codes save (parameters, time, memory against $k$) against what they cost.
#
# *Prerequisites:* notebook 01. *Time:* about 30 minutes to read and run, including three short self-checks
# (05.6 and 05.7 after section 2, 05.8 after section 6; 5 minutes in all); the five exercises at the end take
# about 75 minutes more.

# %%
import numpy as np
import matplotlib.pyplot as plt

import kmt_ref
from kmt_ref import (lloyd, kmeans_transformer, binary_transformer, binary_codes, binary_weights, binary_layer,
                     code_lloyd, code_length, code_shift, toy_data)
from kmt_ref.core.attention import layer_forward
from kmt_ref.learning.model import d_emb_of

np.set_printoptions(precision=4, suppress=True, linewidth=110)
SEED = 19  # the toy example's seed (kmt_ref.data.toy_data), as in notebook 01
print("kmt_ref", kmt_ref.__version__, "| seed", SEED)

# %% [markdown]
# ## 1. The codes
#
# *Follow-up, Definition 2.1:* $B_k \in \{0,1\}^{m\times k}$ with $m = \lceil \log_2 k\rceil$; column $i$
# is the binary representation of $i - 1$ (here: column $j$, counting from 0, holds the bits of $j$), and
# its example $B_6$ has the rows 010101 / 001100 / 000011, so the first row is the least significant bit.
# For $k = 1$ the follow-up has $m = 0$; kmt_ref keeps one row (`code_length(1) == 1`).

# %%
B6 = binary_codes(6)                       # (3, 6)
print(B6.astype(int))
assert ["".join(map(str, r)) for r in B6.astype(int)] == ["010101", "001100", "000011"]
assert code_length(10) == 4 and code_length(1000) == 10

# %% [markdown]
# The trainable model has $12(d_{emb}^2 + d_{emb})$ parameters (twelve $d_{emb}\times d_{emb}$ matrices
# and their biases). At $d = 32$:

# %%
for k in (6, 10, 25, 32, 100, 1000):
    oh, bi = d_emb_of(32, k, "onehot"), d_emb_of(32, k, "binary")
    p_oh, p_bi = 12 * (oh ** 2 + oh), 12 * (bi ** 2 + bi)
    print(f"k = {k:4d}: d_emb {oh:4d} vs {bi:2d}, parameters {p_oh:>10,} vs {p_bi:>6,} ({1 - p_bi / p_oh:.1%} fewer)")

# %% [markdown]
# *The follow-up (its Section 1) claims "up to 75% reduction in the number of transformer parameters when
# k ≈ d". At d = 32 it is 57% at k = 25 and 66% at k = d = 32; 75% is the large-d limit of k = d, where
# $(d + \log_2 d)^2 / (2d)^2 \to 1/4$.*
#
# ## 2. The circuit
#
# Point tokens $[x_i; y_i]$ with $Y^{(0)} = 0$, center tokens $[c_j; b_j]$. *Follow-up, proof of Theorem
# B.1 (its Appendix B):* blocks 1 and 2 are Theorem 2.1's with $V_1 = -V_2 = P_B$ (the code projector);
# $Q_3 = K_3 = Q_4 = K_4 = P_B$ and $V_3 = -V_4 = P_X$. Block 3 scores point $i$ against center $j$ by
# $-\|b_j - y_i\|^2$: 0 for members, minus the number of differing bits otherwise, and its averaging
# hardmax takes the members' mean. (The follow-up's attention, its Definition 2.2, divides the scores by
# $\sqrt{d_{emb}}$; kmt_ref's hand-set circuits do not, which changes nothing at γ = ∞.)

# %%
X, C0 = toy_data(SEED)                      # X: (2, 24), C0: (2, 3)
d, n = X.shape
k = C0.shape[1]
params, emb = binary_weights(d, k, "nearest_code")    # the follow-up's weights, as stated
print("d_emb =", emb.d_emb, "| rows:", emb.rows("x"), emb.rows("code"))
Xbar, Cbar = emb.embed_points(X), emb.embed_centers(C0)   # (4, 24), (4, 3)
Xbar1, Cbar1 = layer_forward(params, Xbar, Cbar, binary_layer(empty="nearest_code"))
ref = lloyd(X, C0, 1)
codes = Xbar1[emb.rows("code")]             # (2, 24): the code of each point's nearest center
assert np.array_equal(codes, binary_codes(k)[:, ref.labels[0]])
assert np.array_equal(Cbar1[emb.rows("x")], ref.centers[1])
print("codes written by blocks 1 + 2:\n", codes.astype(int))

# %% [markdown]
# ### Exercise 05.6
#
# A self-check on §2 (and the code length of §1): how many code rows m does the circuit need for k = 33 clusters? `answer` = an integer.

# %%
### BEGIN SOLUTION
answer = int(np.ceil(np.log2(33)))                        # 2^5 = 32 codes are one short
assert answer == code_length(33)
### END SOLUTION

# %%
from kmt_ref.exercises import check
check("05.6", answer)

# %% [markdown]
# ### Exercise 05.7
#
# A self-check on §2: with k = 8 clusters (m = 3), a member of cluster 3 writes $y_i = b_3$. What is block 3's score
# $-\|b_4 - y_i\|^2$ of its token against center 4? `answer` = an integer.

# %%
### BEGIN SOLUTION
# 3 = 110 and 4 = 001, least significant bit first: all three bits differ
answer = -float(np.sum((binary_codes(8)[:, 4] - binary_codes(8)[:, 3]) ** 2))
assert answer == -3.0
### END SOLUTION

# %%
check("05.7", answer)

# %% [markdown]
# ## 3. At γ = ∞: Lloyd, bit for bit
#
# `binary_transformer` runs $T$ shared-weight layers. By default it uses kmt_ref's extension of §4,
# which keeps empty clusters; the follow-up's construction is `empty="nearest_code"`.

# %%
T = 5
tr = binary_transformer(X, C0, T)
ref = lloyd(X, C0, T)
assert np.array_equal(tr.labels, ref.labels) and np.array_equal(tr.centers, ref.centers)
assert np.array_equal(tr.centers, kmeans_transformer(X, C0, T).centers)   # the one-hot circuit's centers
print("log objective, transformer:", np.round(tr.log_objective, 4))
print("log objective, Lloyd:      ", np.round(ref.log_objective, 4))

# %% [markdown]
# *Bit for bit, not to rounding: block 3's averaging hardmax sums the members in key order, the very
# arithmetic of Lloyd's `cluster_means`. tests/algorithms/test_binary.py checks it on the whole case
# table (ties, duplicates, empty clusters, k = 1, k = n).*
#
# ## 4. Empty clusters
#
# The follow-up's Theorem B.1 assumes none (its proof also assumes distinct points and a unique nearest
# center, which kmt_ref does not need). Without that assumption, an empty cluster $j$ has no member at code
# distance 0, so the averaging hardmax takes the mean of the points whose codes are **nearest** to $b_j$
# in Hamming distance. Below, $k = 4$ (codes 00, 10, 01, 11): cluster 3 (11) empties; clusters 1 and 2
# are one bit away, cluster 0 two bits.

# %%
X4 = np.array([[0.0, 1.0, 10.0, 11.0, 20.0, 22.0]])
C4 = np.array([[0.5, 10.5, 21.0, 500.0]])
nc = binary_transformer(X4, C4, 1, empty="nearest_code")
print("follow-up, nearest code:", nc.centers[1], "| code_lloyd:", code_lloyd(X4, C4, 1).centers[1])
print("Lloyd (keep):           ", lloyd(X4, C4, 1).centers[1])
assert np.allclose(nc.centers[1], [[0.5, 10.5, 21.0, 63 / 4]], rtol=0, atol=1e-14)
swapped = binary_transformer(X4, C4[:, [1, 0, 2, 3]], 1, empty="nearest_code")
print("centers 0 and 1 swapped:", swapped.centers[1], "(the rule depends on the code order)")

# %% [markdown]
# **kmt_ref's extension (open), within the token budget.** Theorem 2.1 in kmt_ref adds a flag row so that a
# center can attend to its own token. Here no row is needed: points write their code shifted by
# $\delta = 2^{-p}$ in every bit ($y_i = b_{j^*} + \delta\mathbf 1$, a bias of $V_1$), block 3's query
# carries the same shift (a bias of $Q_3$), and block 3 also reads the center tokens. Against center
# $j$: members score 0, other points $\le -1$, its own token $-m\delta^2 \in [-\tfrac12, 0)$, other
# centers less. So an empty cluster keeps $c_j$.

# %%
tr4 = binary_transformer(X4, C4, 1, record=True)
S3 = tr4.layers[0].scores["3"]              # (n + k, k): keys = 6 points then 4 centers; queries = centers
print("delta =", code_shift(code_length(4)), "\nblock 3 scores (rows: 6 points, 4 centers):\n", S3 + 0.0)
assert np.array_equal(tr4.centers[1], lloyd(X4, C4, 1).centers[1])

# %% [markdown]
# ## 5. Ties
#
# As γ → ∞ the softmax tends to the **averaging** hardmax: a point equidistant from centers $j$ and $l$
# writes $y = (b_j + b_l)/2$, which is no code at all: it is $\tfrac14$ per differing bit away from
# both, and at least that far from every other code. kmt_ref's default, the lowest-index hardmax in block 1 (as in notebook 01), gives it Lloyd's
# answer instead.

# %%
Xt, Ct = np.array([[0.0, -2.0, 2.0]]), np.array([[-1.0, 1.0]])
avg = binary_transformer(Xt, Ct, 1, tie="average", empty="nearest_code")
low = binary_transformer(Xt, Ct, 1)
print("averaging:", avg.centers[1], "| exact codes after the layer:", avg.one_hot[0], "of", Xt.shape[1])
print("lowest:   ", low.centers[1], "| Lloyd:", lloyd(Xt, Ct, 1).centers[1])
assert np.array_equal(low.centers[1], lloyd(Xt, Ct, 1).centers[1]) and avg.one_hot[0] == 2

# %% [markdown]
# ## 6. The leak at finite γ
#
# With one-hot codes a non-member is at code distance 2 from a center's query; with binary codes some
# are at distance 1. At finite γ block 3 gives each non-member a weight of $e^{-\gamma\,\cdot\,
# \mathrm{distance}}$ relative to a member, so the binary decoder leaks roughly $e^{\gamma}$ times more.
# That is in kmt_ref's scores, which are not divided by $\sqrt{d_{emb}}$. In the follow-up's
# (Definition 2.2) the two weights are $e^{-\gamma/\sqrt{d + m}}$ and $e^{-2\gamma/\sqrt{d + k}}$,
# and binary leaks more only while $d + k < 4(d + m)$. The follow-up notes (Appendix A) that its codes can
# introduce "an arbitrary topological order among the cluster centers" at finite γ.

# %%
from kmt_ref.viz.binary_figures import LEAK_FLOOR, LEAK_MODES, LEAK_VARIANTS, finite_gamma_leak
from kmt_ref.viz.canvas import drawn_values

gammas = (1.0, 3.0, 10.0, 30.0, 100.0)
leak = finite_gamma_leak(gammas, seeds=range(2), n_per_cluster=50)
fig, ax = plt.subplots(figsize=(6.5, 4.2))
for label, (_, style) in LEAK_VARIANTS.items():   # below LEAK_FLOOR = 1e-12 is rounding: drawn at the floor
    ax.plot(gammas, np.median(drawn_values(leak["center", label], LEAK_FLOOR, log=True), axis=1), "o",
            label=label, **style)
ax.set(xscale="log", yscale="log", xlabel="gamma (block 3 only; block 1 exact)",
       ylabel="max |c - c_Lloyd| after one layer", ylim=(LEAK_FLOOR / 4, 1),
       title="The leak at finite gamma: one layer, k = 8, d = 2, n = 400\n(median of 2 draws; data in [0, 1])")
ax.title.set_fontsize(10)
ax.axhline(LEAK_FLOOR, color="0.5", lw=0.6, ls=":")
ax.legend(fontsize=8)
plt.show()
med = {label: np.median(leak["center", label], axis=1) for label in LEAK_VARIANTS}
b, o, f = med["binary (follow-up)"], med["one-hot (paper, no flag)"], med["one-hot + flag (kmt_ref)"]
print("median max |c - c_Lloyd| at gamma =", ", ".join(f"{g:g}" for g in gammas))
for label in LEAK_VARIANTS:
    print(f"  {label:31s}", "  ".join(f"{v:8.2g}" for v in med[label]))
assert np.all(leak["center", "binary (follow-up)"][2] > 100 * leak["center", "one-hot (paper, no flag)"][2])
assert o[2] < f[2] < 10 * o[2] and 100 * f[2] < b[2]   # the flag: a little above one-hot, far below binary

# %% [markdown]
# *The dashed curves are kmt_ref's empty-cluster extensions. The one-hot flag puts a center's own token
# at −1: one token at weight $e^{-\gamma}$ relative to a member, beside the non-members' $e^{-2\gamma}$. It
# costs little: at γ ≤ 3 its curve lies on the plain one-hot one, at γ = 10 it is a few times above it and
# more than a hundred times below binary (the numbers printed above), and from γ = 30 both are at rounding
# (5.6e-16, printed; drawn at the dotted floor, 1e-12). The binary shift puts the center's own token at $-m\delta^2$, closer still:
# exact at γ = ∞, it costs the most at finite γ (still above the floor at γ = 100: the last row printed).*

# %% [markdown]
# **The leak, animated.** Block 1 exact (γ = ∞) and only block 3 at γ = 3, on the toy example: the
# binary circuit (kmt_ref's default, with the empty-cluster extension) as filled dots against Lloyd's
# algorithm as hollow circles. Since the assignment is exact, the middle panel's block 1 attention is
# one-hot; the drift comes from the centers' update alone, each center pulled toward non-members at
# code distance 1. The printout compares it with the one-hot circuit under the same γ.

# %%
from IPython.display import HTML
from kmt_ref.viz.animation import trace_animation_html

T_anim = 5
ref_anim = lloyd(X, C0, T_anim)
binary_leak = binary_transformer(X, C0, T_anim, gamma_update=3.0, record=True)
onehot_leak = kmeans_transformer(X, C0, T_anim, gamma_update=3.0)
for name, run in (("binary ", binary_leak), ("one-hot", onehot_leak)):
    print(f"{name}: max |c - c_Lloyd| over the layers = {np.abs(run.centers - ref_anim.centers).max():.4f}, "
          f"final log J gap = {run.log_objective[-1] - ref_anim.log_objective[-1]:+.4f}")
assert np.abs(binary_leak.centers - ref_anim.centers).max() > 5 * np.abs(onehot_leak.centers - ref_anim.centers).max()
html_binary = trace_animation_html(X, binary_leak, ref_anim, trace_label="binary codes")
print(f"animation: {len(html_binary) / 1e3:.0f} kB of HTML, {T_anim + 1} frames")
HTML(html_binary)

# %% [markdown]
# ### Exercise 05.8
#
# A self-check on §6: at γ = 10 in block 3 (kmt_ref's scores), a non-member whose code differs from the center's in
# one bit gets, relative to a member, a weight of
#
# - (a) $e^{-20}$
# - (b) $e^{-10}$
# - (c) exactly 0
# - (d) $e^{-10/\sqrt{d_{emb}}}$
#
# `answer` = the letter, as a string.

# %%
### BEGIN SOLUTION
# members score 0, a non-member one bit away -1: at gamma = 10 the softmax weights are in the ratio e^-10 : 1
answer = "b"
### END SOLUTION

# %%
check("05.8", answer)

# %% [markdown]
# ## 7. What it costs
#
# `benchmarks/bench_binary.py` measures, at $d = 32$ and $k$ from 6 to 1000, the forward pass of the
# trainable model (one task of 1,024 points) and of the exact circuits; its output is committed. The
# follow-up's Table 1 (d = 32, n = 1024, 32 tasks at once, one laptop GPU) reports at k = 1000 a forward
# pass of 193.07 ms against 15.90 ms (12.14×), a backward pass 9.54× faster and 69.3% less memory, and
# binary slower at k = 6 (0.88×).

# %%
from kmt_ref.viz.binary_figures import COST_CSV, read_cost_csv

from kmt_ref.viz.binary_figures import plot_binary_cost

cost = read_cost_csv(COST_CSV)
fig = plot_binary_cost(cost)   # figures/fig_binary_cost.png
plt.show()
for i, kk in enumerate(cost["binary"]["k"].astype(int)):
    o, bi = cost["onehot"], cost["binary"]
    print(f"k = {kk:4d}: model forward {1e3 * o['model_s'][i]:8.1f} ms vs {1e3 * bi['model_s'][i]:7.1f} ms "
          f"({o['model_s'][i] / bi['model_s'][i]:4.1f}x), peak {o['model_peak_mb'][i]:5.1f} vs "
          f"{bi['model_peak_mb'][i]:4.1f} MB")
from kmt_ref.algorithms.binary import FOLLOW_UP_TABLE1_MS   # the follow-up's Table 1, k = 1000 (forward pass, GPU)
print("the follow-up's Table 1 (GPU, ms) at k = 1000:", ", ".join(f"{e} {v:.2f}" for e, v in FOLLOW_UP_TABLE1_MS.items()),
      f"({FOLLOW_UP_TABLE1_MS['onehot'] / FOLLOW_UP_TABLE1_MS['binary']:.2f}x)")

# %% [markdown]
# ## 8. Learning with binary codes
#
# `python -m kmt_ref train --config paper --embedding binary` trains the one-layer model of notebook 04
# on binary-code tokens ($d_{emb} = 36$ at $d = 32$, $k = 10$; the cell prints the parameter counts). The
# committed model `paper_binary` is trained at the authors' main setting (their `expts.md`: n = 512, d = 32,
# k = 10, 10,000 steps), seed 0; its evaluation on the same 320 seeded tasks as notebook 04's models is
# stored in `kmt_ref/models/evaluation_binary.npz`.
# *Follow-up, Section 4 (Figure 6, with its own loss):* with re-embedding at every step, binary and
# one-hot outperform Lloyd's iterations, the model without token embeddings does not.

# %%
from kmt_ref.learning import MODELS_DIR, load_checkpoint, load_evaluation, setting_label

key = setting_label("random", 512, "normal")
ev, evb = load_evaluation(MODELS_DIR / "evaluation.npz")[0][key], load_evaluation(MODELS_DIR / "evaluation_binary.npz")[0][key]
assert np.array_equal(ev["lloyd"], evb["lloyd"])         # the same tasks, the same Lloyd
final = {"Lloyd": ev["lloyd"], "one-hot": ev["paper"], "d-only": ev["paper_d_only"], "binary": evb["paper_binary"]}
for name, curves in final.items():
    print(f"{name:8s} log objective after 20 steps: {curves[:, -1].mean():.3f}")
ck_bin, ck_oh = load_checkpoint(MODELS_DIR / "paper_binary.npz"), load_checkpoint(MODELS_DIR / "paper.npz")
print(f"binary model: {ck_bin.step} steps, {ck_bin.n_params:,} parameters against one-hot's {ck_oh.n_params:,} "
      f"({1 - ck_bin.n_params / ck_oh.n_params:.0%} fewer)")
per_task = final["binary"][:, -1] - final["one-hot"][:, -1]                  # (320,) the same tasks
print(f"binary - one-hot: {per_task.mean():+.3f} (per-task standard error {per_task.std(ddof=1) / np.sqrt(per_task.size):.3f})")
assert final["binary"][:, -1].mean() < final["Lloyd"][:, -1].mean() < final["d-only"][:, -1].mean()

# %% [markdown]
# *Binary ends a little above one-hot, by less than one standard error (printed): no difference we can
# resolve; both beat Lloyd, d-only does not. The follow-up also says (Section 3, Figure 2) that binary
# converges more slowly than one-hot at small d, a difference that vanishes as d grows. The repository holds
# two 3,000-step runs at d = 4 (one seed; `figures/data/binary_d4_validation.csv`, drawn and discussed in
# docs/BINARY.md) in which binary's validation score leaves its plateau later than one-hot's.*

# %% [markdown]
# ## Summary
#
# - Binary codes need $\lceil\log_2 k\rceil$ rows: $d_{emb} = d + \lceil\log_2 k\rceil$ against $d + k$.
# - The circuit is Theorem 2.1's with the code projector $P_B$ in place of $P_Y$; at γ = ∞ it equals
#   Lloyd bit for bit, and its centers are the one-hot circuit's.
# - The follow-up's Theorem B.1 assumes no empty cluster: without that, an empty cluster moves to the mean of the
#   points with the nearest codes. kmt_ref's shift (two biases, no extra row) keeps it exactly **(open)**.
# - A tie under the true limit (averaging hardmax) writes an average of codes, which is no code; the
#   lowest-index hardmax keeps Lloyd's rule.
# - At finite γ a non-member is one bit away instead of two: in kmt_ref's unscaled scores the binary
#   decoder leaks about $e^{\gamma}$ times more (the follow-up divides its scores by $\sqrt{d_{emb}}$).
# - Trained at the authors' main setting (their `expts.md`), the binary model beats Lloyd as the one-hot one
#   does, with 26% fewer parameters (section 8 prints both).

# %% [markdown]
# ## Exercises
#
# How to work them (what `answer` holds, what `check` prints, parts graded apart, the precision a number
# needs): [Working the exercises](../docs/EXERCISES.md).

# %%
from kmt_ref.exercises import check, report

# %% [markdown]
# ### Exercise 05.1
#
# Write a function `codes(k)` that returns $B_k$, shape $(m, k)$ with $m = \lceil\log_2 k\rceil$ rows
# (one row at $k = 1$, as kmt_ref keeps, §1): column $j$ holds the bits of $j$ (from 0), the first row the
# least significant bit. Use NumPy or Python's integers: your function may not call `binary_codes`,
# `code_length` or a code embedding's `embed_centers`. `answer` is the function; `check` calls it on
# values of $k$ it chooses itself, $k = 1$ and powers of two among them.

# %%
### BEGIN SOLUTION
def codes(k):
    m = max(1, int(np.ceil(np.log2(k))))          # k = 1: one row
    return ((np.arange(k)[None, :] >> np.arange(m)[:, None]) & 1).astype(float)   # (m, k): bit r of j in row r


assert all(np.array_equal(codes(kk), binary_codes(kk)) for kk in (1, 2, 6, 8, 9, 1000))   # the library, outside codes
answer = codes
### END SOLUTION

# %%
check("05.1", answer)

# %% [markdown]
# ### Exercise 05.2
#
# Block 3 scores point $i$ against center $j$ by $-\|q_j - y_i\|^2$, so the smallest squared distance
# between two distinct codes is block 3's margin against a non-member. For $k = 10$, how many pairs of
# centers $\{j, l\}$ ($j < l$) sit at that smallest distance, with binary codes and with one-hot codes?
# `answer` is the pair `(binary, onehot)` of counts (exact: integers; `check` grades the two apart). Then,
# in a few sentences: why do $\lceil\log_2 k\rceil$ rows suffice for the decoder, and would fewer rows do
# if the codes were allowed to be any real numbers?

# %%
### BEGIN SOLUTION
B = binary_codes(10)
D = ((B[:, :, None] - B[:, None, :]) ** 2).sum(0)          # (10, 10) squared code distances
E = ((np.eye(10)[:, :, None] - np.eye(10)[:, None, :]) ** 2).sum(0)
upper = np.triu_indices(10, 1)                            # the 45 pairs j < l
print("smallest squared distances:", D[upper].min(), E[upper].min())
answer = (int(np.sum(D[upper] == D[upper].min())), int(np.sum(E[upper] == E[upper].min())))
print(answer)
### END SOLUTION

# %%
check("05.2", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* (15, 45): with binary codes 15 of the 45 pairs are one bit apart (the best score of a
# non-member is −1), with one-hot codes all 45 are two apart (−2). At γ = ∞ block 3 only needs the members to score strictly more than every
# non-member, that is, $k$ **distinct** codes: any margin > 0 will do, orthogonality is not needed.
# $\lceil\log_2 k\rceil$ is the fewest rows that hold $k$ distinct vectors in $\{0,1\}^m$, and block 4
# needs the codes distinct too (it is then the identity). With real codes one row would do at γ = ∞:
# the scalar codes $0, 1, \dots, k-1$ are distinct, 1 apart. What one row loses shows at a tie
# (exercise 05.3) and, with a code range growing like $k$, in what a trained model must represent.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 05.3
#
# Give the follow-up's circuit **scalar** codes instead of bits: one code row, center $j$'s code the
# number $j$ ($d_{emb} = d + 1$), block 1 with the averaging hardmax (`tie="average"`, the softmax's limit)
# and block 3 over the points only (`empty="nearest_code"`), all at γ = ∞. Write a function
# `scalar_layer(X, C0)` that returns the centers after one layer, shape $(d, k)$, from what the blocks do
# (§2 says what blocks 1 and 3 score; blocks 2 and 4 reset), computed with NumPy, not by running the
# circuit: your function may not call `layer_forward`, `fast_layer_forward`, `attention`, `run_layers`,
# `binary_transformer` or the blocks' kernels `attention_scores` and `softmax_attention`.
# `answer` is the function; `check` calls it on ties it chooses itself, on an empty cluster and on untied
# data (to 1e-12).
#
# Then take `X = [[0, -2, 2, 10, 11]]` and `C0 = [[-1, 10, 1]]`, where the point 0 ties between centers 0
# and 2, and compare with binary codes (`binary_transformer(..., tie="average", empty="nearest_code")`) and
# with Lloyd: what did the tie write into $y$ in each case?

# %%
### BEGIN SOLUTION
def scalar_layer(X, C0):
    k = C0.shape[1]
    D = ((X[:, :, None] - C0[:, None, :]) ** 2).sum(axis=0)        # (n, k) squared distances
    tied = D == D.min(axis=1, keepdims=True)                        # block 1's maxima (the averaging hardmax)
    y = (tied * np.arange(k)).sum(axis=1) / tied.sum(axis=1)        # (n,) the mean of the tied codes
    S = -(np.arange(k)[:, None] - y[None, :]) ** 2                  # (k, n) block 3: -(j - y_i)^2
    W = S == S.max(axis=1, keepdims=True)                           # block 3's maxima
    return (X @ W.T) / W.sum(axis=1)                                # (d, k) their means


answer = scalar_layer
X5, C5 = np.array([[0.0, -2.0, 2.0, 10.0, 11.0]]), np.array([[-1.0, 10.0, 1.0]])
p1, _ = binary_weights(1, 2, "nearest_code")                       # the circuit, outside the function: a one-row code slot
Xs = np.vstack([X5, np.zeros((1, 5))])                              # (2, 5) tokens [X; 0]
Cs = np.vstack([C5, [[0.0, 1.0, 2.0]]])                             # (2, 3) tokens [C0; (0, 1, 2)]
_, Cs1 = layer_forward(p1, Xs, Cs, binary_layer(empty="nearest_code", tie="average"))
assert np.array_equal(answer(X5, C5), Cs1[:1])
print("scalar codes:", answer(X5, C5), "| binary:",
      binary_transformer(X5, C5, 1, tie="average", empty="nearest_code").centers[1], "| Lloyd:", lloyd(X5, C5, 1).centers[1])
### END SOLUTION

# %%
check("05.3", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* Scalar codes: the tied point writes $y = (0 + 2)/2 = 1$, exactly the code of center 1,
# so it joins the far cluster and center 1 moves to $(0 + 10 + 11)/3 = 7$. Binary codes: it writes
# $(b_0 + b_2)/2 = (0, \tfrac12)$, no code (a quarter away from both), so it drops out of every mean:
# $[-2, 10.5, 2]$. Lloyd gives it to center 0: $[-1, 10.5, 2]$. The mean of two distinct binary codes
# has a coordinate ½, so it is never a code; that is what the bits buy over one real row. With scalar
# codes the mean $(j + l)/2$ is a code when $j + l$ is even; when it is odd (adjacent centers, for one) it is
# a half, no code, and the point drops out of every mean, unless a cluster is empty and that $y$ is the
# nearest to its code.
# ### END SOLUTION

# %% [markdown]
# ### Exercise 05.4
#
# Write a function `leak(X, C0, gamma)` that runs one layer with block 3 at `gamma_update=gamma` and
# block 1 exact, once with binary codes (`binary_transformer(..., empty="nearest_code")`) and once with
# one-hot codes without the flag (`plain_onehot_transformer` from `kmt_ref.viz.binary_figures`), and
# returns the ratio of the largest center errors against Lloyd (`lloyd(X, C0, 1)`), binary / one-hot.
# `answer` is the function; `check` calls it on the toy example at γ = 10 and on data and γ it chooses
# itself (relative tolerance 1e-6). Print the ratio on the toy example (`X, C0` above) at γ = 10: why is it
# of the order of $e^{10}$? (kmt_ref's scores are $-\gamma\|q - k\|^2$, not divided by $\sqrt{d_{emb}}$ as
# in the follow-up.)

# %%
### BEGIN SOLUTION
from kmt_ref.viz.binary_figures import plain_onehot_transformer


def leak(X, C0, gamma):
    c_ref = lloyd(X, C0, 1).centers[1]
    err_b = np.max(np.abs(binary_transformer(X, C0, 1, gamma_update=gamma, empty="nearest_code").centers[1] - c_ref))
    err_o = np.max(np.abs(plain_onehot_transformer(X, C0, 1, gamma_update=gamma).centers[1] - c_ref))
    return err_b / err_o


answer = leak
print(f"toy example, gamma = 10: ratio {leak(X, C0, 10.0):.4g}; exp(10) = {np.exp(10):.3g}")
### END SOLUTION

# %%
check("05.4", answer)

# %% [markdown]
# ### Exercise 05.5
#
# Prove the order of block 3's scores in kmt_ref's extension (§4): with $y_i = b_{\ell_i} + \delta\mathbf 1$,
# query $b_j + \delta\mathbf 1$ and keys the points and the centers $b_l$, members score 0, other points at
# most $-1$, center $j$'s own token $-m\delta^2$, and every other center strictly less, whenever
# $m\delta^2 < 1$ and $\delta < \tfrac12$. Why does `code_shift` choose a power of two?
#
# Two checked questions come first; `answer = (letter, score)`:
#
# 1. Which ordering needs $\delta < \tfrac12$? (a) the members above the other points; (b) center $j$'s own
#    token above the other points; (c) center $j$'s own token above every other center; (d) that the
#    comparisons are exact in floating point.
# 2. For $k = 8$ ($m = 3$, $\delta$ = `code_shift(3)` $= \tfrac14$): the highest score of another center's
#    token against center $j$'s query, over all pairs $l \ne j$ (a number, to 4 significant digits).
#
# Then write the proof.

# %%
### BEGIN SOLUTION
m8, delta8 = code_length(8), code_shift(code_length(8))
B8 = binary_codes(8)
S_cc = -((B8[:, None, :] + delta8 - B8[:, :, None]) ** 2).sum(axis=0)    # (k, k): key b_l, query b_j + delta 1
best = S_cc[~np.eye(8, dtype=bool)].max()
print(f"m = {m8}, delta = {delta8}: own token {-m8 * delta8 ** 2}, highest other center {best}")
assert best == -((1 - delta8) ** 2 + (m8 - 1) * delta8 ** 2)
answer = ("c", best)
### END SOLUTION

# %%
check("05.5", answer)

# %% [markdown]
# ### BEGIN SOLUTION
# *Model answer.* A point of cluster $l$: $-\|b_l + \delta\mathbf 1 - b_j - \delta\mathbf 1\|^2 = -\|b_l - b_j\|^2$,
# 0 if $l = j$ and $-h \le -1$ otherwise ($h \ge 1$ differing bits). Center $j$'s own token:
# $-\|b_j - b_j - \delta\mathbf 1\|^2 = -m\delta^2 \in (-1, 0)$. Another center $l$ with $h \ge 1$ differing
# bits: each differing bit contributes $(\pm 1 - \delta)^2 \ge (1 - \delta)^2$ and each equal bit $\delta^2$,
# so the score is at most $-(h(1-\delta)^2 + (m - h)\delta^2) < -m\delta^2$ because $(1-\delta)^2 > \delta^2$
# for $\delta < \tfrac12$. The averaging hardmax therefore takes the members' mean, or $c_j$ alone when
# there are none: Lloyd's "keep". A power of two makes every score a short sum of dyadic numbers, exact in
# floating point, so the comparisons are exact too.
#
# So (1) is (c): $\delta < \tfrac12$ makes a differing bit cost more than an equal one; (b) needs
# $m\delta^2 < 1$, (a) nothing (the shift cancels). (2) The bound is reached by an $l$ with a 1 where $b_j$
# has a 0 and equal bits elsewhere: $-((1 - \delta)^2 + (m - 1)\delta^2) = -\tfrac{11}{16}$ for $m = 3$,
# $\delta = \tfrac14$, between the own token's $-\tfrac3{16}$ and the other points' $-1$. The order needs
# no more: only the members and, for an empty cluster, the own token reach the maximum.
# ### END SOLUTION

# %%
report("05")
