"""One figure style for the whole book.

Call :func:`set_book_style` once in a chapter's imports cell. It applies a seaborn theme, a figure
size and resolution that keep committed notebooks small, and line widths readable on a projector.
"""

from __future__ import annotations

__all__ = ["BOOK_PALETTE", "set_book_style", "theory_line_kwargs"]

#: Colour-blind-safe palette (seaborn "colorblind"), also used for matplotlib's default cycle.
BOOK_PALETTE = "colorblind"


def set_book_style(*, context: str = "notebook", font_scale: float = 1.0) -> None:
    """Apply the book's seaborn/matplotlib style.

    Parameters
    ----------
    context : {"paper", "notebook", "talk", "poster"}, default "notebook"
        seaborn plotting context.
    font_scale : float, default 1.0
        Positive font scaling factor.

    Raises
    ------
    ValueError
        If ``context`` is unknown or ``font_scale`` is not positive.
    """
    import matplotlib as mpl
    import seaborn as sns

    if context not in {"paper", "notebook", "talk", "poster"}:
        raise ValueError(f"context must be one of paper, notebook, talk, poster; got {context!r}")
    if not (isinstance(font_scale, (int, float)) and font_scale > 0):
        raise ValueError(f"font_scale must be a positive number, got {font_scale!r}")
    sns.set_theme(context=context, style="whitegrid", palette=BOOK_PALETTE, font_scale=font_scale)
    mpl.rcParams.update(
        {
            "figure.figsize": (6.4, 4.0),
            "figure.dpi": 90,
            "savefig.dpi": 90,
            "lines.linewidth": 2.0,
            "axes.titlesize": "medium",
            "legend.frameon": False,
            "figure.constrained_layout.use": True,
        }
    )


def theory_line_kwargs(**overrides) -> dict:
    """Keyword arguments for a theory/prediction curve (dashed black), to draw beside measurements."""
    kw = {"color": "black", "linestyle": "--", "linewidth": 1.5, "alpha": 0.8}
    kw.update(overrides)
    return kw
