"""Numbers in prose: :func:`quote` formats a number measured in a run and glues it for the chapter's text.

Private: re-exported by :mod:`paperlib.core.claims`, where it is documented.
"""

from __future__ import annotations

import math
import re

from ._validation import check_single_line


class _Quoted:
    """A formatted number whose plain-text display is the number itself, without string quotes."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


class Quote(str):
    """The formatted number :func:`quote` returns: a ``str`` that displays nothing as a cell's last line."""

    def _ipython_display_(self):
        pass


def quote(name: str, value, fmt: str) -> Quote:
    """Format a number measured in this run and glue it for the chapter's prose.

    The page text then quotes the run's own output: a Markdown cell writes ``{glue:text}`name```
    where it would have typed the number (myst-nb's ``glue``), so text and printed output can never
    disagree, and the launch notebooks (``tools/launch_notebooks.py``) write the same value in.
    The glued value is the *formatted* number, so that the notebook gate and the portable output
    comparison (``conftest.py``) see it with the precision the text shows.

    Parameters
    ----------
    name : str
        The glue key: letters, digits and ``_``, starting with a letter; unique in the chapter.
    value : int or float (or a NumPy/JAX scalar)
        The number; finite (prose never quotes a NaN).
    fmt : str
        A format specification as in ``format`` (``".3f"``, ``".2g"``, ``"d"``, ``".0%"``,
        ``",d"``).

    Returns
    -------
    Quote
        The formatted number, as the page shows it (a ``str``; as a cell's last expression it displays
        nothing, so the glued record stays the cell's only trace).

    Raises
    ------
    ValueError
        If ``name`` is not a valid key, ``value`` is a bool, a string, not a real scalar or not
        finite, or ``fmt`` does not apply to it.

    Examples
    --------
    >>> quote("final_loss", 0.31234, ".3f")
    '0.312'
    """
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
        raise ValueError(f"name must be letters, digits and '_', starting with a letter; got {name!r}")
    if isinstance(value, (bool, str, bytes)) or getattr(value, "dtype", None) == bool:
        raise ValueError(f"value must be a real number, got {type(value).__name__}")
    if not isinstance(fmt, str):
        raise ValueError(f"fmt must be a format specification string, got {type(fmt).__name__}")
    try:
        import numpy as np

        arr = np.asarray(value)
        if arr.shape != () or not np.isrealobj(arr):
            raise ValueError(f"value must be a real scalar, got shape {arr.shape} dtype {arr.dtype}")
        scalar = arr.item()
        if not math.isfinite(scalar):
            raise ValueError(f"value must be finite, got {scalar!r}")
        text = format(scalar, fmt)
    except (TypeError, ValueError) as exc:
        if str(exc).startswith("value must"):
            raise
        raise ValueError(f"fmt {fmt!r} does not apply to value {value!r}: {exc}") from None
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is always there with Jupyter
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        try:
            from myst_nb import glue
        except ImportError:  # a reader's kernel without the book build: the same record, by hand
            from IPython.display import display

            prefix = "application/papermill.record/"
            display({prefix + "text/plain": text}, raw=True,
                    metadata={"scrapbook": {"name": name, "mime_prefix": prefix}})
        else:
            glue(name, _Quoted(text), display=False)
    return Quote(text)
