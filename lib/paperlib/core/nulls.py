"""The null registry: each chapter's null and broken variants, and the checks each must make fail.

A reproduction or derived claim check is evidence only if it can fail: on a model without the mechanism
the theorem is about, it must. So every chapter declares, in its configuration cell, the variants it
can run instead of the real experiment, and every ``reproduction`` and ``derived`` check names the
variants it must reject (``check_claim(..., rejects=("untrained",))``):

* an untrained or shuffled-label network, a model with the mechanism removed;
* a deliberately wrong estimator or constant;
* a target or an activation outside the theorem's class.

One environment variable, ``BOOK_NULL``, switches a chapter to one of its variants::

    NULL = nulls.declare_nulls({
        "untrained": "the networks are left at their initialisation (0 training steps)",
        "poly": "sigma(z) = z^2, a polynomial activation the theorems exclude",
    })
    STEPS = 0 if NULL == "untrained" else 3000

``tools/nulls.py`` (``make nulls``) executes every chapter under each of its variants with
``BOOK_CLAIMS_RECORD`` set, records each check's value under each null in
``book/_generated/nulls/<slug>.json``, and fails when a check no longer fails under a variant it names;
the ledger's "rejects" column shows those values.
"""

from __future__ import annotations

import json
import os
import re

from ._validation import check_single_line

__all__ = ["declare_nulls", "active_null", "registered_nulls", "NULL_ENV_VAR", "NULL_LINE_PREFIX"]

#: Environment variable that switches a chapter to one of its declared variants.
NULL_ENV_VAR = "BOOK_NULL"
#: Start of the banner line a chapter prints when it runs as a null variant.
NULL_LINE_PREFIX = "NULL VARIANT |"

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_state: dict = {"variants": {}, "active": None}


def declare_nulls(variants: dict) -> str | None:
    """Register a chapter's null and broken variants; return the one ``BOOK_NULL`` selects, or None.

    Call it once, in the chapter's configuration cell, before any :func:`~paperlib.core.claims.check_claim`
    that names a variant in ``rejects``. With ``BOOK_NULL`` unset (the book's own run) it returns None
    and prints nothing; with ``BOOK_NULL=<name>`` it prints ``NULL VARIANT | <name> | <description>``
    and returns ``<name>``, and the chapter must then run that variant. When ``BOOK_CLAIMS_RECORD``
    names a file, the registry is appended to it as one JSON line.

    Parameters
    ----------
    variants : dict of str to str
        Variant name (lower-case letters, digits and ``_``, starting with a letter, at most 32
        characters) to a one-line description of what the variant changes. At least one entry.

    Returns
    -------
    str or None
        The active variant's name, or None when ``BOOK_NULL`` is unset or empty.

    Raises
    ------
    ValueError
        If ``variants`` is not a non-empty dict of valid names to non-empty one-line descriptions, or
        ``BOOK_NULL`` names a variant that is not declared.

    Examples
    --------
    >>> declare_nulls({"untrained": "networks left at initialisation"}) is None
    True
    >>> registered_nulls()
    {'untrained': 'networks left at initialisation'}
    """
    if not isinstance(variants, dict) or not variants:
        raise ValueError(f"variants must be a non-empty dict of name -> description, got {variants!r}")
    clean = {}
    for name, desc in variants.items():
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ValueError(f"variants: name {name!r} must match {_NAME_RE.pattern}")
        if not isinstance(desc, str) or not desc.strip() or "|" in desc:
            raise ValueError(f"variants[{name!r}] must be a non-empty description without '|'")
        check_single_line(f"variants[{name!r}]", desc)
        clean[name] = desc.strip()
    active = os.environ.get(NULL_ENV_VAR, "").strip() or None
    if active is not None and active not in clean:
        raise ValueError(f"{NULL_ENV_VAR}={active!r} is not a variant of this chapter; declared: {', '.join(clean)}")
    _state["variants"], _state["active"] = clean, active
    if active is not None:
        print(f"{NULL_LINE_PREFIX} {active} | {clean[active]}")
    record = os.environ.get("BOOK_CLAIMS_RECORD", "").strip()
    if record:
        with open(record, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"type": "nulls", "variants": clean, "active": active}) + "\n")
    return active


def active_null() -> str | None:
    """The variant this run executes (``BOOK_NULL``, validated by :func:`declare_nulls`), or None.

    Returns
    -------
    str or None

    Examples
    --------
    >>> _ = declare_nulls({"shuffled": "labels permuted"})
    >>> active_null() is None
    True
    """
    return _state["active"]


def registered_nulls() -> dict:
    """A copy of the variants the last :func:`declare_nulls` registered (name -> description).

    Returns
    -------
    dict of str to str

    Examples
    --------
    >>> _ = declare_nulls({"wrong_constant": "the estimator uses 2 lambda"})
    >>> list(registered_nulls())
    ['wrong_constant']
    """
    return dict(_state["variants"])


def _check_rejects(rejects) -> tuple[str, ...]:
    """Validate a check's ``rejects`` against the registry; return it as a tuple of names."""
    if isinstance(rejects, str):
        rejects = (rejects,)
    try:
        names = tuple(rejects)
    except TypeError:
        raise ValueError(f"rejects must be a variant name or a sequence of names, got {rejects!r}") from None
    for n in names:
        if not isinstance(n, str) or n not in _state["variants"]:
            declared = ", ".join(_state["variants"]) or "none (call nulls.declare_nulls first)"
            raise ValueError(f"rejects: {n!r} is not a declared null variant; declared: {declared}")
    if len(set(names)) != len(names):
        raise ValueError(f"rejects names a variant twice: {names!r}")
    return names
