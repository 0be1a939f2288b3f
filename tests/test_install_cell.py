"""Every chapter's setup (install) cell agrees with ``_config.yml`` (tools/stamp_install_cell.py).

Fast, static checks; the cell is exercised for real by ``tests/test_colab_simulation.py``.
"""

import sys
from pathlib import Path

import jupytext
import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import stamp_install_cell as stamp  # noqa: E402

CHAPTERS = sorted((ROOT / "book" / "chapters").glob("*.ipynb"))


def test_install_source_comes_from_config():
    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    url = cfg["repository"]["url"].rstrip("/")
    assert stamp.install_source() == f"git+{url}@{cfg['repository']['branch']}"
    assert cfg["repository"]["branch"] == "main"
    assert stamp.install_source("0123abc") == f"git+{url}@0123abc"
    cell = stamp.install_cell_source()
    assert stamp.install_source() in cell and "-U" not in cell and "--upgrade" not in cell
    assert stamp.ENV_VAR in cell


def test_setup_cell_is_valid_python_and_pins_the_ref():
    import ast

    src = stamp.install_cell_source("gnn_minimax_rates", ref="f" * 40)
    ast.parse(src)
    assert f"@{'f' * 40}" in src
    assert "--no-deps" in src and "find_spec" in src
    assert "import graphdatascience" not in src, "importing a data carrier would need its database client"


def test_data_packages_are_pinned():
    pins = stamp.data_pins()
    for slug, packages in stamp.DATA_PACKAGES.items():
        for _module, dist in packages:
            assert dist.lower() in pins, f"{slug}: {dist} is not pinned in requirements-data.txt"
    reader = (ROOT / "requirements.txt").read_text().lower()
    for requirement in pins.values():
        assert requirement.lower() not in reader, (
            f"{requirement} belongs in requirements-data.txt only (installed with --no-deps)"
        )


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_install_cell_matches_config(path):
    expected = stamp.install_cell_source(path.stem)
    for nb in (nbformat.read(path, as_version=4), jupytext.read(path.with_suffix(".md"))):
        cell = stamp.first_code_cell(nb)
        assert cell.source.strip() == expected.strip(), (
            f"{path.stem}: setup cell disagrees with _config.yml; run tools/stamp_install_cell.py"
        )
        assert "hide-cell" in cell.metadata.get("tags", [])
    outputs = stamp.first_code_cell(nbformat.read(path, as_version=4)).get("outputs", [])
    assert outputs == [], f"{path.stem}: the setup cell printed something where paperlib is installed"
