"""paperlib: the shared package of *Executable Theory*.

Each chapter of the book imports the algorithm of its paper from one topic module here
(``paperlib.online.test_time_scaling``, ``paperlib.generative.score_smoothing``, ``paperlib.models.attention``, ...) and the
book-wide helpers from :mod:`paperlib.core.seeding`, :mod:`paperlib.core.claims`, :mod:`paperlib.core.fitting`
and :mod:`paperlib.core.plotting`. Nothing heavy is imported here.
"""

__version__ = "0.1.0"
