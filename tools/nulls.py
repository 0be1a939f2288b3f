#!/usr/bin/env python
"""The null registry, executed: run every chapter under each of its null variants (``make nulls``).

A chapter declares its null and broken variants with ``paperlib.core.nulls.declare_nulls({...})`` in its
configuration cell, and each ``reproduction`` or ``derived`` check names the variants it must reject
(``check_claim(..., rejects=(...))``). For each chapter and each variant this tool executes a copy of the
chapter with ``BOOK_NULL=<variant>`` and ``BOOK_CLAIMS_RECORD`` set (no output is written to the
notebook), and

* ``--write``: records, per variant, every check's measured value and verdict, the run's error if any,
  and the digest of the chapter's inputs (``tools/freshness.py``), in ``book/_generated/nulls/<slug>.json``;
  the notebook gate (``tests/test_nulls.py``) then checks offline that every reproduction and derived
  check names a variant and FAILED under each it names, and that the record is fresh; the ledger shows
  the values in its "rejects" column;
* ``--check`` (CI): executes the same runs and fails (exit 1) when a check no longer FAILS under a variant
  it names, a named check is not reached, or a variant's run stops with an error; nothing is written.

Usage::

    python tools/nulls.py --write [SLUG ...]        # record (after tools/regenerate.py)
    python tools/nulls.py --check [SLUG ...] [-j 2] # CI: every registered null still rejects its checks
    python tools/nulls.py --list                    # chapters and their declared variants
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures as cf
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import freshness  # noqa: E402
import ledger  # noqa: E402

CHAPTERS = ROOT / "book" / "chapters"
RECORDS = ROOT / "book" / "_generated" / "nulls"
TIMEOUT = 600


def declared_variants(slug: str) -> dict[str, str]:
    """The variants chapter ``slug`` declares (its ``declare_nulls({...})`` literal), or {} if none."""
    for src in freshness._code_cells(CHAPTERS / f"{slug}.md"):
        try:
            tree = ast.parse(freshness._MAGIC.sub("", src))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "declare_nulls"
                    and node.args):
                return ast.literal_eval(node.args[0])
    return {}


def chapters_with_nulls() -> list[str]:
    return [s for s in ledger.toc_chapters() if declared_variants(s)]


def run_variant(slug: str, variant: str, timeout: int = TIMEOUT) -> dict:
    """Execute a copy of chapter ``slug`` under ``BOOK_NULL=variant``; return the recorded claims."""
    import jupytext
    import regenerate

    md = CHAPTERS / f"{slug}.md"  # the source people edit; the gate keeps the .ipynb's inputs equal to it
    nb = jupytext.read(md)
    return regenerate.run_notebook_recorded(nb, md, timeout, {"BOOK_NULL": variant})


def violations(slug: str, runs: dict[str, dict], required: dict[str, list[str]]) -> list[str]:
    """Readable violations of the registry: ``required`` maps claim -> variants that must make it FAIL."""
    bad = []
    for variant, run in runs.items():
        if run.get("error"):
            bad.append(f"{slug} under {variant}: the run stopped: {run['error']}")
    for claim, variants in required.items():
        for v in variants:
            got = [c for c in runs.get(v, {}).get("claims", []) if c["claim"] == claim]
            if not got:
                bad.append(f"{slug}: check {claim!r} was not reached under {v}")
            elif any(c["passed"] for c in got):
                bad.append(f"{slug}: check {claim!r} PASSES under {v} (measured {got[0]['measured']}, "
                           f"predicted {got[0]['predicted']}): the null no longer rejects it")
    return bad


def required_rejections(slug: str, runs: dict[str, dict]) -> dict[str, list[str]]:
    """claim -> the variants it names (``rejects``), from the records of the runs."""
    out: dict[str, list[str]] = {}
    for run in runs.values():
        for c in run.get("claims", []):
            if c.get("rejects"):
                out.setdefault(c["claim"], list(c["rejects"]))
    return out


def run_chapter(slug: str) -> dict:
    variants = declared_variants(slug)
    t0 = time.perf_counter()
    runs = {v: run_variant(slug, v) for v in variants}
    return {
        "slug": slug,
        "variants": variants,
        "runs": runs,
        "inputs": freshness.input_hashes(slug),
        "seconds": round(time.perf_counter() - t0, 1),
    }


def record_path(slug: str) -> Path:
    return RECORDS / f"{slug}.json"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="run and record in book/_generated/nulls/")
    mode.add_argument("--check", action="store_true", help="run and fail on a null that no longer rejects")
    mode.add_argument("--list", action="store_true", help="list chapters and declared variants")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="chapters executed in parallel")
    ap.add_argument("slugs", nargs="*")
    args = ap.parse_args(argv)
    os.environ.pop("BOOK_SEED", None)
    slugs = args.slugs or chapters_with_nulls()
    unknown = [s for s in slugs if s not in ledger.toc_chapters()]
    if unknown:
        ap.error(f"not chapters of _toc.yml: {unknown}")
    if args.list:
        for s in ledger.toc_chapters():
            print(f"{s}: {', '.join(declared_variants(s)) or '(no variants declared)'}")
        return 0
    bad: list[str] = []
    t0 = time.perf_counter()
    with cf.ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for res in pool.map(run_chapter, slugs):
            slug = res["slug"]
            required = required_rejections(slug, res["runs"])
            v = violations(slug, res["runs"], required)
            bad += v
            n_pairs = sum(len(x) for x in required.values())
            print(f"{slug}: {len(res['variants'])} variants, {len(required)} checks naming {n_pairs} "
                  f"(check, null) pairs, {n_pairs - sum('PASSES' in x or 'not reached' in x for x in v)} rejected; "
                  f"{res['seconds']:.0f} s", flush=True)
            for x in v:
                print("   ", x, flush=True)
            if args.write:
                RECORDS.mkdir(parents=True, exist_ok=True)
                record_path(slug).write_text(json.dumps(res, indent=1, sort_keys=True) + "\n")
    print(f"{len(slugs)} chapters in {time.perf_counter() - t0:.0f} s; "
          + ("every registered null rejects its checks" if not bad else f"{len(bad)} violations"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
