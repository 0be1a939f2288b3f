"""Measure which cells' printed numbers move under another numeric configuration, and by how much.

``make portability`` answers yes or no (nbval with the portable comparison). This tool is what the
declarations in the chapters were measured with: it executes the committed ``.ipynb`` of each chapter
under a named numeric configuration (the same environment variables as ``make portability``, or this
machine as it is), keeps the executed copy under ``--out``, and compares every code cell with the
committed outputs through ``tools/nbval_portable.py``. For each cell whose outputs differ it prints
whether the default tolerance holds, the cell's declared policy, the number of numbers that moved and
the largest relative moves, and writes the same as JSON lines (``--json``).

Usage::

    .venv/bin/python tools/portability_report.py --config sse42 [--jobs 2] [slug ...]

Configurations: ``native`` (this machine as it is), ``avx2`` (NumPy without AVX-512 code, XLA capped
at AVX2, OpenBLAS Haswell kernels: close to an AVX2 EPYC) and ``sse42`` (``make portability``'s:
NumPy without AVX2/AVX-512 code, XLA capped at SSE4.2, OpenBLAS Haswell kernels). x86-64 only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "book" / "chapters"
sys.path.insert(0, str(ROOT / "tools"))

_AVX512_GROUPS = "X86_V4 AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"
CONFIGS = {
    "native": {},
    "avx2": {"XLA_FLAGS": "--xla_cpu_max_isa=AVX2", "OPENBLAS_CORETYPE": "Haswell",
             "NPY_DISABLE_CPU_FEATURES": _AVX512_GROUPS},
    "sse42": {"XLA_FLAGS": "--xla_cpu_max_isa=SSE4_2", "OPENBLAS_CORETYPE": "Haswell",
              "NPY_DISABLE_CPU_FEATURES": "X86_V3 " + _AVX512_GROUPS},
}


def _execute(slug: str, config: str, out: Path, timeout: int) -> tuple[str, float, str]:
    """Execute the committed notebook of ``slug`` in a subprocess under ``config``; return (slug, s, error)."""
    code = (
        "import sys, nbformat; from nbclient import NotebookClient\n"
        "nb = nbformat.read(sys.argv[1], as_version=4)\n"
        "NotebookClient(nb, timeout=int(sys.argv[3]), kernel_name='python3', allow_errors=True,\n"
        "               resources={'metadata': {'path': sys.argv[4]}}).execute()\n"
        "nbformat.write(nb, sys.argv[2])\n"
    )
    env = {**os.environ, "JAX_PLATFORMS": "cpu", **CONFIGS[config]}
    for k in ("BOOK_SEED", "BOOK_CLAIMS_RECORD", "MPLBACKEND"):
        env.pop(k, None)
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-c", code, str(CHAPTERS / f"{slug}.ipynb"), str(out / f"{slug}.ipynb"),
                          str(timeout), str(CHAPTERS)], env=env, capture_output=True, text=True)
    return slug, time.perf_counter() - t0, "" if res.returncode == 0 else res.stderr[-2000:]


def _texts(outputs) -> list[tuple[str, str]]:
    """(key, text) of every compared output field, in order (nbval's view, images aside)."""
    from nbval.plugin import coalesce_streams, transform_streams_for_comparison

    out = []
    for o in transform_streams_for_comparison(coalesce_streams(outputs)):
        if o.get("output_type") == "stream":  # nbval keys a stream's text by the stream's name
            name = next((k for k in o if k != "output_type"), "stdout")
            out.append((name, o.get(name, "")))
        elif o.get("output_type") in ("execute_result", "display_data"):
            for mime, v in (o.get("data") or {}).items():
                if not mime.startswith("image/"):
                    out.append((mime, v if isinstance(v, str) else json.dumps(v)))
        elif o.get("output_type") == "error":
            out.append(("error", o.get("ename", "") + ": " + o.get("evalue", "")))
    return out


def compare_notebooks(slug: str, executed: Path) -> list[dict]:
    """One record per code cell whose outputs differ from the committed ones."""
    import nbformat
    import nbval_portable as P

    ref = nbformat.read(CHAPTERS / f"{slug}.ipynb", as_version=4)
    new = nbformat.read(executed, as_version=4)
    rows = []
    code_index = 0
    for i, (rc, nc) in enumerate(zip(ref.cells, new.cells)):
        if rc.cell_type != "code":
            continue
        code_index += 1
        a, b = _texts(rc.outputs), _texts(nc.outputs)
        if a == b:
            continue
        policy = P.policy_of(rc.metadata)
        row = {"slug": slug, "cell": i, "code_cell": code_index - 1, "declared": policy.mode if policy.loose else "default",
               "reason": policy.reason, "default_ok": True, "declared_ok": True, "moves": [], "problem": ""}
        if [k for k, _ in a] != [k for k, _ in b]:
            row.update(default_ok=False, declared_ok=False, problem=f"output fields {[k for k, _ in a]} -> {[k for k, _ in b]}")
        else:
            for (_, ta), (_, tb) in zip(a, b):
                d = P.compare_text(ta, tb, P.DEFAULT)
                l = P.compare_text(ta, tb, policy)
                row["default_ok"] &= d.ok
                row["declared_ok"] &= l.ok
                row["moves"] += d.largest
                if not l.ok and not row["problem"]:
                    row["problem"] = str(l.difference)
                elif not d.ok and not row["problem"] and d.difference and d.difference.what != "number":
                    row["problem"] = str(d.difference)
        row["moves"] = sorted(row["moves"], key=lambda t: -t[0])[:4]
        rows.append(row)
    return rows


def main(argv=None) -> int:
    import ledger

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("chapters", nargs="*")
    ap.add_argument("--config", choices=sorted(CONFIGS), default="sse42")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--out", type=Path, default=None, help="folder for the executed copies (default /tmp/portability-<config>)")
    ap.add_argument("--compare-only", action="store_true", help="compare copies executed before, do not execute")
    ap.add_argument("--json", type=Path, default=None, help="append one JSON line per differing cell")
    args = ap.parse_args(argv)
    slugs = args.chapters or ledger.toc_chapters()
    out = args.out or Path(f"/tmp/portability-{args.config}")
    out.mkdir(parents=True, exist_ok=True)
    if not args.compare_only:
        with ThreadPoolExecutor(args.jobs) as pool:
            for slug, secs, err in pool.map(lambda s: _execute(s, args.config, out, args.timeout), slugs):
                print(f"executed {slug} under {args.config} in {secs:.0f} s" + (f"  ERROR {err}" if err else ""),
                      flush=True)
    bad = 0
    for slug in slugs:
        for row in compare_notebooks(slug, out / f"{slug}.ipynb"):
            moves = "; ".join(f"{a} -> {b} ({r:.1e})" for r, a, b in row["moves"])
            status = "ok" if row["default_ok"] else ("LOOSE-OK" if row["declared_ok"] else "FAILS")
            bad += not row["declared_ok"]
            print(f"{status:8s} {slug} cell {row['cell']} (nbval Cell {row['code_cell']}) [{row['declared']}] {moves} "
                  f"{row['problem'][:200]}")
            if args.json:
                with open(args.json, "a") as fh:
                    fh.write(json.dumps({**row, "config": args.config}) + "\n")
    print(f"{bad} cells differ beyond their declared comparison under {args.config}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
