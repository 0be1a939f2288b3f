"""The two tables that map the book onto ``paperlib`` (README, ``book/api/index.md``, package docstring).

* **Subpackages**: each subpackage of ``lib/paperlib``, what it holds (the first line of its docstring)
  and the chapters that import it;
* **Chapters**: each chapter and the files that hold its algorithm, i.e. the ``paperlib`` modules its
  code cells import directly, outside the book's infrastructure (``paperlib.core``).

Both are computed from the sources, so they cannot drift: ``tests/test_package_layout.py`` checks that
the README and the API index hold exactly what ``python tools/package_table.py`` prints.

Usage::

    python tools/package_table.py            # print both tables (Markdown)
    python tools/package_table.py --write    # rewrite them in README.md and book/api/index.md
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import yaml  # noqa: E402
from freshness import _code_cells, _imports_of  # noqa: E402

PACKAGE = ROOT / "lib" / "paperlib"
BEGIN, END = "<!-- package-table:begin (tools/package_table.py --write) -->", "<!-- package-table:end -->"
TARGETS = (ROOT / "README.md", ROOT / "book" / "api" / "index.md")


def subpackages() -> list[str]:
    """Subpackage names in layer order: ``core``, ``models``, then the fields alphabetically."""
    names = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    return [n for n in ("core", "models") if n in names] + [n for n in names if n not in ("core", "models")]


def chapters() -> list[tuple[str, str]]:
    """``(slug, short title)`` of every chapter in ``_toc.yml`` order."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    out = []
    for part in toc["parts"]:
        for ch in part["chapters"]:
            if ch["file"].startswith("book/chapters/"):
                out.append((ch["file"].split("/")[-1], ch.get("title", ch["file"])))
    return out


def chapter_modules(slug: str) -> list[str]:
    """Dotted names of the paperlib modules chapter ``slug`` imports directly, ``paperlib.core`` aside."""
    mods: set[str] = set()
    for src in _code_cells(ROOT / "book" / "chapters" / f"{slug}.md"):
        mods |= _imports_of(src)
    return sorted(m for m in mods if m.count(".") == 2 and not m.startswith("paperlib.core."))


def _summary(sub: str) -> str:
    doc = ast.get_docstring(ast.parse((PACKAGE / sub / "__init__.py").read_text())) or ""
    return doc.split("\n\n")[0].replace("\n", " ")


def private_parts(module: str) -> list[str]:
    """File names of the private modules (``_x.py``) of its own subpackage that public ``module`` imports."""
    path = PACKAGE.joinpath(*module.split(".")[1:]).with_suffix(".py")
    out = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and (node.module or "").startswith("_"):
            name = f"{node.module}.py"
            if name not in out:
                out.append(name)
    return out


def _files(module: str) -> str:
    parts = private_parts(module)
    main = f"`lib/{module.replace('.', '/')}.py`"
    return main + (f" ({', '.join(f'`{p}`' for p in parts)})" if parts else "")


def tables() -> str:
    chs = chapters()
    uses = {slug: chapter_modules(slug) for slug, _ in chs}
    lines = ["| subpackage | what it holds | chapters |", "|---|---|---|"]
    for sub in subpackages():
        users = [t for s, t in chs if any(m.startswith(f"paperlib.{sub}.") for m in uses[s])]
        if sub == "core":
            users = ["every chapter"]
        lines.append(f"| `paperlib.{sub}` | {_summary(sub)} | {'; '.join(users) or '(through other subpackages)'} |")
    lines += ["", "| chapter | its algorithm lives in (the private files a module re-exports in brackets) |", "|---|---|"]
    for slug, title in chs:
        files = ", ".join(_files(m) for m in uses[slug])
        lines.append(f"| {title} (`{slug}`) | {files} |")
    return "\n".join(lines)


def write() -> list[Path]:
    changed = []
    block = f"{BEGIN}\n{tables()}\n{END}"
    for path in TARGETS:
        text = path.read_text()
        if BEGIN not in text or END not in text:
            raise ValueError(f"{path.relative_to(ROOT)}: no {BEGIN} ... {END} block to fill")
        head, rest = text.split(BEGIN, 1)
        new = head + block + rest.split(END, 1)[1]
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed


if __name__ == "__main__":
    if "--write" in sys.argv:
        for p in write():
            print("rewrote", p.relative_to(ROOT))
    else:
        print(tables())
