r"""The softmax attention block as one autograd primitive, with its vector-Jacobian product derived by hand.

Training (:mod:`kmt_ref.learning`) differentiates the generic layer of
:mod:`kmt_ref.core.attention`. Left to itself, autograd records each of the
dozen NumPy operations of a block (projections, scores, maximum, exp, sum,
division, dropout, product) and runs their vector-Jacobian products one by one,
each allocating a (B, r, q) array. :func:`softmax_attention` is the whole block

    A = V_Z softmax(S) (with dropout, gamma inside S),   Q_Z = Q Z + b_Q,  K_Z = K Z' + b_K,  V_Z = V Z' + b_V,

as **one** primitive: its forward pass keeps what the backward pass needs (as
``ctx.save_for_backward`` does in PyTorch; here the dict ``saved``), and its
backward pass is the derivation below. It lives here, in the core beside the
equation it differentiates (:func:`kmt_ref.core.attention.attention` calls it
when autograd is tracing a softmax block), and not in :mod:`kmt_ref.core.exact`,
whose shortcuts are exact at gamma = inf and are never differentiated. It is
the package's only autograd primitive (``defvjp_argnums``: one rule computes the
shared intermediate ``dS`` once for all differentiated arguments, where
``defvjp`` would make one rule per argument).

Notation. Columns are queries ``i`` (q of them), rows of the scores are keys
``j`` (r); ``a = gamma / scale``. A bias is a weight on a constant row of ones:
``Z~ = [Z; 1]``, ``Q~ = [Q, b_Q]``, so ``Q_Z = Q~ Z~`` (likewise K, V, ``Z'~``).

The forward pass (the same function, its own rounding)
-------------------------------------------------------
1. The Euclidean score of key j for query i is
   ``-a ||k_j - q_i||^2 = a (2 k_j.q_i - ||k_j||^2) - a ||q_i||^2``.
   A softmax over j does not change when a constant is added to column i, so
   the last term is dropped: the score array used is
   ``S_ji = a (2 k_j.q_i - ||k_j||^2) = [k_j, -||k_j||^2] . [2a q_i; a]``,
   one matrix product. Dot scores: ``S_ji = a k_j.q_i``.
2. ``E = exp(S - smax)``, ``smax_i = max_j S_ji`` (no overflow; a constant for the
   derivative, as in the plain path); ``z_i = sum_j E_ji``.
3. Dropout (probability ``p``, the dropped entries ``D`` drawn by the caller):
   ``Et`` is E with the entries of ``D`` set to 0. The weights are
   ``W = Et / ((1 - p) z)``: the plain path's ``softmax * keep / (1 - p)``.
4. ``A = V_Z W = y u`` with ``y = V~ P~``, ``P~ = Z'~ Et`` (its last row is
   ``zt_i = sum_j Et_ji``) and ``u_i = 1 / ((1 - p) z_i)``: the division is
   applied to the small (d_v, q) result, and the (r, q) product is taken with
   the tokens rather than with ``V_Z``, so that the gradient of V is small.

The (r, q) arrays are handled a few tasks at a time (:data:`CHUNK_ENTRIES`),
so that the passes over them run in the cache; rows of ``Z'`` that are 0 in
every task (the points' scratch rows ``Y = 0`` of the one-hot embedding) are
left out of the (r, q)-sized products, whose terms they make exact zeros. These are the plain path's
numbers in another order of operations (tests/core/test_gradients.py).

The backward pass (the derivation)
----------------------------------
Given ``G = dL/dA`` (d_v, q); ``Gu = G u`` (column i times ``u_i``).

- **V:** ``A_i = u_i sum_j V~ z'~_j Et_ji``, so ``dV~ = Gu P~^T``.
- **Through the normalisation:** ``dA_i / dz_i = -y_i u_i / z_i``, so
  ``gz_i = -(G_i . y_i) u_i / z_i``.
- **Through the weights:** ``dL/dEt_ji = (V_Z)_j . Gu_i = H_ji``, ``H = V_Z^T Gu``.
- **Through exp:** ``E_ji`` enters ``Et`` (unless dropped) and ``z_i``, so
  ``dL/dE_ji = [ji not in D] H_ji + gz_i``; with ``dE_ji / dS_ji = E_ji``,

  ``dS = Et * (H + gz) + [ji in D] E_ji gz_i``

  (in place in H; the dropped entries from the values of E saved for them).
  This is the softmax rule ``W * (dW - sum_j W dW)`` in unnormalised form, and
  its column sums vanish: ``c_i = sum_j dS_ji = Gu_i . y_i + gz_i z_i = 0``.
- **Scores to projections.** Euclidean: ``dS_ji / dq_i = 2a k_j`` and
  ``dS_ji / dk_j = 2a (q_i - k_j)``. With ``r_j = sum_i dS_ji`` and
  ``R~ = Z'~ dS`` (d+1, q), the one product shared by Q and K:

  ``dQ_Z = 2a K_Z dS = 2a K~ R~``,   ``dK_Z = 2a (Q_Z dS^T - K_Z diag(r))``.

  Dot scores: ``dQ_Z = a K~ R~``, ``dK_Z = a Q_Z dS^T``.
- **Weights**, summed over the tasks of a batch, with ``M = sum R~ Z~^T`` ((d+1, d+1)):
  ``dQ~ = sum dQ_Z Z~^T = 2a K~ M``;
  ``dK~ = sum dK_Z Z'~^T = 2a (Q~ M^T - sum (K_Z diag(r)) Z'~^T)``.
  The last column of ``dQ~``, ``dK~``, ``dV~`` is the bias's gradient.
- **Tokens**, when differentiated (block 3 reads the updated points):
  ``dZ~ = Q~^T dQ_Z``;
  ``dZ'~ = K~^T dK_Z + V~^T Gu Et^T = (K~^T 2a Q_Z) dS^T - 2a (K~^T K_Z) diag(r) + (V~^T Gu) Et^T``;
  the last row (of the ones) is dropped.

The plain path's gradient has one more term, ``-2a q_i c_i`` in ``dQ_Z`` (from
the dropped ``||q_i||^2``); it is 0 because ``c = 0``. The tests check the rule
against autograd's own gradient of the plain path in float64.
"""
from __future__ import annotations

import numpy as onp
from autograd.extend import defvjp_argnums, primitive

__all__ = ["softmax_attention", "dropped_entries", "CHUNK_ENTRIES"]

#: argument positions of softmax_attention that can be differentiated
Z_, ZK_, Q_, K_, V_, BQ_, BK_, BV_ = range(8)

#: entries of the (r, q) weights handled at a time (1 MB of float32): the passes over them (maximum,
#: exp, sum, and the backward pass's) then run in the cache instead of streaming a (B, r, q) array
CHUNK_ENTRIES = 1 << 18


def dropped_entries(rng, shape, p, chunk=1 << 16):
    """Flat indices of the attention entries that dropout removes, or None for ``p = 0``.

    The same draw as the plain path's ``keep = rng.random(shape) >= p``
    (:func:`kmt_ref.core.attention.attention`): one uniform number per entry in
    C order, dropped where it is ``< p``, so that the random stream, and the
    masks, are the same. The numbers are drawn ``chunk`` at a time into one
    buffer (``rng.random(out=...)`` fills it in the same order), which keeps
    them in the cache instead of writing a (B, r, q) float64 array.
    """
    if not p:
        return None
    size = int(onp.prod(shape))
    buf = onp.empty(min(chunk, size))
    parts = []
    for start in range(0, size, buf.size):
        v = buf[: min(buf.size, size - start)]
        rng.random(out=v)
        parts.append(onp.flatnonzero(v < p) + start)
    return onp.concatenate(parts) if parts else onp.empty(0, dtype=onp.intp)


def _tr(A):
    return onp.swapaxes(A, -1, -2)


def _homogeneous(W, b):
    """``[W, b]`` (``[W, 0]`` without a bias)."""
    col = onp.zeros((W.shape[0], 1), W.dtype) if b is None else onp.asarray(b)[:, None]
    return onp.concatenate([W, col.astype(W.dtype)], axis=1)


def _stack(Z, Zk):
    """``[Z; 1]``, ``[Z'; 1]`` as stacks (N, d+1, .) of N tasks, and the batch shape."""
    lead = onp.broadcast_shapes(Z.shape[:-2], Zk.shape[:-2])
    out = []
    for A in (Z, Zk):
        A = onp.broadcast_to(A, lead + A.shape[-2:]).reshape((-1,) + A.shape[-2:])
        out.append(onp.concatenate([A, onp.ones((A.shape[0], 1, A.shape[-1]), A.dtype)], axis=1))
    return out[0], (out[0] if Zk is Z else out[1]), lead


def _unbroadcast(g, lead, shape):
    """The gradient (N, d+1, .) of a token array of ``shape`` broadcast to the batch ``lead`` (ones row dropped)."""
    g = g[:, :-1].reshape(lead + (g.shape[1] - 1, g.shape[2]))
    g = g.sum(axis=tuple(range(g.ndim - len(shape)))) if g.ndim > len(shape) else g
    return g.sum(axis=tuple(i for i, m in enumerate(shape[:-2]) if m == 1), keepdims=True) if len(shape) > 2 else g


def _chunks(n_tasks, r, q, drop):
    """Slices of tasks of about CHUNK_ENTRIES weights each, with the range of ``drop`` falling in each."""
    step = max(1, CHUNK_ENTRIES // max(1, r * q))
    out = []
    for a in range(0, n_tasks, step):
        sl = slice(a, min(a + step, n_tasks))
        lo, hi = (0, 0) if drop is None else onp.searchsorted(drop, [sl.start * r * q, sl.stop * r * q])
        out.append((sl, slice(int(lo), int(hi))))
    return out


@primitive
def softmax_attention(Z, Zk, Q, K, V, bQ, bK, bV, score, scale, gamma, p, drop, saved):
    r"""``V_Z softmax_gamma(S)`` with dropout, as one primitive (the module docstring derives its VJP).

    Parameters
    ----------
    Z : ndarray, shape (..., d_emb, q); Zk : ndarray, shape (..., d_emb, r)
        Query tokens and key/value tokens.
    Q, K : ndarray, shape (d_k, d_emb); V : ndarray, shape (d_v, d_emb)
    bQ, bK, bV : ndarray or None
    score : {"euclidean", "dot"}
    scale, gamma : float
        Scores ``gamma S / scale``, finite gamma.
    p : float
        Dropout probability; ``drop`` the flat indices of the dropped entries
        of the (..., r, q) weights (:func:`dropped_entries`) or None.
    saved : dict
        An empty dict; the forward pass stores in it what the backward pass reads.

    Returns
    -------
    A : ndarray, shape (..., d_v, q)
    """
    a = gamma / scale
    a2 = 2.0 * a if score == "euclidean" else a
    Zh, Zkh, lead = _stack(Z, Zk)
    (N, _, q), r = Zh.shape, Zkh.shape[-1]
    Qh, Kh, Vh = _homogeneous(Q, bQ), _homogeneous(K, bK), _homogeneous(V, bV)
    KZt = onp.matmul(_tr(Zkh), Kh.T)  # K_Z^T (N, r, d_k), contiguous (a product from a transposed
    if score == "euclidean":  # view with a short inner dimension is 2-3x slower); [k, -||k||^2] . [2a q; a]
        Kt = onp.concatenate([KZt, -onp.sum(KZt * KZt, axis=-1)[..., None]], axis=-1)
        last = onp.zeros((1, Qh.shape[1]), Qh.dtype)
        last[0, -1] = a  # the row (0, ..., 0, a) times [Z; 1] is a
        Qa = onp.matmul(onp.concatenate([a2 * Qh, last]), Zh)  # (N, d_k + 1, q)
    else:
        Kt, Qa = KZt, onp.matmul(a2 * Qh, Zh)
    Et = onp.empty((N, r, q), dtype=onp.result_type(Kt, Qa))
    # rows of [Z'; 1] that are 0 in every task (the points' scratch rows Y = 0) add exact zeros to the two
    # (r, q) products P~ = [Z'; 1] Et and R~ = [Z'; 1] dS: those products take only the other rows
    used = onp.flatnonzero(onp.any(Zkh != 0, axis=(0, 2)))
    Zu = Zkh if used.size == Zkh.shape[1] else Zkh[:, used]
    z, P = onp.empty((N, 1, q), Et.dtype), onp.empty((N, used.size, q), onp.result_type(Zu, Et))
    dropping = drop is not None and drop.size > 0
    flat, E_drop = Et.reshape(-1), onp.empty(0 if drop is None else drop.size, Et.dtype)
    for sl, ds in _chunks(N, r, q, drop):
        S = onp.matmul(Kt[sl], Qa[sl], out=Et[sl])  # the scores (r, q) per task, then E in place
        S -= onp.max(S, axis=-2, keepdims=True)
        onp.exp(S, out=S)
        onp.sum(S, axis=-2, keepdims=True, out=z[sl])
        if dropping:
            E_drop[ds] = flat[drop[ds]]
            flat[drop[ds]] = 0.0  # this chunk of E is now Et
        onp.matmul(Zu[sl], S, out=P[sl])  # P~ = [Z'; 1] Et (its used rows)
    u = 1.0 / ((1.0 - p) * z)
    y = onp.matmul(Vh[:, used], P)
    col = (drop // (r * q)) * q + drop % q if dropping else None  # the query column of each dropped entry
    saved.update(Et=Et, z=z, u=u, P=P, y=y, Qs=Qa[:, : Q.shape[0]], KZt=KZt, E_drop=E_drop, col=col,
                 Zh=Zh, Zkh=Zkh, Zu=Zu, used=used, Qh=Qh, Kh=Kh, Vh=Vh, a2=a2)
    return (y * u).reshape(lead + y.shape[-2:])


def _softmax_attention_vjp(argnums, ans, args, kwargs):
    """The VJP of :func:`softmax_attention` for the differentiated arguments ``argnums`` (module docstring)."""
    Z, Zk, Q, K, V, bQ, bK, bV, score, scale, gamma, p, drop, s = args
    euclidean, dropping = score == "euclidean", drop is not None and drop.size > 0

    def vjp(G):
        Et, Zh, Zkh, Qh, Kh, Vh, Qs, KZt, a2 = (s[k] for k in ("Et", "Zh", "Zkh", "Qh", "Kh", "Vh", "Qs", "KZt", "a2"))
        N, r, q = Et.shape
        G = G.reshape((N,) + G.shape[-2:])
        Gu = G * s["u"]  # (N, d_v, q)
        used = s["used"]
        dV = onp.zeros(Vh.shape, Et.dtype)  # [dV, db_V]; 0 on the rows of Z' that are 0
        dV[:, used] = onp.sum(onp.matmul(Gu, _tr(s["P"])), axis=0)
        grads = {V_: lambda: dV[:, :-1], BV_: lambda: dV[:, -1]}
        if not set(argnums) - {V_, BV_}:
            return tuple(grads[n]() for n in argnums)
        gz = -onp.sum(G * s["y"], axis=-2, keepdims=True) * s["u"] / s["z"]  # (N, 1, q)
        # H + gz = [V_Z^T, 1] [Gu; gz]: one product (the row (0, ..., 0, 1) times [Z'; 1] is the ones)
        last = onp.zeros((1, Vh.shape[1]), Vh.dtype)
        last[0, -1] = 1.0
        VZt = onp.matmul(_tr(Zkh), onp.concatenate([Vh, last]).T)  # [V_Z^T, 1] (N, r, d_v + 1)
        Gz = onp.concatenate([Gu, gz], axis=1)  # (N, d_v + 1, q)
        ones = onp.ones((q, 1), Et.dtype)
        R = onp.empty((N, used.size, q), onp.result_type(Zkh, Et))  # the used rows of R~
        rsum = onp.empty((N, r), Et.dtype)
        want_zk = ZK_ in argnums
        dZk = onp.empty(Zkh.shape, Et.dtype) if want_zk else None
        KQ = onp.matmul(Kh.T, Qs) if want_zk else None  # K~^T (2a Q_Z), (N, d+1, q)
        chunks = _chunks(N, r, q, drop)
        buf = onp.empty((chunks[0][0].stop if chunks else 0, r, q), onp.result_type(VZt, Gu))
        for sl, ds in chunks:
            dS = onp.matmul(VZt[sl], Gz[sl], out=buf[: sl.stop - sl.start])  # H + gz, then dS in place
            dS *= Et[sl]
            if dropping:
                dS.reshape(-1)[drop[ds] - sl.start * r * q] = s["E_drop"][ds] * gz.reshape(-1)[s["col"][ds]]
            onp.matmul(s["Zu"][sl], dS, out=R[sl])  # R~ = [Z'; 1] dS (its used rows)
            onp.matmul(dS, ones, out=rsum[sl, :, None])  # r = dS 1 (a product: twice as fast as a row sum)
            if want_zk:
                onp.matmul(KQ[sl], _tr(dS), out=dZk[sl])
        M = onp.zeros((Zkh.shape[1], Zh.shape[1]), Et.dtype)  # (d+1, d+1)
        M[used] = onp.sum(onp.matmul(R, _tr(Zh)), axis=0)
        dQ = a2 * (Kh @ M)
        dK = a2 * (Qh @ M.T)
        if euclidean:
            KZr = KZt * rsum[..., None]  # (K_Z diag(r))^T
            dK -= a2 * onp.sum(onp.matmul(Zkh, KZr), axis=0).T
        grads.update({Q_: lambda: dQ[:, :-1], BQ_: lambda: dQ[:, -1], K_: lambda: dK[:, :-1],
                      BK_: lambda: dK[:, -1]})
        grads[Z_] = lambda: _unbroadcast(a2 * onp.matmul(Qh.T, onp.matmul(Kh[:, used], R)), lead_of(Z, Zk), Z.shape)

        def dZk_():
            out = dZk + onp.matmul(onp.matmul(Vh.T, Gu), _tr(Et))
            if euclidean:
                KK = onp.matmul(KZt, Kh)  # (K~^T K_Z)^T (N, r, d+1)
                KK *= (a2 * rsum)[..., None]
                out -= _tr(KK)
            return _unbroadcast(out, lead_of(Z, Zk), Zk.shape)

        grads[ZK_] = dZk_
        return tuple(grads[n]() for n in argnums)

    return vjp


def lead_of(Z, Zk):
    return onp.broadcast_shapes(Z.shape[:-2], Zk.shape[:-2])


defvjp_argnums(softmax_attention, _softmax_attention_vjp)
