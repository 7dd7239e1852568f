"""A study's progress: one callback for the study, fed by the many runs it is made of."""

from __future__ import annotations

from ...running.plan import Progress


def battles_of(progress: Progress | None, before: int, total: int) -> Progress | None:
    """The progress of one run of a study as the study's: ``before`` battles already done
    of ``total``."""
    if progress is None:
        return None
    report = progress
    return lambda done, _: report(before + done, total)
