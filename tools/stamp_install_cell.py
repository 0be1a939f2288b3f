#!/usr/bin/env python
"""Stamp the setup (install) cell of every chapter from ``_config.yml`` (one source of truth).

The first code cell of each chapter (tagged ``hide-cell``, and ``cellView: form`` with a ``#@title`` line so
that Colab shows only its title) makes a fresh environment (Colab, Binder, a
bare Jupyter) able to run the chapter:

* if :mod:`paperlib` cannot be found, it pip-installs it from the repository named in ``_config.yml``
  (``git+<repository.url>@<ref>``). In the committed chapters ``<ref>`` is ``repository.branch``; the
  launch notebooks that the Colab and Binder buttons open (``tools/launch_notebooks.py``) are stamped
  with the **commit sha of the build**, so a reader gets exactly the code that produced the outputs;
* it pip-installs the chapter's *data packages* (:data:`DATA_PACKAGES`: wheels that only carry a data
  set, e.g. Cora inside ``graphdatascience``) with ``--no-deps``, at the version pinned in
  ``requirements-data.txt``, so no database client comes along;
* if an install fails it prints **one** message (what failed, and the one command that fixes it) and
  stops the notebook there: the error is raised as ``SetupFailed`` and displayed without a traceback,
  and Jupyter/Colab's "Run all" stops at the first error, so no cascade of ``NameError`` follows;
* it never upgrades anything (no ``-U``; paperlib's dependencies are lower bounds only) and prints
  nothing when everything is already installed, so strict nbval sees an empty output.

Modules are looked up with ``importlib.util.find_spec`` and never imported here (importing
``graphdatascience`` would need the Neo4j client that ``--no-deps`` leaves out).

``PAPERLIB_SOURCE`` overrides the paperlib source (a local path, a wheel, a fork; several pip
arguments are allowed, e.g. ``--no-index /path/to/checkout``): the Colab simulation test installs from
the local checkout that way. Standard ``PIP_*`` variables (``PIP_NO_INDEX``, ``PIP_FIND_LINKS``) apply to
the data packages.

Usage: ``python tools/stamp_install_cell.py`` (rewrites only the first code cell of each chapter's
``.md`` and ``.ipynb``; outputs are kept). ``tests/test_install_cell.py`` fails when a chapter disagrees.
To give a chapter a data package, add a row to :data:`DATA_PACKAGES`, pin its version in
``requirements-data.txt``, and re-run this script.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "book" / "chapters"
DATA_REQUIREMENTS = ROOT / "requirements-data.txt"
ENV_VAR = "PAPERLIB_SOURCE"

#: Per chapter: the data packages its setup cell installs with ``--no-deps``, as
#: ``(import name, distribution name)``; the version comes from ``requirements-data.txt``.
DATA_PACKAGES: dict[str, list[tuple[str, str]]] = {
    "gnn_minimax_rates": [("graphdatascience", "graphdatascience")],  # Cora's parquet files
}


def repository() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]


def install_source(ref: str | None = None) -> str:
    """``git+<repository.url>@<ref>`` (default ref: ``repository.branch`` of ``_config.yml``)."""
    repo = repository()
    url, branch = repo["url"].rstrip("/"), repo.get("branch", "main")
    return f"git+{url}@{ref or branch}"


def data_pins() -> dict[str, str]:
    """``{distribution name (lower case): "name==version"}`` from ``requirements-data.txt``."""
    pins = {}
    for line in DATA_REQUIREMENTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*==\s*([A-Za-z0-9_.\-+!]+)", line)
        if m:
            pins[m[1].lower()] = f"{m[1]}=={m[2]}"
    return pins


def data_requirements(slug: str) -> list[tuple[str, str]]:
    """``[(import name, "dist==version"), ...]`` for one chapter."""
    pins = data_pins()
    out = []
    for module, dist in DATA_PACKAGES.get(slug, []):
        if dist.lower() not in pins:
            raise SystemExit(f"{slug}: data package {dist} has no pin in {DATA_REQUIREMENTS.name}")
        out.append((module, pins[dist.lower()]))
    return out


#: The setup cell: collapsed to its title in Colab (``#@title ... {display-mode: "form"}`` and the cell metadata
#: ``cellView: form``), folded on the book page (``hide-cell``), lines of at most 88 characters.
_TEMPLATE = '''\
#@title Setup: installs the book's package if it is missing {{ display-mode: "form" }}
# Stamped by tools/stamp_install_cell.py from _config.yml; {env} overrides it.
import importlib, importlib.util, os, shlex, subprocess, sys
_source = os.environ.get(
    "{env}", {source!r})
_data = {data!r}  # data packages, installed --no-deps
class SetupFailed(Exception):  # one message, no traceback; "Run all" stops here
    pass
def _pip(*args):
    cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-color", *args]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        why = ([ln for ln in run.stderr.splitlines() if ln.strip()] or ["failed"])[-1]
        what = " ".join(args)
        raise SetupFailed(f"Setup failed: could not install {{what}}\\n  ({{why.strip()}})\\n"
                          f"Fix: run  %pip install {{what}}  in a new cell, then run all again.")
    importlib.invalidate_caches()
if "get_ipython" in globals():
    get_ipython().set_custom_exc((SetupFailed,), lambda sh, et, ev, tb, tb_offset=None:
                                 sh._showtraceback(et, ev, [str(ev)]))
if importlib.util.find_spec("paperlib") is None:
    _pip(*shlex.split(_source))
for _module, _requirement in _data:
    if importlib.util.find_spec(_module) is None:
        _pip("--no-deps", _requirement)
import paperlib'''


_LEGACY_TEMPLATE = '''\
# Setup for Colab, Binder or a bare Jupyter: install the book's package (and data) only if missing.
# Stamped by tools/stamp_install_cell.py; PAPERLIB_SOURCE overrides the source. Prints nothing if all is there.
def _book_setup(source={source!r}, data={data!r}):
    import importlib, importlib.util, os, shlex, subprocess, sys

    class SetupFailed(Exception):
        """Shown as one message, without a traceback; "Run all" stops here."""

    def pip_install(args):
        run = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-color", *args], capture_output=True, text=True)
        if run.returncode != 0:
            why = ([ln for ln in run.stderr.splitlines() if ln.strip()] or ["pip failed"])[-1].strip()
            raise SetupFailed(
                f"Setup failed: could not install {{' '.join(args)}}\\n  ({{why}})\\n"
                f"Fix: run  %pip install {{' '.join(args)}}  in a new cell, then run the notebook again from the top."
            )
        importlib.invalidate_caches()

    shell = globals().get("get_ipython", lambda: None)()
    if shell is not None:
        shell.set_custom_exc((SetupFailed,), lambda sh, etype, value, tb, tb_offset=None:
                             sh._showtraceback(etype, value, [str(value)]))
    if importlib.util.find_spec("paperlib") is None:
        pip_install(shlex.split(os.environ.get("{env}", source)))
    for module, requirement in data:
        if importlib.util.find_spec(module) is None:
            pip_install(["--no-deps", requirement])


_book_setup()
del _book_setup
import paperlib'''


def install_cell_source(slug: str | None = None, ref: str | None = None) -> str:
    """The exact source of the setup cell of chapter ``slug`` (installing paperlib at ``ref``)."""
    data = data_requirements(slug) if slug else []
    return _TEMPLATE.format(source=install_source(ref), data=data, env=ENV_VAR)


def legacy_install_cell_source(slug: str | None = None, ref: str | None = None) -> str:
    """The setup cell this tool stamped before the Colab form (33 lines, shown in full by Colab). Chapters that
    still carry it are re-stamped by ``python tools/stamp_install_cell.py``; ``tests/test_install_cell.py``
    marks them as expected failures until then."""
    data = data_requirements(slug) if slug else []
    return _LEGACY_TEMPLATE.format(source=install_source(ref), data=data, env=ENV_VAR)


def mark_setup_cell(cell) -> bool:
    """Fold the setup cell on the book page (``hide-cell``) and collapse it to its title in Colab
    (``cellView: form``); return whether the metadata changed."""
    changed = False
    tags = cell.metadata.setdefault("tags", [])
    if "hide-cell" not in tags:
        tags.append("hide-cell")
        changed = True
    if cell.metadata.get("cellView") != "form":
        cell.metadata["cellView"] = "form"
        changed = True
    return changed


def first_code_cell(nb):
    for cell in nb.cells:
        if cell.cell_type == "code":
            return cell
    return None


def stamp_notebook(nb, slug: str, ref: str | None = None) -> bool:
    """Rewrite the setup cell of an in-memory notebook; return whether it changed."""
    cell = first_code_cell(nb)
    if cell is None:
        raise SystemExit(f"{slug}: no code cell")
    src, changed = install_cell_source(slug, ref), False
    if cell.source != src:
        cell.source = src
        changed = True
    return mark_setup_cell(cell) or changed


def stamp(path: Path) -> bool:
    """Rewrite the setup cell of one chapter file (``.md`` via jupytext, ``.ipynb`` via nbformat)."""
    import jupytext

    nb = jupytext.read(path) if path.suffix == ".md" else nbformat.read(path, as_version=4)
    changed = stamp_notebook(nb, path.stem)
    if changed:
        if path.suffix == ".md":
            jupytext.write(nb, path, fmt="md:myst")
        else:
            nbformat.write(nb, path)
    return changed


def main(argv: list[str] | None = None) -> int:
    slugs = set(argv if argv is not None else sys.argv[1:])
    for path in sorted(CHAPTERS.glob("*.md")) + sorted(CHAPTERS.glob("*.ipynb")):
        if slugs and path.stem not in slugs:
            continue
        if stamp(path):
            print(f"stamped {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
