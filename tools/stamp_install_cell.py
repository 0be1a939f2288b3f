#!/usr/bin/env python
"""Stamp the Colab install cell of every chapter from ``_config.yml`` (one source of truth).

The first code cell of each chapter (tagged ``hide-cell``) imports :mod:`paperlib` and, only if that
fails (Colab, a bare Jupyter), pip-installs it from the repository named in ``_config.yml``
(``repository.url`` at ``repository.branch``). The environment variable ``PAPERLIB_SOURCE`` overrides
the source (a local path, a wheel, a fork): that is how the offline Colab simulation test installs
from the local checkout. No ``-U`` and no pins: Colab's numpy/jax/matplotlib are never upgraded.

Usage: ``python tools/stamp_install_cell.py`` (rewrites the first code cell of each chapter's ``.md``
and ``.ipynb``; outputs are kept). ``tests/test_install_cell.py`` fails when a chapter disagrees.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "book" / "chapters"
ENV_VAR = "PAPERLIB_SOURCE"


def install_source() -> str:
    """``git+<repository.url>@<repository.branch>`` from ``_config.yml``."""
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    repo = cfg["repository"]
    url, branch = repo["url"].rstrip("/"), repo.get("branch", "main")
    return f"git+{url}@{branch}"


def install_cell_source() -> str:
    """The exact source of the install cell."""
    return (
        "# Colab and other fresh environments: install the book's shared package only if it is missing.\n"
        f"# (Stamped by tools/stamp_install_cell.py from _config.yml; {ENV_VAR} overrides the source.)\n"
        "try:\n"
        "    import paperlib\n"
        "except ImportError:\n"
        "    import os\n"
        f'    _source = os.environ.get("{ENV_VAR}", "{install_source()}")\n'
        "    %pip install -q {_source}\n"
        "    import paperlib"
    )


def first_code_cell(nb):
    for cell in nb.cells:
        if cell.cell_type == "code":
            return cell
    return None


def stamp(path: Path) -> bool:
    """Rewrite the install cell of one chapter (``.md`` via jupytext, ``.ipynb`` via nbformat)."""
    import jupytext

    src = install_cell_source()
    changed = False
    if path.suffix == ".md":
        nb = jupytext.read(path)
    else:
        nb = nbformat.read(path, as_version=4)
    cell = first_code_cell(nb)
    if cell is None:
        raise SystemExit(f"{path}: no code cell")
    if cell.source != src:
        cell.source = src
        changed = True
    tags = cell.metadata.setdefault("tags", [])
    if "hide-cell" not in tags:
        tags.append("hide-cell")
        changed = True
    if changed:
        if path.suffix == ".md":
            jupytext.write(nb, path, fmt="md:myst")
        else:
            nbformat.write(nb, path)
    return changed


def main() -> int:
    for path in sorted(CHAPTERS.glob("*.md")) + sorted(CHAPTERS.glob("*.ipynb")):
        if stamp(path):
            print(f"stamped {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
