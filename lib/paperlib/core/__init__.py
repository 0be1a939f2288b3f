"""The book's infrastructure: claim checks, seeds, the figure style, power-law fits, input validation.

Chapters: every chapter.

Modules:

:mod:`~paperlib.core.claims`
    The claim check: compare a measured number with a paper's prediction, loudly.
:mod:`~paperlib.core.seeding`
    One seed per chapter, overridable from the environment.
:mod:`~paperlib.core.plotting`
    One figure style for the whole book.
:mod:`~paperlib.core.fitting`
    Power laws: fit a log-log slope with its uncertainty.
:mod:`~paperlib.core.nulls`
    The null registry: each chapter's null and broken variants, and the checks each must make fail.

Every public function of these modules is also importable from this package.
"""

from . import claims, seeding, plotting, fitting, nulls
from .claims import (  # noqa: F401
    ClaimFailed, ClaimResult, Verdict, check_claim, declare_verdict, parse_claim_line,
    parse_verdict_line, quote, Quote, CLAIM_LINE_RE, VERDICT_LINE_RE, KINDS, VERDICTS, RECORD_ENV_VAR,
)
from .seeding import (  # noqa: F401
    SEED_ENV_VAR, chapter_seed, numpy_rng, jax_key,
)
from .plotting import (  # noqa: F401
    BOOK_PALETTE, set_book_style, theory_line_kwargs,
)
from .fitting import (  # noqa: F401
    PowerLawFit, power_law_fit,
)
from .nulls import (  # noqa: F401
    declare_nulls, active_null, registered_nulls, NULL_ENV_VAR, NULL_LINE_PREFIX,
)

__all__ = [
    'claims', 'seeding', 'plotting', 'fitting', 'nulls', 'ClaimFailed', 'ClaimResult', 'Verdict',
    'check_claim', 'declare_verdict', 'parse_claim_line', 'parse_verdict_line', 'quote', 'Quote',
    'CLAIM_LINE_RE', 'VERDICT_LINE_RE', 'KINDS', 'VERDICTS', 'RECORD_ENV_VAR', 'SEED_ENV_VAR',
    'chapter_seed', 'numpy_rng', 'jax_key', 'BOOK_PALETTE', 'set_book_style', 'theory_line_kwargs',
    'PowerLawFit', 'power_law_fit', 'declare_nulls', 'active_null', 'registered_nulls', 'NULL_ENV_VAR',
    'NULL_LINE_PREFIX',
]
