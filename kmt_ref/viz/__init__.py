"""Every picture kmt_ref draws: plotting primitives and every figure (matplotlib is imported only here).

Nothing below kmt_ref.viz imports it: the algorithms, the core and the learning
experiment compute arrays; the functions here draw them. ``python -m kmt_ref
figures`` regenerates every file in ``figures/`` from the registry.
"""
