"""pytest configuration shared by the unit tests and the nbval run over the chapters."""

import os

# Chapters and tests run JAX on the CPU: skip the GPU probe (and its stderr warning).
os.environ.setdefault("JAX_PLATFORMS", "cpu")


def pytest_collectstart(collector):
    # nbval: stderr differs between machines (warnings); correctness lives in the claim cells.
    if getattr(collector, "skip_compare", None) is not None:
        collector.skip_compare = collector.skip_compare + ("stderr",)
