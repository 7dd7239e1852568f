"""The memory a run will need, estimated before its first battle and refused when the
machine does not have it.

A run holds, at its peak: one kernel call's outcome rows (battles in the call x outcome
columns, as int64) with the tally's working copies of them, any table the kernel builds
for the call (skirmish's expected damage of every participant against every other, an
olympia chain table), the run's histograms (one per column, at most a value per battle
or per value the column can take), and with ``--keep-battles`` every battle's row,
twice while the chunks are joined. A file of 0.8 MB once asked for 24 GB and was ended
by the system's out-of-memory killer; now such a run is one line naming the estimate
and the memory available, before any work.

Calls are also kept to :data:`CALL_BYTES` each (fewer battles a call for a scenario
of many columns): the chunking changes no battle, and the estimate stays what a wide
scenario really needs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import BattleOddsError, ParameterError, literal
from ..rulesets.base import Prepared

#: The most memory one kernel call's rows may take (bytes): the battles of a call are
#: fewer for a scenario of many columns (256 MiB: 5,500 battles of 2,000 columns).
CALL_BYTES = 1 << 28
#: Distinct values a histogram of a column without bounds is counted for, at most.
UNBOUNDED_VALUES = 1 << 12
#: Bytes a histogram holds per distinct value (value and count, int64), twice while
#: two are merged.
HISTOGRAM_BYTES_PER_VALUE = 32
#: Bytes of a kept battle's row per column: the kept chunks, their joined copy, the
#: table of battles made of it, and a margin (measured: 78 MB above the process's start
#: for 500 battles of 2,009 columns, estimated 85 MB).
KEPT_BYTES_PER_VALUE = 32
#: The environment variable that sets the memory a run may use (bytes, or with a unit:
#: ``512M``, ``4G``), for a machine shared with other work; by default what the
#: system reports available.
MEMORY_VARIABLE = "BATTLE_ODDS_MEMORY"
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def gigabytes(n: int) -> str:
    return f"{n / (1 << 30):,.1f} GB" if n >= 1 << 30 else f"{n / (1 << 20):,.0f} MB"


def available_bytes() -> tuple[int, str]:
    """The memory a run may use and where that figure comes from: ``BATTLE_ODDS_MEMORY``,
    else the system's available memory (/proc/meminfo), else its physical memory."""
    told = os.environ.get(MEMORY_VARIABLE, "").strip().upper().removesuffix("B")
    if told:
        unit = told[-1] if told[-1] in _UNITS else ""
        number = told[: len(told) - len(unit)]
        if not number.isdigit():
            raise BattleOddsError(
                f"{MEMORY_VARIABLE}={os.environ[MEMORY_VARIABLE]!r}: expected a number of "
                "bytes, or one with K, M, G or T (4G)"
            )
        return int(number) * _UNITS[unit], f"{MEMORY_VARIABLE}"
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024, "memory available"
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "memory"
    except (OSError, ValueError, AttributeError):
        return 1 << 62, "memory"  # a system that says nothing: no bound


def battles_per_call(prepared: Prepared, chunk: int) -> int:
    """The most battles one kernel call of ``prepared`` runs: ``chunk``, or fewer so
    that the call's rows fit :data:`CALL_BYTES`."""
    per_battle = max(1, prepared.memory_bytes(1) - prepared.memory_bytes(0))
    return max(1, min(chunk, CALL_BYTES // per_battle))


@dataclass(frozen=True)
class Estimate:
    """The bytes a run needs at its peak, and what they are, in words."""

    bytes: int
    parts: tuple[str, ...]


def estimate(prepared: Prepared, battles: int, per_call: int, keep: bool) -> Estimate:
    """The memory a run of ``battles`` battles of ``prepared`` needs, ``per_call`` battles
    a kernel call; ``keep``: every battle's row kept. Worked out from the scenario's
    outcome columns and their bounds, before any battle."""
    per_call = min(per_call, battles)
    call = prepared.memory_bytes(per_call)
    parts = [f"{per_call:,} battles a call: {gigabytes(call)}"]
    bounds = dict(prepared.column_bounds)
    names = set(prepared.columns) | set(prepared.flags) | set(bounds)
    values = 0
    for name in names:
        low, high = (0, 1) if name in prepared.flags else bounds.get(name, (None, None))
        spread = high - low + 1 if low is not None and high is not None else UNBOUNDED_VALUES
        values += min(battles, spread, UNBOUNDED_VALUES)
    tallies = values * HISTOGRAM_BYTES_PER_VALUE
    kept = battles * len(names) * KEPT_BYTES_PER_VALUE if keep else 0
    if kept:
        parts.append(f"{battles:,} kept battles of {len(names):,} columns: {gigabytes(kept)}")
    return Estimate(call + tallies + kept, tuple(parts))


def fits(needed: Estimate) -> bool:
    return needed.bytes <= available_bytes()[0]


def check_memory(needed: Estimate, advice: str, available: tuple[int, str] | None = None) -> None:
    """Refuse a run that needs more memory than the machine has (one line, ending with
    ``advice``, whose parameters are written ``{name}``: :class:`ParameterError`); ``available``:
    :func:`available_bytes` as read before, for a study that checks thousands of
    scenarios (a read of /proc/meminfo each was 2% of a price search)."""
    have, source = available_bytes() if available is None else available
    if needed.bytes > have:
        said = (
            f"this run needs about {gigabytes(needed.bytes)} of memory "
            f"({'; '.join(needed.parts)}), more than the {gigabytes(have)} of {source}: "
        )
        raise ParameterError("memory", None, literal(said) + advice, whole=True)
