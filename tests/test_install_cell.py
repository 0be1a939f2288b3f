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


def test_setup_cell_is_short_and_collapsed_in_colab():
    """Colab shows a cell with a ``#@title ... {display-mode: "form"}`` first line and ``cellView: form`` as its title
    only (it ignores the book's ``hide-cell`` tag); the cell itself stays short."""
    src = stamp.install_cell_source("gnn_minimax_rates", ref="f" * 40)
    first = src.splitlines()[0]
    assert first.startswith("#@title ") and 'display-mode: "form"' in first
    assert len(src.splitlines()) <= 26, f"the setup cell has {len(src.splitlines())} lines"
    assert len(src.splitlines()) < len(stamp.legacy_install_cell_source("gnn_minimax_rates").splitlines())
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("old")]
    assert stamp.stamp_notebook(nb, "gnn_minimax_rates")
    meta = nb.cells[0].metadata
    assert meta["cellView"] == "form" and "hide-cell" in meta["tags"]
    assert not stamp.stamp_notebook(nb, "gnn_minimax_rates"), "stamping twice changes nothing"


def test_setup_cell_reports_one_message_when_pip_fails(tmp_path, monkeypatch):
    """Outside IPython the cell raises SetupFailed with the short message test_colab_simulation expects."""
    src = stamp.install_cell_source(ref="f" * 40).replace("import paperlib", "")
    monkeypatch.setenv(stamp.ENV_VAR, str(tmp_path / "does-not-exist"))
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a, **k: None)
    with pytest.raises(Exception) as err:
        exec(compile(src, "setup-cell", "exec"), {"__name__": "setup_cell"})
    message = str(err.value)
    assert type(err.value).__name__ == "SetupFailed"
    assert message.startswith("Setup failed: could not install") and "Fix: run  %pip install" in message
    assert len(message.splitlines()) <= 4


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_install_cell_matches_config(path):
    expected = stamp.install_cell_source(path.stem)
    for nb in (nbformat.read(path, as_version=4), jupytext.read(path.with_suffix(".md"))):
        cell = stamp.first_code_cell(nb)
        if cell.source.strip() == stamp.legacy_install_cell_source(path.stem).strip():
            pytest.xfail(f"{path.stem}: still the 33-line setup cell; run `python tools/stamp_install_cell.py`")
        assert cell.metadata.get("cellView") == "form", f"{path.stem}: run tools/stamp_install_cell.py"
        assert cell.source.strip() == expected.strip(), (
            f"{path.stem}: setup cell disagrees with _config.yml; run tools/stamp_install_cell.py"
        )
        assert "hide-cell" in cell.metadata.get("tags", [])
    outputs = stamp.first_code_cell(nbformat.read(path, as_version=4)).get("outputs", [])
    assert outputs == [], f"{path.stem}: the setup cell printed something where paperlib is installed"
