"""The two runs of the suite: ``python -m pytest`` (the default) and ``python -m pytest --run-slow`` (README, "The tests").

Tests marked ``slow`` are skipped by default, with the option to run them in the reason: the stored notebooks
executed in a kernel, the real nbgrader runs, the course site opened in a browser and the wheel installed into
a fresh environment. The continuous integration (``.ci/run``) runs them all.
"""
import pytest


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="also run the tests marked slow (notebooks executed, nbgrader, the site in a browser, "
                          "the wheel installed)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: run with python -m pytest --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
