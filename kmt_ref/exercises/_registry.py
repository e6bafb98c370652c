"""The exercise record, the registry, and the small tools every checker uses.

A checker is a function of the student's answer. It returns a short line of
praise when the answer is right and raises :class:`Wrong` with a hint when it is
not; the hint helps without giving the answer away. Checkers read answers with
the ``as_*`` helpers below, so that an answer of the wrong type or shape gives a
hint too, never a traceback from inside NumPy.

The precision policy (open) is written for students in docs/EXERCISES.md
("Precision"). :func:`expect_value` applies it to typed values and computed
arrays; the checkers of exercises 01.7, 02.5, 03.2 and 03.4 compare with the
width they state directly.
"""
from __future__ import annotations

import sys
import threading
import types
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

__all__ = ["Exercise", "Wrong", "exercise", "REGISTRY", "KINDS", "NOTEBOOKS", "ForbiddenCall", "forbidden",
           "as_float", "as_int", "as_array", "as_choice", "as_bool", "expect", "call_answer", "multiple_choice",
           "DIGITS", "NEAR", "digits_tolerance", "expect_value"]

#: what an exercise asks for: code to write, an idea to explain, a statement to prove, a question to explore,
#: or a self-check placed right after the section it checks (a number, a shape or a choice; a minute or two)
KINDS = ("code", "concept", "proof", "explore", "quiz")

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
        ``checker(answer) -> str`` raising :class:`Wrong`; for an exercise with
        ``parts``, ``checker(answer, part) -> str`` for part 1, 2, ... alone. None
        for exercises graded by reading (their model answer is in the solutions).
    parts : tuple of str
        For an answer of several parts graded apart (partial credit), what each
        part is; empty for an answer graded as one.
    forbidden : tuple of callables
        The kmt_ref functions a function the student writes may not call, even
        through another kmt_ref function, while the checker runs it
        (:func:`call_answer`); every function of ``kmt_ref.exercises`` is
        forbidden too.
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
    parts: tuple = ()
    forbidden: tuple = ()

    @property
    def checked(self):
        """True if :func:`kmt_ref.exercises.check` can grade this exercise."""
        return self.checker is not None

    @property
    def n_parts(self):
        """How many parts are graded apart (1 for an answer graded as one)."""
        return max(1, len(self.parts))

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


def exercise(id, title, *, kind, difficulty, minutes, objective, checks="", parts=(), forbid=()):
    """Register an exercise. Used as a decorator on its checker, or called alone
    (``exercise(...)(None)``) for an exercise graded by reading.

    ``parts`` names the parts graded apart (the checker then takes ``(answer, part)``);
    ``forbid`` lists the kmt_ref functions a student's function may not call (see
    :func:`call_answer`)."""
    nb = id.split(".")[0]
    if nb not in NOTEBOOKS or id in REGISTRY:
        raise ValueError(f"exercise id {id!r}: unknown notebook or registered twice")
    if kind not in KINDS or difficulty not in (1, 2, 3) or int(minutes) != minutes or minutes < 1:
        raise ValueError(f"exercise {id!r}: bad kind/difficulty/minutes ({kind!r}, {difficulty!r}, {minutes!r})")

    def register(checker):
        if kind == "code" and checker is None:
            raise ValueError(f"exercise {id!r}: every code exercise is checked")
        if kind == "quiz" and (checker is None or difficulty != 1 or minutes > 2):
            raise ValueError(f"exercise {id!r}: a quiz is checked, of difficulty 1, and takes a minute or two")
        if (checker is None) != (not checks):
            raise ValueError(f"exercise {id!r}: a checked exercise says what it checks, an unchecked one does not")
        if (parts or forbid) and checker is None:
            raise ValueError(f"exercise {id!r}: parts and forbidden functions belong to a checked exercise")
        if len(parts) == 1 or not all(isinstance(p, str) and p for p in parts):
            raise ValueError(f"exercise {id!r}: parts={parts!r} should be two or more names, or none")
        for fn in forbid:
            if not isinstance(fn, types.FunctionType):
                raise TypeError(f"exercise {id!r}: forbid holds {fn!r}, not a plain Python function")
        REGISTRY[id] = Exercise(id, title, NOTEBOOKS[nb], kind, difficulty, int(minutes), objective, checks, checker,
                                tuple(parts), tuple(forbid))
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
    except (TypeError, ValueError, OverflowError):
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
    except (TypeError, ValueError, OverflowError):
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


def multiple_choice(answer, right, hints):
    """Check a choice among lettered statements: ``right`` is the right letter, ``hints`` maps every other
    letter to its hint (a hint names what the chosen statement overlooks, not the right letter)."""
    options = sorted([right, *hints])
    value = as_choice(answer, options, f"one of the letters {options}")
    if value != right.lower():
        raise Wrong(hints[next(o for o in hints if o.lower() == value)])
    return value


def expect(condition, hint):
    """Raise Wrong(hint) unless condition holds."""
    if not condition:
        raise Wrong(hint)


# ----------------------------------------------------------------------------- a student's function
def _materialized(out):
    """``out`` with every array-like in it made a plain array (or number) now: an object that computes its
    value only when NumPy reads it (``__array__``, ``__float__``) would otherwise run after the guard."""
    if out is None or isinstance(out, (bool, int, float, complex, str, np.generic)):
        return out
    if isinstance(out, np.ndarray):
        return np.array(out)  # a plain copy: a subclass's own methods do not run later
    if isinstance(out, (tuple, list)):
        return type(out)(_materialized(v) for v in out) if type(out) in (tuple, list) else \
            tuple(_materialized(v) for v in out)
    if isinstance(out, dict):
        return {k: _materialized(v) for k, v in out.items()}
    if hasattr(out, "__array__") or hasattr(out, "__array_interface__"):
        arr = np.asarray(out)
        return out if arr.dtype == object else np.array(arr)
    for kind, convert in (("__index__", int), ("__float__", float), ("__complex__", complex)):
        if hasattr(out, kind):  # a number-like object: its value, now
            return convert(out)
    return out


class ForbiddenCall(Exception):
    """Raised by a kmt_ref function that the running exercise does not allow its student's function to call."""


#: the exercise whose checker runs now (set by kmt_ref.exercises.check), and the forbidden calls seen
_RUNNING: dict = {"exercise": None, "called": []}


def _raise_forbidden(name):
    _RUNNING["called"].append(name)
    raise ForbiddenCall(f"{name} is not allowed in this exercise")


def _raiser(fn):
    """A code object for ``fn`` that raises ForbiddenCall: ``fn``'s name is a constant of the code, so the
    code needs no closure and fits any plain function, whatever its own free variables and defaults."""
    if fn.__code__.co_freevars:
        return None  # a closure's code can only be swapped for code with the same free variables
    name = _name_of(fn)
    source = (f"def {fn.__name__}(*args, **kwargs):\n"
              f"    __import__('kmt_ref.exercises._registry', fromlist=['_raise_forbidden'])"
              f"._raise_forbidden({name!r})\n")
    namespace = {}
    exec(compile(source, f"<forbidden {name}>", "exec"), namespace)
    return namespace[fn.__name__].__code__


def _checker_caches():
    """The module-level dicts of the checkers' modules whose names start with one ``_`` (their caches of answers)."""
    return [v for modname, module in list(sys.modules.items())
            if modname.startswith("kmt_ref.exercises.nb") and module is not None
            for name, v in vars(module).items()
            if name.startswith("_") and not name.startswith("__") and type(v) is dict]


def _exercise_functions():
    """Every plain function of the checkers' modules ``kmt_ref.exercises.nb01`` ... (what computes the answers)."""
    out = []
    for modname, module in list(sys.modules.items()):
        if modname.startswith("kmt_ref.exercises.nb") and module is not None:
            out += [v for v in vars(module).values() if isinstance(v, types.FunctionType) and v.__module__ == modname]
    return out


def _fingerprint(code):
    """What a code object computes, without where it was defined: its bytecode, constants, names and local
    names."""
    return code.co_code, code.co_names, code.co_varnames, tuple(
        c if isinstance(c, (str, bytes, int, float, complex, type(None))) else repr(type(c)) for c in code.co_consts)


def _name_of(fn):
    return f"{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}" if fn.__module__.startswith("kmt_ref.exercises") \
        else fn.__name__


@contextmanager
def forbidden(functions):
    """While the block runs, every function of ``functions`` raises :class:`ForbiddenCall` when called,
    however it was imported (its code object is swapped, so every name bound to it sees the change);
    a call of its original code by any other route (a function object built from it beforehand, or its
    code put back) is recorded too, by a trace function that sees every Python call in this thread and
    the threads it starts; and the checkers' caches (:func:`_checker_caches`) are empty."""
    functions = list(dict.fromkeys(functions))  # each function once
    # the library's functions by what their code computes, so that a copy of it with another name or line
    # number is recognized too; the checkers' own (many of them short helpers a student's function could
    # resemble) by their code object alone
    library = {_fingerprint(fn.__code__): _name_of(fn) for fn in functions
               if not fn.__module__.startswith("kmt_ref.exercises")}
    own = {fn.__code__: _name_of(fn) for fn in functions if fn.__module__.startswith("kmt_ref.exercises")}
    previous, previous_threads = sys.gettrace(), threading.gettrace() if hasattr(threading, "gettrace") else None

    def tracer(frame, event, arg):
        name = own.get(frame.f_code) or library.get(_fingerprint(frame.f_code))
        if name is not None:
            _RUNNING["called"].append(name)
        return previous(frame, event, arg) if previous is not None else None

    saved, caches = [], [(cache, dict(cache)) for cache in _checker_caches()]
    try:
        for cache, _ in caches:  # emptied, so that a student's function cannot read an answer the checker holds
            cache.clear()
        for fn in functions:
            code = _raiser(fn)
            if code is not None:
                saved.append((fn, fn.__code__))
                fn.__code__ = code
        sys.settrace(tracer)
        threading.settrace(tracer)
        yield tracer
    finally:
        sys.settrace(previous)
        threading.settrace(previous_threads)
        for fn, code in saved:
            fn.__code__ = code
        for cache, content in caches:
            cache.clear()
            cache.update(content)


def call_answer(fn, *args):
    """``fn(*args)`` for an answer that is a function: anything it raises becomes a hint (Wrong).

    While it runs, the functions the running exercise forbids (:attr:`Exercise.forbidden`) and every
    function of ``kmt_ref.exercises`` raise :class:`ForbiddenCall`; a function that calls one of them
    fails with a hint that names it, even if it catches the error. Compute the reference answer
    outside this call.
    """
    expect(callable(fn), f"expected a function, got {type(fn).__name__}")
    ex = _RUNNING["exercise"]
    banned = list(ex.forbidden if ex is not None else ()) + _exercise_functions()
    _RUNNING["called"] = []
    try:
        with forbidden(banned) as tracer:
            out = _materialized(fn(*args))  # what it returns is read here, while the guard holds
            if sys.gettrace() is not tracer:
                _RUNNING["called"].append("sys.settrace")
    except (Exception, SystemExit) as err:  # noqa: BLE001 (a student's function may raise anything)
        if not _RUNNING["called"]:
            raise Wrong(f"your function raised {type(err).__name__}: {str(err)[:80]}") from None
        out = None
    called = list(dict.fromkeys(_RUNNING["called"]))
    _RUNNING["called"] = []
    if called:
        allowed = "" if ex is None or not ex.forbidden else \
            f" (this exercise does without {', '.join(f.__name__ for f in ex.forbidden)})"
        raise Wrong(f"your function calls {', '.join(called)}, directly or through another kmt_ref function: "
                    f"that computes what the exercise asks you to compute yourself{allowed}")
    return out


# ----------------------------------------------------------------------------- the precision policy
#: significant digits the notebooks print, and what a typed answer needs unless its exercise says otherwise (open)
DIGITS = 4
#: a typed value right to NEAR significant digits (but not DIGITS) is "right method, give more digits";
#: under a stated rtol or atol, a value within 20 times it is (open)
NEAR = 2


def digits_tolerance(want, digits=DIGITS):
    """Per-entry tolerance for a typed answer: half a unit in the ``digits``-th significant digit.

    The unit is the entry's own, but never smaller than the largest entry's, so an
    array printed with a common number of decimals (``[0.4187, 0.0021]``) passes
    entry by entry. A value rounded to ``digits`` significant digits is always within it.
    """
    want = np.abs(np.asarray(want, dtype=float))
    top = float(want.max()) if want.size else 0.0
    if top == 0.0:
        return np.full(want.shape, 0.5 * 10.0 ** (1 - digits))

    def half_unit(v):
        return 0.5 * 10.0 ** (np.floor(np.log10(v)) - (digits - 1))

    own = half_unit(np.where(want > 0, want, top))
    return np.maximum(own, half_unit(top)) * (1 + 1e-9)  # (1 + 1e-9): the decimal answer's own binary rounding


def expect_value(answer, want, *, what, hint, shape=None, digits=DIGITS, rtol=None, atol=None, wrong=()):
    """Compare a numeric answer with ``want`` under the precision policy; return it as float or array.

    Parameters
    ----------
    answer : object
        The student's number or array (a list, tuple or array of any float dtype).
    want : float or array_like
        The exact value, computed by kmt_ref.
    what : str
        What the answer is, for the hints ("the two mean gaps (d = 4, d = 8)").
    hint : str
        The hint when the answer is neither right, nor close, nor a known wrong answer.
    shape : tuple, optional
        The shape to require (default: ``want``'s shape).
    digits : int, default DIGITS
        Significant digits required (see :func:`digits_tolerance`).
    rtol, atol : float, optional
        A tolerance the exercise states instead of ``digits``: relative (a bisection's width) or
        absolute (what a student's function computes in float64).
    wrong : sequence of (value, hint)
        Plausible wrong answers, recognized at the same tolerance and given their own hint.

    Raises
    ------
    Wrong
        With "right method, give more digits" when the answer is right to NEAR significant digits
        (or within 20 times a stated rtol or atol).
    """
    want = np.asarray(want, dtype=float)
    if want.ndim == 0 and shape is None:
        got = np.asarray(as_float(answer, what))
    else:
        got = as_array(answer, want.shape if shape is None else shape, what)

    def tolerance(target):
        target = np.asarray(target, dtype=float)
        if atol is not None:
            return np.full(target.shape, float(atol))
        if rtol is not None:
            return rtol * np.abs(target)
        return digits_tolerance(target, digits)

    tol = tolerance(want)
    err = np.abs(got - want)
    if np.all(err <= tol):
        return float(got) if got.ndim == 0 else got
    for value, why in wrong:
        value = np.asarray(value, dtype=float)
        if value.shape == want.shape and np.all(np.abs(got - value) <= tolerance(value)):
            raise Wrong(why)
    low = getattr(answer, "dtype", None)
    if low is not None and low.kind == "f" and low.itemsize < 8:
        eps = float(np.finfo(low).eps)
        if np.all(err <= 8 * eps * max(1.0, float(np.max(np.abs(want))))):
            raise Wrong(f"right method, but {what} is {low.name}: it holds about {np.finfo(low).precision} digits, "
                        "and this check needs float64 (compute in float64, or convert with .astype(float))")
    near = digits_tolerance(want, min(NEAR, digits)) if atol is None and rtol is None else 20 * tol
    if np.all(err <= near):
        if atol is None and rtol is None:
            raise Wrong(f"right method, give more digits: {what} agrees with the answer to fewer than {digits} "
                        f"significant digits; give {digits} (as the notebook prints them) or more")
        need = f"{atol:g}" if atol is not None else f"a relative {rtol:g}"
        raise Wrong(f"right method, give more digits: {what} is close, but this exercise needs it to {need} "
                    f"(keep float64 and do not round; off by up to {float(np.max(err)):.2g})")
    raise Wrong(hint)
