#!/usr/bin/env python
"""Regenerate chapter outputs: sync the Jupytext pair, execute the notebook in place, sync again.

Usage::

    python tools/regenerate.py                 # every chapter in _toc.yml
    python tools/regenerate.py test_time_scaling score_smoothing_diffusion

For each chapter it prints which chapter runs, the elapsed time and the claim verdicts; it records the
runtime, the machine and package versions in ``book/_generated/runs.json`` and rewrites the claims
ledger and status page (``tools/ledger.py``). Run it inside the project's environment (``make venv``)
so the notebook sees exactly the pinned packages. ``BOOK_SEED`` must be unset: committed outputs are
the default-seed run.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import ledger  # noqa: E402  (tools/ledger.py)

CHAPTERS = ROOT / "book" / "chapters"
RUNS = ROOT / "book" / "_generated" / "runs.json"
KEY_PACKAGES = ["jax", "jaxlib", "numpy", "scipy", "optax", "matplotlib", "seaborn", "jupyter-book", "nbval"]


def _jupytext_sync(path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "jupytext", "--sync", "--quiet", str(path)], check=True, cwd=ROOT
    )


def strip_execution_metadata(nb) -> None:
    """Drop per-cell execution timestamps (``metadata.execution``) left by older runs."""
    for cell in nb.cells:
        cell.metadata.pop("execution", None)


def _execute(ipynb: Path, timeout: int) -> float:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ipynb, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        record_timing=False,  # no per-cell timestamps: they would churn every diff
        resources={"metadata": {"path": str(ipynb.parent)}},
    )
    t0 = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - t0
    strip_execution_metadata(nb)
    nbformat.write(nb, ipynb)
    return elapsed


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
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPU cores ({cpu})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("chapters", nargs="*", help="chapter slugs (default: all chapters in _toc.yml)")
    ap.add_argument("--timeout", type=int, default=600, help="per-cell timeout in seconds")
    ap.add_argument(
        "--no-record",
        action="store_true",
        help="do not write runs.json, the ledger or the status page (drafts, parallel work)",
    )
    args = ap.parse_args(argv)
    if os.environ.get("BOOK_SEED", "").strip() not in ("", "0"):
        sys.exit("unset BOOK_SEED: committed outputs are the default-seed run")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    os.environ.pop("MPLBACKEND", None)
    slugs = args.chapters or ledger.toc_chapters()
    runs = json.loads(RUNS.read_text()) if RUNS.exists() else {}
    failed = []
    for i, slug in enumerate(slugs, 1):
        md = CHAPTERS / f"{slug}.md"
        if not md.exists():
            sys.exit(f"no chapter {md.relative_to(ROOT)}")
        print(f"[{i}/{len(slugs)}] {slug}: syncing and executing ...", flush=True)
        _jupytext_sync(md)
        ipynb = md.with_suffix(".ipynb")
        try:
            elapsed = _execute(ipynb, args.timeout)
        except Exception as exc:  # report and continue with the others
            print(f"    FAILED after execution error: {type(exc).__name__}: {str(exc)[-2000:]}", flush=True)
            failed.append(slug)
            continue
        _jupytext_sync(md)
        results = ledger.claims_in_notebook(ipynb)
        verdict = "PASS" if results and all(r.passed for r in results) else "FAIL"
        print(f"    {elapsed:6.1f} s   {len(results)} claim(s): {verdict}", flush=True)
        for r in results:
            print(f"      {r.line()}", flush=True)
        runs[slug] = {
            "seconds": round(elapsed, 1),
            "date": _dt.date.today().isoformat(),
            "machine": _machine(),
            "versions": _versions(),
        }
    if not args.no_record:
        RUNS.parent.mkdir(parents=True, exist_ok=True)
        RUNS.write_text(json.dumps(runs, indent=2, sort_keys=True) + "\n")
        ledger.write_pages()
        print("ledger and status pages rewritten")
    if failed:
        print(f"chapters that failed to execute: {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
