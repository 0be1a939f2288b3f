"""pytest configuration shared by the unit tests and the nbval run over the chapters."""

import os

# Chapters and tests run JAX on the CPU: skip the GPU probe (and its stderr warning).
os.environ.setdefault("JAX_PLATFORMS", "cpu")


def pytest_collectstart(collector):
    # nbval: stderr differs between machines (warnings); correctness lives in the claim cells.
    if getattr(collector, "skip_compare", None) is not None:
        collector.skip_compare = collector.skip_compare + ("stderr",)


import pytest  # noqa: E402


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
