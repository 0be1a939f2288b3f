#!/usr/bin/env python
"""Execute one chapter outside the book, at a chosen seed, optionally with edited constants and an extra cell.

The chapters quote a few numbers from runs "outside the page": more seeds than the three the ledger
records, or a budget the page does not run. This is how those runs are made, so that a reader can repeat
them; the quoted numbers' output is committed beside this script (``*_YYYY-MM-DD.txt``).

Usage::

    python tools/outside_runs/run_chapter_at_seed.py SLUG SEED [--replace OLD NEW]... [--extra FILE] [--save NB]

* ``SLUG``: a chapter of ``book/chapters``; ``SEED``: the value of ``BOOK_SEED`` (non-negative integer);
* ``--replace OLD NEW``: replace the exact text ``OLD`` by ``NEW`` in every code cell (e.g. a budget
  constant); it is an error when ``OLD`` occurs in no code cell;
* ``--extra FILE``: append the Python code of ``FILE`` as a last cell (it sees the chapter's variables);
* ``--save NB``: write the executed notebook there.

It prints every claim check of the run (``BOOK_CLAIMS_RECORD``: a failing check is recorded, not raised),
the stdout of the extra cell, and the wall time. The committed outputs of the page are never touched.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("slug")
    ap.add_argument("seed")
    ap.add_argument("--replace", nargs=2, action="append", default=[], metavar=("OLD", "NEW"))
    ap.add_argument("--extra", type=Path)
    ap.add_argument("--save", type=Path)
    args = ap.parse_args(argv)
    if not args.seed.isdigit():
        raise ValueError(f"seed: expected a non-negative integer, got {args.seed!r}")
    md = ROOT / "book" / "chapters" / f"{args.slug}.md"
    if not md.exists():
        raise ValueError(f"slug: no chapter {md}")

    import subprocess

    import jupytext
    import nbformat

    sys.path.insert(0, str(ROOT / "tools"))
    import regenerate  # the kernel runner, claim recorder and machine string of the chapters' own runs

    nb = jupytext.read(md)
    code = [c for c in nb.cells if c.cell_type == "code"]
    for old, new in args.replace:
        if not any(old in c.source for c in code):
            raise ValueError(f"replace: {old!r} occurs in no code cell of {args.slug}")
        for c in code:
            c.source = c.source.replace(old, new)
    if args.extra:
        nb.cells.append(nbformat.v4.new_code_cell(args.extra.read_text()))

    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    t0 = time.perf_counter()
    run = regenerate.run_notebook_at_seed(nb, md, int(args.seed), timeout=900)
    seconds = time.perf_counter() - t0
    if args.save:
        nbformat.write(nb, args.save)

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", str(md)], capture_output=True,
                           text=True).stdout.strip()
    print(f"== {args.slug} at BOOK_SEED={args.seed}" + "".join(f" | {o!r} -> {n!r}" for o, n in args.replace)
          + f" | {seconds:.1f} s | {regenerate._machine()} | commit {commit}{' + edits' if dirty else ''}")
    for c in run["claims"]:
        print(f"{'PASS' if c['passed'] else 'FAIL'} | {c['kind']} | {c['claim']} | measured {c['measured']}"
              f" | predicted {c['predicted']}")
    print(f"{len(run['claims'])} checks, {sum(not c['passed'] for c in run['claims'])} failed")
    if run["error"]:
        print(f"ERROR outside the checks: {run['error']}")
    if args.extra:
        for o in nb.cells[-1].outputs:
            if o.get("output_type") == "stream":
                print(o["text"], end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
