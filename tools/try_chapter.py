"""Execute a chapter's ``.md`` into a scratch notebook and show its glued prose numbers (authors' draft check).

Nothing committed is touched: the chapter is converted with jupytext into ``/tmp/try_<slug>.ipynb``,
executed there with the chapter folder as working directory (as ``tools/regenerate.py`` does), and then

* every claim and verdict line it printed is listed;
* every ``{glue:text}`key``` role in its Markdown cells is resolved against the glue records of the run
  (``paperlib.core.claims.quote``); an unresolved key, or a key glued twice, is an error;
* with ``--show``, each Markdown sentence that holds a glued number is printed with the value written in.

Usage::

    .venv/bin/python tools/try_chapter.py <slug> [--show]

Exit status 0 when the run finished, every check passed and every key resolved.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "book" / "chapters"
GLUE_ROLE = re.compile(r"\{glue:text\}`([^`:]+)(?::([^`]*))?`")


def main(argv=None) -> int:
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    sys.path.insert(0, str(ROOT / "tools"))
    from launch_notebooks import glue_values

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("slug")
    ap.add_argument("--show", action="store_true", help="print each sentence with a glued number")
    args = ap.parse_args(argv)
    md = CHAPTERS / f"{args.slug}.md"
    nb = jupytext.read(md)
    out = Path("/tmp") / f"try_{args.slug}.ipynb"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(CHAPTERS)}}).execute()
    print(f"{args.slug}: executed in {time.perf_counter() - t0:.1f} s -> {out}")
    nbformat.write(nb, out)
    ok = True
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            for line in (o.get("text") or "").splitlines():
                if line.startswith(("PASS |", "FAIL |", "VERDICT |")):
                    print("  " + line[:160])
                    ok &= not line.startswith("FAIL")
    values, dup = glue_values(nb)
    if dup:
        print(f"ERROR: keys glued more than once: {sorted(set(dup))}")
        ok = False
    used = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for m in GLUE_ROLE.finditer(cell.source):
            used.append(m[1])
            if m[1] not in values:
                print(f"ERROR: {{glue:text}}`{m[1]}` has no glued value in this run")
                ok = False
        if args.show and GLUE_ROLE.search(cell.source):
            for sent in re.split(r"(?<=[.;:])\s+", cell.source):
                if GLUE_ROLE.search(sent):
                    print("  > " + GLUE_ROLE.sub(lambda m: f"[{values.get(m[1], '??')}]", sent).replace("\n", " "))
    unused = sorted(set(values) - set(used))
    print(f"glued keys: {len(values)}, used in prose: {len(set(used))}"
          + (f"; glued but unused: {unused}" if unused else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
