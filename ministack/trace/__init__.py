"""Tracing the attach journey with osprofiler.

* :mod:`ministack.trace.profiler` - the ``[profiler]`` options and each
  daemon's osprofiler start-up, and the span helpers the code calls
  (:func:`~ministack.trace.profiler.span`).
* :mod:`ministack.trace.storage` - osprofiler's SQLAlchemy driver made to
  work with SQLAlchemy 2 and SQLite (the lab's embedded trace store).
* :mod:`ministack.trace.hops` - a stored trace read back as the journey's
  hops (the data of ``ministack-trace show`` and of the web page).
"""
