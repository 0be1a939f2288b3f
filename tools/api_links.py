"""Link each chapter's "The algorithm" section to the API reference of the functions it calls.

For every chapter, the ``paperlib`` functions and classes its code cells use (outside the book's
infrastructure, ``paperlib.core``) are found by reading the code (``ast``: ``alias.name`` for an imported
module, or a name imported directly), resolved to the public module that documents them
(``book/api/<subpackage>.md``) and listed, in order of first use, as ``{py:obj}`` references in one
paragraph right under the section's heading::

    <!-- api-links (tools/api_links.py --write) -->
    *In the API reference:* {py:obj}`~paperlib.transformers.retrieval.train_head_grid`, ...

The strict book build resolves every reference; ``tests/test_package_layout.py`` checks that each chapter's
paragraph is the one this tool computes.

Usage::

    python tools/api_links.py            # print each chapter's paragraph
    python tools/api_links.py --write    # rewrite them in book/chapters/*.md
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from freshness import _MAGIC, _code_cells  # noqa: E402

CHAPTERS = ROOT / "book" / "chapters"
MARK = "<!-- api-links (tools/api_links.py --write) -->"
HEADING = re.compile(r"^## The algorithms?\s*$", re.M)


def _documented_at(module: str, name: str) -> str | None:
    """Dotted path under which the API reference documents ``module.name``, or None (private, core, absent)."""
    mod = importlib.import_module(module)
    if module.startswith("paperlib.core") or name.startswith("_"):
        return None
    if inspect.ismodule(getattr(mod, name, None)):
        return None
    if name in getattr(mod, "__all__", ()) and module.count(".") == 2:
        return f"{module}.{name}"
    # a subpackage re-export: find the public module whose __all__ lists it
    if module.count(".") == 1:
        for sub in getattr(mod, "__all__", ()):
            m = getattr(mod, sub, None)
            if inspect.ismodule(m) and name in getattr(m, "__all__", ()):
                return f"{m.__name__}.{name}"
    return None


def chapter_objects(slug: str) -> list[str]:
    """Documented dotted paths of the paperlib objects chapter ``slug`` uses, in order of first use."""
    sources = _code_cells(CHAPTERS / f"{slug}.md")
    modules: dict[str, str] = {}  # alias -> public module
    names: dict[str, str] = {}  # local name -> documented path
    found: list[str] = []

    def add(path: str | None) -> None:
        if path and path not in found:
            found.append(path)

    for src in sources:
        try:
            tree = ast.parse(_MAGIC.sub("", src))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("paperlib"):
                for a in node.names:
                    full = f"{node.module}.{a.name}"
                    local = a.asname or a.name
                    try:
                        importlib.import_module(full)
                        modules[local] = full
                    except ImportError:
                        names[local] = _documented_at(node.module, a.name) or ""
        # in source order: attribute uses of module aliases, and directly imported names
        events = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
                events.append((node.lineno, node.col_offset, _documented_at(modules[node.value.id], node.attr)))
            elif isinstance(node, ast.Name) and names.get(node.id) and isinstance(node.ctx, ast.Load):
                events.append((node.lineno, node.col_offset, names[node.id]))
        for _, _, path in sorted(events, key=lambda e: (e[0], e[1])):
            add(path)
    return found


def paragraph(slug: str) -> str:
    objs = chapter_objects(slug)
    refs = ", ".join(f"{{py:obj}}`~{p}`" for p in objs)
    return f"{MARK}\n*In the API reference:* {refs}."


def rewrite(slug: str, text: str) -> str:
    """``text`` (a chapter's .md) with its api-links paragraph set to :func:`paragraph`."""
    para = paragraph(slug)
    if MARK in text:
        return re.sub(re.escape(MARK) + r"\n[^\n]*", lambda _: para, text, count=1)
    m = HEADING.search(text)
    if m is None:
        raise ValueError(f"{slug}: no '## The algorithm' heading to put the API links under")
    return text[: m.end()] + "\n\n" + para + text[m.end():]


def slugs() -> list[str]:
    return sorted(p.stem for p in CHAPTERS.glob("*.md"))


if __name__ == "__main__":
    for slug in slugs():
        path = CHAPTERS / f"{slug}.md"
        if "--write" in sys.argv:
            text = path.read_text()
            new = rewrite(slug, text)
            if new != text:
                path.write_text(new)
                print("rewrote", path.relative_to(ROOT))
        else:
            print(f"{slug}: {paragraph(slug)}\n")
