"""Checkpoints: a run's progress on disk, so an interrupted run resumes where it stopped.

A checkpoint cannot lie about the run it resumes. It holds the run's identity (scenario
hash, ruleset, seed, battle range, version), the ranges of battles done and the tally
of exactly those battles, under a SHA-256 checksum of that content. On load every part
is checked (the checksum; the done ranges inside the run and not overlapping; the tally's
battle count equal to the battles of the done ranges; the outcome counts, the break
timings and every column counting those battles too; every value within the bounds the
scenario's ruleset declares, ``Prepared.column_bounds`` and ``step_limit``): a failed
check is one line and exit status 2, and the file is left as it was.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..atomic import write_atomically
from ..errors import BattleOddsError, ParameterError, literal
from ..input.paths import read_regular_file
from ..results.stats import OUTCOMES, Histogram, Tally
from .output_paths import check_output_path

FORMAT = "battle-odds checkpoint 3"
#: The largest checkpoint read (bytes): a tally's histograms hold at most a few
#: thousand values a column.
MAX_CHECKPOINT_BYTES = 64 << 20
#: Every checkpoint error ends with what to do about it.
ADVICE = "delete it or choose another {checkpoint} file"


class CheckpointError(ParameterError):
    """A checkpoint file that cannot be trusted (the message says why, and ends with
    :data:`ADVICE`, naming the ``checkpoint`` parameter or its flag)."""

    def __init__(self, message: str) -> None:
        said = literal(message)
        super().__init__("checkpoint", None, f"{said}; {ADVICE}", whole=True)


def checksum(content: Mapping[str, Any]) -> str:
    """SHA-256 of the content as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass
class Checkpoint:
    """The identity of a run, its done battle ranges ``(first, count)`` and their tally."""

    path: Path
    identity: dict[str, Any]
    done: list[tuple[int, int]]
    tally: Tally

    @classmethod
    def open(
        cls,
        path: str | Path,
        identity: dict[str, Any],
        columns: Mapping[str, tuple[int | None, int | None]] | None = None,
    ) -> Checkpoint:
        """The checkpoint at ``path`` (checked), or an empty one when there is none yet.
        ``columns``: the scenario's outcome columns (and ``steps``) and the least and
        most value each can take (None: no bound); a tally with other columns, or
        values outside, is refused: numbers the scenario cannot give, whatever the
        checksum says."""
        try:
            path = check_output_path(path, "checkpoint")
        except BattleOddsError as exc:
            raise ParameterError.naming("checkpoint", exc) from None
        if not path.exists():
            return cls(path, identity, [], Tally())
        content = read(path)
        stored = content["identity"]
        if stored != identity:
            differ = ", ".join(k for k in identity if stored.get(k) != identity[k]) or "keys"
            raise CheckpointError(f"{path}: checkpoint of a different run ({differ} differ)")
        done = check_done(path, content["done"], identity["first"], identity["battles"])
        tally = check_tally(path, content["tally"], sum(count for _, count in done), columns)
        return cls(path, identity, done, tally)

    @property
    def battles_done(self) -> int:
        return sum(count for _, count in self.done)

    def add(self, first: int, count: int, tally: Tally) -> None:
        """Record a finished chunk and the run's tally after it."""
        self.done.append((first, count))
        self.tally = tally

    def remaining(self) -> list[tuple[int, int]]:
        """The ranges ``(first, count)`` of the run not done yet, in order."""
        return gaps(self.done, self.identity["first"], self.identity["battles"])

    def save(self) -> None:
        content = {
            "identity": self.identity,
            "done": [list(r) for r in merged(self.done)],
            "tally": self.tally.to_dict(),
        }
        write_atomically(
            self.path,
            json.dumps({"format": FORMAT, **content, "checksum": checksum(content)}),
        )


def read(path: Path) -> dict[str, Any]:
    """The checksummed content of a checkpoint file (identity, done, tally)."""
    try:
        data = json.loads(read_regular_file(path, str(path), MAX_CHECKPOINT_BYTES).decode())
    except BattleOddsError as exc:  # a FIFO or device, or larger than any checkpoint
        raise CheckpointError(f"{exc}") from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not JSON"
        raise CheckpointError(f"{path}: not a battle-odds checkpoint ({reason})") from None
    if not isinstance(data, dict) or not str(data.get("format", "")).startswith(
        "battle-odds checkpoint"
    ):
        raise CheckpointError(f"{path}: not a battle-odds checkpoint")
    if data["format"] != FORMAT:
        raise CheckpointError(f"{path}: {data['format']!r} is not this version's {FORMAT!r}")
    content = {k: data.get(k) for k in ("identity", "done", "tally")}
    if not isinstance(content["identity"], dict) or checksum(content) != data.get("checksum"):
        raise CheckpointError(f"{path}: checksum does not match the content (edited or damaged)")
    return content


def check_done(path: Path, done: Any, first: int, battles: int) -> list[tuple[int, int]]:
    """Done ranges as ``(first, count)`` pairs, each inside the run, none overlapping."""
    if not isinstance(done, list) or not all(_is_range(r) for r in done):
        raise CheckpointError(f"{path}: done: expected a list of [first, count] pairs")
    ranges = sorted((int(a), int(n)) for a, n in done)
    end_of_run = first + battles
    previous_end = first
    for a, n in ranges:
        if n < 1 or a < first or a + n > end_of_run:
            raise CheckpointError(
                f"{path}: done: battles {a}..{a + n - 1} are outside the run's "
                f"{first}..{end_of_run - 1}"
            )
        if a < previous_end:
            raise CheckpointError(f"{path}: done: battle {a} is counted twice (overlapping chunks)")
        previous_end = a + n
    return ranges


def _is_range(item: Any) -> bool:
    return (
        isinstance(item, list)
        and len(item) == 2
        and all(isinstance(x, int) and not isinstance(x, bool) for x in item)
    )


def check_tally(
    path: Path,
    data: Any,
    battles: int,
    columns: Mapping[str, tuple[int | None, int | None]] | None = None,
) -> Tally:
    """The tally of ``battles`` battles, every count of it consistent with that number
    (each histogram counts them all), and (given the scenario's ``columns``, ``steps``
    among them) every value one the scenario can give."""

    def bad(message: str) -> CheckpointError:
        return CheckpointError(f"{path}: tally: {message}")

    try:
        tally = Tally.from_dict(data)
    except (KeyError, TypeError, ValueError, AssertionError, AttributeError):
        raise bad("not a tally of battles") from None
    if tally.battles != battles:
        raise bad(f"{tally.battles:,} battles, but the done chunks hold {battles:,}")
    wins = tally.wins
    if wins.shape != (len(OUTCOMES),) or (wins < 0).any() or int(wins.sum()) != battles:
        raise bad(f"outcome counts {wins.tolist()} do not add up to {battles:,} battles")
    if len(tally.steps_by_outcome) != len(OUTCOMES):
        raise bad(f"expected {len(OUTCOMES)} histograms of steps, one per outcome")
    columns = dict(columns or {})
    least_steps, most_steps = columns.pop("steps", (0, None))
    _, most_winner = columns.pop("winner", (0, None))
    if most_winner is not None and wins[most_winner + 1 :].any():
        said = ", ".join(OUTCOMES[most_winner + 1 :]).replace("_", " ")
        raise bad(f"battles counted as {said}: impossible in this scenario (no stop rule)")
    for outcome, steps, won in zip(OUTCOMES, tally.steps_by_outcome, wins, strict=True):
        _check_histogram(bad, f"steps of {outcome}", steps, int(won))
        _check_values(bad, f"steps of {outcome}", steps, least_steps, most_steps)
    for name, histogram in tally.columns.items():
        _check_histogram(bad, name, histogram, battles)
    if columns and battles:
        if set(tally.columns) != set(columns):
            differ = sorted(set(tally.columns) ^ set(columns))
            raise bad(f"columns {', '.join(differ[:4])} are not this scenario's")
        for name, (low, high) in columns.items():
            _check_values(bad, name, tally.columns[name], low, high)
    return tally


def _check_values(
    bad: Any, name: str, histogram: Histogram, low: int | None, high: int | None
) -> None:
    """Every value of ``histogram`` within ``low .. high`` (None: no bound)."""
    if not len(histogram.values):
        return
    least, most = int(histogram.values[0]), int(histogram.values[-1])
    if (low is not None and least < low) or (high is not None and most > high):
        expected = f"{'' if low is None else f'{low:,}'}..{'' if high is None else f'{high:,}'}"
        raise bad(
            f"{name}: values {least:,}..{most:,}, impossible in this scenario (expected {expected})"
        )


def _check_histogram(bad: Any, name: str, histogram: Histogram, n: int) -> None:
    values, counts = histogram.values, histogram.counts
    if values.ndim != 1 or values.shape != counts.shape:
        raise bad(f"{name}: values and counts differ in length")
    if (counts < 1).any() or (np.diff(values) <= 0).any():
        raise bad(f"{name}: expected increasing values with positive counts")
    if histogram.n != n:
        raise bad(f"{name}: counts {histogram.n:,} battles, expected {n:,}")


def merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted ranges with touching neighbours joined (a short list for a long run)."""
    out: list[tuple[int, int]] = []
    for a, n in sorted(ranges):
        if out and out[-1][0] + out[-1][1] == a:
            out[-1] = (out[-1][0], out[-1][1] + n)
        else:
            out.append((a, n))
    return out


def gaps(done: list[tuple[int, int]], first: int, battles: int) -> list[tuple[int, int]]:
    """The ranges of ``first .. first + battles - 1`` not covered by ``done``."""
    out = []
    at = first
    for a, n in merged(done):
        if a > at:
            out.append((at, a - at))
        at = max(at, a + n)
    if at < first + battles:
        out.append((at, first + battles - at))
    return out
