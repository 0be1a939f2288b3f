"""One figure style for the whole book.

Call :func:`set_book_style` once in a chapter's imports cell. It applies a seaborn theme with the
colour-blind-safe palette, the book's figure size (6.4 x 4.0 inches), fonts sized to stay legible when
a figure is shrunk to a phone's width, and, in a notebook, **2x ("retina") PNGs**: each figure is
rendered at twice its display resolution and displayed at its 1x size, so it is sharp on high-density
screens and in print, while notebooks stay small (a 6.4-inch figure is about 1170 px wide).

Legibility: a figure shown on a 390 px-wide phone is scaled to about 360 px. Text of ``p`` points then
measures about ``p * 90/72 * 350/590`` CSS pixels, so the smallest text of the style (tick labels and
legends, 13.2 pt) measures about 9.6 px; the previous style (11 pt) gave 8 px. A chapter's
``fontsize="small"`` legend is 0.83 times that, and a figure wider than 6.4 inches shrinks further
(two panels side by side at 9 inches: 6.9 px). The book requires at least 7.5 px, so **no figure is
wider than 8 inches**: three or more panels go in a grid or a vertical stack. The smallest font size is
written into every PNG (text key ``book-min-font-pt``), from which the notebook gate and the browser
test estimate what a phone shows.
"""

from __future__ import annotations

__all__ = ["BOOK_PALETTE", "set_book_style", "theory_line_kwargs"]

#: Colour-blind-safe palette (seaborn "colorblind"), also used for matplotlib's default cycle.
BOOK_PALETTE = "colorblind"

_CONTEXTS = ("paper", "notebook", "talk", "poster")
#: Display resolution of a figure (CSS pixels per inch); PNGs are rendered at twice this.
_DISPLAY_DPI = 90
#: Fonts are this much larger than seaborn's for the same context, so they survive a phone's width.
_LEGIBILITY = 1.2


def _smallest_font_pt(rc) -> float:
    import matplotlib.font_manager as fm

    base = float(rc["font.size"])
    sizes = []
    for key in ("xtick.labelsize", "ytick.labelsize", "legend.fontsize", "axes.labelsize", "axes.titlesize"):
        v = rc[key]
        sizes.append(float(v) if not isinstance(v, str) else base * fm.font_scalings.get(v, 1.0))
    return min(sizes)


def set_book_style(*, context: str = "notebook", font_scale: float = 1.0) -> None:
    """Apply the book's seaborn/matplotlib style (and 2x PNG output inside a notebook).

    Parameters
    ----------
    context : {"paper", "notebook", "talk", "poster"}, default "notebook"
        seaborn plotting context.
    font_scale : float, default 1.0
        Positive font scaling factor, relative to the book's default sizes (which are 1.2 times
        seaborn's for the same context).

    Raises
    ------
    ValueError
        If ``context`` is unknown or ``font_scale`` is not a positive finite number.

    Notes
    -----
    Figure size (6.4 x 4.0 in) and display resolution (90 dpi) are unchanged from the first edition
    of the style, so figures keep their on-screen size; only their pixel density (2x) and font sizes
    grow. Outside IPython only the rcParams are set (``savefig.dpi`` is 180, so files saved with
    ``plt.savefig`` are 2x as well).

    Examples
    --------
    >>> set_book_style()
    >>> import matplotlib as mpl
    >>> tuple(mpl.rcParams["figure.figsize"]), mpl.rcParams["savefig.dpi"]
    ((6.4, 4.0), 180.0)
    """
    import math

    import matplotlib as mpl
    import seaborn as sns

    if not isinstance(context, str) or context not in _CONTEXTS:
        raise ValueError(f"context must be one of {', '.join(_CONTEXTS)}; got {context!r}")
    if isinstance(font_scale, bool) or not isinstance(font_scale, (int, float)) or not (
        math.isfinite(font_scale) and font_scale > 0
    ):
        raise ValueError(f"font_scale must be a positive finite number, got {font_scale!r}")
    sns.set_theme(context=context, style="whitegrid", palette=BOOK_PALETTE,
                  font_scale=_LEGIBILITY * float(font_scale))
    mpl.rcParams.update(
        {
            "figure.figsize": (6.4, 4.0),
            "figure.dpi": _DISPLAY_DPI,
            "savefig.dpi": 2 * _DISPLAY_DPI,
            "lines.linewidth": 2.0,
            "axes.titlesize": "medium",
            "legend.frameon": False,
            "figure.constrained_layout.use": True,
        }
    )
    _retina_inline(_smallest_font_pt(mpl.rcParams))


def _retina_inline(min_font_pt: float) -> None:
    """Inside IPython with the inline backend: 2x PNGs, tagged with the smallest font size."""
    try:
        from IPython import get_ipython
        from matplotlib_inline.config import InlineBackend
    except ImportError:  # no IPython: a script or a test
        return
    if get_ipython() is None:
        return
    cfg = InlineBackend.instance()
    kwargs = dict(cfg.print_figure_kwargs)
    kwargs["metadata"] = {"book-min-font-pt": f"{min_font_pt:.3g}"}
    cfg.print_figure_kwargs = kwargs
    cfg.figure_formats = {"retina"}


def theory_line_kwargs(**overrides) -> dict:
    """Keyword arguments for a theory/prediction curve (dashed black), to draw beside measurements.

    Parameters
    ----------
    **overrides
        Any ``matplotlib.lines.Line2D`` property, replacing the default of the same name.

    Returns
    -------
    dict
        ``color="black", linestyle="--", linewidth=1.5, alpha=0.8`` updated with ``overrides``.

    Examples
    --------
    >>> theory_line_kwargs(color="red")["color"], theory_line_kwargs()["linestyle"]
    ('red', '--')
    """
    kw = {"color": "black", "linestyle": "--", "linewidth": 1.5, "alpha": 0.8}
    kw.update(overrides)
    return kw
