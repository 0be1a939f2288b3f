"""The headline verdict of a chapter: :func:`declare_verdict` prints it, :func:`parse_verdict_line` reads it back.

Private: re-exported by :mod:`paperlib.core.claims`, where it is documented.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass

from ._validation import LINE_BREAKS, check_single_line

#: A chapter's headline verdict, as an independent review with ``REVIEW.md`` rated it.
VERDICTS = ("reproduced", "partly", "not reproduced")
#: Environment variable naming a JSON-lines file: record every verdict there and do not raise.
RECORD_ENV_VAR = "BOOK_CLAIMS_RECORD"


@dataclass(frozen=True)
class Verdict:
    """A chapter's headline verdict, as declared by :func:`declare_verdict`.

    Attributes
    ----------
    verdict : str
        One of :data:`VERDICTS`.
    missing : str
        One line on what is not reproduced (``"-"`` when nothing is missing).
    """

    verdict: str
    missing: str

    def _ipython_display_(self):
        pass

    def line(self) -> str:
        """The one-line declaration that :func:`declare_verdict` prints."""
        return f"VERDICT | {self.verdict} | {self.missing}"


VERDICT_LINE_RE = re.compile(
    r"^VERDICT \| (?P<verdict>" + "|".join(VERDICTS) + r") \| (?P<missing>[^|]+?)\s*$"
)


def declare_verdict(verdict: str, *, missing: str) -> Verdict:
    """Declare the chapter's headline verdict once, in its claim-check section, and print it.

    The verdict is the one an independent review of the chapter with the book's review rubric
    reached: ``"reproduced"`` (the paper's headline claim holds in our experiment, checked by at
    least one check of kind ``"reproduction"``), ``"partly"`` or ``"not reproduced"``. The front
    page shows it beside the chapter's counts of passed checks.

    Parameters
    ----------
    verdict : {"reproduced", "partly", "not reproduced"}
        The headline verdict.
    missing : str
        One line on what the chapter does not reproduce (use ``"-"`` if nothing); no ``|``.

    Returns
    -------
    Verdict
        The declaration (also printed as ``VERDICT | <verdict> | <missing>``).

    Raises
    ------
    ValueError
        If ``verdict`` is not one of :data:`VERDICTS` or ``missing`` is empty or contains ``|``
        or a line break (any that ``str.splitlines`` splits on).

    Examples
    --------
    >>> v = declare_verdict("partly", missing="the paper's ImageNet experiment is out of scope")
    VERDICT | partly | the paper's ImageNet experiment is out of scope
    """
    if not isinstance(verdict, str) or verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {', '.join(map(repr, VERDICTS))}; got {verdict!r}")
    if not isinstance(missing, str) or not missing.strip():
        raise ValueError("missing must be a non-empty string (use '-' when nothing is missing)")
    if "|" in missing:
        raise ValueError(f"missing must not contain '|', got {missing!r}")
    check_single_line("missing", missing)
    result = Verdict(verdict=verdict, missing=missing.strip())
    print(result.line())
    record = os.environ.get(RECORD_ENV_VAR, "").strip()
    if record:
        with open(record, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"type": "verdict", **asdict(result)}) + "\n")
    return result


def parse_verdict_line(line: str) -> Verdict | None:
    """Parse a line printed by :func:`declare_verdict`; return ``None`` if it is not one.

    Text with a line break inside (any that ``str.splitlines`` splits on) is not one line: ``None``.

    Parameters
    ----------
    line : str
        One line of a chapter's output.

    Returns
    -------
    Verdict or None

    Raises
    ------
    ValueError
        If ``line`` is not a string.

    Examples
    --------
    >>> parse_verdict_line("VERDICT | partly | the d = 20 sphere").verdict
    'partly'
    """
    if not isinstance(line, str):
        raise ValueError(f"line must be a string, got {type(line).__name__}")
    text = line.strip()
    if any(c in text for c in LINE_BREAKS):  # several lines, not one verdict line
        return None
    m = VERDICT_LINE_RE.match(text)
    if m is None:
        return None
    return Verdict(verdict=m["verdict"], missing=m["missing"])
