"""pytest configuration shared by the unit tests and the nbval run over the chapters."""

import os
import sys
from pathlib import Path

# Chapters and tests run JAX on the CPU: skip the GPU probe (and its stderr warning).
os.environ.setdefault("JAX_PLATFORMS", "cpu")

#: XLA flags for the *test process only*: most unit-test time is XLA compiling small programs, and LLVM's
#: optimisation passes are most of a compile. Level 0 cuts the unit tests' time by about a third; the tests check
#: values against references and tolerances, not speed. The chapters never see it: the flags are restored before
#: any notebook kernel starts (nbval's kernels are subprocesses that inherit ``os.environ``), so every chapter runs
#: under CI exactly as a reader runs it. ``BOOK_TEST_XLA_FULL_OPT=1`` compiles the tests at the default level.
TEST_XLA_FLAGS = "--xla_backend_optimization_level=0"


def _compile_test_programs_fast():
    if os.environ.get("BOOK_TEST_XLA_FULL_OPT") == "1":
        return
    previous = os.environ.get("XLA_FLAGS")
    os.environ["XLA_FLAGS"] = f"{previous} {TEST_XLA_FLAGS}" if previous else TEST_XLA_FLAGS
    try:
        import jax

        jax.jit(lambda x: x + 1)(0.0).block_until_ready()  # XLA parses its flags once, at the first compile
    finally:
        if previous is None:
            os.environ.pop("XLA_FLAGS", None)
        else:
            os.environ["XLA_FLAGS"] = previous


_compile_test_programs_fast()

# nbval compares printed numbers within a stated tolerance, and text and claim verdicts exactly
# (tools/nbval_portable.py), so the committed outputs pass on any processor class.
sys.path.insert(0, str(Path(__file__).parent / "tools"))
pytest_plugins = ["nbval_portable"]


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


def pytest_report_header(config):
    """Name this processor's class: printed numbers may differ from the committed ones in their last digits,
    which the portable comparison (``tools/nbval_portable.py``) allows; text and claim verdicts may not."""
    import machine_reference

    return f"processor: widest vector instruction set {machine_reference.vector_isa() or 'not x86'}; nbval compares " \
           f"outputs portably (tools/nbval_portable.py)"


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
