"""The layout of ``paperlib`` (issue 25): by field, imports one way, small modules, a current reference.

* every module file has at most :data:`MAX_LINES` lines;
* imports point one way: chapters -> field subpackages -> ``paperlib.models`` -> ``paperlib.core``;
  a field never imports another field, ``models`` imports only ``core``, ``core`` nothing above it
  (checked on the source with ``ast``, relative imports resolved);
* each subpackage's ``__all__`` lists its public modules and their public names (a name defined in
  two modules of one subpackage stays module-qualified), and every listed name exists;
* chapters import public modules only (no module path with a leading underscore);
* the API reference has a page per subpackage documenting each public module, every chapter links to
  the functions it calls (``tools/api_links.py``), and the README's tables are current
  (``tools/package_table.py``).
"""

from __future__ import annotations

import ast
import collections
import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "lib" / "paperlib"
sys.path.insert(0, str(ROOT / "tools"))

import api_links  # noqa: E402
import package_table  # noqa: E402

MAX_LINES = 500
LAYER = {"core": 0, "models": 1}  # every other subpackage is a field, layer 2
SUBPACKAGES = package_table.subpackages()
FILES = sorted(PACKAGE.rglob("*.py"))


def _dotted(path: Path, package: Path = PACKAGE) -> str:
    rel = path.relative_to(package.parent).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _paperlib_imports(path: Path, package: Path = PACKAGE) -> list[tuple[int, str]]:
    """``(line, dotted module)`` of every paperlib import in ``path``, relative ones resolved."""
    here = _dotted(path, package).split(".")
    pkg = here if path.name == "__init__.py" else here[:-1]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "paperlib"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] == "paperlib":
                out.append((node.lineno, mod))
    return out


def _layer(sub: str) -> int:
    return LAYER.get(sub, 2)


def direction_violations(package: Path = PACKAGE) -> list[str]:
    """Every import in ``package`` that points up a layer or across fields, as readable lines."""
    bad = []
    for path in sorted(package.rglob("*.py")):
        parts = _dotted(path, package).split(".")
        if len(parts) < 2:
            if _paperlib_imports(path, package):
                bad.append(f"{path.name}: the top-level __init__ must stay import-free")
            continue
        sub = parts[1]
        for line, mod in _paperlib_imports(path, package):
            target = mod.split(".")
            if len(target) < 2:
                bad.append(f"{path}:{line} imports the top-level package {mod}")
            elif target[1] != sub and _layer(target[1]) >= _layer(sub):
                bad.append(f"{path}:{line}: paperlib.{sub} (layer {_layer(sub)}) imports {mod} "
                           f"(layer {_layer(target[1])})")
    return bad


def test_the_subpackages_are_core_models_and_fields():
    assert SUBPACKAGES[:2] == ["core", "models"] and len(SUBPACKAGES) >= 10
    loose = [p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert not loose, f"modules outside any subpackage: {loose}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_exceeds_the_line_limit(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(ROOT)} has {n} lines (limit {MAX_LINES}): split it by role"


def test_imports_point_one_way():
    bad = direction_violations()
    assert not bad, "imports must point chapters -> fields -> models -> core:\n" + "\n".join(bad)


@pytest.mark.parametrize("module, source, caught", [
    ("core/bad.py", "from ..online import bandits\n", True),          # infrastructure importing a field
    ("models/bad.py", "from ..geometry.relu_dag import x\n", True),   # shared models importing a field
    ("online/bad.py", "from ..graphs import lasso\n", True),          # a field importing another field
    ("online/bad.py", "import paperlib.graphs.lasso\n", True),        # the same, absolute
    ("online/ok.py", "from ..models import attention\nfrom . import bandits\n", False),
    ("models/ok.py", "from ..core._validation import check_int\n", False),
])
def test_the_direction_check_catches_forged_imports(tmp_path, module, source, caught):
    root = tmp_path / "paperlib"
    for sub in ("core", "models", "online", "graphs", "geometry"):
        (root / sub).mkdir(parents=True, exist_ok=True)
        (root / sub / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / module).write_text(source)
    assert bool(direction_violations(root)) is caught


@pytest.mark.parametrize("sub", SUBPACKAGES)
def test_subpackage_all_lists_its_modules_and_public_names(sub):
    pkg = importlib.import_module(f"paperlib.{sub}")
    modules = sorted(p.stem for p in (PACKAGE / sub).glob("*.py") if not p.name.startswith("_"))
    counts = collections.Counter()
    for m in modules:
        counts.update(importlib.import_module(f"paperlib.{sub}.{m}").__all__)
    # a name defined twice, or named like one of the modules, stays module-qualified (it would shadow it)
    expected = set(modules) | {n for n, c in counts.items() if c == 1 and n not in modules}
    assert set(pkg.__all__) == expected, (
        f"paperlib.{sub}.__all__: missing {sorted(expected - set(pkg.__all__))}, "
        f"extra {sorted(set(pkg.__all__) - expected)}")
    for name in pkg.__all__:
        assert not name.startswith("_") and hasattr(pkg, name), f"paperlib.{sub}.{name}"
    for m in modules:
        mod = importlib.import_module(f"paperlib.{sub}.{m}")
        for name in mod.__all__:
            assert not name.startswith("_") and hasattr(mod, name), f"paperlib.{sub}.{m}.{name}"


@pytest.mark.parametrize("slug", api_links.slugs())
def test_chapters_import_public_modules_only(slug):
    from freshness import _code_cells, _imports_of

    mods = set()
    for src in _code_cells(ROOT / "book" / "chapters" / f"{slug}.md"):
        mods |= _imports_of(src)
    private = sorted(m for m in mods if any(p.startswith("_") for p in m.split(".")))
    assert not private, f"{slug} imports private modules {private}: import from the public module"


@pytest.mark.parametrize("sub", SUBPACKAGES)
def test_api_page_documents_every_public_module(sub):
    page = (ROOT / "book" / "api" / f"{sub}.md").read_text()
    assert f".. automodule:: paperlib.{sub}\n" in page
    for p in sorted((PACKAGE / sub).glob("*.py")):
        if not p.name.startswith("_"):
            assert f".. automodule:: paperlib.{sub}.{p.stem}\n" in page, f"book/api/{sub}.md lacks {p.stem}"


@pytest.mark.parametrize("slug", api_links.slugs())
def test_chapter_links_the_functions_it_calls(slug):
    text = (ROOT / "book" / "chapters" / f"{slug}.md").read_text()
    assert api_links.MARK in text, f"{slug}: no API links: run python tools/api_links.py --write"
    assert api_links.rewrite(slug, text) == text, f"{slug}: API links stale: run python tools/api_links.py --write"
    assert "{py:obj}`~paperlib." in text


def test_readme_and_api_index_tables_are_current():
    block = f"{package_table.BEGIN}\n{package_table.tables()}\n{package_table.END}"
    for path in package_table.TARGETS:
        assert block in path.read_text(), f"{path.relative_to(ROOT)}: run python tools/package_table.py --write"
