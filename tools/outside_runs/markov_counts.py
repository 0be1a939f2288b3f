#!/usr/bin/env python
"""The seven-seed counts quoted in the Markov exchange economies chapter, from the JSON lines that
``run_chapter_at_seed.py`` printed with ``markov_extra.py`` (``markov_exchange_economies_seeds_0-6_*.txt``).

Usage: ``python tools/outside_runs/markov_counts.py FILE``
"""
import json
import sys

import numpy as np


def main(path: str) -> None:
    runs = [json.loads(line[5:]) for line in open(path) if line.startswith("JSON ")]
    if not runs:
        raise ValueError(f"path: no JSON lines in {path}")
    cat = lambda key, name: np.concatenate([np.asarray(r[key][name]) for r in runs])  # noqa: E731
    gap_phi, gap_perr, phi0 = cat("phi", "GAP"), cat("perr", "GAP"), np.concatenate([r["phi0"] for r in runs])
    n = len(gap_phi)
    print(f"{len(runs)} seeds, {n} runs")
    print(f"GAP: worst price error {gap_perr.max():.4f}; runs above 1%: {(gap_perr > 0.01).sum()} of {n}")
    drop = phi0 / gap_phi
    print(f"GAP: exploitability drop from the start, factor {drop.min():.0f} to {drop.max():.0f}")
    above = [(s, j, v) for s, r in enumerate(runs) for j, v in enumerate(r["phi"]["GAP"]) if v > r["yardstick"]]
    print(f"GAP: runs above the 1%-price yardstick: {len(above)} of {n} {[(s, j, round(v, 4)) for s, j, v in above]}")
    ots = sum(v > r["yardstick"] for r in runs for v in r["phi"]["GAP, one time scale"])
    print(f"one time scale: runs above the yardstick: {ots} of {n}")
    for name in [k for k in runs[0]["phi"] if k.startswith("NPM")]:
        print(f"vs {name}: GAP exploitability lower in {(gap_phi < cat('phi', name)).sum()} of {n}, "
              f"GAP prices more accurate in {(gap_perr < cat('perr', name)).sum()} of {n}; "
              f"mean exploitability lower at {sum(np.mean(r['phi']['GAP']) < np.mean(r['phi'][name]) for r in runs)} "
              f"of {len(runs)} seeds")


if __name__ == "__main__":
    main(sys.argv[1])
