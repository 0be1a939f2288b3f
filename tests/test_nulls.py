"""The null registry (issue 26): ``paperlib.core.nulls``, ``tools/nulls.py`` and the committed records.

Offline gate over ``book/_generated/nulls/<slug>.json`` (written by ``tools/nulls.py --write``; CI's
``make nulls`` re-executes the runs): for every chapter outside :data:`PENDING`, the chapter declares
its variants, the record is fresh (same inputs as the chapter now), every reproduction and derived check
printed at seed 0 names at least one variant, and it FAILED under each variant it names.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from paperlib.core import claims, nulls

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import freshness  # noqa: E402
import ledger  # noqa: E402
import nulls as nulls_tool  # noqa: E402

#: Chapters whose variants are not registered yet: the ledger says so ("not registered yet"), the
#: status page lists them, and the list only shrinks.
PENDING: dict[str, str] = {}  # every chapter registers its variants (issue 26); a new chapter may be listed here with a reason
CHAPTERS = ledger.toc_chapters()
REGISTERED = [s for s in CHAPTERS if s not in PENDING]


# --- the registry itself ------------------------------------------------------------------------------
def test_declare_nulls_returns_the_active_variant(monkeypatch, capsys):
    monkeypatch.delenv("BOOK_NULL", raising=False)
    assert nulls.declare_nulls({"untrained": "no training"}) is None
    assert capsys.readouterr().out == ""
    monkeypatch.setenv("BOOK_NULL", "untrained")
    assert nulls.declare_nulls({"untrained": "no training", "shuffled": "labels permuted"}) == "untrained"
    assert capsys.readouterr().out == "NULL VARIANT | untrained | no training\n"
    assert nulls.active_null() == "untrained"
    monkeypatch.setenv("BOOK_NULL", "typo")
    with pytest.raises(ValueError, match="BOOK_NULL='typo' is not a variant"):
        nulls.declare_nulls({"untrained": "no training"})


@pytest.mark.parametrize("bad", [{}, [], {"Bad": "x"}, {"ok": ""}, {"ok": "a|b"}, {"ok": "two\nlines"}, {1: "x"}])
def test_declare_nulls_refuses_bad_registries(bad, monkeypatch):
    monkeypatch.delenv("BOOK_NULL", raising=False)
    with pytest.raises(ValueError, match="variants"):
        nulls.declare_nulls(bad)


def test_check_claim_records_the_variants_it_rejects(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("BOOK_NULL", raising=False)
    nulls.declare_nulls({"untrained": "no training", "shuffled": "labels permuted"})
    with pytest.raises(ValueError, match="rejects: 'typo' is not a declared null variant"):
        claims.check_claim("x", 1.0, kind="reproduction", predicted=1.0, atol=0.1, rejects=("typo",))
    record = tmp_path / "r.jsonl"
    monkeypatch.setenv("BOOK_CLAIMS_RECORD", str(record))
    claims.check_claim("x", 1.0, kind="reproduction", predicted=1.0, atol=0.1, rejects="untrained")
    row = json.loads(record.read_text().splitlines()[-1])
    assert row["rejects"] == ["untrained"] and row["null"] is None and row["passed"] is True


def test_the_tool_reports_a_null_that_no_longer_rejects():
    required = {"slope": ["untrained"], "gap": ["untrained", "shuffled"]}
    runs = {
        "untrained": {"claims": [{"claim": "slope", "passed": False, "measured": "0.1", "predicted": "-1"},
                                 {"claim": "gap", "passed": False, "measured": "0", "predicted": ">= 1"}]},
        "shuffled": {"claims": [{"claim": "gap", "passed": True, "measured": "2", "predicted": ">= 1"}]},
    }
    bad = nulls_tool.violations("demo", runs, required)
    assert len(bad) == 1 and "'gap' PASSES under shuffled" in bad[0]
    runs["shuffled"] = {"claims": [], "error": "ValueError: boom"}
    bad = nulls_tool.violations("demo", runs, required)
    assert any("not reached under shuffled" in b for b in bad) and any("the run stopped" in b for b in bad)


# --- the gate over the committed records --------------------------------------------------------------
def test_pending_lists_only_chapters():
    assert set(PENDING) <= set(CHAPTERS)


@pytest.mark.parametrize("slug", REGISTERED)
def test_every_reproduction_and_derived_check_rejects_a_registered_null(slug):
    variants = nulls_tool.declared_variants(slug)
    assert variants, f"{slug}: no nulls.declare_nulls({{...}}) in the configuration cell"
    path = nulls_tool.record_path(slug)
    assert path.exists(), f"{slug}: no null record: run python tools/nulls.py --write {slug}"
    rec = json.loads(path.read_text())
    stale = freshness.stale_inputs(rec["inputs"], freshness.input_hashes(slug))
    assert not stale, f"{slug}: null record measured on other inputs ({stale}): run python tools/nulls.py --write {slug}"
    assert set(rec["runs"]) == set(variants), f"{slug}: the record's variants differ from the declared ones"
    seed0 = ledger.claims_in_notebook(ledger.CHAPTERS / f"{slug}.ipynb")
    problems = []
    for r in seed0:
        res = ledger.null_results(rec, r.claim)
        if r.kind in ledger.NULL_KINDS and not res:
            problems.append(f"{r.kind} check {r.claim!r} names no null variant (rejects=...)")
        for v, measured, passed in res:
            if passed is None:
                problems.append(f"{r.claim!r} not reached under {v}")
            elif passed:
                problems.append(f"{r.claim!r} PASSES under {v} (measured {measured})")
    for v, run in rec["runs"].items():
        if run.get("error"):
            problems.append(f"the run under {v} stopped: {run['error']}")
    assert not problems, f"{slug}:\n" + "\n".join(problems)
