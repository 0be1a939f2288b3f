"""Unit tests of the book-wide helpers: seed, claim check, power-law fit, figure style, validation."""

import math

import numpy as np
import pytest

from paperlib.core import claims, fitting, plotting, seeding
from paperlib.core._validation import as_array, check_int, check_probability, check_real


# --- seeding -----------------------------------------------------------------------------------
def test_chapter_seed_default_and_env(monkeypatch):
    monkeypatch.delenv("BOOK_SEED", raising=False)
    assert seeding.chapter_seed() == 0
    assert seeding.chapter_seed(default=7) == 7
    monkeypatch.setenv("BOOK_SEED", "3")
    assert seeding.chapter_seed() == 3
    monkeypatch.setenv("BOOK_SEED", "  ")
    assert seeding.chapter_seed() == 0


@pytest.mark.parametrize("raw", ["abc", "-1", "1.5"])
def test_chapter_seed_rejects_bad_env(monkeypatch, raw):
    monkeypatch.setenv("BOOK_SEED", raw)
    with pytest.raises(ValueError, match="BOOK_SEED"):
        seeding.chapter_seed()


@pytest.mark.parametrize("bad", [-1, 1.0, True, "0"])
def test_seed_functions_reject_bad_seed(bad):
    with pytest.raises(ValueError):
        seeding.numpy_rng(bad)
    with pytest.raises(ValueError):
        seeding.jax_key(bad)
    with pytest.raises(ValueError, match="default"):
        seeding.chapter_seed(default=bad)


def test_rngs_are_deterministic():
    a = seeding.numpy_rng(5).normal(size=4)
    b = seeding.numpy_rng(5).normal(size=4)
    np.testing.assert_array_equal(a, b)
    import jax

    x = jax.random.normal(seeding.jax_key(5), (3,))
    y = jax.random.normal(seeding.jax_key(5), (3,))
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


# --- claim check -------------------------------------------------------------------------------
def test_check_claim_value_pass(capsys):
    r = claims.check_claim("slope", -2.02, kind="sanity", predicted=-2.0, atol=0.1)
    out = capsys.readouterr().out.strip()
    assert r.passed and out == "PASS | sanity | slope | measured -2.02 | predicted -2 | tolerance ±0.1"
    assert claims.parse_claim_line(out) == r


def test_check_claim_value_fail_raises(capsys):
    with pytest.raises(claims.ClaimFailed, match="FAIL"):
        claims.check_claim("slope", -1.5, kind="sanity", predicted=-2.0, atol=0.1)
    assert capsys.readouterr().out.startswith("FAIL | sanity | slope")


def test_check_claim_relative_and_combined_tolerance():
    assert claims.check_claim("c", 1.08, kind="sanity", predicted=1.0, rtol=0.1).passed
    # atol + rtol*|predicted| = 0.01 + 0.1*2 = 0.21
    assert claims.check_claim("c", 2.2, kind="sanity", predicted=2.0, atol=0.01, rtol=0.1).passed
    assert not claims.check_claim("c", 2.3, kind="sanity", predicted=2.0, atol=0.01, rtol=0.1, raise_on_fail=False).passed


def test_check_claim_interval_and_one_sided(capsys):
    assert claims.check_claim("ratio", 36.0, kind="sanity", low=25).predicted == ">= 25"
    assert claims.check_claim("n", 4, kind="sanity", high=5).predicted == "<= 5"
    r = claims.check_claim("s", -1.9, kind="sanity", low=-2.2, high=-1.8)
    assert r.predicted == "in [-2.2, -1.8]" and r.tolerance == "-"
    with pytest.raises(claims.ClaimFailed):
        claims.check_claim("s", -1.7, kind="sanity", low=-2.2, high=-1.8)
    capsys.readouterr()


def test_check_claim_nan_always_fails():
    assert not claims.check_claim("x", float("nan"), kind="sanity", predicted=0.0, atol=1e9, raise_on_fail=False).passed
    assert not claims.check_claim("x", float("nan"), kind="sanity", low=-1e9, raise_on_fail=False).passed


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({}, "exactly one"),
        ({"predicted": 1.0}, "tolerance"),
        ({"predicted": 1.0, "atol": 0.1, "low": 0.0}, "exactly one"),
        ({"low": 1.0, "high": 0.0}, "low <= high"),
        ({"predicted": 1.0, "atol": -0.1}, "atol"),
        ({"predicted": 1.0, "rtol": float("nan")}, "rtol"),
        ({"low": 0.0, "atol": 0.1}, "interval"),
    ],
)
def test_check_claim_rejects_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        claims.check_claim("x", 1.0, kind="sanity", **kwargs)


@pytest.mark.parametrize("bad", ["", "a | b", "two\nlines"])
def test_check_claim_rejects_bad_text(bad):
    with pytest.raises(ValueError, match="claim"):
        claims.check_claim(bad, 1.0, kind="sanity", low=0)


def test_parse_claim_line_ignores_other_text():
    assert claims.parse_claim_line("slope -2.0") is None
    assert claims.parse_claim_line("PASS without fields") is None
    # a line without a known kind is not a claim line
    assert claims.parse_claim_line("PASS | slope | measured 1 | predicted 1 | tolerance ±0") is None


@pytest.mark.parametrize("kind", claims.KINDS)
def test_check_claim_kind_is_printed_and_parsed(kind, capsys):
    r = claims.check_claim("k", 1.0, kind=kind, low=0)
    out = capsys.readouterr().out.strip()
    assert out.split(" | ")[1] == kind
    assert claims.parse_claim_line(out) == r


@pytest.mark.parametrize("bad", [None, "", "Reproduction", "theorem", 1, True])
def test_check_claim_requires_a_known_kind(bad):
    with pytest.raises(ValueError, match="kind"):
        claims.check_claim("x", 1.0, kind=bad, low=0)
    with pytest.raises(TypeError):
        claims.check_claim("x", 1.0, low=0)  # kind is required


@pytest.mark.parametrize("bad", [True, "1.0", 1 + 2j, np.complex128(1.0)])
def test_check_claim_rejects_non_real_measured(bad):
    with pytest.raises(ValueError, match="measured"):
        claims.check_claim("x", bad, kind="sanity", low=0)


def test_record_mode_writes_json_lines_and_does_not_raise(tmp_path, monkeypatch, capsys):
    import json

    rec = tmp_path / "rec.jsonl"
    monkeypatch.setenv(claims.RECORD_ENV_VAR, str(rec))
    r = claims.check_claim("fails", 3.0, kind="derived", high=1.0)  # no ClaimFailed in record mode
    v = claims.declare_verdict("partly", missing="the d = 20 sphere")
    rows = [json.loads(line) for line in rec.read_text().splitlines()]
    assert rows[0]["type"] == "claim" and rows[0]["passed"] is False and rows[0]["kind"] == "derived"
    assert rows[1] == {"type": "verdict", "verdict": "partly", "missing": "the d = 20 sphere"}
    assert not r.passed and v.verdict == "partly"
    capsys.readouterr()


def test_declare_verdict_prints_and_parses(capsys):
    v = claims.declare_verdict("reproduced", missing="-")
    out = capsys.readouterr().out.strip()
    assert out == "VERDICT | reproduced | -"
    assert claims.parse_verdict_line(out) == v
    assert claims.parse_verdict_line("VERDICT | maybe | x") is None


@pytest.mark.parametrize(
    "verdict, missing", [("yes", "-"), ("partly", ""), ("partly", "a | b"), (None, "-"), ("partly", 3)]
)
def test_declare_verdict_rejects_bad_input(verdict, missing):
    with pytest.raises(ValueError):
        claims.declare_verdict(verdict, missing=missing)


# --- power-law fit -----------------------------------------------------------------------------
def test_power_law_fit_exact():
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    fit = fitting.power_law_fit(x, 3.0 * x**-1.5)
    assert fit.slope == pytest.approx(-1.5, abs=1e-12)
    assert fit.prefactor == pytest.approx(3.0, rel=1e-12)
    assert fit.r2 == pytest.approx(1.0)
    assert fit.stderr == pytest.approx(0.0, abs=1e-12)
    np.testing.assert_allclose(fit.predict([32.0]), 3.0 * 32.0**-1.5)


def test_power_law_fit_matches_polyfit_and_ci_covers():
    rng = np.random.default_rng(0)
    x = np.logspace(0, 3, 30)
    y = 2.0 * x**0.5 * np.exp(0.05 * rng.normal(size=x.size))
    fit = fitting.power_law_fit(x, y)
    slope, intercept = np.polyfit(np.log(x), np.log(y), 1)
    assert fit.slope == pytest.approx(slope, rel=1e-10)
    assert fit.prefactor == pytest.approx(math.exp(intercept), rel=1e-10)
    assert fit.ci[0] < 0.5 < fit.ci[1]
    # independent standard error: sqrt(SSE/(n-2) / Sxx)
    lx, ly = np.log(x), np.log(y)
    resid = ly - (slope * lx + intercept)
    se = math.sqrt(resid @ resid / (x.size - 2) / np.sum((lx - lx.mean()) ** 2))
    assert fit.stderr == pytest.approx(se, rel=1e-10)


def test_power_law_fit_two_points_has_nan_stderr():
    fit = fitting.power_law_fit([1.0, 10.0], [1.0, 100.0])
    assert fit.slope == pytest.approx(2.0) and math.isnan(fit.stderr)


@pytest.mark.parametrize(
    "x, y, match",
    [
        ([1.0, 2.0, 3.0], [1.0, 2.0], "same length"),
        ([1.0], [1.0], "at least 2"),
        ([1.0, -2.0], [1.0, 2.0], "x must be positive"),
        ([1.0, 2.0], [0.0, 2.0], "y must be positive"),
        ([1.0, np.nan], [1.0, 2.0], "finite"),
        ([[1.0, 2.0]], [[1.0, 2.0]], "dimension"),
        ([2.0, 2.0], [1.0, 3.0], "distinct"),
    ],
)
def test_power_law_fit_rejects_bad_input(x, y, match):
    with pytest.raises(ValueError, match=match):
        fitting.power_law_fit(x, y)


def test_power_law_fit_rejects_bad_level():
    with pytest.raises(ValueError, match="level"):
        fitting.power_law_fit([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], level=1.0)


# --- plotting ----------------------------------------------------------------------------------
def test_set_book_style_sets_rcparams():
    import matplotlib as mpl

    plotting.set_book_style()
    assert mpl.rcParams["lines.linewidth"] == 2.0
    assert tuple(mpl.rcParams["figure.figsize"]) == (6.4, 4.0)
    with pytest.raises(ValueError, match="context"):
        plotting.set_book_style(context="huge")
    with pytest.raises(ValueError, match="font_scale"):
        plotting.set_book_style(font_scale=0)
    assert plotting.theory_line_kwargs(color="red")["color"] == "red"


# --- validation --------------------------------------------------------------------------------
def test_validators():
    assert check_int("n", 3, minimum=1) == 3
    with pytest.raises(ValueError, match="n must be >= 1"):
        check_int("n", 0, minimum=1)
    with pytest.raises(ValueError, match="integer"):
        check_int("n", 2.0)
    with pytest.raises(ValueError, match="finite"):
        check_real("t", float("inf"))
    with pytest.raises(ValueError, match="t must be > 0"):
        check_real("t", 0.0, minimum=0.0, strict_min=True)
    assert check_probability("p", 0.5) == 0.5
    with pytest.raises(ValueError, match="p must be <= 1"):
        check_probability("p", 1.5)
    with pytest.raises(ValueError, match=r"shape \(\*, 2\)"):
        as_array("X", np.zeros((3, 3)), shape=(None, 2))
    with pytest.raises(ValueError, match="1 entry is NaN"):
        as_array("X", [1.0, np.nan])
