#!/usr/bin/env python
"""Launch notebooks: each chapter as a reader opens it in Colab, Binder or a local JupyterLab.

A chapter notebook (``book/chapters/<slug>.ipynb``) is written in MyST for the book: its markdown
cells hold ``:::{prf:theorem}`` blocks, ``{cite:t}`` roles, ``(label)=`` targets and ``$$ ... $$ (label)``
equations, and its figure captions live in cell metadata (``mystnb.figure.caption``). Jupyter, Colab and
GitHub show all of that as literal text and no captions at all. This tool writes, for each chapter, a
*launch notebook* that reads like the book page:

* theorem / definition / algorithm / proposition / lemma / ... blocks become a block quote with a bold,
  numbered heading (``**Theorem 2.1** (title)``, numbered as the HTML book numbers them), the text, and
  an anchor carrying the label, so ``{prf:ref}`` links to it;
* ``{cite:t}`` / ``{cite:p}`` become author-year text (``Huang et al. (2026)``, ``(Huang et al., 2026)``)
  linked to the work's URL, DOI or arXiv page from ``book/references.bib`` (read with pybtex);
* ``{eq}`` becomes the equation number ``(2.1)`` (labelled display equations get ``\\tag{2.1}``),
  ``{ref}`` / ``{prf:ref}`` / ``{numref}`` become links to anchors in the notebook, ``{doc}`` plain text
  (linked to the published page when ``html.baseurl`` is set), ``(label)=`` an HTML anchor;
* ``:::{admonition}`` / ``{note}`` / ... become block quotes with a bold title; ``{math}`` becomes ``$$``;
* each figure's caption (cell metadata) becomes a markdown cell ``**Fig. 2.1.** caption`` right under
  the figure;
* code cells and their committed outputs are kept unchanged, except the setup cell, which is re-stamped
  (``tools/stamp_install_cell.py``) to install paperlib **at the commit sha of the build**, so a reader
  runs exactly the code that produced the outputs shown.

Why our own converter rather than sphinx-tojupyter (QuantEcon's Sphinx builder, which does know
sphinx-proof's nodes): it rebuilds notebooks from the Sphinx doctree, so the committed, nbval-verified
outputs are lost unless it re-executes every chapter itself (through dask); it would be a second full
Sphinx build with a custom builder; it pulls dask[distributed] and nbdime into the developer lock; and
it tests against myst-parser 4 while jupyter-book 1.0.4 pins myst-parser 3. Working on jupytext cells
keeps outputs byte for byte, needs only nbformat, PyYAML and pybtex, converts all chapters in well under
a second, and the MyST this book uses is a small, fixed subset (``tests/test_launch_notebooks.py``
fails on anything left unconverted).

Where they live: ``book/_ext/book_html_fixes.py`` calls :func:`write_launch_notebooks` at the end of
every HTML build, into ``_build/html/_launch/book/chapters/<slug>.ipynb``, and points the Colab, Binder
and download buttons there; the site is published with them (the published branch is ``launch_branch``
in ``_config.yml``). ``make lab`` writes them into ``_build/launch`` and opens JupyterLab there.

Usage::

    python tools/launch_notebooks.py                      # every chapter into _build/launch
    python tools/launch_notebooks.py --out DIR --ref SHA test_time_scaling
"""

from __future__ import annotations

import argparse
import copy
import functools
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "book" / "chapters"
sys.path.insert(0, str(Path(__file__).resolve().parent))
import stamp_install_cell as stamp  # noqa: E402

#: sphinx-proof directive -> heading word (each type has its own counter, as in the HTML).
PROOF_TYPES = {
    "theorem": "Theorem", "lemma": "Lemma", "definition": "Definition", "proposition": "Proposition",
    "corollary": "Corollary", "algorithm": "Algorithm", "remark": "Remark", "conjecture": "Conjecture",
    "example": "Example", "property": "Property", "observation": "Observation", "axiom": "Axiom",
    "criterion": "Criterion", "assumption": "Assumption", "notation": "Notation", "proof": "Proof",
}
ADMONITIONS = {"note", "warning", "tip", "important", "hint", "caution", "attention", "danger", "error",
               "seealso", "admonition", "margin", "sidebar", "topic", "dropdown"}

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>:{3,}|`{3,}|~{3,})\s*(?:\{(?P<name>[^}\s]+)\})?\s*(?P<arg>.*?)\s*$")
_ROLE = re.compile(r"\{(?P<role>[a-zA-Z][\w:.-]*)\}`(?P<body>[^`]*)`")
_ROLE_OR_CODE = re.compile(r"\{(?P<role>[a-zA-Z][\w:.-]*)\}`(?P<body>[^`]*)`|(?P<code>(`+)[^`\n]*?\4)")
_TARGET = re.compile(r"^\s*\((?P<label>[^()\s]+)\)=\s*$")
_DISPLAY_LABEL = re.compile(r"^(?P<pre>.*?)\$\$\s*\((?P<label>[^()\s]+)\)\s*$")
_OPTION = re.compile(r"^\s*:(?P<key>[\w-]+):\s*(?P<value>.*)$")


def _explicit(body: str) -> tuple[str | None, str]:
    """Split a role body ``text <target>`` into (text, target); plain ``target`` -> (None, target)."""
    m = re.fullmatch(r"\s*(.*?)\s*<([^<>]+)>\s*", body, re.S)
    return (m[1], m[2].strip()) if m and m[1] else (None, body.strip())


# ---------------------------------------------------------------------------------------------
# Bibliography
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Work:
    authors: str  # "Huang et al.", "Ghasemi and Pishro-Nik", "Chen"
    year: str
    url: str | None


@functools.lru_cache(maxsize=1)
def _text_backend():
    """pybtex's plain-text backend class, looked up once (``render_as`` scans the installed entry points on
    every call: about 60 ms each, 20 s for the whole bibliography)."""
    from pybtex.plugin import find_plugin

    return find_plugin("pybtex.backends", "text")


def _latex_to_text(s: str) -> str:
    from pybtex.richtext import Text

    return Text.from_latex(s).render(_text_backend()())


def load_bibliography(path: Path = ROOT / "book" / "references.bib") -> dict[str, Work]:
    """Author-year labels and links of every entry, as sphinxcontrib-bibtex's author_year style shows them."""
    from pybtex.database import parse_file

    works = {}
    for key, entry in parse_file(str(path)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        last = [_latex_to_text(" ".join(p.prelast_names + p.last_names)) for p in people]
        if len(last) >= 3:
            authors = f"{last[0]} et al."
        elif len(last) == 2:
            authors = f"{last[0]} and {last[1]}"
        else:
            authors = last[0] if last else _latex_to_text(entry.fields.get("title", key))
        f = entry.fields
        if f.get("url"):
            url = f["url"]
        elif f.get("doi"):
            url = f"https://doi.org/{f['doi']}"
        elif f.get("eprint") and f.get("archivePrefix", f.get("archiveprefix", "")).lower() == "arxiv":
            url = f"https://arxiv.org/abs/{f['eprint']}"
        else:
            url = None
        works[key] = Work(authors=authors, year=f.get("year", "n.d."), url=url)
    return works


# ---------------------------------------------------------------------------------------------
# Numbering (as the HTML book numbers things)
# ---------------------------------------------------------------------------------------------

@dataclass
class Numbering:
    """Labels found in one chapter: what each one is called and its number."""

    chapter: int
    names: dict[str, str] = field(default_factory=dict)  # label -> "Theorem 2.1", "(2.3)", "Fig. 2.4", title
    counters: dict[str, int] = field(default_factory=dict)

    def next(self, kind: str) -> str:
        self.counters[kind] = self.counters.get(kind, 0) + 1
        return f"{self.chapter}.{self.counters[kind]}"


def _scan_labels(nb, numbering: Numbering) -> None:
    """First pass: number proof blocks, labelled equations and figures in document order."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            lines = cell.source.splitlines()
            for i, line in enumerate(lines):
                m = _FENCE.match(line)
                if m and m["name"]:
                    name = m["name"]
                    label = None
                    for opt in lines[i + 1:i + 6]:
                        om = _OPTION.match(opt)
                        if not om:
                            break
                        if om["key"] == "label":
                            label = om["value"].strip()
                    if name.startswith("prf:") and name[4:] in PROOF_TYPES:
                        typ = PROOF_TYPES[name[4:]]
                        number = numbering.next(typ) if name[4:] != "proof" else ""
                        if label:
                            numbering.names[label] = f"{typ} {number}".strip()
                    elif name == "math" and label:
                        numbering.names[label] = f"({numbering.next('equation')})"
                    elif label:
                        numbering.names[label] = m["arg"] or label
                    continue
                dm = _DISPLAY_LABEL.match(line)
                if dm and (dm["pre"].strip() or "$$" in "\n".join(lines[:i])):
                    numbering.names[dm["label"]] = f"({numbering.next('equation')})"
                tm = _TARGET.match(line)
                if tm:
                    title = next((ln for ln in lines[i + 1:] if ln.strip()), "")
                    fm = _FENCE.match(title)
                    if fm and fm["name"]:
                        title = fm["arg"] or fm["name"]
                    numbering.names[tm["label"]] = title.lstrip("#").strip() or tm["label"]
        elif cell.cell_type == "code":
            fig = (cell.metadata.get("mystnb") or {}).get("figure") or {}
            if fig.get("caption") is not None:
                number = numbering.next("figure")
                if fig.get("name"):
                    numbering.names[fig["name"]] = f"Fig. {number}"


# ---------------------------------------------------------------------------------------------
# MyST -> plain (Jupyter) Markdown
# ---------------------------------------------------------------------------------------------

@dataclass
class Context:
    numbering: Numbering
    bib: dict[str, Work]
    book_url: str | None  # published site root, e.g. https://org.github.io/repo/ (None: no links)
    docs: dict[str, str]  # docname (e.g. "book/references") -> title
    slug: str
    glue: dict[str, str] = field(default_factory=dict)  # glued run numbers (paperlib.core.claims.quote)

    def api_link(self, body: str) -> str:
        """``{py:obj}`~paperlib.field.module.name``` -> `` `name` ``, linked to book/api/<field>.html#<path>."""
        text, target = _explicit(body)
        path = target.lstrip("~")
        shown = text or (path.split(".")[-1] if target.startswith("~") else path)
        parts = path.split(".")
        if self.book_url and len(parts) >= 2 and parts[0] == "paperlib":
            return f"[`{shown}`]({self.book_url.rstrip('/')}/book/api/{parts[1]}.html#{path})"
        return f"`{shown}`"

    def doc_link(self, target: str, text: str | None) -> str:
        name = target.split("/")[-1].removesuffix(".md").removesuffix(".ipynb")
        docname = next((d for d in self.docs if d.split("/")[-1] == name), None)
        title = text or (self.docs.get(docname) if docname else None) or name.replace("_", " ").title()
        if self.book_url and docname:
            return f"[{title}]({self.book_url.rstrip('/')}/{docname}.html)"
        return title


def _cite(keys: str, style: str, ctx: Context) -> str:
    parts = []
    for key in [k.strip() for k in keys.split(",") if k.strip()]:
        w = ctx.bib.get(key)
        if w is None:
            raise KeyError(f"{ctx.slug}: citation key {key!r} is not in book/references.bib")
        if style == "t":
            text = f"{w.authors} ({w.year})"
        else:
            text = f"{w.authors}, {w.year}"
        parts.append(f"[{text}]({w.url})" if w.url else text)
    return "; ".join(parts) if style == "t" else f"({'; '.join(parts)})"


def convert_roles(text: str, ctx: Context) -> str:
    """Replace every ``{role}`content``` in ``text`` (outside inline code) by plain Markdown."""

    def one(m: re.Match) -> str:
        role, body = m["role"], m["body"]
        names = ctx.numbering.names
        if role.startswith("cite"):
            style = "t" if role in {"cite:t", "cite:ts", "citet"} else "p"
            return _cite(body, style, ctx)
        if role == "eq":
            text, label = _explicit(body)
            return f"[{text or names.get(label, label)}](#{label})"
        if role in {"ref", "prf:ref", "numref"}:
            text, label = _explicit(body)
            name = names.get(label, label)
            if role == "numref" and text and "%s" in text:
                text = text.replace("%s", name.split()[-1])
            return f"[{text or name}](#{label})"
        if role == "doc":
            text, target = _explicit(body)
            return ctx.doc_link(target, text)
        if role in {"glue:text", "glue"}:
            key, _, spec = body.partition(":")
            if key not in ctx.glue:
                raise KeyError(f"{ctx.slug}: {{glue:text}}`{key}` has no glued value in the executed notebook")
            value = ctx.glue[key]
            return format(float(value), spec) if spec else value
        if role == "math":
            return f"${body}$"
        if role in {"sub", "sup"}:
            return f"<{role}>{body}</{role}>"
        if role in {"code", "literal", "kbd", "file", "samp"}:
            return f"`{body}`"
        if role.startswith("py:"):  # an API reference: the name, linked to its entry on the book's API page
            return ctx.api_link(body)
        text, _target = _explicit(body)
        return text or body  # abbr, term, download, ...: the visible text

    # one left-to-right pass: a role, or an inline code span (left alone)
    return _ROLE_OR_CODE.sub(lambda m: m[0] if m["code"] else one(m), text)


def _quote(lines: list[str]) -> list[str]:
    """Block-quote ``lines``. Lines inside a ``$$`` display after its first are left unprefixed (lazy
    continuation): Jupyter extracts math from the raw text before Markdown, so a ``> `` inside ``$$``
    would become part of the formula."""
    out, in_math = [], False
    for ln in lines:
        starts_math = ln.strip().startswith("$$")
        if in_math:
            out.append(ln)
        else:
            out.append(f"> {ln}" if ln.strip() else ">")
        if ln.count("$$") % 2 == 1:
            in_math = not in_math
        elif starts_math and ln.strip() == "$$":
            in_math = not in_math
    return out


def _parse_block(lines: list[str], start: int) -> tuple[dict, list[str], int]:
    """Parse the directive opening at ``lines[start]``: (info, body lines, index after the closing fence)."""
    m = _FENCE.match(lines[start])
    fence, indent = m["fence"], m["indent"]
    i, options = start + 1, {}
    # options: ":key: value" lines, or a YAML block between --- lines
    if i < len(lines) and lines[i].strip() == "---":
        j = i + 1
        while j < len(lines) and lines[j].strip() != "---":
            j += 1
        options = yaml.safe_load("\n".join(lines[i + 1:j])) or {}
        i = j + 1
    else:
        while i < len(lines) and _OPTION.match(lines[i]):
            om = _OPTION.match(lines[i])
            options[om["key"]] = om["value"].strip()
            i += 1
    body = []
    depth = 0
    while i < len(lines):
        line = lines[i]
        cm = _FENCE.match(line)
        if cm and cm["fence"][0] == fence[0]:
            if cm["name"] or (cm["arg"] and fence[0] == "`"):
                if len(cm["fence"]) == len(fence):
                    depth += 1
            elif len(cm["fence"]) >= len(fence) and not cm["arg"]:
                if depth == 0:
                    return {"name": m["name"], "arg": m["arg"], "options": options, "indent": indent}, body, i + 1
                depth -= 1
        body.append(line[len(indent):] if line.startswith(indent) else line)
        i += 1
    raise ValueError(f"unclosed directive {lines[start]!r}")


def convert_markdown(source: str, ctx: Context) -> str:
    """Convert one markdown cell (MyST) into Markdown that Jupyter, Colab and GitHub render."""
    return "\n".join(_convert_lines(source.splitlines(), ctx))


def _convert_lines(lines: list[str], ctx: Context) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if m and (m["name"] or m["fence"][0] == ":"):
            info, body, i = _parse_block(lines, i)
            out.extend(info["indent"] + ln if ln else ln for ln in _convert_directive(info, body, ctx))
            continue
        if m and m["fence"][0] in "`~":  # a plain code fence: copy it untouched
            fence = m["fence"]
            out.append(line)
            i += 1
            while i < len(lines):
                out.append(lines[i])
                if lines[i].strip().startswith(fence) and lines[i].strip().strip(fence[0]) == "":
                    i += 1
                    break
                i += 1
            continue
        tm = _TARGET.match(line)
        if tm:
            out.extend([f'<a id="{tm["label"]}"></a>', ""])
            i += 1
            continue
        dm = _DISPLAY_LABEL.match(line)
        if dm and dm["label"] in ctx.numbering.names:
            label, number = dm["label"], ctx.numbering.names[dm["label"]].strip("()")
            pre = dm["pre"].rstrip()
            if pre.startswith("$$") and pre != "$$":  # one-line $$ x $$ (label)
                out.extend([f'<a id="{label}"></a>', ""])
                out.append(f"{pre} \\tag{{{number}}} $$")
            else:
                # the opening $$ is above: put the anchor before it, the tag inside
                for k in range(len(out) - 1, -1, -1):
                    if out[k].strip().startswith("$$"):
                        out[k:k] = [f'<a id="{label}"></a>', ""]
                        break
                if pre:
                    out.append(convert_roles(pre, ctx))
                out.append(f"\\tag{{{number}}}")
                out.append("$$")
            i += 1
            continue
        out.append(convert_roles(line, ctx))
        i += 1
    return out


def _convert_directive(info: dict, body: list[str], ctx: Context) -> list[str]:
    name, arg, options = info["name"] or "", info["arg"], info["options"]
    label = str(options.get("label", "")).strip()
    anchor = [f'<a id="{label}"></a>', ""] if label else []
    inner = _convert_lines(body, ctx)
    while inner and not inner[0].strip():
        inner.pop(0)
    while inner and not inner[-1].strip():
        inner.pop()
    if name.startswith("prf:") and name[4:] in PROOF_TYPES:
        typ = PROOF_TYPES[name[4:]]
        number = ctx.numbering.names.get(label, typ) if label else typ
        title = f" ({convert_roles(arg, ctx)})" if arg else ""
        if name == "prf:proof":
            return anchor + [f"*Proof.* {title.strip()}".rstrip(), "", *inner, "", "$\\blacksquare$"]
        return anchor + _quote([f"**{number}**{title}", "", *inner])
    if name in ADMONITIONS or not name:
        title = convert_roles(arg, ctx) if arg else name.capitalize() if name not in {"admonition", ""} else ""
        head = [f"**{title}**", ""] if title else []
        return anchor + _quote([*head, *inner])
    if name == "math":
        tag = [f"\\tag{{{ctx.numbering.names[label].strip('()')}}}"] if label in ctx.numbering.names else []
        return anchor + ["$$", *body, *tag, "$$"]
    if name in {"code-block", "code", "sourcecode", "code-cell"}:
        return ["```" + (arg or ""), *body, "```"]
    if name in {"bibliography", "tableofcontents", "toctree", "include"}:
        return []
    if name in {"image", "figure"}:
        alt = options.get("alt", "")
        caption = [f"*{ln}*" for ln in inner]
        return anchor + [f"![{alt}]({arg})", *caption]
    # anything else: keep its content, titled with its argument
    head = [f"**{convert_roles(arg, ctx)}**", ""] if arg else []
    return anchor + _quote([*head, *inner])


# ---------------------------------------------------------------------------------------------
# Whole notebooks
# ---------------------------------------------------------------------------------------------

def toc_chapters() -> list[str]:
    """Chapter slugs in reading order (the numbered part of ``_toc.yml``)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [c["file"].split("/")[-1] for part in toc["parts"] for c in part["chapters"]
            if c["file"].startswith("book/chapters/")]


def toc_titles() -> dict[str, str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    titles = {toc["root"]: "Introduction"}
    for part in toc["parts"]:
        for c in part["chapters"]:
            titles[c["file"]] = c.get("title") or c["file"].split("/")[-1].replace("_", " ").title()
    return titles


def build_config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text())


def book_url(cfg: dict | None = None) -> str | None:
    cfg = cfg or build_config()
    url = ((cfg.get("html") or {}).get("baseurl") or "").strip()
    return url or None


def git_sha() -> str | None:
    """The commit sha of the checkout (``None`` outside a git work tree)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip() or None


GLUE_PREFIX = "application/papermill.record/"  # myst-nb's glue records (paperlib.core.claims.quote)


def glue_values(nb) -> tuple[dict[str, str], list[str]]:
    """``({key: text}, [keys glued more than once])`` from the glue records of an executed notebook.

    ``{glue:text}`key``` roles in the chapter's Markdown are written in with these values, so a launch
    notebook reads like the page: the numbers are the run's own, as plain text.
    """
    values: dict[str, str] = {}
    dup: list[str] = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for out in cell.get("outputs", []):
            meta = (out.get("metadata") or {}).get("scrapbook")
            if not meta:
                continue
            text = (out.get("data") or {}).get(meta.get("mime_prefix", "") + "text/plain")
            if meta["name"] in values:
                dup.append(meta["name"])
            values[meta["name"]] = text if isinstance(text, str) else "".join(text or [])
    return values, dup


def convert_notebook(slug: str, *, ref: str | None = None, bib: dict[str, Work] | None = None,
                     number: int | None = None, url: str | None = None):
    """The launch notebook of chapter ``slug`` (an ``nbformat`` notebook)."""
    chapters = toc_chapters()
    number = number if number is not None else chapters.index(slug) + 1
    nb = nbformat.read(CHAPTERS / f"{slug}.ipynb", as_version=4)
    numbering = Numbering(chapter=number)
    _scan_labels(nb, numbering)
    ctx = Context(numbering=numbering, bib=bib if bib is not None else load_bibliography(),
                  book_url=url, docs=toc_titles(), slug=slug, glue=glue_values(nb)[0])
    out = copy.deepcopy(nb)
    cells = []
    figures = 0
    setup = next((k for k, c in enumerate(out.cells) if c.cell_type == "code"), None)
    for k, cell in enumerate(out.cells):
        if cell.cell_type == "markdown":
            cell.source = convert_markdown(cell.source, ctx)
            cells.append(cell)
            continue
        if k == setup:
            cell.source = stamp.install_cell_source(slug, ref)
            stamp.mark_setup_cell(cell)  # collapsed to its #@title in Colab (cellView: form)
        cells.append(cell)
        fig = (cell.metadata.get("mystnb") or {}).get("figure") or {} if cell.cell_type == "code" else {}
        if fig.get("caption") is not None:
            figures += 1
            name = fig.get("name")
            caption = " ".join(convert_markdown(str(fig["caption"]), ctx).split())
            text = (f'<a id="{name}"></a>\n' if name else "") + f"**Fig. {number}.{figures}.** {caption}"
            cells.append(nbformat.v4.new_markdown_cell(text, metadata={"launch": {"caption_of": name or ""}}))
    where = f"`book/chapters/{slug}.md`" + (f" at commit `{ref[:12]}`" if ref else "")
    page = f" ([the book page]({url.rstrip('/')}/book/chapters/{slug}.html))" if url else ""
    intro = nbformat.v4.new_markdown_cell(
        f"*Executable Theory*, chapter {number}{page}: generated from {where}. "
        "Run the cells from the top; the first one installs the book's package if it is missing.",
        metadata={"launch": {"header": True}},
    )
    out.cells = [intro, *cells]
    for i, cell in enumerate(out.cells):  # fresh, unique cell ids
        cell["id"] = f"launch-{i}"
    out.metadata.pop("jupytext", None)
    out.metadata.pop("executable_theory", None)  # regenerate's provenance (input hashes, other seeds)
    out.metadata["launch"] = {"chapter": slug, "number": number, "ref": ref or ""}
    return out


def write_launch_notebooks(out_dir: Path, *, ref: str | None = None, url: str | None = None,
                           slugs: list[str] | None = None) -> list[Path]:
    """Write ``<out_dir>/book/chapters/<slug>.ipynb`` for every chapter; return the paths."""
    bib = load_bibliography()
    chapters = toc_chapters()
    written = []
    for slug in slugs or chapters:
        path = Path(out_dir) / "book" / "chapters" / f"{slug}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nb = convert_notebook(slug, ref=ref, bib=bib, number=chapters.index(slug) + 1, url=url)
        nbformat.write(nb, path)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("slugs", nargs="*", help="chapters (default: all in _toc.yml)")
    parser.add_argument("--out", default=str(ROOT / "_build" / "launch"), help="output folder")
    parser.add_argument("--ref", default=None,
                        help="git ref paperlib is installed at (default: the commit sha of the checkout)")
    parser.add_argument("--branch", action="store_true", help="install from repository.branch, not a sha")
    args = parser.parse_args(argv)
    ref = None if args.branch else (args.ref or git_sha())
    for p in write_launch_notebooks(Path(args.out), ref=ref, url=book_url(), slugs=args.slugs or None):
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
