"""paperlib: the shared package of *Executable Theory*.

Each chapter of the book imports the algorithm of its paper from one topic module here
(``paperlib.test_time_scaling``, ``paperlib.score_smoothing``, ``paperlib.attention``, ...) and the
book-wide helpers from :mod:`paperlib.seeding`, :mod:`paperlib.claims`, :mod:`paperlib.fitting`
and :mod:`paperlib.plotting`. Nothing heavy is imported here.
"""

__version__ = "0.1.0"
