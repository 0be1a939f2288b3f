"""Every docstring example of ``paperlib`` runs and prints what it says (numpydoc ``Examples``).

The examples double as the valid baselines of the bad-input probe (``test_bad_input_probe.py``).
"""

import doctest
import importlib
import pkgutil

import pytest

import paperlib

MODULES = sorted(m.name.removeprefix("paperlib.") for m in pkgutil.walk_packages(paperlib.__path__, "paperlib."))


@pytest.mark.parametrize("modname", MODULES)
def test_docstring_examples(modname):
    mod = importlib.import_module(f"paperlib.{modname}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"paperlib.{modname}: {result.failed} of {result.attempted} doctest examples failed"
