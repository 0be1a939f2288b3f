"""A simulated Colab environment, offline: what the chapters' CI run and the Colab tests execute in.

Colab preinstalls numpy, scipy, pandas, matplotlib, seaborn, jax, optax, scikit-learn, networkx,
numba, pyarrow and the Jupyter kernel machinery, but not paperlib, not this book's data packages
(graphdatascience), and nothing of the developer stack (jupyter-book, Sphinx, selenium, pytest,
jupytext). :func:`build_colab_view` makes that environment in about a second: a folder of symlinks to
exactly those distributions and their dependencies (:data:`COLAB_STACK`, closed under
``Requires-Dist``) taken from the current environment; :func:`make_fresh_env` puts an empty ``venv`` on
top of it (one ``.pth`` line). :func:`build_wheelhouse` builds a paperlib wheel from this checkout and
re-packs the data packages as wheels, so a chapter's setup cell installs them with pip **offline**
(``PIP_NO_INDEX=1``, ``PIP_FIND_LINKS``; ``PAPERLIB_SOURCE`` names the paperlib wheel).

:func:`install_kernel` registers a Jupyter kernel, ``colab-sim``, whose launcher creates a **fresh**
venv on the view for every kernel it starts. ``conftest.py`` points strict nbval at that kernel
(``pytest --nbval --colab-kernel``), so CI executes each chapter exactly once: under nbval, in a fresh
Colab-like environment in which the chapter's own setup cell must install paperlib (paperlib is not in
the view, so a chapter that runs at all has installed it).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import stamp_install_cell as stamp  # noqa: E402

KERNEL_NAME = "colab-sim"

#: What Colab preinstalls that the chapters rely on (their dependencies come along).
COLAB_STACK = [
    "numpy", "scipy", "pandas", "pyarrow", "matplotlib", "seaborn", "jax", "jaxlib", "optax",
    "scikit-learn", "networkx", "numba", "ipykernel", "ipython", "nbclient", "nbconvert", "nbformat",
    "pip", "setuptools",
]
#: What must NOT be visible in the simulated Colab (the developer stack, paperlib, the data carriers).
FORBIDDEN = ["paperlib", "graphdatascience", "neo4j", "sphinx", "jupyter_book", "myst_nb", "selenium",
             "pytest", "nbval", "jupytext", "hypothesis"]

def clean_env(**extra) -> dict:
    """The environment of every subprocess: no PYTHONPATH (it would expose lib/), no seed override."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"PYTHONPATH", "BOOK_SEED", "MPLBACKEND", "BOOK_CLAIMS_RECORD", "VIRTUAL_ENV"}
           and not k.startswith("PIP_")}
    env.update(JAX_PLATFORMS="cpu", PYTHONNOUSERSITE="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PIP_NO_INPUT="1", PYTHONDONTWRITEBYTECODE="1")
    env.update(extra)
    return env


# ---------------------------------------------------------------------------------------------
# The simulated Colab environment
# ---------------------------------------------------------------------------------------------

def _closure(names: list[str]) -> list:
    """The installed distributions ``names`` and everything they require (no extras), in this env."""
    marker_env = default_environment()
    seen, todo, out = set(), list(names), []
    while todo:
        name = canonicalize_name(todo.pop())
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            continue  # an optional platform dependency (e.g. appnope) that is not installed here
        out.append(dist)
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({**marker_env, "extra": ""}):
                todo.append(req.name)
    return out


def build_colab_view(view: Path) -> list[str]:
    """Symlink the top-level files of every distribution of the Colab stack into ``view``."""
    view.mkdir(parents=True)
    names = []
    for dist in _closure(COLAB_STACK):
        names.append(canonicalize_name(dist.metadata["Name"]))
        base = Path(dist.locate_file(""))
        tops = {Path(f).parts[0] for f in dist.files or [] if not str(f).startswith("..")}
        for top in tops:
            src, dst = base / top, view / top
            if src.exists() and not dst.exists() and top != "__pycache__":
                dst.symlink_to(src)
    return sorted(names)


def make_fresh_env(env_dir: Path, view: Path) -> Path:
    """A new venv (without pip of its own) that sees the Colab view; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, env=clean_env())
    py = env_dir / "bin" / "python"
    purelib = subprocess.check_output(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True, env=clean_env()
    ).strip()
    (Path(purelib) / "_colab_preinstalled.pth").write_text(f"{view}\n")
    return py


def _wheel_from_installed(dist_name: str, out: Path) -> Path:
    """Re-pack an installed distribution as a wheel (so the data packages install offline)."""
    dist = distribution(dist_name)
    base = Path(dist.locate_file(""))
    name, version = dist.metadata["Name"].replace("-", "_"), dist.version
    info = f"{name}-{version}.dist-info"
    wheel = out / f"{name}-{version}-py3-none-any.whl"
    rows = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in dist.files or []:
            rel = str(f)
            if rel.startswith("..") or "__pycache__" in rel or rel.endswith(("RECORD", "INSTALLER", "direct_url.json")):
                continue
            data = (base / rel).read_bytes()
            arc = rel if not rel.split("/")[0].endswith(".dist-info") else f"{info}/{rel.split('/', 1)[1]}"
            zf.writestr(arc, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            rows.append((arc, f"sha256={digest}", str(len(data))))
        rows.append((f"{info}/RECORD", "", ""))
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        zf.writestr(f"{info}/RECORD", buf.getvalue())
    return wheel


def build_wheelhouse(out: Path) -> Path:
    """A paperlib wheel built from this checkout (in a copy: nothing is written into the repo) and
    wheels of the data packages; returns the paperlib wheel."""
    src = out / "src"
    shutil.copytree(ROOT / "lib", src / "lib", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / f, src / f)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-index", "--no-build-isolation",
         "-w", str(out), str(src)],
        check=True, env=clean_env(), capture_output=True, text=True,
    )
    for requirement in stamp.data_pins().values():
        _wheel_from_installed(requirement.split("==")[0], out)
    (wheel,) = out.glob("paperlib-*.whl")
    return wheel



_LAUNCHER = """#!/bin/sh
# Start a kernel in a fresh venv on the simulated Colab view (tools/colab_env.py).
unset PYTHONPATH VIRTUAL_ENV BOOK_CLAIMS_RECORD
env_dir=$(mktemp -d "{base}/kernel-XXXXXX")/env
"{python}" -m venv --without-pip "$env_dir" || exit 1
purelib=$("$env_dir/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
echo "{view}" > "$purelib/_colab_preinstalled.pth"
exec "$env_dir/bin/python" -m ipykernel_launcher "$@"
"""


def install_kernel(base: Path) -> dict[str, str]:
    """Build the view and the wheelhouse under ``base`` and register the ``colab-sim`` kernel there.

    Returns the environment variables that make Jupyter (and nbval) find and use it:
    ``JUPYTER_PATH`` and, for the setup cells, the offline pip configuration.
    """
    base = Path(base)
    view, wheels = base / "site", base / "wheels"
    build_colab_view(view)
    wheels.mkdir(parents=True)
    paperlib_wheel = build_wheelhouse(wheels)
    launcher = base / "launch-kernel.sh"
    launcher.write_text(_LAUNCHER.format(base=base, python=sys.executable, view=view))
    launcher.chmod(0o755)
    spec_dir = base / "jupyter" / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    env = {
        "PAPERLIB_SOURCE": str(paperlib_wheel),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheels),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONNOUSERSITE": "1",
        "JAX_PLATFORMS": "cpu",
    }
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [str(launcher), "-f", "{connection_file}"],
        "display_name": "Python 3 (simulated Colab)",
        "language": "python",
        "env": env,
    }, indent=1))
    return {"JUPYTER_PATH": str(base / "jupyter"), **env}
