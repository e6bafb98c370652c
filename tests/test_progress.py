"""Tests for kmt_ref.progress: the status line of long commands and its estimate of the time left."""
import io
import math

import pytest

import kmt_ref.progress as progress
from kmt_ref.progress import Progress, format_duration


class Clock:
    """A perf_counter that moves only when told."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def clock(monkeypatch):
    c = Clock()
    monkeypatch.setattr(progress.time, "perf_counter", c)
    return c


def test_format_duration():
    assert format_duration(0) == "0m00s"
    assert format_duration(65.4) == "1m05s"
    assert format_duration(3725) == "1h02m05s"
    assert format_duration(math.nan) == format_duration(math.inf) == "?"


def test_time_left_is_the_pace_so_far_times_the_weighted_work_left(clock):
    out = io.StringIO()
    bar = Progress("evaluate", "runs", [1, 3], out)  # the second run costs three times the first
    clock.now += 10
    bar.step()  # a quarter of the work in 10 s: 30 s left
    assert out.getvalue() == "evaluate: 1/2 runs (25.0% of the work), 0m10s elapsed, about 0m30s left\n"
    clock.now += 5
    bar.part(0.5)  # 62.5% in 15 s: 9 s left
    assert out.getvalue().splitlines()[-1] == "evaluate: 1/2 runs (62.5% of the work), 0m15s elapsed, about 0m09s left"
    clock.now += 10
    bar.step()
    assert out.getvalue().splitlines()[-1] == "evaluate: 2/2 runs (100.0% of the work), 0m25s elapsed, about 0m00s left"


def test_a_file_gets_a_line_every_5_percent_a_terminal_one_line_rewritten(clock):
    log = io.StringIO()
    bar = Progress("sweep", "cells", [1] * 200, log)
    for _ in range(200):
        clock.now += 1
        bar.step()
    lines = log.getvalue().splitlines()
    assert len(lines) == 21 and lines[0].startswith("sweep: 1/200 cells (0.5%")  # the first unit, then every 5%
    assert lines[1].startswith("sweep: 10/200 cells (5.0%") and lines[-1].startswith("sweep: 200/200 cells (100.0%")
    tty = Terminal()
    bar = Progress("sweep", "cells", [1, 1], tty)
    bar.part(0.5)
    bar.clear()  # before the command prints a result line on the same terminal
    bar.step()
    bar.step()
    text = tty.getvalue()
    assert text.count("\n") == 1 and text.endswith("about 0m00s left\n") and "\r" in text
    assert text.startswith("sweep: 0/2 cells (25.0% of the work)")
