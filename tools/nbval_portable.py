"""Portable output comparison for ``pytest --nbval``: exact where the output is deterministic, numbers within a stated tolerance.

Strict nbval compares a cell's stored text with the new text character by character. The same chapter
prints slightly different numbers on processors of another class (AVX2 against AVX-512, x86-64 against
arm64): NumPy, OpenBLAS and XLA pick other kernels, the sums run in another order, and the last bits
differ. Most printed numbers absorb that in their rounding; numbers from an optimiser or a training run
can move by far more. This module decides what "the same output" means, and ``conftest.py`` installs
it in nbval (:func:`install`), so ``pytest --nbval`` keeps working as readers know it.

Every output text (stream, ``text/plain``, ``text/html``, glued values) is split into its **skeleton**,
the text with every number taken out, and its **numbers** (:func:`split_numbers`). Then

* the skeleton is compared exactly, blanks aside (tables and NumPy pad their columns to the widest number);
* a claim line ``PASS | kind | claim | measured ... | predicted ... | tolerance ...`` has its verdict, kind
  and claim text compared exactly, numbers and all; a ``VERDICT | <verdict> | ...`` line its verdict;
* every other number is compared with the cell's **policy**:

  - default: a number printed with a decimal point or an exponent may differ by
    :data:`DEFAULT_ULPS` units in its last printed digit (the finer of the two printings), or by a
    relative :data:`DEFAULT_RTOL`; an integer must be equal (relative :data:`DEFAULT_RTOL` for
    integers of a million or more);
  - ``portable: {rtol: r, atol: a, reason: "..."}`` in the cell's metadata: a stated tolerance
    ``|x - y| <= a + r * max(|x|, |y|)`` on top of the default;
  - ``portable: {compare: structure, reason: "..."}``: the numbers of that cell depend chaotically on
    floating-point order (an optimiser trajectory, a training run), so only the skeleton, the number of
    numbers and the claim verdicts are compared.

A cell gets a loose policy only when a run under a second numeric configuration showed that it needs one
(``make portability`` runs every chapter so; README, "Portable outputs"), and the reason is written
beside it. The notebook gate (``tests/test_notebooks.py``) checks that every declaration is well formed
and gives a reason. Images are never compared (nbval's default); the gate checks they exist.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

#: Units in the last printed digit that a printed decimal number may move (a rounding that flips,
#: plus one more for values formed from two rounded ones).
DEFAULT_ULPS = 2
#: Relative tolerance every number gets (a full-precision repr moves in its 7th digit in float32 work).
DEFAULT_RTOL = 1e-6
#: Metadata key of a cell's policy.
KEY = "portable"
#: Allowed ``compare`` values.
MODES = ("numbers", "structure")

NUMBER_RE = re.compile(
    r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w])"
    r"|(?<![\w.])[-+]?(?:nan|inf)(?![\w])"
)
_CLAIM_RE = re.compile(r"^\s*(PASS|FAIL) \| ([^|]*) \| ([^|]*) \|")
_VERDICT_RE = re.compile(r"^\s*VERDICT \| ([^|]*) \|")
_BLANKS = re.compile(r"[ \t]+")


@dataclass(frozen=True)
class Policy:
    """How a cell's numbers are compared (see the module docstring)."""

    mode: str = "numbers"
    rtol: float = 0.0
    atol: float = 0.0
    reason: str = ""

    @property
    def loose(self) -> bool:
        return self.mode == "structure" or self.rtol > 0 or self.atol > 0


DEFAULT = Policy()


def policy_of(metadata) -> Policy:
    """The comparison policy declared in a cell's metadata (``portable``), or the default.

    Raises ``ValueError`` for a malformed declaration: an unknown key or mode, a negative or
    non-finite tolerance, a loose policy without a ``reason``.
    """
    spec = (metadata or {}).get(KEY)
    if spec is None:
        return DEFAULT
    if not isinstance(spec, dict):
        raise ValueError(f"{KEY}: expected a mapping, got {type(spec).__name__}")
    unknown = set(spec) - {"compare", "rtol", "atol", "reason"}
    if unknown:
        raise ValueError(f"{KEY}: unknown keys {sorted(unknown)}")
    mode = spec.get("compare", "numbers")
    if mode not in MODES:
        raise ValueError(f"{KEY}.compare must be one of {MODES}, got {mode!r}")
    tols = {}
    for k in ("rtol", "atol"):
        v = spec.get(k, 0.0)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{KEY}.{k} must be a finite number >= 0, got {v!r}")
        tols[k] = float(v)
    reason = spec.get("reason", "")
    if not isinstance(reason, str) or len(reason.strip()) < 10:
        raise ValueError(f"{KEY}.reason must say in words why this cell's numbers move (got {reason!r})")
    pol = Policy(mode=mode, rtol=tols["rtol"], atol=tols["atol"], reason=reason.strip())
    if not pol.loose:
        raise ValueError(f"{KEY}: a declaration must loosen something (compare: structure, rtol or atol)")
    return pol


def split_numbers(text: str) -> tuple[list[str], list[str]]:
    """``(skeleton pieces, numbers)`` of ``text``: ``len(pieces) == len(numbers) + 1``."""
    pieces, numbers, pos = [], [], 0
    for m in NUMBER_RE.finditer(text):
        pieces.append(text[pos:m.start()])
        numbers.append(m.group())
        pos = m.end()
    pieces.append(text[pos:])
    return pieces, numbers


def last_digit_unit(token: str) -> float:
    """The value of one unit in the last printed digit of a number token (``"0.310"`` -> 0.001)."""
    t = token.lstrip("+-").lower()
    if t in ("nan", "inf"):
        return 0.0
    mant, _, exp = t.partition("e")
    decimals = len(mant.partition(".")[2])
    return 10.0 ** (int(exp or 0) - decimals)


def _is_integer_token(token: str) -> bool:
    return not any(c in token for c in ".eEni")


def numbers_agree(a: str, b: str, policy: Policy = DEFAULT) -> bool:
    """Whether two printed numbers agree under ``policy`` (see the module docstring)."""
    if a == b or policy.mode == "structure":
        return True
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or math.isinf(y):
        return (math.isnan(x) and math.isnan(y)) or x == y
    scale = max(abs(x), abs(y))
    if _is_integer_token(a) and _is_integer_token(b):
        allowed = DEFAULT_RTOL * scale if scale >= 1e6 else 0.0
    else:
        allowed = DEFAULT_ULPS * min(last_digit_unit(a), last_digit_unit(b)) + DEFAULT_RTOL * scale
    allowed += policy.atol + policy.rtol * scale
    return abs(x - y) <= allowed * (1 + 1e-12)


@dataclass
class Difference:
    """Why two texts differ: the first disagreement, for the failure message."""

    what: str
    expected: str
    got: str
    line: str = ""

    def __str__(self) -> str:
        where = f" in line {self.line!r}" if self.line else ""
        return f"{self.what}{where}: expected {self.expected!r}, got {self.got!r}"


@dataclass
class Comparison:
    """Result of :func:`compare_text`: ``ok``, and whether the default policy alone would have passed."""

    ok: bool
    default_ok: bool
    difference: Difference | None = None
    largest: list = field(default_factory=list)


def _line_keys(line: str) -> tuple[str, ...] | None:
    m = _CLAIM_RE.match(line)
    if m:
        return ("claim",) + tuple(s.strip() for s in m.groups())
    m = _VERDICT_RE.match(line)
    if m:
        return ("verdict", m.group(1).strip())
    return None


def compare_text(expected: str, got: str, policy: Policy = DEFAULT) -> Comparison:
    """Compare one stored output text with a new one under ``policy``.

    Returns a :class:`Comparison`; ``largest`` lists the pairs of numbers that differ, with their
    relative difference, largest first (at most five), for reports.
    """
    if expected == got:
        return Comparison(True, True)
    e_lines, g_lines = expected.split("\n"), got.split("\n")
    if len(e_lines) != len(g_lines):
        d = Difference("number of lines", str(len(e_lines)), str(len(g_lines)))
        return Comparison(False, False, d)
    diffs, first_loose_fail, first_default_fail = [], None, None
    for el, gl in zip(e_lines, g_lines):
        ek, gk = _line_keys(el), _line_keys(gl)
        if ek != gk:
            d = Difference("claim verdict, kind or claim text", str(ek), str(gk), el)
            return Comparison(False, False, d)
        ep, en = split_numbers(el)
        gp, gn = split_numbers(gl)
        if len(en) != len(gn) or [_BLANKS.sub("", p) for p in ep] != [_BLANKS.sub("", p) for p in gp]:
            d = Difference("text (numbers aside)", el, gl)
            return Comparison(False, False, d)
        for a, b in zip(en, gn):
            if a == b:
                continue
            x, y = float(a), float(b)
            rel = abs(x - y) / max(abs(x), abs(y), 1e-300) if math.isfinite(x) and math.isfinite(y) else math.inf
            diffs.append((rel, a, b))
            if first_default_fail is None and not numbers_agree(a, b, DEFAULT):
                first_default_fail = Difference("number", a, b, el)
            if first_loose_fail is None and not numbers_agree(a, b, policy):
                first_loose_fail = Difference("number", a, b, el)
    diffs.sort(key=lambda t: -t[0])
    return Comparison(first_loose_fail is None, first_default_fail is None,
                      first_loose_fail or first_default_fail, diffs[:5])


# --------------------------------------------------------------------------------------------- nbval


def _flatten(outputs, skip, sanitize) -> dict[str, list]:
    """nbval's flattening: {output key or mime type: [values in order]}, minus the skipped keys."""
    flat: dict[str, list] = {}
    for out in outputs:
        for key, value in out.items():
            if key in skip:
                continue
            if key == "data":
                for mime, v in value.items():
                    if mime not in skip:
                        flat.setdefault(mime, []).append(sanitize(v))
            else:
                flat.setdefault(key, []).append(sanitize(value))
    return flat


def _as_text(v) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(s, str) for s in v):
        return "".join(v)
    return json.dumps(v, sort_keys=True)


def compare_outputs(cell_item, test, ref, skip_compare=None) -> bool:
    """Replacement for ``nbval.plugin.IPyNbCell.compare_outputs`` (same signature and contract)."""
    from nbval.plugin import transform_streams_for_comparison

    skip = skip_compare or cell_item.parent.skip_compare
    policy = policy_of(cell_item.cell.metadata)
    test = _flatten(transform_streams_for_comparison(test), skip, cell_item.sanitize)
    ref = _flatten(transform_streams_for_comparison(ref), skip, cell_item.sanitize)
    cell_item.comparison_traceback = []
    fail = cell_item.comparison_traceback.append
    if set(ref) != set(test):
        fail(f"output fields differ: stored {sorted(ref)}, new {sorted(test)}")
        return False
    needed_loose, largest = False, []
    for key in ref:
        if len(ref[key]) != len(test[key]):
            fail(f'dissimilar number of outputs for "{key}": stored {len(ref[key])}, new {len(test[key])}')
            return False
        for r, t in zip(ref[key], test[key]):
            if r == t:
                continue
            if key.startswith("image/"):  # only compared with --nbdime; images differ in their bytes
                fail(f"{key} differs")
                return False
            res = compare_text(_as_text(r), _as_text(t), policy)
            largest += res.largest
            if not res.ok:
                mode = "the default tolerance" if not policy.loose else f"this cell's declared policy ({policy})"
                fail(f'output "{key}" differs beyond {mode}: {res.difference}')
                return False
            needed_loose |= not res.default_ok
    if policy.loose:
        largest.sort(key=lambda t: -t[0])
        cell_item.user_properties.append(("portable", json.dumps({
            "mode": policy.mode, "rtol": policy.rtol, "atol": policy.atol, "reason": policy.reason,
            "needed": needed_loose, "largest": [(a, b) for _, a, b in largest[:3]],
        })))
    return True


def install() -> None:
    """Make nbval compare outputs with :func:`compare_outputs`."""
    from nbval.plugin import IPyNbCell

    IPyNbCell.compare_outputs = compare_outputs


# ------------------------------------------------------------------- pytest plugin (conftest.py loads it)

_REPORTS: list = []


def pytest_configure(config):
    if config.pluginmanager.hasplugin("nbval"):
        install()


def pytest_runtest_logreport(report):
    if report.when == "call" and any(name == "portable" for name, _ in report.user_properties):
        _REPORTS.append(report)


def pytest_terminal_summary(terminalreporter):
    lines = summary_lines(_REPORTS)
    if lines:
        terminalreporter.section("portable output comparison (tools/nbval_portable.py)")
        for line in lines:
            terminalreporter.write_line(line)


def summary_lines(reports) -> list[str]:
    """Lines for pytest's terminal summary: which cells were compared loosely, why, and whether they needed it."""
    rows = []
    for rep in reports:
        for name, value in getattr(rep, "user_properties", []):
            if name == "portable":
                rows.append((rep.nodeid, json.loads(value)))
    if not rows:
        return []
    needed = sum(r["needed"] for _, r in rows)
    out = [f"{len(rows)} cells declared a loose comparison (cell metadata '{KEY}'); "
           f"{needed} of them differed beyond the default tolerance in this run:"]
    for nodeid, r in sorted(rows):
        tol = "structure and verdicts only" if r["mode"] == "structure" else f"rtol {r['rtol']:g}, atol {r['atol']:g}"
        moved = "; ".join(f"{a} -> {b}" for a, b in r["largest"]) if r["needed"] else "within the default"
        out.append(f"  {'NEEDED' if r['needed'] else 'unused'}  {nodeid}  [{tol}]  {moved}  -- {r['reason']}")
    return out

