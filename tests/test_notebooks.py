"""The notebook gate: the committed chapter notebooks are complete, in sync and freshly executed.

Strict nbval only compares cells that have stored outputs, so these structural checks are what make
"committed outputs reproduce from the current code" mean something:

1. every chapter in ``_toc.yml`` has its ``.md``/``.ipynb`` pair, and every pair is in the toc;
2. the pair's cells agree (types and sources, whitespace-trimmed), read both with jupytext;
3. code-cell execution counts are exactly 1..N in order (one clean top-to-bottom run);
4. no stored error output, except in cells tagged ``raises-exception``;
5. the kernelspec is ``python3``; the notebook stays under a size budget;
6. the chapter printed at least one claim verdict, and every verdict is PASS.
"""

from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

from paperlib.claims import parse_claim_line

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "book" / "chapters"
MAX_BYTES = 2_500_000


def toc_chapters():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [
        c["file"].split("/")[-1]
        for part in toc["parts"]
        for c in part["chapters"]
        if c["file"].startswith("book/chapters/")
    ]


SLUGS = toc_chapters()


def test_toc_and_files_agree():
    on_disk = {p.stem for p in CHAPTERS.glob("*.md")} | {p.stem for p in CHAPTERS.glob("*.ipynb")}
    assert on_disk == set(SLUGS), (
        f"chapter files not in _toc.yml: {sorted(on_disk - set(SLUGS))}; "
        f"toc chapters without files: {sorted(set(SLUGS) - on_disk)}"
    )
    assert len(SLUGS) == len(set(SLUGS)), "a chapter is listed twice in _toc.yml"


@pytest.mark.parametrize("slug", SLUGS)
def test_pair_exists(slug):
    for suffix in (".md", ".ipynb"):
        assert (CHAPTERS / f"{slug}{suffix}").exists(), f"missing {slug}{suffix}: run tools/regenerate.py {slug}"


def _cells(nb):
    return [(c.cell_type, c.source.strip()) for c in nb.cells]


@pytest.mark.parametrize("slug", SLUGS)
def test_pair_in_sync(slug):
    md = jupytext.read(CHAPTERS / f"{slug}.md")
    ipynb = jupytext.read(CHAPTERS / f"{slug}.ipynb")
    a, b = _cells(md), _cells(ipynb)
    assert len(a) == len(b), f"{slug}: .md has {len(a)} cells, .ipynb has {len(b)}: run jupytext --sync"
    for i, (x, y) in enumerate(zip(a, b)):
        assert x == y, f"{slug}: cell {i} differs between .md and .ipynb: run tools/regenerate.py {slug}"


@pytest.mark.parametrize("slug", SLUGS)
def test_executed_top_to_bottom(slug):
    nb = nbformat.read(CHAPTERS / f"{slug}.ipynb", as_version=4)
    counts = [c.get("execution_count") for c in nb.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{slug}: execution counts {counts} are not 1..N: outputs are stale, run tools/regenerate.py {slug}"
    )


@pytest.mark.parametrize("slug", SLUGS)
def test_no_error_outputs_and_kernel(slug):
    path = CHAPTERS / f"{slug}.ipynb"
    nb = nbformat.read(path, as_version=4)
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code" or "raises-exception" in c.metadata.get("tags", []):
            continue
        errors = [o for o in c.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, f"{slug}: cell {i} stored an error: {errors[0].get('ename')}"
    assert path.stat().st_size < MAX_BYTES, f"{slug}.ipynb is {path.stat().st_size} bytes (> {MAX_BYTES})"


@pytest.mark.parametrize("slug", SLUGS)
def test_claims_were_checked_and_pass(slug):
    nb = nbformat.read(CHAPTERS / f"{slug}.ipynb", as_version=4)
    verdicts = []
    for c in nb.cells:
        for o in c.get("outputs", []) if c.cell_type == "code" else []:
            if o.get("output_type") == "stream":
                verdicts += [r for r in map(parse_claim_line, o.get("text", "").splitlines()) if r]
    assert verdicts, f"{slug}: no claim check output (paperlib.claims.check_claim) in the notebook"
    failed = [r.claim for r in verdicts if not r.passed]
    assert not failed, f"{slug}: claims failed: {failed}"
