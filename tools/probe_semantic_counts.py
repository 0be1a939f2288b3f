"""Count the outcomes of the issue-28 semantic probes: clear / cryptic / silent / allocation per class.

Runs every semantic probe of ``tests/test_bad_input_probe.py`` once per probed argument (a fixed draw),
in-process, and the oversize probe (``2**31 - 1`` for a size, in a subprocess under ``ulimit -v 4 GiB``)
for the arguments listed in ``--oversize`` (``all`` for every size argument; slow). Usage::

    PYTHONPATH=lib python tools/probe_semantic_counts.py [--oversize all|module.function:arg,...] [--json out.json]

``clear``: a ValueError naming the argument. ``cryptic``: another exception, or a ValueError not naming
it. ``silent``: the call returned. ``allocation``: MemoryError, a crash or a kill under the limit.
``timeout``: the oversize call still ran after the timeout (no refusal; runaway work or allocation).

Recorded counts (issue 28; 2-core shared machine, 2026-12-07)
--------------------------------------------------------------
Before the fixes (commit abbcea3 with this probe), ``--per-module``: 30 modules counted; 5 more
(conservation_laws, deep_equilibrium, lipschitz, serial, serial_controls) could not be counted because
XLA aborted the process (SIGABRT) on an allocation under ``ulimit -v``, itself an allocation outcome;
the remaining ~25 modules were still running at the deadline (their per-call runaways made the run
take over 20 minutes per chunk)::

    class              clear  cryptic  silent  allocation  timeout  total
    float32               50       12     155           0        0    217
    huge_int             102       70      48          67       10    297
    key                    3        8       0           0        0     11
    line_separator        16        0       4           0        0     20
    rng                   54       11       3           0        0     68

After (every module, all 60)::

    class              clear  cryptic  silent  allocation  timeout  total
    float32              343        0       0           0        0    343
    huge_int             622        0       0           0        0    622
    key                   27        0       0           0        0     27
    line_separator        31        0       0           0        0     31
    rng                  106        0       0           0        0    106

(on the 30 modules counted before: float32 217, huge_int 286, key 11, line_separator 18, rng 68, all
clear; 13 probes fewer than before are documented exemptions.) Oversize (``2**31 - 1`` under
``ulimit -v 4 GiB``, 15 size arguments named in the issue): before 2 clear / 1 cryptic / 10 allocation
/ 2 timeout; after 14 clear / 1 timeout (``lasso.lasso_fista`` ``iters``: a loop, nothing allocated).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import zlib

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
if "--only-oversize" in sys.argv or "--per-module" in sys.argv:
    os.environ["PAPERLIB_PROBE_CHILD"] = "1"  # no baselines of every function in this process
import test_bad_input_probe as t  # noqa: E402

CLASS_OF_PROBE = {
    "float32_overflow": "float32", "array_float32_overflow": "float32",
    "int_past_float": "huge_int", "int_past_int32": "huge_int",
    "line_separator": "line_separator", "rng_seed_int": "rng", "rng_random_state": "rng",
    "key_seed_int": "key",
}


class FixedDraw:
    """Stand-in for hypothesis' ``data``: a seeded draw from ``sampled_from`` and ``integers``."""

    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)

    def draw(self, strategy, label=None):
        r = repr(strategy)
        m = re.match(r"integers\(min_value=(-?[\d_]+), max_value=(-?[\d_]+)\)", r) or re.match(r"integers\((-?[\d_]+), (-?[\d_]+)\)", r)
        if m:
            return int(self.rng.integers(int(m.group(1)), int(m.group(2)) + 1))
        elements = getattr(strategy, "elements", None)
        if elements is None:
            elements = getattr(getattr(strategy, "wrapped_strategy", None), "elements", None)
        if elements is not None:
            return list(elements)[int(self.rng.integers(len(elements)))]
        raise RuntimeError(f"cannot draw from {r}")


class CallTimeout(BaseException):
    """Raised by SIGALRM in a call that runs past ``--call-timeout`` (a runaway loop over a huge size)."""


def _alarm(signum, frame):
    raise CallTimeout()


CALL_TIMEOUT_S = 20


def classify(case, probe, value):
    import signal
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CALL_TIMEOUT_S)
    try:
        t._call_with(case, value)
    except CallTimeout:
        return "timeout", f"still running after {CALL_TIMEOUT_S} s"
    except MemoryError as exc:
        return "allocation", f"MemoryError {exc}"[:200]
    except ValueError as exc:
        return ("clear" if case.argument in str(exc) else "cryptic"), f"ValueError: {str(exc)[:200]}"
    except Exception as exc:  # noqa: BLE001
        return "cryptic", f"{type(exc).__name__}: {str(exc)[:200]}"
    finally:
        signal.alarm(0)
    return "silent", "returned"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oversize", default="")
    ap.add_argument("--json", default="")
    ap.add_argument("--only-oversize", action="store_true", help="skip the in-process probes")
    ap.add_argument("--per-module", action="store_true",
                    help="run each module's probes in its own subprocess under ulimit -v (safe before the fixes)")
    ap.add_argument("--module-timeout", type=float, default=1800)
    ap.add_argument("--chunks", type=int, default=6)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=t.OVERSIZE_TIMEOUT_S)
    args = ap.parse_args()
    counts = collections.defaultdict(collections.Counter)
    rows = []
    if args.per_module:
        return per_module(args)
    for case in ([] if args.only_oversize else t.CASES):
        orig = t.inspect.signature(t.getattr_fn(case) if hasattr(t, "getattr_fn") else
                                   getattr(t.importlib.import_module(f"paperlib.{case.module}"), case.function))
        args_, kwargs_ = t.baseline(case.module, case.function)
        original = orig.bind(*args_, **kwargs_).arguments.get(case.argument, orig.parameters[case.argument].default)
        for probe in case.probes:
            if probe not in t.SEMANTIC_PROBES:
                continue
            value = t.PROBES[probe](original, FixedDraw(zlib.crc32(case.id.encode())))
            outcome, detail = classify(case, probe, value)
            counts[CLASS_OF_PROBE[probe]][outcome] += 1
            rows.append((case.id, probe, outcome, detail))
    if args.oversize:
        if args.oversize == "all":
            cases = t.oversize_cases()
        else:  # named module.function:argument, without computing every baseline
            cases = [t.Case(*c.replace(":", ".").split("."), ("oversize",)) for c in args.oversize.split(",")]
        for case in cases:
            outcome, detail = t.run_oversize(case, timeout=args.timeout)
            counts["oversize"][outcome] += 1
            rows.append((case.id, "oversize", outcome, detail))
            print(case.id, outcome, detail[:150], flush=True)
    report(counts, rows, args)


def _run_chunk(mods, args):
    import subprocess
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        out = fh.name
    env = dict(os.environ, PAPERLIB_PROBE_MODULES=",".join(mods))
    env.pop("PAPERLIB_PROBE_CHILD", None)
    cmd = f"ulimit -v {5 * 1024 * 1024}; exec \"$0\" \"$1\" --json \"$2\""
    try:
        proc = subprocess.run(["bash", "-c", cmd, sys.executable, os.path.abspath(__file__), out],
                              env=env, capture_output=True, text=True, timeout=args.module_timeout)
        why = f"exit {proc.returncode}: {(proc.stderr.strip().splitlines() or [''])[-1][:200]}"
    except subprocess.TimeoutExpired:
        why = f"timed out after {args.module_timeout} s"
    try:
        with open(out) as fh:
            return json.load(fh), why
    except (OSError, ValueError):
        return None, why
    finally:
        if os.path.exists(out):
            os.unlink(out)


def per_module(args):
    """Modules in chunks, each chunk in a subprocess under ``ulimit -v`` (5 GiB) and a timeout, --jobs at a
    time; merge the JSON outputs. A chunk that crashes or times out is reported, not counted."""
    from concurrent.futures import ThreadPoolExecutor
    counts = collections.defaultdict(collections.Counter)
    rows = []
    chunks = [t.MODULES[i::args.chunks] for i in range(args.chunks)]
    with ThreadPoolExecutor(args.jobs) as pool:
        for mods, (data, why) in zip(chunks, pool.map(lambda m: _run_chunk(m, args), chunks)):
            if data is None:
                print(f"{','.join(mods)}: no result ({why})", flush=True)
                counts["chunk_lost"]["allocation"] += 1
                rows.append((",".join(mods), "chunk", "allocation", why))
                continue
            for cls, c in data["counts"].items():
                counts[cls].update(c)
            rows += [tuple(r) for r in data["rows"]]
            print(f"{len(mods)} modules: {sum(sum(c.values()) for c in data['counts'].values())} probes", flush=True)
    report(counts, rows, args)


def report(counts, rows, args):
    for r in rows:
        if r[2] != "clear":
            print("\t".join(r)[:400])
    print()
    outcomes = ["clear", "cryptic", "silent", "allocation", "timeout"]
    print(f"{'class':16}" + "".join(f"{o:>11}" for o in outcomes) + f"{'total':>8}")
    for cls, c in sorted(counts.items()):
        print(f"{cls:16}" + "".join(f"{c[o]:>11}" for o in outcomes) + f"{sum(c.values()):>8}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"counts": {k: dict(v) for k, v in counts.items()}, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()
