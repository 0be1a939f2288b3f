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

Semantic probes (issue 28) extend the table:

==================  =======================================================================
baseline value      bad values probed
==================  =======================================================================
float (JAX module)  a finite float64 that JAX's float32 turns into inf (``|x| > 3.4e38``)
float array (JAX)   such a value at a drawn position
int                 an int past float range (``10**400``: ``float()`` would overflow); and,
                    when the docstring types the argument ``int``, an int past ``2**31 - 1``
                    (it would reach ``jit`` as an int32 overflow)
str                 the baseline text with a line separator (``\\r``, ``\\x0b``, ``\\x85``,
                    ``\\u2028``, ``\\u2029``...) inserted at a drawn inner position
numpy Generator     ``0`` (a seed, not a Generator) and a legacy ``RandomState``
JAX PRNG key        ``0`` (a seed, not a key): arguments named ``key`` or typed as a PRNG key
==================  =======================================================================

A module "runs JAX in float32" when it imports ``jax`` (``jax`` or ``jax.numpy`` among its globals);
its float arguments must then be representable in float32. Oversized sizes that must be refused
before allocation (a memory estimate) are probed by :func:`test_oversize_sizes_are_refused`, opt-in
(``PAPERLIB_PROBE_OVERSIZE=1``) because each case runs in its own subprocess under ``ulimit -v``.

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
import os
import pkgutil
import re
import subprocess
import sys
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import paperlib

# public modules as dotted names under paperlib ("online.conformal"); subpackages and private modules
# (a leading underscore anywhere) are not listed: a function a public module re-exports from a private
# implementation module of its own subpackage is probed under the public module's name
MODULES = sorted(m.name.removeprefix("paperlib.")
                 for m in pkgutil.walk_packages(paperlib.__path__, "paperlib.")
                 if not m.ispkg and not any(part.startswith("_") for part in m.name.split(".")))
if os.environ.get("PAPERLIB_PROBE_MODULES"):  # a comma-separated subset, for a quick local run
    MODULES = [m for m in MODULES if m in os.environ["PAPERLIB_PROBE_MODULES"].split(",")]


def _defined_in(fn, mod) -> bool:
    """Whether ``fn`` belongs to public module ``mod``: defined there, or in a private module it re-exports."""
    home = fn.__module__
    if home == mod.__name__:
        return True
    pkg = mod.__name__.rsplit(".", 1)[0]
    return home.rsplit(".", 1)[0] == pkg and home.rsplit(".", 1)[1].startswith("_")


def public_functions() -> list[tuple[str, str]]:
    out = []
    for modname in MODULES:
        mod = importlib.import_module(f"paperlib.{modname}")
        for name in getattr(mod, "__all__", []):
            fn = getattr(mod, name, None)
            # a name re-exported from another public module is probed there, where it is defined
            if inspect.isfunction(fn) and _defined_in(fn, mod):
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
    if isinstance(v, np.random.Generator):
        return "rng"
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
            return "key"
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


def _with_huge_at(arr: np.ndarray, data) -> np.ndarray:
    big = data.draw(st.sampled_from([1e39, -1e39, 3.5e38, 1e300]), label="float32 overflow")
    return _with_value_at(arr, big, data)


def _with_line_separator(v: str, data) -> str:
    sep = data.draw(st.sampled_from(LINE_SEPARATORS), label="separator")
    # inside the text: a break at either end is whitespace that ``str.strip`` removes
    i = data.draw(st.integers(1, len(v) - 1), label="position") if len(v) >= 2 else len(v)
    return v[:i] + sep + v[i:]


LINE_SEPARATORS = ["\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029"]


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
    # semantic probes (issue 28)
    "float32_overflow": lambda v, d: d.draw(st.sampled_from([1e39, -1e39, 3.5e38, 1e300]), label="big"),
    "array_float32_overflow": lambda v, d: _with_huge_at(np.asarray(v, dtype=float), d),
    "int_past_float": lambda v, d: d.draw(st.sampled_from([10**400, -(10**400)]), label="huge"),
    "int_past_int32": lambda v, d: 2**31 + d.draw(st.integers(0, 2**40), label="k"),
    "line_separator": lambda v, d: _with_line_separator(v, d),
    "rng_seed_int": lambda v, d: 0,
    "rng_random_state": lambda v, d: np.random.RandomState(0),
    "key_seed_int": lambda v, d: 0,
}

PROBES_BY_CLASS = {
    "float": ["nan", "inf", "numpy_nan", "bool", "str", "complex"],
    "int": ["bool", "str", "non_integer", "nan"],
    "bool": ["string_for_bool"],
    "str": ["int_for_str"],
    "float_array": ["array_nan", "array_inf", "array_empty", "array_rank", "array_complex", "array_bool", "array_str"],
    "int_array": ["array_non_integer", "array_nan", "array_empty", "array_rank", "array_complex"],
    "bool_array": ["array_non_bool", "array_empty", "array_rank"],
    "rng": ["rng_seed_int", "rng_random_state"],
    "key": ["key_seed_int"],
}

SEMANTIC_PROBES = {"float32_overflow", "array_float32_overflow", "int_past_float", "int_past_int32",
                   "line_separator", "rng_seed_int", "rng_random_state", "key_seed_int"}


def runs_jax_float32(modname: str) -> bool:
    """True when the module imports JAX (which runs in float32 here: x64 is never enabled)."""
    mod = importlib.import_module(f"paperlib.{modname}")
    return any(getattr(v, "__name__", None) in ("jax", "jax.numpy") for v in vars(mod).values())


def documented_type(fn, name: str) -> str:
    """The numpydoc type of parameter ``name`` (``"int"``, ``"float, default 0.5"``...), or ``""``."""
    doc = inspect.getdoc(fn) or ""
    for line in doc.splitlines():
        m = re.match(r"^([\w, *]+?)\s*:\s*(.*)$", line)
        if m and name in [n.strip().lstrip("*") for n in m.group(1).split(",")]:
            return m.group(2).strip()
    return ""


def _is_key_argument(fn, name: str, v) -> bool:
    t = documented_type(fn, name).lower()
    return name == "key" or "prng" in t or t.startswith("jax key") or t.startswith("key")


def semantic_probes(modname: str, fn, name: str, v, cls: str | None) -> list[str]:
    """The issue-28 probes for argument ``name`` whose baseline value ``v`` has class ``cls``."""
    out = []
    jax32 = runs_jax_float32(modname)
    if cls == "float" and jax32:
        out.append("float32_overflow")
    if cls == "float_array" and jax32:
        out.append("array_float32_overflow")
    if cls == "int":
        out.append("int_past_float")
        if re.match(r"^int\b", documented_type(fn, name)):
            out.append("int_past_int32")
    if cls == "str":
        out.append("line_separator")
    if cls == "rng":
        out += PROBES_BY_CLASS["rng"]
    if cls == "key":
        out += PROBES_BY_CLASS["key"]
    return out


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


def _baselines():
    """``(modname, fname, fn, signature, {argument: baseline value})`` of every probed public function."""
    for modname, fname in FUNCTIONS:
        base = baseline(modname, fname)
        if base is None:
            continue
        fn = getattr(importlib.import_module(f"paperlib.{modname}"), fname)
        sig = inspect.signature(fn)
        yield modname, fname, fn, sig, dict(sig.bind(*base[0], **base[1]).arguments)


def cases() -> list[Case]:
    out = []
    for modname, fname, fn, sig, values in _baselines():
        for p in sig.parameters.values():  # numeric keyword defaults the example did not pass
            if p.name not in values and p.default is not inspect.Parameter.empty:
                if isinstance(p.default, (int, float)) and not isinstance(p.default, bool):
                    values[p.name] = p.default
        skip = exemptions(modname).get(fname, {})
        for name, v in values.items():
            if sig.parameters[name].kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                continue
            cls = value_class(v)
            if cls in ("int_array", "key") and _is_key_argument(fn, name, v):
                cls = "key"  # a raw uint32 key (jax.random.PRNGKey) or a typed key
            elif cls == "key":
                cls = None
            if cls is None:
                continue
            probes = [] if cls in ("rng", "key") else list(PROBES_BY_CLASS[cls])
            if cls == "int" and int(v) >= 0:
                probes.append("negative")
            probes += semantic_probes(modname, fn, name, v, cls)
            probes = tuple(p for p in probes if p not in skip.get(name, {}))
            if probes:
                out.append(Case(modname, fname, name, probes))
    return out


# a subprocess of the oversize probe computes only its own baseline
CASES = [] if os.environ.get("PAPERLIB_PROBE_CHILD") else cases()


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


# --- oversize sizes: refused by a memory estimate, not attempted (issue 28) -------------------------------
OVERSIZE = 2**31 - 1  # the largest size an int32 check lets through
OVERSIZE_ULIMIT_KIB = 4 * 1024 * 1024  # ulimit -v for the child: 4 GiB of address space
OVERSIZE_TIMEOUT_S = 60


def oversize_cases() -> list[Case]:
    """Integer arguments documented as ``int`` whose baseline is a positive size or count."""
    out = []
    for modname, fname, fn, sig, values in _baselines():
        for p in sig.parameters.values():
            if p.name not in values and isinstance(p.default, int) and not isinstance(p.default, bool):
                values[p.name] = p.default
        skip = exemptions(modname).get(fname, {})
        for name, v in values.items():
            if value_class(v) == "int" and int(v) >= 1 and re.match(r"^int\b", documented_type(fn, name)):
                if "oversize" not in skip.get(name, {}):
                    out.append(Case(modname, fname, name, ("oversize",)))
    return out


def run_oversize(case: Case, value: int = OVERSIZE, *, ulimit_kib: int = OVERSIZE_ULIMIT_KIB,
                 timeout: float = OVERSIZE_TIMEOUT_S) -> tuple[str, str]:
    """Call ``case`` with ``value`` in a subprocess under ``ulimit -v``; return ``(outcome, detail)``.

    Outcomes: ``clear`` (a ValueError naming the argument), ``cryptic`` (another exception or a
    ValueError not naming it), ``silent`` (it returned), ``allocation`` (MemoryError, a crash or a kill
    under the address-space limit) and ``timeout`` (still running after ``timeout`` seconds).
    """
    code = (
        "import sys, json; sys.path.insert(0, %r); import test_bad_input_probe as t\n"
        "c = t.Case(%r, %r, %r, ('oversize',))\n"
        "try:\n    t._call_with(c, %d); print('OUTCOME silent')\n"
        "except MemoryError as e:\n    print('OUTCOME allocation MemoryError', str(e)[:200])\n"
        "except ValueError as e:\n"
        "    print('OUTCOME', 'clear' if c.argument in str(e) else 'cryptic', 'ValueError', str(e)[:300].replace(chr(10), ' '))\n"
        "except Exception as e:\n    print('OUTCOME cryptic', type(e).__name__, str(e)[:200].replace(chr(10), ' '))\n"
    ) % (os.path.dirname(os.path.abspath(__file__)), case.module, case.function, case.argument, value)
    # the memory estimates refuse anything over 1 GiB, well inside the address-space limit
    env = dict(os.environ, PAPERLIB_PROBE_CHILD="1", PAPERLIB_MAX_BYTES=str(2**30))
    try:
        proc = subprocess.run(["bash", "-c", f"ulimit -v {ulimit_kib}; exec \"$0\" -c \"$1\"", sys.executable, code],
                              capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", f"still running after {timeout} s"
    for line in proc.stdout.splitlines():
        if line.startswith("OUTCOME "):
            outcome, _, detail = line[8:].partition(" ")
            return outcome, detail
    tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
    return "allocation", f"exit {proc.returncode}: {tail[:200]}"


@pytest.mark.skipif(not os.environ.get("PAPERLIB_PROBE_OVERSIZE"),
                    reason="opt-in (PAPERLIB_PROBE_OVERSIZE=1): one subprocess under ulimit -v per size argument")
@pytest.mark.parametrize("case", oversize_cases() if os.environ.get("PAPERLIB_PROBE_OVERSIZE") else [],
                         ids=lambda c: c.id)
def test_oversize_sizes_are_refused(case):
    """A size of ``2**31 - 1`` is refused with a ValueError naming it, or the call completes in time,
    under a 4 GiB address-space limit: never a MemoryError, a crash or a runaway allocation."""
    outcome, detail = run_oversize(case)
    assert outcome in ("clear", "silent"), f"paperlib.{case.id} = {OVERSIZE}: {outcome}: {detail}"
