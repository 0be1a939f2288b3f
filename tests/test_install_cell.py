"""Every chapter's Colab install cell agrees with ``_config.yml`` (tools/stamp_install_cell.py)."""

import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import stamp_install_cell as stamp  # noqa: E402

CHAPTERS = sorted((ROOT / "book" / "chapters").glob("*.ipynb"))


def test_install_source_comes_from_config():
    import yaml

    cfg = yaml.safe_load((ROOT / "_config.yml").read_text())
    src = stamp.install_source()
    assert src == f"git+{cfg['repository']['url'].rstrip('/')}@{cfg['repository']['branch']}"
    assert cfg["repository"]["branch"] == "main"
    cell = stamp.install_cell_source()
    assert src in cell and "-U" not in cell and "--upgrade" not in cell


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_install_cell_matches_config(path):
    expected = stamp.install_cell_source()
    for nb in (nbformat.read(path, as_version=4), jupytext.read(path.with_suffix(".md"))):
        cell = stamp.first_code_cell(nb)
        assert cell.source.strip() == expected.strip(), (
            f"{path.stem}: install cell disagrees with _config.yml; run tools/stamp_install_cell.py"
        )
        assert "hide-cell" in cell.metadata.get("tags", [])
    outputs = stamp.first_code_cell(nbformat.read(path, as_version=4)).get("outputs", [])
    assert outputs == [], f"{path.stem}: the install cell printed something where paperlib is installed"
