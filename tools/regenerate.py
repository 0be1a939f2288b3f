#!/usr/bin/env python
"""Regenerate chapter outputs, with their provenance and a verdict at every seed.

Usage::

    python tools/regenerate.py                          # every chapter in _toc.yml
    python tools/regenerate.py test_time_scaling gnn_minimax_rates
    python tools/regenerate.py --seeds-only gnn_minimax_rates   # outputs fresh: rerun seeds 1, 2 only
    python tools/regenerate.py --no-seeds --no-record slug      # a quick draft

For each chapter it

1. syncs the Jupytext pair (``.md`` -> ``.ipynb``), executes the notebook in place with a fresh kernel
   at the default seed, and syncs again;
2. records, in the notebook's metadata under ``executable_theory`` (kept out of the ``.md`` by
   ``jupytext.toml``), the run (seconds, date, machine, package versions, and the seconds of
   ``tools/machine_reference.py``'s fixed workload timed just before, so machines compare) and the hash of every input
   the outputs depend on (``tools/freshness.py``: the chapter source, the ``paperlib`` modules it
   imports, the locks), so the notebook gate can prove the outputs are fresh;
3. executes the chapter again at ``BOOK_SEED=1`` and ``2`` with ``BOOK_CLAIMS_RECORD`` set, so every
   claim check records its verdict without stopping the run, and stores those verdicts (and the digest
   of the inputs they were measured on) beside the run; these executions write no outputs;
4. rewrites the claims ledger, the front-page table and the status page (``tools/ledger.py``).

Run it inside the project's environment (``make venv``). ``BOOK_SEED`` must be unset: committed
outputs are the default-seed run.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import freshness  # noqa: E402  (tools/freshness.py)
import ledger  # noqa: E402  (tools/ledger.py)
import machine_reference  # noqa: E402  (tools/machine_reference.py)

CHAPTERS = ROOT / "book" / "chapters"
META_KEY = ledger.META_KEY
EXTRA_SEEDS = (1, 2)
KEY_PACKAGES = ["jax", "jaxlib", "numpy", "scipy", "optax", "matplotlib", "seaborn", "scikit-learn",
                "jupyter-book", "nbval"]


def _jupytext_sync(path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "jupytext", "--sync", "--quiet", str(path)], check=True, cwd=ROOT
    )


def _update_ipynb_from_md(md: Path) -> None:
    """Take the notebook's inputs from the ``.md`` (what people edit), keeping the ``.ipynb``'s outputs.

    Not ``--sync``: that trusts file times, and a tool that rewrote the ``.ipynb`` after the ``.md`` was
    edited (e.g. ``tools/stamp_install_cell.py``, which writes both) would make the older inputs win.
    """
    subprocess.run(
        [sys.executable, "-m", "jupytext", "--to", "ipynb", "--update", "--quiet", str(md)], check=True, cwd=ROOT
    )


def strip_execution_metadata(nb) -> None:
    """Drop per-cell execution timestamps (``metadata.execution``) left by older runs."""
    for cell in nb.cells:
        cell.metadata.pop("execution", None)


def _run_kernel(nb, ipynb: Path, timeout: int, env: dict[str, str]) -> float:
    """Execute ``nb`` in place (in memory) with ``env`` added to the kernel's environment."""
    from nbclient import NotebookClient

    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        client = NotebookClient(
            nb,
            timeout=timeout,
            kernel_name="python3",
            record_timing=False,  # no per-cell timestamps: they would churn every diff
            resources={"metadata": {"path": str(ipynb.parent)}},
        )
        t0 = time.perf_counter()
        client.execute()
        return time.perf_counter() - t0
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _execute(ipynb: Path, timeout: int) -> float:
    import nbformat

    nb = nbformat.read(ipynb, as_version=4)
    elapsed = _run_kernel(nb, ipynb, timeout, {})
    strip_execution_metadata(nb)
    nbformat.write(nb, ipynb)
    return elapsed


def _seed_run(ipynb: Path, seed: int, timeout: int) -> dict:
    """Execute a copy of the chapter at ``BOOK_SEED=seed``; return every recorded verdict."""
    import nbformat

    return run_notebook_at_seed(nbformat.read(ipynb, as_version=4), ipynb, seed, timeout)


CLAIM_FIELDS = ("kind", "claim", "measured", "predicted", "tolerance", "passed")


def run_notebook_recorded(nb, path: Path, timeout: int, env: dict[str, str]) -> dict:
    """Execute ``nb`` (in memory) with ``env`` and ``BOOK_CLAIMS_RECORD`` set; return what was recorded.

    Returns ``{"claims": [{kind, claim, measured, predicted, tolerance, passed, rejects}, ...],
    "error": str | None, "seconds": float}`` (``error``: a failure outside the claim checks; the claims
    recorded before it are kept; ``rejects``: the null variants the check names, ``paperlib.core.nulls``).
    """
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "claims.jsonl"
        error = None
        t0 = time.perf_counter()
        try:
            _run_kernel(nb, path, timeout, {**env, "BOOK_CLAIMS_RECORD": str(record)})
        except Exception as exc:  # a failure outside the claim checks: keep what was recorded
            error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1][:300] if str(exc).strip() else ''}"
        seconds = time.perf_counter() - t0
        rows = [json.loads(x) for x in record.read_text().splitlines()] if record.exists() else []
    return {
        "claims": [{**{k: r[k] for k in CLAIM_FIELDS}, "rejects": r.get("rejects", [])}
                   for r in rows if r.get("type") == "claim"],
        "error": error,
        "seconds": round(seconds, 1),
    }


def run_notebook_at_seed(nb, path: Path, seed: int, timeout: int) -> dict:
    """Execute ``nb`` (in memory; ``path``: its file, whose folder is the working directory) at
    ``BOOK_SEED=seed`` with ``BOOK_CLAIMS_RECORD`` set, so a failing check is recorded, not raised.

    Returns ``{"claims": [{kind, claim, measured, predicted, tolerance, passed}, ...], "error": str | None}``
    (``error``: a failure outside the claim checks; the claims recorded before it are kept). Also used by
    ``tools/outside_runs/run_chapter_at_seed.py``.
    """
    run = run_notebook_recorded(nb, path, timeout, {"BOOK_SEED": str(seed)})
    return {"claims": run["claims"], "error": run["error"]}


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for p in KEY_PACKAGES:
        try:
            out[p] = version(p)
        except PackageNotFoundError:
            out[p] = "not installed"
    return out


def _machine() -> str:
    """E.g. ``Linux x86_64, 2 CPU cores (AMD EPYC, family 26, AVX-512)``: the model name alone does not tell
    two processor generations apart, and the last digits of several chapters' numbers depend on AVX-512
    (which the portable output comparison of ``tools/nbval_portable.py`` allows)."""
    info = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            info.setdefault(key.strip(), value.strip())  # the first processor's entry
    except OSError:
        pass
    cpu = info.get("model name") or platform.processor() or platform.machine()
    family = info.get("cpu family")
    isa = machine_reference.vector_isa()
    details = ", ".join(x for x in (cpu, f"family {family}" if family else None, isa) if x)
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPU cores ({details})"


def _write_meta(ipynb: Path, update) -> dict:
    import nbformat

    nb = nbformat.read(ipynb, as_version=4)
    meta = dict(nb.metadata.get(META_KEY, {}))
    update(meta)
    nb.metadata[META_KEY] = meta
    nbformat.write(nb, ipynb)
    return meta


def regenerate(slug: str, *, timeout: int, seeds: bool, seeds_only: bool) -> bool:
    md = CHAPTERS / f"{slug}.md"
    ipynb = md.with_suffix(".ipynb")
    if not seeds_only:
        print(f"{slug}: syncing and executing ...", flush=True)
        _update_ipynb_from_md(md)
        reference = machine_reference.reference_seconds()  # this machine's speed, just before the run
        try:
            elapsed = _execute(ipynb, timeout)
        except Exception as exc:  # report and continue with the others
            print(f"    FAILED after execution error: {type(exc).__name__}: {str(exc)[-2000:]}", flush=True)
            return False
        _jupytext_sync(md)
        hashes = freshness.input_hashes(slug)

        def record_run(meta):
            meta["run"] = {
                "seconds": round(elapsed, 1),
                "reference_seconds": reference,
                "date": _dt.date.today().isoformat(),
                "machine": _machine(),
                "versions": _versions(),
            }
            meta["inputs"] = hashes
            meta["digest"] = freshness.chapter_digest(hashes)
            meta.pop("seeds", None)  # measured on older inputs: rerun below

        _write_meta(ipynb, record_run)
        results = ledger.claims_in_notebook(ipynb)
        verdict = "PASS" if results and all(r.passed for r in results) else "FAIL"
        print(f"    {elapsed:6.1f} s (reference workload {reference:.2f} s)   {len(results)} claim(s): {verdict}",
              flush=True)
        for r in results:
            print(f"      {r.line()}", flush=True)
        if verdict != "PASS":
            return False
    if seeds or seeds_only:
        meta = ledger.chapter_meta(ipynb)
        if meta.get("digest") != freshness.chapter_digest(freshness.input_hashes(slug)):
            print(f"    outputs of {slug} are stale: regenerate it fully first", flush=True)
            return False
        runs = {}
        for s in EXTRA_SEEDS:
            t0 = time.perf_counter()
            runs[str(s)] = run = _seed_run(ipynb, s, timeout)
            run["digest"] = meta["digest"]
            n_ok = sum(c["passed"] for c in run["claims"])
            extra = f"; stopped: {run['error']}" if run["error"] else ""
            print(f"    BOOK_SEED={s}: {n_ok}/{len(run['claims'])} checks pass "
                  f"({time.perf_counter() - t0:.0f} s){extra}", flush=True)
            for c in run["claims"]:
                if not c["passed"]:
                    print(f"      FAIL | {c['kind']} | {c['claim']} | measured {c['measured']} | "
                          f"predicted {c['predicted']}", flush=True)
        _write_meta(ipynb, lambda m: m.__setitem__("seeds", runs))
    return True


def retime(slug: str, *, timeout: int) -> bool:
    """Re-execute a fresh chapter at the default seed only to re-measure its runtime.

    For a run recorded on a busy machine: the chapter is executed again (reference workload first), its
    outputs are compared with the committed ones through the portable comparison, and only when they
    agree are the recorded seconds, reference seconds, date and machine replaced. Outputs, input
    hashes and the seed records are left as they are.
    """
    import nbformat

    import portability_report

    ipynb = CHAPTERS / f"{slug}.ipynb"
    meta = ledger.chapter_meta(ipynb)
    if meta.get("digest") != freshness.chapter_digest(freshness.input_hashes(slug)):
        print(f"    outputs of {slug} are stale: regenerate it fully first", flush=True)
        return False
    nb = nbformat.read(ipynb, as_version=4)
    reference = machine_reference.reference_seconds()
    elapsed = _run_kernel(nb, ipynb, timeout, {})
    scratch = Path("/tmp") / f"retime_{slug}.ipynb"
    nbformat.write(nb, scratch)
    bad = [r for r in portability_report.compare_notebooks(slug, scratch) if not r["declared_ok"]]
    if bad:
        print(f"    {slug}: outputs differ from the committed ones in cells {[r['cell'] for r in bad]}: "
              f"runtime not replaced (regenerate the chapter)", flush=True)
        return False

    def update(m):
        m["run"].update(seconds=round(elapsed, 1), reference_seconds=reference,
                        date=_dt.date.today().isoformat(), machine=_machine())

    _write_meta(ipynb, update)
    print(f"    {slug}: {elapsed:6.1f} s (reference workload {reference:.2f} s), outputs unchanged", flush=True)
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("chapters", nargs="*", help="chapter slugs (default: all chapters in _toc.yml)")
    ap.add_argument("--timeout", type=int, default=600, help="per-cell timeout in seconds")
    ap.add_argument("--no-seeds", action="store_true", help="skip the runs at BOOK_SEED=1 and 2 (drafts)")
    ap.add_argument("--seeds-only", action="store_true", help="only rerun BOOK_SEED=1 and 2 (outputs fresh)")
    ap.add_argument("--retime", action="store_true",
                    help="re-measure the runtime of fresh chapters (outputs must agree; nothing else changes)")
    ap.add_argument(
        "--no-record",
        action="store_true",
        help="do not rewrite the ledger, front-page table and status page (drafts, parallel work)",
    )
    args = ap.parse_args(argv)
    if os.environ.get("BOOK_SEED", "").strip() not in ("", "0"):
        sys.exit("unset BOOK_SEED: committed outputs are the default-seed run")
    os.environ.pop("BOOK_SEED", None)
    os.environ.pop("BOOK_CLAIMS_RECORD", None)
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.pop("MPLBACKEND", None)
    slugs = args.chapters or ledger.toc_chapters()
    failed = []
    for i, slug in enumerate(slugs, 1):
        if not (CHAPTERS / f"{slug}.md").exists():
            sys.exit(f"no chapter book/chapters/{slug}.md")
        print(f"[{i}/{len(slugs)}] ", end="", flush=True)
        if args.retime:
            ok = retime(slug, timeout=args.timeout)
        else:
            ok = regenerate(slug, timeout=args.timeout, seeds=not args.no_seeds, seeds_only=args.seeds_only)
        if not ok:
            failed.append(slug)
    if not args.no_record:
        ledger.write_pages()
        print("ledger, front-page table and status page rewritten")
    if failed:
        print(f"chapters that failed: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
