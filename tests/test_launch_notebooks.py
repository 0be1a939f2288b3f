"""The launch notebooks (tools/launch_notebooks.py) read like the book: no raw MyST, captions under figures.

Every chapter is converted as the book build converts it (paperlib pinned at a commit sha) and opened:

* no markdown cell holds a MyST directive or role (```` ```{...} ````, ``:::``, ``{cite:t}``, ``{eq}``,
  ``{ref}``, ``:label:``, ``(label)=``, ``$$ (label)``, ...);
* every figure (a code cell with ``mystnb.figure`` metadata) is followed by a markdown cell holding
  ``**Fig. N.k.**`` and its caption;
* proof blocks became bold numbered headings, citations author-year links, labelled equations ``\\tag``;
* code cells and their committed outputs are unchanged, except the setup cell, which pins the commit.

Also unit tests of the converter on small MyST snippets, and of the claim-table renderer of the HTML
extension (book/_ext/book_readers.py) against ``paperlib.core.claims``' printed form. Fast: well under 5 s.
"""

import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "book" / "_ext"))
import launch_notebooks as ln  # noqa: E402
import stamp_install_cell as stamp  # noqa: E402

SLUGS = ln.toc_chapters()
REF = "0123456789abcdef0123456789abcdef01234567"

#: Raw MyST that must never reach a reader's notebook.
RAW_MYST = {
    "directive fence": re.compile(r"^\s*(```+|~~~+)\s*\{[^}]+\}", re.M),
    "colon fence": re.compile(r"^\s*:::", re.M),
    "role": re.compile(r"\{[a-zA-Z][\w:.-]*\}`"),
    "directive option": re.compile(r"^\s*>?\s*:(label|class|nonumber|name|caption|alt|width|align):", re.M),
    "target": re.compile(r"^\s*\([^()\s]+\)=\s*$", re.M),
    "labelled display math": re.compile(r"\$\$\s*\([\w:-]+\)\s*$", re.M),
}


@pytest.fixture(scope="module")
def bib():
    return ln.load_bibliography()


@pytest.fixture(scope="module")
def launched(bib):
    return {s: ln.convert_notebook(s, ref=REF, bib=bib, number=i + 1) for i, s in enumerate(SLUGS)}


def _markdown(nb):
    return [c.source for c in nb.cells if c.cell_type == "markdown"]


@pytest.mark.parametrize("slug", SLUGS)
def test_no_raw_myst(launched, slug):
    found = []
    for i, src in enumerate(_markdown(launched[slug])):
        for what, pattern in RAW_MYST.items():
            for m in pattern.finditer(src):
                found.append(f"markdown cell {i}: {what}: {src[max(0, m.start() - 30):m.end() + 30]!r}")
    assert not found, f"{slug}: raw MyST in the launch notebook:\n" + "\n".join(found[:10])


@pytest.mark.parametrize("slug", SLUGS)
def test_every_figure_has_its_caption_below(launched, slug):
    nb = launched[slug]
    number = SLUGS.index(slug) + 1
    k = 0
    for i, cell in enumerate(nb.cells):
        fig = (cell.metadata.get("mystnb") or {}).get("figure") if cell.cell_type == "code" else None
        if not fig or fig.get("caption") is None:
            continue
        k += 1
        assert any(o.get("output_type") in {"display_data", "execute_result"} and "image/png" in o.get("data", {})
                   for o in cell.get("outputs", [])), f"{slug}: figure {k} has no image output"
        below = nb.cells[i + 1] if i + 1 < len(nb.cells) else None
        assert below is not None and below.cell_type == "markdown", f"{slug}: no caption cell under figure {k}"
        assert f"**Fig. {number}.{k}.**" in below.source, f"{slug}: caption {below.source[:80]!r}"
        words = re.findall(r"[A-Za-z]{5,}", str(fig["caption"]))[:4]
        assert all(w in below.source for w in words), f"{slug}: caption text of figure {k} lost: {below.source!r}"


@pytest.mark.parametrize("slug", SLUGS)
def test_code_and_outputs_kept_setup_pinned(launched, slug):
    original = nbformat.read(ln.CHAPTERS / f"{slug}.ipynb", as_version=4)
    code_a = [c for c in original.cells if c.cell_type == "code"]
    code_b = [c for c in launched[slug].cells if c.cell_type == "code"]
    assert len(code_a) == len(code_b)
    assert code_b[0].source == stamp.install_cell_source(slug, REF) and f"@{REF}" in code_b[0].source
    for a, b in zip(code_a[1:], code_b[1:]):
        assert a.source == b.source and a.outputs == b.outputs
    assert "jupytext" not in launched[slug].metadata, "jupytext pairing metadata would re-pair on Binder"


@pytest.mark.parametrize("slug", SLUGS)
def test_blocks_citations_and_equations_are_readable(launched, slug, bib):
    source = (ln.CHAPTERS / f"{slug}.md").read_text()
    md = "\n".join(_markdown(launched[slug]))
    n_prf = len(re.findall(r"^:::+\{prf:(?!proof)\w+\}", source, re.M))
    words = "|".join(w for t, w in ln.PROOF_TYPES.items() if t != "proof")
    assert len(re.findall(rf"\*\*({words}) "
                          rf"{SLUGS.index(slug) + 1}\.\d+\*\*", md)) == n_prf
    for key in set(re.findall(r"\{cite:[tp]\}`([^`]+)`", source)):
        for k in key.split(","):
            w = bib[k.strip()]
            # a work with a url, doi or arXiv id is linked; one without is author-year text
            assert (w.url or f"{w.authors}") in md, f"{slug}: citation {k} is not rendered"
    n_labelled = len(re.findall(r"\$\$\s*\([\w:-]+\)\s*$", source, re.M))
    assert md.count("\\tag{") == n_labelled


# ---------------------------------------------------------------------------------------------
# The converter on small inputs
# ---------------------------------------------------------------------------------------------

def _ctx(bib, names=None):
    numbering = ln.Numbering(chapter=3, names=dict(names or {}))
    return ln.Context(numbering=numbering, bib=bib, book_url=None, docs={"book/references": "References"}, slug="x")


def test_roles(bib):
    ctx = _ctx(bib, {"eq-a": "(3.1)", "thm-a": "Theorem 3.1", "sec-a": "Fragile"})
    out = ln.convert_roles(
        "{cite:t}`huang2026testtime` and {cite:p}`huang2026testtime,chen2026scoresmoothing`; "
        "by {eq}`eq-a`, {prf:ref}`thm-a`, {ref}`the note <sec-a>`, {ref}`sec-a`, {doc}`../references`, "
        "`{eq}` in code stays", ctx)
    assert out.startswith("[Huang et al. (2026)](https://arxiv.org/abs/2506.05295) and "
                          "([Huang et al., 2026](https://arxiv.org/abs/2506.05295); [Chen, 2026](")
    assert "[(3.1)](#eq-a)" in out and "[Theorem 3.1](#thm-a)" in out
    assert "[the note](#sec-a)" in out and "[Fragile](#sec-a)" in out and "References" in out
    assert "`{eq}` in code stays" in out


def test_directives_and_math(bib):
    md = (":::{prf:theorem} Title with {cite:t}`chen2026scoresmoothing`\n:label: thm-x\n\nBody $x$.\n\n"
          "$$\ny = 1\n$$\n:::\n\n(sec-y)=\n::::{admonition} Careful\n:class: important\n\n| a | b |\n|---|---|\n::::\n"
          "\n$$\nz = 2\n$$ (eq-z)\n")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(md)]
    numbering = ln.Numbering(chapter=3)
    ln._scan_labels(nb, numbering)
    assert numbering.names["thm-x"] == "Theorem 3.1" and numbering.names["eq-z"] == "(3.1)"
    out = ln.convert_markdown(md, _ctx(bib, numbering.names))
    assert '<a id="thm-x"></a>\n\n> **Theorem 3.1** (Title with [Chen (2026)](' in out
    assert "> $$\ny = 1\n$$" in out, "lines inside $$ in a quote are lazy continuations, not '> '"
    assert "> **Careful**" in out and "> | a | b |" in out and '<a id="sec-y"></a>' in out
    assert "z = 2\n\\tag{3.1}\n$$" in out
    assert not any(p.search(out) for p in RAW_MYST.values()), out


def test_claim_lines_render_as_table_rows():
    import book_readers

    from paperlib.core import claims

    r = claims.ClaimResult("slope <of> n", "reproduction", "-2.017", "-2", "±0.2", True)
    v = claims.Verdict("partly", "the LLM experiments")
    pieces = book_readers.split_claim_output(f"header\n{r.line()}\n{r.line()}\n{v.line()}\ntail")
    assert [k for k, _ in pieces] == ["text", "claims", "verdict", "text"]
    html = book_readers._claim_rows_html(pieces[1][1])
    assert html.count("<tr class=\"claim-pass\">") == 2 and "slope &lt;of&gt; n" in html and "±0.2" in html
    # the regexes of the extension and of paperlib.core.claims agree on what a verdict line is
    assert book_readers.CLAIM_RE.pattern == claims.CLAIM_LINE_RE.pattern
    assert book_readers.VERDICT_RE.match(v.line())


def test_plain_text_titles():
    import book_readers

    assert book_readers.latex_to_text(r"1/\Delta^2") == "1/Δ²"
    assert "\\" not in book_readers.latex_to_text(r"\sqrt{\log d / n} \le \mathcal{O}(n^{2-1/d})")
