"""Simulate Colab readers: every chapter alone, in a fresh environment that holds only Colab's stack.

**The environment.** Colab preinstalls numpy, scipy, pandas, matplotlib, seaborn, jax, optax,
scikit-learn, networkx, numba, pyarrow and the Jupyter kernel machinery (ipykernel, nbclient,
nbconvert), but not paperlib, not this book's data packages (graphdatascience), and nothing of the
developer stack (jupyter-book, Sphinx, selenium, pytest, jupytext). We build that environment offline
and in about a second: a folder of symlinks to exactly those distributions and their dependencies
(:data:`COLAB_STACK`, closed under ``Requires-Dist``) taken from the current environment, made
visible to a fresh ``venv`` by one ``.pth`` line. That view is built once per session and shared; each
chapter gets its own empty venv on top of it, so **every** chapter's setup cell really installs
paperlib (and its data packages) itself.

**The install.** Nothing is downloaded: the setup cell's pip runs with ``PIP_NO_INDEX=1`` and
``PIP_FIND_LINKS`` pointing at a folder holding a wheel of paperlib built from this checkout and
wheels of the data packages rebuilt from their installed files; ``PAPERLIB_SOURCE`` (the override the
setup cell honours) names the paperlib wheel. Installing with ``--no-index`` also proves that no
dependency needed an upgrade. ``PYTHONPATH`` is cleared in every subprocess (it would let the fresh
environment see this checkout's ``lib/``).

**The runs.** All chapters execute in one module-scoped batch, two at a time (the CI machine has two
cores), each with a fresh kernel; per-chapter tests then check that it ran to the end, that paperlib
was installed into its own fresh environment, and that every claim check printed PASS; and that its
outputs equal the committed ones under strict nbval's rules (stdout and text/HTML displays, sanitized
with ``tests/nbval_sanitize.cfg``; images and stderr not compared). The Colab view holds the very same
package versions as the developer environment, so this comparison is as strict as the nbval pass; if
it keeps holding, CI could drop the separate ``--nbval`` execution of the chapters and save a full run
of the book. A second test
makes the source unreachable and checks that the setup cell prints one clear message, that the
notebook stops there and that no other cell runs (no cascade of ``NameError``).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import nbformat
import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from paperlib.claims import parse_claim_line

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import stamp_install_cell as stamp  # noqa: E402

CHAPTERS = ROOT / "book" / "chapters"
SLUGS = sorted(p.stem for p in CHAPTERS.glob("*.ipynb"))
if os.environ.get("BOOK_COLAB_CHAPTERS"):  # e.g. BOOK_COLAB_CHAPTERS="gnn_minimax_rates" while developing
    SLUGS = [s for s in SLUGS if s in os.environ["BOOK_COLAB_CHAPTERS"].split()]

#: What Colab preinstalls that the chapters rely on (their dependencies come along).
COLAB_STACK = [
    "numpy", "scipy", "pandas", "pyarrow", "matplotlib", "seaborn", "jax", "jaxlib", "optax",
    "scikit-learn", "networkx", "numba", "ipykernel", "ipython", "nbclient", "nbconvert", "nbformat",
    "pip", "setuptools",
]
#: What must NOT be visible in the simulated Colab (the developer stack, paperlib, the data carriers).
FORBIDDEN = ["paperlib", "graphdatascience", "neo4j", "sphinx", "jupyter_book", "myst_nb", "selenium",
             "pytest", "nbval", "jupytext", "hypothesis"]
PARALLEL = int(os.environ.get("BOOK_COLAB_PARALLEL", "2"))
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


@pytest.fixture(scope="module")
def colab_runs(colab):
    """Every chapter, executed once, ``PARALLEL`` at a time."""
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        futures = {s: pool.submit(run_chapter, colab, s, colab["base"] / "runs" / s) for s in SLUGS}
        runs = {s: f.result() for s, f in futures.items()}
    wall = time.perf_counter() - t0
    per = ", ".join(f"{s} {r['elapsed']:.0f} s ({r['cpu']:.0f} s CPU)" for s, r in runs.items())
    cpu = sum(r["cpu"] for r in runs.values())
    print(f"\nColab simulation: {len(SLUGS)} chapters in {wall:.0f} s wall, {cpu:.0f} s CPU, "
          f"{PARALLEL} at a time ({per})")
    return runs


# ---------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------

def test_colab_view_holds_only_colab_stack(colab, tmp_path):
    py = make_fresh_env(tmp_path / "env", colab["view"])
    probe = ("import importlib.util as u, sys; "
             "print(' '.join(m for m in sys.argv[1:] if u.find_spec(m) is not None))")
    visible = subprocess.run([str(py), "-c", probe, *FORBIDDEN, "numpy", "jax", "sklearn", "nbclient"],
                             capture_output=True, text=True, check=True, env=clean_env()).stdout.split()
    leaked = [m for m in FORBIDDEN if m in visible]
    assert not leaked, f"the simulated Colab environment exposes {leaked}"
    assert {"numpy", "jax", "sklearn", "nbclient"} <= set(visible)


def _stream_lines(nb) -> list[str]:
    return [line for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
            if o.get("output_type") == "stream" for line in o.get("text", "").splitlines()]


@pytest.mark.parametrize("slug", SLUGS)
def test_chapter_runs_unmodified_in_fresh_colab_environment(colab_runs, slug):
    run = colab_runs[slug]
    errors = [o for c in run["nb"].cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert run["rc"] == 0 and not errors, (
        f"{slug} failed in a fresh Colab-like environment: "
        f"{[(e.get('ename'), e.get('evalue')) for e in errors]}\n{run['stderr']}"
    )
    assert run["paperlib"].startswith(str(run["env"].resolve())), (
        f"{slug}: paperlib imported from {run['paperlib']!r}, not installed into the fresh environment"
    )
    setup = stamp.first_code_cell(run["nb"])
    assert not setup.get("outputs"), f"{slug}: the setup cell printed {setup.get('outputs')}"
    verdicts = [r for r in map(parse_claim_line, _stream_lines(run["nb"])) if r]
    assert verdicts and all(r.passed for r in verdicts), f"{slug}: claim checks {verdicts}"


def _sanitizers():
    import configparser

    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "tests" / "nbval_sanitize.cfg")
    return [(re.compile(cfg[s]["regex"]), cfg[s]["replace"]) for s in cfg.sections()]


def _comparable(nb) -> list[list[str]]:
    """What strict nbval compares, per code cell: stdout and the text/HTML of displays, sanitized."""
    subs = _sanitizers()

    def clean(text):
        for rx, rep in subs:
            text = rx.sub(rep, text)
        return text

    cells = []
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        outs = []
        tags = c.metadata.get("tags", [])
        if "nbval-ignore-output" in tags or "nbval-skip" in tags:  # nbval does not compare these either
            cells.append(["(not compared)"])
            continue
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream" and o.get("name") == "stdout":
                outs.append(clean(o.get("text", "")))
            for mime, data in sorted(o.get("data", {}).items()) if "data" in o else []:
                if not mime.startswith("image/") and "widget" not in mime:
                    outs.append(f"{mime}: {clean(data if isinstance(data, str) else ''.join(data))}")
        cells.append(outs)
    return cells


@pytest.mark.parametrize("slug", SLUGS)
def test_colab_outputs_match_committed_outputs(colab_runs, slug):
    """The fresh-environment run reproduces the committed outputs exactly (what strict nbval checks)."""
    run = colab_runs[slug]
    if run["rc"] != 0:
        pytest.skip("the chapter did not run (see the test above)")
    committed = _comparable(nbformat.read(CHAPTERS / f"{slug}.ipynb", as_version=4))
    fresh = _comparable(run["nb"])
    diff = [i for i, (a, b) in enumerate(zip(committed, fresh)) if a != b]
    assert len(committed) == len(fresh) and not diff, (
        f"{slug}: code cells {diff[:5]} differ from the committed outputs; first: "
        f"{committed[diff[0]] if diff else ''!r} != {fresh[diff[0]] if diff else ''!r}"
    )


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
