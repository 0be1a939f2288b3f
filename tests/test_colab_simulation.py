"""Simulate a Colab reader: one chapter notebook alone, in an environment without paperlib.

A fresh virtual environment is created that sees the third-party packages of the current one
(numpy, jax, matplotlib, ... as Colab has them preinstalled) but NOT paperlib. One chapter notebook is
copied alone into an empty directory and executed there with that environment's Python. Its first
cell finds no paperlib and pip-installs it, from the source named by ``PAPERLIB_SOURCE`` (here the
local checkout, with ``--no-index`` so nothing is downloaded: it also proves no dependency needed an
upgrade). The test then checks that paperlib was installed into the fresh environment, that the
notebook ran to the end, and that its claim cells printed PASS verdicts.
"""

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from paperlib.claims import parse_claim_line

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "book" / "chapters" / "test_time_scaling.ipynb"


@pytest.mark.skipif(not CHAPTER.exists(), reason="exemplar chapter not written yet")
def test_chapter_runs_unmodified_in_fresh_environment(tmp_path):
    env_dir = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True)
    py = env_dir / "bin" / "python"
    fresh_site = Path(
        subprocess.check_output([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True).strip()
    )
    # Third-party packages of the current environment, without processing its .pth files: the
    # editable paperlib install (a .pth/finder in site-packages) is therefore invisible.
    (fresh_site / "_colab_preinstalled.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    probe = subprocess.run([str(py), "-c", "import paperlib"], capture_output=True, text=True)
    assert probe.returncode != 0, "paperlib must not be importable before the notebook runs"

    work = tmp_path / "reader"
    work.mkdir()
    nb_path = work / CHAPTER.name
    shutil.copy(CHAPTER, nb_path)
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "BOOK_SEED", "MPLBACKEND"}}
    env.update(
        JAX_PLATFORMS="cpu",
        PAPERLIB_SOURCE=f"--no-index --no-build-isolation {ROOT}",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PYTHONNOUSERSITE="1",
    )
    subprocess.run(
        [str(py), "-m", "nbconvert", "--to", "notebook", "--execute", "--inplace",
         "--ExecutePreprocessor.timeout=600", str(nb_path)],
        check=True, cwd=work, env=env, capture_output=True, text=True,
    )
    installed = subprocess.run(
        [str(py), "-c", "import paperlib, pathlib; print(pathlib.Path(paperlib.__file__).resolve())"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert installed.startswith(str(fresh_site.resolve())), f"paperlib imported from {installed}"

    nb = nbformat.read(nb_path, as_version=4)
    lines = [
        line
        for c in nb.cells if c.cell_type == "code"
        for o in c.get("outputs", []) if o.get("output_type") == "stream"
        for line in o.get("text", "").splitlines()
    ]
    verdicts = [r for r in map(parse_claim_line, lines) if r]
    print(f"fresh-environment run printed {len(verdicts)} claim verdicts; paperlib installed at {installed}")
    assert verdicts and all(r.passed for r in verdicts)
