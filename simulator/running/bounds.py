"""A bound on a command's whole work, checked before it starts.

Each battle is bounded by its ruleset, and each run by ``MAX_BATTLES``; a study runs
many: a sweep's grid of points, a baseline's scenarios, a search's probes. Their product
is checked here before the first battle, so that two ranges of 10,000 values or a
baseline asking for 10**11 battles are refused at once with the size and the option
that allows it, rather than running silently for weeks.
"""

from __future__ import annotations

from ..errors import ParameterError

#: Most battles a command may fight in all unless ``--max-total`` says more: about three
#: hours of the fastest scenarios on a laptop, days of the slowest.
DEFAULT_MAX_TOTAL = 10**10


def check_total(what: str, battles: int, limit: int | None = None) -> None:
    """Refuse ``battles`` in all (described by ``what``, e.g. ``"400 points x 100,000
    battles"``, its parameters written ``{name}``: :class:`~simulator.errors.ParameterError`)
    beyond ``limit`` (default ``DEFAULT_MAX_TOTAL``)."""
    limit = DEFAULT_MAX_TOTAL if limit is None else limit
    if battles > limit:
        raise ParameterError(
            "max_total",
            limit,
            f"{what} = {battles:,} battles in all, more than {{max_total}} {limit:,}: "
            "fewer values or battles, or raise {max_total}",
            whole=True,
        )
