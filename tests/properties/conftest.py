"""Hypothesis profiles of the property suite: ``ci`` (the default) and ``deep``.

``ci``: derandomized (the same examples on every run and machine), a fixed budget of examples per
property, no deadline: the whole suite in well under two minutes on 2 cores. ``deep``: random
search with many more examples, for a longer exploration::

    python -m pytest tests/properties --hypothesis-profile=deep

(the path is needed: the profiles are registered here, and Hypothesis loads the one named on the
command line while pytest starts, before it reads the conftest files of folders it was not given).
"""
from hypothesis import HealthCheck, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("ci", max_examples=100, derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=_QUIET, database=None)
settings.register_profile("deep", max_examples=1500, deadline=None, print_blob=True, suppress_health_check=_QUIET)
settings.load_profile("ci")  # the plugin loads --hypothesis-profile after this, when it is given
