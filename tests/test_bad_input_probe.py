"""Bad input is always loud: a property-based probe of every public function of ``paperlib``.

The probe walks ``__all__`` of every public module, so a new function is covered without new test
code. For each function it takes the **first call to the function in its docstring Examples** as a
valid baseline (so every public function needs a doctest example; ``tests/test_doctests.py`` runs
them). Then, one argument at a time, it replaces the baseline value with bad values of the argument's
type and expects a ``ValueError`` whose message names that argument:

==============  ===========================================================================
baseline value  bad values probed
==============  ===========================================================================
float           NaN, inf, a numpy NaN, ``True``, ``"1.0"``, a complex number
int             ``True``, ``"2"``, a non-integer float (the cast would change it), NaN, and a
                negative number when the baseline is non-negative (a negative size)
bool            a string
str             an integer
float array     a NaN or inf at a drawn position, an empty array, three extra axes (wrong
                rank), complex values, a boolean array, strings
int array       non-integer values, NaN, an empty array, wrong rank, complex values
bool array      non-boolean numbers, an empty array, wrong rank
==============  ===========================================================================

Numeric keyword defaults (an ``int``/``float`` default the example did not pass) are probed too.
Hypothesis draws the concrete bad value (the position of a NaN, the non-integer, the negative number).

A module can exempt an argument from a probe it legitimately accepts, with the reason, in a private
``_PROBE_EXEMPTIONS = {"function": {"argument": {"probe": "why it is valid"}}}``; the probe names are
the keys of :data:`PROBES`. Exemptions are listed by ``test_exemptions_are_documented``.
"""

from __future__ import annotations

import contextlib
import doctest
import functools
import importlib
import inspect
import io
import math
import pkgutil
import sys
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import paperlib

MODULES = sorted(m.name for m in pkgutil.iter_modules(paperlib.__path__) if not m.name.startswith("_"))


def public_functions() -> list[tuple[str, str]]:
    out = []
    for modname in MODULES:
        mod = importlib.import_module(f"paperlib.{modname}")
        for name in getattr(mod, "__all__", []):
            fn = getattr(mod, name, None)
            # a name re-exported from another module is probed there, where it is defined
            if inspect.isfunction(fn) and fn.__module__ == mod.__name__:
                out.append((modname, name))
    return out


FUNCTIONS = public_functions()


@functools.lru_cache(maxsize=None)
def baseline(modname: str, fname: str):
    """``(args, kwargs)`` of the first call to ``fname`` in its docstring Examples, or None."""
    mod = importlib.import_module(f"paperlib.{modname}")
    fn = getattr(mod, fname)
    examples = doctest.DocTestParser().get_examples(inspect.getdoc(fn) or "")
    if not examples:
        return None
    calls = []

    @functools.wraps(fn)
    def recorder(*args, **kwargs):
        calls.append((args, kwargs))
        return fn(*args, **kwargs)

    ns = dict(vars(mod))
    ns[fname] = recorder
    setattr(mod, fname, recorder)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            for ex in examples:
                exec(compile(ex.source, f"<{modname}.{fname} example>", "single"), ns)
                if calls:
                    break
    finally:
        setattr(mod, fname, fn)
    return calls[0] if calls else None


# --- classification of a baseline value and the bad values of each class ----------------------------
def value_class(v) -> str | None:
    if isinstance(v, (bool, np.bool_)):
        return "bool"
    if isinstance(v, (int, np.integer)):
        return "int"
    if isinstance(v, (float, np.floating)):
        return "float"
    if isinstance(v, str):
        return "str"
    if isinstance(v, (list, tuple)) and (not v or not all(isinstance(x, (int, float, np.number)) for x in v)):
        return None
    try:
        import jax

        if isinstance(v, jax.Array) and jax.dtypes.issubdtype(v.dtype, jax.dtypes.prng_key):
            return None
    except ImportError:  # pragma: no cover
        pass
    if isinstance(v, (np.ndarray, list, tuple)) or type(v).__module__.startswith("jax"):
        arr = np.asarray(v)
        kind = arr.dtype.kind
        if arr.ndim == 0:
            return {"f": "float", "i": "int", "u": "int", "b": "bool"}.get(kind)
        if arr.size == 0:
            return None
        return {"f": "float_array", "i": "int_array", "u": "int_array", "b": "bool_array"}.get(kind)
    return None


def _with_value_at(arr: np.ndarray, value, data) -> np.ndarray:
    out = np.array(arr, dtype=float)
    i = data.draw(st.integers(0, out.size - 1), label="position")
    out.flat[i] = value
    return out


def _empty(arr):
    return np.zeros((0,) + arr.shape[1:], dtype=arr.dtype)


PROBES = {
    # scalars
    "nan": lambda v, d: float("nan"),
    "inf": lambda v, d: d.draw(st.sampled_from([math.inf, -math.inf]), label="inf"),
    "numpy_nan": lambda v, d: np.float64("nan"),
    "bool": lambda v, d: True,
    "str": lambda v, d: "1.0" if isinstance(v, float) else "2",
    "complex": lambda v, d: complex(float(v), 1.0),
    "non_integer": lambda v, d: d.draw(st.integers(1, 50), label="n") + 0.5,
    "negative": lambda v, d: -d.draw(st.integers(1, 5), label="m"),
    "string_for_bool": lambda v, d: "yes",
    "int_for_str": lambda v, d: 3,
    # arrays
    "array_nan": lambda v, d: _with_value_at(np.asarray(v, dtype=float), float("nan"), d),
    "array_inf": lambda v, d: _with_value_at(np.asarray(v, dtype=float), math.inf, d),
    "array_empty": lambda v, d: _empty(np.asarray(v)),
    "array_rank": lambda v, d: np.asarray(v)[None, None, None],
    "array_complex": lambda v, d: np.asarray(v).astype(complex) + 1j,
    "array_bool": lambda v, d: np.asarray(v) > 0,
    "array_str": lambda v, d: np.asarray(v).astype(str),
    "array_non_integer": lambda v, d: np.asarray(v) + 0.5,
    "array_non_bool": lambda v, d: np.where(np.asarray(v), 0.5, 2.0),
}

PROBES_BY_CLASS = {
    "float": ["nan", "inf", "numpy_nan", "bool", "str", "complex"],
    "int": ["bool", "str", "non_integer", "nan"],
    "bool": ["string_for_bool"],
    "str": ["int_for_str"],
    "float_array": ["array_nan", "array_inf", "array_empty", "array_rank", "array_complex", "array_bool", "array_str"],
    "int_array": ["array_non_integer", "array_nan", "array_empty", "array_rank", "array_complex"],
    "bool_array": ["array_non_bool", "array_empty", "array_rank"],
}


@dataclass(frozen=True)
class Case:
    module: str
    function: str
    argument: str
    probes: tuple[str, ...]

    @property
    def id(self) -> str:
        return f"{self.module}.{self.function}:{self.argument}"


def exemptions(modname: str) -> dict:
    return getattr(importlib.import_module(f"paperlib.{modname}"), "_PROBE_EXEMPTIONS", {})


def cases() -> list[Case]:
    out = []
    for modname, fname in FUNCTIONS:
        base = baseline(modname, fname)
        if base is None:
            continue
        fn = getattr(importlib.import_module(f"paperlib.{modname}"), fname)
        sig = inspect.signature(fn)
        bound = sig.bind(*base[0], **base[1])
        values = dict(bound.arguments)
        for p in sig.parameters.values():  # numeric keyword defaults the example did not pass
            if p.name not in values and p.default is not inspect.Parameter.empty:
                if isinstance(p.default, (int, float)) and not isinstance(p.default, bool):
                    values[p.name] = p.default
        skip = exemptions(modname).get(fname, {})
        for name, v in values.items():
            if sig.parameters[name].kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                continue
            cls = value_class(v)
            if cls is None:
                continue
            probes = list(PROBES_BY_CLASS[cls])
            if cls == "int" and int(v) >= 0:
                probes.append("negative")
            probes = tuple(p for p in probes if p not in skip.get(name, {}))
            if probes:
                out.append(Case(modname, fname, name, probes))
    return out


CASES = cases()


@pytest.mark.parametrize("modname, fname", FUNCTIONS, ids=[f"{m}.{f}" for m, f in FUNCTIONS])
def test_every_public_function_has_a_probe_baseline(modname, fname):
    assert baseline(modname, fname) is not None, (
        f"paperlib.{modname}.{fname} has no call to itself in its docstring Examples: add a small doctest "
        "example with valid arguments (numpydoc 'Examples' section); the bad-input probe starts from it"
    )


def _call_with(case: Case, value):
    mod = importlib.import_module(f"paperlib.{case.module}")
    fn = getattr(mod, case.function)
    args, kwargs = baseline(case.module, case.function)
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.arguments[case.argument] = value
    with contextlib.redirect_stdout(io.StringIO()):
        return fn(*bound.args, **bound.kwargs)


# Hypothesis resolves a settings attribute (``database``) through a chain of parent settings that grows with
# every parametrized case run in one process; past about 900 cases in one pytest worker it exceeds Python's
# default recursion limit of 1000 (seen with ``--dist loadfile``, which keeps this whole file on one worker).
# The chain is finite (one link per case), so a higher limit is enough.
sys.setrecursionlimit(max(sys.getrecursionlimit(), 20_000))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
@settings(max_examples=6, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_bad_input_raises_value_error_naming_the_argument(case, data):
    args, kwargs = baseline(case.module, case.function)
    fn = getattr(importlib.import_module(f"paperlib.{case.module}"), case.function)
    original = inspect.signature(fn).bind(*args, **kwargs).arguments.get(case.argument)
    if original is None:
        original = inspect.signature(fn).parameters[case.argument].default
    silent = []
    for probe in case.probes:
        bad = PROBES[probe](original, data)
        try:
            _call_with(case, bad)
        except ValueError as exc:
            if case.argument not in str(exc):
                silent.append(f"{probe}: ValueError does not name {case.argument!r}: {str(exc)[:160]}")
        except Exception as exc:  # noqa: BLE001 - any other exception is not the promised ValueError
            silent.append(f"{probe}: {type(exc).__name__} instead of ValueError: {str(exc)[:160]}")
        else:
            silent.append(f"{probe}: accepted {_show(bad)} silently")
    assert not silent, f"paperlib.{case.id}:\n  " + "\n  ".join(silent)


def _show(v) -> str:
    if isinstance(v, np.ndarray):
        return f"array(shape={v.shape}, dtype={v.dtype})"
    return repr(v)


def test_exemptions_are_documented():
    """Every exemption names a real function, argument and probe, with a reason."""
    seen = 0
    for modname in MODULES:
        mod = importlib.import_module(f"paperlib.{modname}")
        for fname, args in exemptions(modname).items():
            fn = getattr(mod, fname)
            for arg, probes in args.items():
                assert arg in inspect.signature(fn).parameters, f"{modname}.{fname}: no argument {arg!r}"
                for probe, why in probes.items():
                    assert probe in PROBES, f"{modname}.{fname}:{arg}: unknown probe {probe!r}"
                    assert isinstance(why, str) and len(why) > 10, f"{modname}.{fname}:{arg}:{probe}: give a reason"
                    seen += 1
    print(f"{len(FUNCTIONS)} public functions, {len(CASES)} probed arguments, "
          f"{sum(len(c.probes) for c in CASES)} probes, {seen} documented exemptions")
