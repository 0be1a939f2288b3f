"""pytest configuration shared by the unit tests and the nbval run over the chapters."""

import os

# Chapters and tests run JAX on the CPU: skip the GPU probe (and its stderr warning).
os.environ.setdefault("JAX_PLATFORMS", "cpu")


def pytest_collectstart(collector):
    # nbval: stderr differs between machines (warnings); correctness lives in the claim cells.
    if getattr(collector, "skip_compare", None) is not None:
        collector.skip_compare = collector.skip_compare + ("stderr",)


import pytest  # noqa: E402


def pytest_addoption(parser):
    parser.addoption(
        "--colab-kernel",
        action="store_true",
        help="run nbval's notebooks in a fresh simulated-Colab environment per notebook "
        "(tools/colab_env.py): the chapter's setup cell must install paperlib itself",
    )


def pytest_configure(config):
    if not config.getoption("--colab-kernel", default=False):
        return
    import atexit
    import shutil
    import sys
    import tempfile
    import time
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "tools"))
    import colab_env

    t0 = time.perf_counter()
    base = Path(tempfile.mkdtemp(prefix="colab-sim-"))
    atexit.register(shutil.rmtree, base, ignore_errors=True)
    env = colab_env.install_kernel(base)
    os.environ["JUPYTER_PATH"] = env["JUPYTER_PATH"]
    config.option.nbval_kernel_name = colab_env.KERNEL_NAME
    print(f"nbval kernel: {colab_env.KERNEL_NAME} (fresh simulated-Colab venv per notebook; "
          f"built in {time.perf_counter() - t0:.1f} s)")


@pytest.fixture
def x64():
    """Run one test with ``jax_enable_x64`` on, restoring the previous value afterwards.

    Test modules that compare against float64 references use
    ``pytestmark = pytest.mark.usefixtures("x64")`` instead of flipping the global flag at import,
    which would leak into every module collected after them.
    """
    import jax

    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)
