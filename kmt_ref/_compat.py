"""Old module paths, kept working for one release (0.2) after the package was laid out in layers (core, algorithms, learning, viz).

Before the redesign, kmt_ref's modules were flat (``kmt_ref.constructions``,
``kmt_ref.reference_sparse``, ...). Their names now live in the modules listed
in :data:`MOVED`. Importing an old path still works: it gives a module whose
attributes are looked up in the new homes, with a ``DeprecationWarning`` that
says where the name now lives. New code imports from the new paths (or from
``kmt_ref`` itself, whose names are unchanged).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings

#: old module -> the modules that now hold its names, searched in order
MOVED = {
    "kmt_ref.normalizers": ("kmt_ref.core.normalizers",),
    "kmt_ref.attention": ("kmt_ref.core.attention", "kmt_ref.core.exact"),
    "kmt_ref.constructions": ("kmt_ref.core.tokens", "kmt_ref.algorithms.lloyd"),
    "kmt_ref.reference": ("kmt_ref.algorithms.lloyd",),
    "kmt_ref.reference_standard": ("kmt_ref.algorithms.soft", "kmt_ref.algorithms.spherical", "kmt_ref.validation"),
    "kmt_ref.reference_sparse": ("kmt_ref.algorithms.trimmed", "kmt_ref.algorithms.robust",
                                 "kmt_ref.algorithms.kmedoids", "kmt_ref.validation"),
    "kmt_ref.standard_variants": ("kmt_ref.algorithms.dot_product", "kmt_ref.algorithms.soft",
                                  "kmt_ref.algorithms.spherical", "kmt_ref.core.tokens"),
    "kmt_ref.sparse_variants": ("kmt_ref.algorithms.sparse_update", "kmt_ref.algorithms.trimmed",
                                "kmt_ref.algorithms.robust", "kmt_ref.algorithms.kmedoids", "kmt_ref.data"),
    "kmt_ref.plotting": ("kmt_ref.viz.plotting",),
    "kmt_ref.paper_figures": ("kmt_ref.viz.lloyd_figures",),
    "kmt_ref.figures": ("kmt_ref.viz.registry",),
    "kmt_ref.tasks": ("kmt_ref.learning.tasks",),
    "kmt_ref.training": ("kmt_ref.learning", "kmt_ref.viz.learning_figures"),
    "kmt_ref.training_cli": ("kmt_ref.learning.cli", "kmt_ref.learning.checkpoint"),
}


class _MovedModule(types.ModuleType):
    """Stands in for an old module: each attribute comes from its new home, with a warning naming it."""

    def __init__(self, name, homes):
        super().__init__(name, f"Moved: the names of {name} now live in {', '.join(homes)}.")
        self._homes = homes

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        modules = [(home, importlib.import_module(home)) for home in self._homes]
        # the home that defines the name (its __all__) first, then any that has it
        for home, module in sorted(modules, key=lambda hm: attr not in getattr(hm[1], "__all__", ())):
            if hasattr(module, attr):
                warnings.warn(f"{self.__name__}.{attr} has moved to {home}.{attr}; the old path works "
                              "until kmt_ref 0.2", DeprecationWarning, stacklevel=2)
                return getattr(module, attr)
        raise AttributeError(f"module {self.__name__!r} (moved to {', '.join(self._homes)}) has no attribute {attr!r}")

    def __dir__(self):
        names = set()
        for home in self._homes:
            names.update(getattr(importlib.import_module(home), "__all__", ()))
        return sorted(names)


class _MovedFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old module paths of :data:`MOVED` (and nothing else)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return _MovedModule(spec.name, MOVED[spec.name])

    def exec_module(self, module):
        pass


def install():
    """Put the finder on ``sys.meta_path`` once (``kmt_ref/__init__.py`` calls it)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
