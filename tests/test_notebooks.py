"""The notebook gate: the committed chapter notebooks are complete, in sync and provably fresh.

Strict nbval only compares the text of cells that have stored outputs, so these structural checks are
what make "committed outputs reproduce from the current code" mean something:

1. every chapter in ``_toc.yml`` has its ``.md``/``.ipynb`` pair, and every pair is in the toc;
2. the pair agrees cell by cell: types, sources **and metadata** (tags, figure captions, names, alt
   text), read both with jupytext;
3. the outputs are fresh: the hashes of every input they depend on (the chapter source, the ``paperlib``
   modules it imports, the locks; ``tools/freshness.py``) equal those recorded when the chapter was
   last executed, and the verdicts recorded at seeds 1 and 2 were measured on the same inputs;
4. code-cell execution counts are exactly 1..N in order (one clean top-to-bottom run);
5. no stored error output, except in cells tagged ``raises-exception``;
6. every figure stored image data (a ``<Figure size ...>`` text alone means the image was lost);
7. the kernelspec is ``python3``; the notebook stays under a size budget;
8. every figure reads on a phone: its smallest text, shrunk to a 390 px screen, is at least
   ``PHONE_MIN_FONT_PX`` CSS pixels (estimated from the PNG's width, dpi and the style's font key);
9. the chapter printed at least one claim verdict, at least one of kind ``reproduction``, every
   verdict is PASS, and it declared its headline verdict exactly once;
10. every loose output comparison a cell declares (metadata ``portable``, ``tools/nbval_portable.py``) is
    well formed, gives its reason, and sits on a cell that has outputs to compare.

Every failure names the chapter and the command that fixes it.
"""

import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import freshness  # noqa: E402
import ledger  # noqa: E402
import nbval_portable  # noqa: E402

CHAPTERS = ROOT / "book" / "chapters"
MAX_BYTES = 2_500_000
SLUGS = ledger.toc_chapters()

#: Cell metadata that jupytext never writes to the .md, or that is execution bookkeeping.
IGNORED_CELL_METADATA = {"execution", "collapsed", "scrolled", "jupyter", "ExecuteTime", "trusted"}


#: Width (CSS px) at which a figure is displayed on a 390 px-wide phone (measured by the browser test).
PHONE_FIGURE_WIDTH_PX = 343
#: Smallest legible figure text at that width. With the book style's smallest font (13.2 pt) this
#: allows figures up to 8.4 inches wide; wider multi-panel figures must be stacked or put in a grid.
PHONE_MIN_FONT_PX = 7.5


def phone_font_px(png_bytes: bytes) -> tuple[float, float]:
    """(figure width in inches, estimated smallest text in CSS px at 390 px) of a book PNG."""
    import io

    from PIL import Image

    with Image.open(io.BytesIO(png_bytes)) as im:
        dpi = float((im.info.get("dpi") or (72.0, 72.0))[0])
        pt = float((getattr(im, "text", {}) or {}).get("book-min-font-pt", 11.0))
        width_in = im.size[0] / dpi
    shown = min(PHONE_FIGURE_WIDTH_PX, im.size[0] / 2)  # a 2x PNG is never shown above its 1x size
    return width_in, pt * (dpi / 72) * shown / im.size[0]


def _fix(slug: str) -> str:
    return f"run `make regenerate CHAPTERS={slug}`"


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
        assert (CHAPTERS / f"{slug}{suffix}").exists(), f"missing {slug}{suffix}: {_fix(slug)}"


def _cells(nb):
    return [
        (
            c.cell_type,
            c.source.strip(),
            {k: v for k, v in c.metadata.items() if k not in IGNORED_CELL_METADATA},
        )
        for c in nb.cells
    ]


@pytest.mark.parametrize("slug", SLUGS)
def test_pair_in_sync(slug):
    md = jupytext.read(CHAPTERS / f"{slug}.md")
    ipynb = jupytext.read(CHAPTERS / f"{slug}.ipynb")
    a, b = _cells(md), _cells(ipynb)
    assert len(a) == len(b), f"{slug}: .md has {len(a)} cells, .ipynb has {len(b)}: {_fix(slug)}"
    for i, (x, y) in enumerate(zip(a, b)):
        assert x[:2] == y[:2], f"{slug}: cell {i} source differs between .md and .ipynb: {_fix(slug)}"
        assert x[2] == y[2], (
            f"{slug}: cell {i} metadata (tags, caption, name, alt text) differs between .md and .ipynb: "
            f".md has {x[2]}, .ipynb has {y[2]}: {_fix(slug)}"
        )


@pytest.mark.parametrize("slug", SLUGS)
def test_outputs_are_fresh(slug):
    meta = ledger.chapter_meta(CHAPTERS / f"{slug}.ipynb")
    recorded = meta.get("inputs")
    assert recorded, f"{slug}: no record of the inputs its outputs were computed from: {_fix(slug)}"
    changed = freshness.stale_inputs(recorded, freshness.input_hashes(slug))
    assert not changed, (
        f"{slug}: outputs are stale: {', '.join(changed)} changed since the chapter was executed "
        f"(figures and numbers may be out of date): {_fix(slug)}"
    )
    assert meta.get("digest") == freshness.chapter_digest(recorded), f"{slug}: digest corrupted: {_fix(slug)}"


@pytest.mark.parametrize("slug", SLUGS)
def test_seed_record_is_fresh(slug):
    path = CHAPTERS / f"{slug}.ipynb"
    meta = ledger.chapter_meta(path)
    for s in ledger.EXTRA_SEEDS:
        rec = meta.get("seeds", {}).get(s)
        assert rec, f"{slug}: no verdicts recorded at BOOK_SEED={s}: {_fix(slug)}"
        assert rec.get("digest") == meta.get("digest"), (
            f"{slug}: the verdicts at BOOK_SEED={s} are older than the outputs: "
            f"run `python tools/regenerate.py --seeds-only {slug}`"
        )
    assert all(len(row) == len(ledger.claims_in_notebook(path)) for row in ledger.seed_verdicts(path).values())


@pytest.mark.parametrize("slug", SLUGS)
def test_executed_top_to_bottom(slug):
    nb = nbformat.read(CHAPTERS / f"{slug}.ipynb", as_version=4)
    counts = [c.get("execution_count") for c in nb.cells if c.cell_type == "code"]
    assert counts == list(range(1, len(counts) + 1)), (
        f"{slug}: execution counts {counts} are not 1..N: outputs are stale, {_fix(slug)}"
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


IMAGE_MIMES = ("image/png", "image/svg+xml", "image/jpeg")


@pytest.mark.parametrize("slug", SLUGS)
def test_every_figure_has_image_data(slug):
    nb = nbformat.read(CHAPTERS / f"{slug}.ipynb", as_version=4)
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code":
            continue
        for o in c.get("outputs", []):
            data = o.get("data", {})
            text = data.get("text/plain", "")
            text = text if isinstance(text, str) else "".join(text)
            if text.lstrip().startswith("<Figure size") and not any(m in data for m in IMAGE_MIMES):
                pytest.fail(f"{slug}: cell {i} shows a figure without image data ({text.strip()}): {_fix(slug)}")
        if "figure" in c.metadata.get("mystnb", {}):
            has_image = any(
                any(m in o.get("data", {}) for m in IMAGE_MIMES) for o in c.get("outputs", [])
            )
            assert has_image, f"{slug}: cell {i} has a figure caption but no stored image: {_fix(slug)}"


@pytest.mark.parametrize("slug", SLUGS)
def test_every_figure_has_caption_and_alt_text(slug):
    """A cell that stores an image carries a caption, a name and alt text (``mystnb`` metadata)."""
    nb = nbformat.read(CHAPTERS / f"{slug}.ipynb", as_version=4)
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code" or not any(
            any(m in o.get("data", {}) for m in IMAGE_MIMES) for o in c.get("outputs", [])
        ):
            continue
        meta = c.metadata.get("mystnb", {})
        figure, alt = meta.get("figure", {}), str(meta.get("image", {}).get("alt", "")).strip()
        assert figure.get("caption") and figure.get("name"), (
            f"{slug}: cell {i} stores an image without a figure caption and name in its mystnb metadata")
        assert len(alt) >= 20, (
            f"{slug}: figure {figure.get('name')} has no alt text (mystnb: image: alt: one sentence saying "
            "what the figure shows)")


@pytest.mark.parametrize("slug", SLUGS)
def test_every_figure_reads_at_phone_width(slug):
    """No figure's text shrinks below PHONE_MIN_FONT_PX when the page is 390 px wide."""
    import base64

    nb = nbformat.read(CHAPTERS / f"{slug}.ipynb", as_version=4)
    small = []
    for c in nb.cells:
        for o in c.get("outputs", []) if c.cell_type == "code" else []:
            png = o.get("data", {}).get("image/png")
            if png:
                width_in, px = phone_font_px(base64.b64decode(png))
                if px < PHONE_MIN_FONT_PX:
                    name = c.metadata.get("mystnb", {}).get("figure", {}).get("name", "?")
                    small.append(f"{name} ({width_in:.1f} in wide: {px:.1f} px)")
    assert not small, (
        f"{slug}: figure text below {PHONE_MIN_FONT_PX} px at 390 px width: {small}; make the figure at most "
        f"8 inches wide (stack or grid the panels), then {_fix(slug)}")


@pytest.mark.parametrize("slug", SLUGS)
def test_claims_were_checked_and_pass(slug):
    path = CHAPTERS / f"{slug}.ipynb"
    verdicts = ledger.claims_in_notebook(path)
    assert verdicts, f"{slug}: no claim check output (paperlib.core.claims.check_claim) in the notebook"
    declared = ledger.verdicts_in_notebook(path)
    # A check that fails at seed 0 is allowed only where the chapter reports it as a finding: its headline
    # verdict is not "reproduced" and the verdict's missing-text names the check by its label (the claim text
    # up to its first space, e.g. "C11"). Anything else is a broken chapter.
    headline = declared[-1] if declared else None
    unreported = [r.claim for r in verdicts if not r.passed and not (
        headline is not None and headline.verdict != "reproduced" and r.claim.split()[0] in headline.missing)]
    assert not unreported, f"{slug}: claims failed and the headline verdict does not report them: {unreported}"
    assert any(r.kind == "reproduction" for r in verdicts), (
        f"{slug}: no check of kind 'reproduction': a chapter must compare at least one measurement "
        "with the paper's theorem, figure or table"
    )
    assert len(declared) == 1, (
        f"{slug}: declares its headline verdict {len(declared)} times; call "
        "claims.declare_verdict(...) exactly once, in the claim-check section"
    )



@pytest.mark.parametrize("slug", SLUGS)
def test_loose_comparisons_are_declared_with_a_reason(slug):
    nb = nbformat.read(CHAPTERS / f"{slug}.ipynb", as_version=4)
    for i, cell in enumerate(nb.cells):
        if nbval_portable.KEY not in cell.metadata:
            continue
        assert cell.cell_type == "code", f"{slug}: cell {i} is {cell.cell_type} but declares '{nbval_portable.KEY}'"
        try:
            nbval_portable.policy_of(cell.metadata)
        except ValueError as exc:
            raise AssertionError(f"{slug}: cell {i}: {exc}") from None
        assert any(o.get("output_type") in ("stream", "execute_result", "display_data") for o in cell.outputs), (
            f"{slug}: cell {i} declares a loose comparison but has no output to compare: remove the declaration")
