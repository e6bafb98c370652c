"""One file per clustering algorithm: its classical loop, then its circuit.

=====================  ==========================================================
:mod:`.lloyd`          Lloyd's algorithm and Theorem 2.1 (the k-means transformer)
:mod:`.dot_product`    Theorem 2.2: dot-product attention and a ReQU feed-forward block
:mod:`.soft`           soft k-means (finite gamma, linear block 3)
:mod:`.spherical`      spherical k-means (cosine block 1, RMSNorm after block 3)
:mod:`.trimmed`        trimmed k-means (alpha = inf normmax in block 3; Cuesta-Albertos et al.)
:mod:`.robust`         robust k-means (sparsemax in block 3; the authors' rule)
:mod:`.kmedoids`       randomized k-medoids (hard Gumbel attention in block 3)
:mod:`.sparse_update`  what trimmed, robust and k-medoids share: block 3 over the members only
:mod:`.binary`         the follow-up's leaner circuit: binary codes, ``d_emb = d + ceil(log2 k)``
=====================  ==========================================================

Every module's ``__all__`` is this package's (and :mod:`kmt_ref`'s): a new
algorithm is one new file here, found by :func:`pkgutil.iter_modules`, plus its
test file and a line in the README (docs/ARCHITECTURE.md, "How to add a
clustering variant").
"""
import importlib as _importlib
import pkgutil as _pkgutil

__all__ = []
for _info in sorted(_pkgutil.iter_modules(__path__), key=lambda m: m.name):
    _module = _importlib.import_module(f"{__name__}.{_info.name}")
    for _name in _module.__all__:
        globals()[_name] = getattr(_module, _name)
    __all__ += list(_module.__all__)
