"""Freshness of a chapter's committed outputs: a digest of everything they depend on.

A chapter's outputs (numbers, figures, claim verdicts) are a function of

* its source, ``book/chapters/<slug>.md``;
* the modules of ``paperlib`` it imports, directly or through other ``paperlib`` modules (the plot
  style in ``paperlib/core/plotting.py`` among them);
* the locked environment: every ``requirements*.txt`` at the repository root.

:func:`chapter_inputs` lists those files and :func:`chapter_digest` hashes them. ``tools/regenerate.py``
records the per-file hashes in ``book/_generated/runs.json`` each time it executes a chapter, and the
notebook gate (``tests/test_notebooks.py``) recomputes them: when any input changed since the outputs
were produced, it fails, names the changed files and prints the command that regenerates the chapter.
nbval cannot catch this on its own, since it never compares images and compares only cells that ran.
"""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "book" / "chapters"
PACKAGE = ROOT / "lib" / "paperlib"

_MAGIC = re.compile(r"^\s*[%!].*$", re.MULTILINE)


def _code_cells(md: Path) -> list[str]:
    import jupytext

    nb = jupytext.read(md)
    return [c.source for c in nb.cells if c.cell_type == "code"]


def _module_file(name: str) -> Path | None:
    """``paperlib.x.y`` -> the file that defines it, or None when it is not a module of the package."""
    parts = name.split(".")
    if parts[0] != "paperlib":
        return None
    base = PACKAGE.joinpath(*parts[1:])
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


def _imports_of(source: str, *, current: str | None = None) -> set[str]:
    """Dotted names of paperlib modules imported by ``source`` (``current`` resolves relative imports)."""
    try:
        tree = ast.parse(_MAGIC.sub("", source))
    except SyntaxError:
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "paperlib":
                    out.add(a.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level and current:
                pkg = current.split(".")
                # a module's package is its name minus the last part; an __init__'s is the package it opens
                if pkg[-1] == "__init__":
                    pkg = pkg[:-1] + ["__init__"]
                anchor = pkg[: len(pkg) - node.level]
                mod = ".".join(anchor + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "paperlib":
                continue
            out.add(mod)
            for a in node.names:  # `from paperlib.core import claims` imports the module paperlib.core.claims
                out.add(f"{mod}.{a.name}")
    return {m for m in out if _module_file(m) is not None}


def paperlib_closure(sources: list[str]) -> list[Path]:
    """Files of every paperlib module imported by ``sources``, transitively, plus the package ``__init__``."""
    todo = set()
    for s in sources:
        todo |= _imports_of(s)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        path = _module_file(name)
        modname = name if path.name != "__init__.py" else name + ".__init__"
        todo |= _imports_of(path.read_text(), current=modname) - seen
        # importing paperlib.x runs paperlib/__init__.py too
        parent = name.rsplit(".", 1)[0] if "." in name else None
        if parent and parent not in seen:
            todo.add(parent)
    files = {_module_file(n) for n in seen} | {PACKAGE / "__init__.py"}
    return sorted(files)


def chapter_inputs(slug: str) -> list[Path]:
    """Every file the outputs of chapter ``slug`` depend on, sorted, as absolute paths."""
    md = CHAPTERS / f"{slug}.md"
    if not md.is_file():
        raise ValueError(f"slug: no chapter source {md.relative_to(ROOT)}")
    locks = sorted(ROOT.glob("requirements*.txt"))
    return [md, *paperlib_closure(_code_cells(md)), *locks]


#: Cell metadata that never changes what a chapter computes or prints: how the portable comparison
#: (``tools/nbval_portable.py``) compares the cell's outputs. A declaration added after a run measured
#: the need for it does not make the outputs stale.
COMPARISON_ONLY_METADATA = ("portable",)


def _chapter_bytes(path: Path) -> bytes:
    """The chapter source as it bears on the outputs: its text, less comparison-only cell metadata."""
    import jupytext

    nb = jupytext.reads(path.read_text(), fmt="md:myst")
    for cell in nb.cells:
        for k in COMPARISON_ONLY_METADATA:
            cell.metadata.pop(k, None)
    return jupytext.writes(nb, fmt="md:myst").encode()


def _sha(path: Path) -> str:
    data = _chapter_bytes(path) if path.parent == CHAPTERS and path.suffix == ".md" else path.read_bytes()
    return hashlib.sha256(data).hexdigest()[:16]


def input_hashes(slug: str) -> dict[str, str]:
    """``{repository-relative path: short sha256}`` of every input of chapter ``slug``."""
    return {p.relative_to(ROOT).as_posix(): _sha(p) for p in chapter_inputs(slug)}


def chapter_digest(hashes: dict[str, str]) -> str:
    """One digest of a chapter's inputs, from :func:`input_hashes`."""
    blob = "\n".join(f"{k} {v}" for k, v in sorted(hashes.items()))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def stale_inputs(recorded: dict[str, str], current: dict[str, str]) -> list[str]:
    """Paths whose hash changed, appeared or disappeared between ``recorded`` and ``current``."""
    keys = set(recorded) | set(current)
    return sorted(k for k in keys if recorded.get(k) != current.get(k))
