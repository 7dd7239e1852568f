"""A study's progress: one callback for the study, fed by the many runs it is made of."""

from __future__ import annotations

from collections.abc import Callable

#: ``progress(done, total)``: of battles where the total is known before the start (so
#: that the time left is known within seconds), else of points or values tried (then
#: with a third argument, what the value in progress is at, in words).
PointProgress = Callable[..., None]


def battles_of(progress: PointProgress | None, before: int, total: int) -> PointProgress | None:
    """The progress of one run of a study as the study's: ``before`` battles already done
    of ``total``."""
    if progress is None:
        return None
    report = progress
    return lambda done, _: report(before + done, total)
