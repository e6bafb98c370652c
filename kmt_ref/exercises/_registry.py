"""The exercise record, the registry, and the small tools every checker uses.

A checker is a function of the student's answer. It returns a short line of
praise when the answer is right and raises :class:`Wrong` with a hint when it is
not; the hint helps without giving the answer away. Checkers read answers with
the ``as_*`` helpers below, so that an answer of the wrong type or shape gives a
hint too, never a traceback from inside NumPy.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

__all__ = ["Exercise", "Wrong", "exercise", "REGISTRY", "KINDS", "NOTEBOOKS",
           "as_float", "as_int", "as_array", "as_choice", "as_bool", "expect", "call_answer"]

#: what an exercise asks for: code to write, an idea to explain, a statement to prove, a question to explore
KINDS = ("code", "concept", "proof", "explore")

#: notebook number -> notebook file stem (notebooks/<stem>.ipynb; solutions in notebooks/solutions/)
NOTEBOOKS = {
    "01": "01_lloyd_as_a_transformer",
    "02": "02_dot_product_and_variants",
    "03": "03_sparse_and_sampling_variants",
    "04": "04_learning_to_cluster",
    "05": "05_leaner_binary_codes",
}


class Wrong(Exception):
    """A wrong answer; the message is the hint shown to the student."""


@dataclass(frozen=True)
class Exercise:
    """One exercise: where it is, what kind, how hard, how long, and what it teaches.

    Attributes
    ----------
    id : str
        ``"NN.M"``: notebook NN, exercise M.
    title : str
        A few words, shown in the notebook's heading.
    notebook : str
        The notebook's file stem (``notebooks/<notebook>.ipynb``).
    kind : str
        One of :data:`KINDS`.
    difficulty : int
        1 to 3 (shown as one to three stars).
    minutes : int
        The time a student who has read the notebook needs.
    objective : str
        The learning objective it serves.
    checks : str
        What ``check`` verifies (for the instructor's table); empty if unchecked.
    checker : callable or None
        ``checker(answer) -> str`` raising :class:`Wrong`; None for exercises
        graded by reading (their model answer is in the solutions).
    """

    id: str
    title: str
    notebook: str
    kind: str
    difficulty: int
    minutes: int
    objective: str
    checks: str = ""
    checker: Optional[Callable] = None

    @property
    def checked(self):
        """True if :func:`kmt_ref.exercises.check` can grade this exercise."""
        return self.checker is not None

    @property
    def stars(self):
        return "★" * self.difficulty + "☆" * (3 - self.difficulty)

    @property
    def tag(self):
        """The tag line printed under the exercise's heading in the notebooks."""
        how = f'checked by `check("{self.id}", answer)`' if self.checked else "model answer in the solutions"
        return f"*{self.kind} · {self.stars} · {self.minutes} min · {how}*"


#: id -> Exercise, in the order the notebooks define them
REGISTRY: dict = {}


def exercise(id, title, *, kind, difficulty, minutes, objective, checks=""):
    """Register an exercise. Used as a decorator on its checker, or called alone
    (``exercise(...)(None)``) for an exercise graded by reading."""
    nb = id.split(".")[0]
    if nb not in NOTEBOOKS or id in REGISTRY:
        raise ValueError(f"exercise id {id!r}: unknown notebook or registered twice")
    if kind not in KINDS or difficulty not in (1, 2, 3) or int(minutes) != minutes or minutes < 1:
        raise ValueError(f"exercise {id!r}: bad kind/difficulty/minutes ({kind!r}, {difficulty!r}, {minutes!r})")

    def register(checker):
        if kind == "code" and checker is None:
            raise ValueError(f"exercise {id!r}: every code exercise is checked")
        if (checker is None) != (not checks):
            raise ValueError(f"exercise {id!r}: a checked exercise says what it checks, an unchecked one does not")
        REGISTRY[id] = Exercise(id, title, NOTEBOOKS[nb], kind, difficulty, int(minutes), objective, checks, checker)
        return checker

    return register


# ----------------------------------------------------------------------------- reading answers
def _describe(answer):
    text = repr(answer)
    return text if len(text) <= 60 else text[:57] + "..."


def as_float(answer, what="a number"):
    """The answer as a finite float, or Wrong."""
    if isinstance(answer, (bool, np.bool_)):
        raise Wrong(f"expected {what}, got a bool ({answer!r})")
    try:
        value = float(np.asarray(answer, dtype=float).reshape(()))
    except (TypeError, ValueError):
        raise Wrong(f"expected {what}, got {_describe(answer)}") from None
    if not np.isfinite(value):
        raise Wrong(f"expected {what}, got {value!r}")
    return value


def as_int(answer, what="an integer"):
    """The answer as an int (an integral float is accepted), or Wrong."""
    value = as_float(answer, what)
    if value != int(value):
        raise Wrong(f"expected {what}, got {value!r}")
    return int(value)


def as_bool(answer, what="True or False"):
    if isinstance(answer, (bool, np.bool_)):
        return bool(answer)
    raise Wrong(f"expected {what}, got {_describe(answer)}")


def as_array(answer, shape=None, what="an array", dtype=float):
    """The answer as a finite array of the given shape (None entries: any size), or Wrong."""
    try:
        arr = np.asarray(answer, dtype=dtype)
    except (TypeError, ValueError):
        raise Wrong(f"expected {what}, got {_describe(answer)}") from None
    if arr.dtype == object:
        raise Wrong(f"expected {what}, got {_describe(answer)}")
    if shape is not None and (arr.ndim != len(shape) or any(s is not None and s != a for s, a in zip(shape, arr.shape))):
        want = "(" + ", ".join("any" if s is None else str(s) for s in shape) + ")"
        raise Wrong(f"expected {what} of shape {want}, got shape {arr.shape}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise Wrong(f"{what} has NaN or infinite entries")
    return arr


def as_choice(answer, options, what="one of the options"):
    """The answer as one of ``options`` (strings, compared without case and spaces), or Wrong."""
    if not isinstance(answer, str):
        raise Wrong(f"expected {what} as a string, one of {list(options)}, got {_describe(answer)}")
    value = answer.strip().lower()
    if value not in [o.lower() for o in options]:
        raise Wrong(f"expected one of {list(options)}, got {answer!r}")
    return value


def expect(condition, hint):
    """Raise Wrong(hint) unless condition holds."""
    if not condition:
        raise Wrong(hint)


def call_answer(fn, *args):
    """``fn(*args)`` for an answer that is a function: anything it raises becomes a hint (Wrong)."""
    expect(callable(fn), f"expected a function, got {type(fn).__name__}")
    try:
        return fn(*args)
    except Exception as err:  # noqa: BLE001 (a student's function may raise anything)
        raise Wrong(f"your function raised {type(err).__name__}: {str(err)[:80]}") from None
