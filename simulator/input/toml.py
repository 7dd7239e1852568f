"""Reading a TOML file into data and the :class:`~simulator.errors.Source` that locates
its errors: a scenario, a ``--costs`` file or a baseline."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from ..errors import BattleOddsError, Source
from .paths import MAX_INPUT_BYTES, not_a_folder, read_regular_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib


#: Tables and arrays nested deeper than this are refused: no scenario nests more than
#: four, and Python's parser and every reader after it recurse once per level.
MAX_NESTING = 32


def read_toml(
    path: Path, what: str, missing: str = "no such file", limit: int = MAX_INPUT_BYTES
) -> tuple[dict[str, Any], Source]:
    """A TOML file's data and its source (for located errors); ``what`` names the kind
    of file in the message when it is a folder, ``missing`` says what to do when there
    is no such file. A byte-order mark may open the text (Windows editors write one).
    Only a regular file of at most ``limit`` bytes, nested at most MAX_NESTING deep, is
    read (:func:`~simulator.input.paths.read_regular_file`)."""
    label = str(path)
    try:
        text = read_regular_file(path, label, limit).decode("utf-8-sig")
    except FileNotFoundError:
        raise BattleOddsError(f"{label}: {missing}") from None
    except IsADirectoryError:
        raise BattleOddsError(f"{label}: is a directory, expected a .toml {what}") from None
    except NotADirectoryError:
        blocked = not_a_folder(label, path)
        raise BattleOddsError(blocked or f"{label}: not a folder among its parents") from None
    except UnicodeDecodeError as exc:
        raise BattleOddsError(f"{label}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise BattleOddsError(f"{label}: cannot read ({exc.strerror})") from None
    if text.startswith(BOM):
        raise BattleOddsError(
            f"{label}:1: a second byte-order mark (U+FEFF) after the first: expected "
            "TOML text after at most one (save the file as UTF-8 once more)"
        )
    return parse_toml(text, label, path)


def parse_toml(text: str, label: str, path: Path | None = None) -> tuple[dict[str, Any], Source]:
    """TOML text's data and its source; ``label`` names the text in errors (a file's
    path, or "pasted scenario" for text given in ``battle-odds serve``'s page)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise BattleOddsError(
            f"{label}:{_toml_line(exc)}: malformed TOML: {_toml_reason(exc)}"
        ) from None
    except RecursionError:
        data = None
    if data is None or nesting(data) > MAX_NESTING:
        raise BattleOddsError(
            f"{label}: tables and arrays nested deeper than {MAX_NESTING} levels: expected "
            "a scenario's few levels"
        )
    return data, Source(label, text, path)


def nesting(data: Any, most: int = MAX_NESTING) -> int:
    """How deep tables and arrays nest in ``data`` (counted up to ``most`` + 1)."""
    deepest, level = 0, [(data, 0)]
    while level:
        item, depth = level.pop()
        if depth > most:
            return depth
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            level.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            level.extend((v, depth + 1) for v in item)
    return deepest


#: The byte-order mark, which "utf-8-sig" takes off once.
BOM = "\ufeff"


def _toml_line(exc: Exception) -> str:
    match = re.search(r"line (\d+)", str(exc))
    return match.group(1) if match else "?"


def _toml_reason(exc: Exception) -> str:
    return re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)) or "cannot parse"
