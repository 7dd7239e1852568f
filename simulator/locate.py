"""File lines of nested scenario keys (``attacker.stacks[1].units[2].integrity``).

A key's last name is ambiguous in a scenario (every unit has an ``integrity``, every
stack ``units``), so :meth:`simulator.errors.Source.line_of` follows the whole path
through ``[[array.of.tables]]`` headers, ``key = [...]`` arrays (counting their
elements) and one-line inline tables: an error in the third unit of the second stack
points at that unit's line.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"""^\s*(\[\[?)\s*([\w.\-\s"']+?)\s*\]\]?\s*(?:#.*)?$""")
_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _parts(path: str) -> list[tuple[str, int | None]]:
    parts: list[tuple[str, int | None]] = []
    for name, index in _PART.findall(path):
        if index:
            if not parts:
                return []
            parts[-1] = (parts[-1][0], int(index))
        else:
            parts.append((name, None))
    return parts


def _element_line(lines: list[str], row: int, column: int, index: int) -> int | None:
    """Line (0-based) where element ``index`` of the array opening after ``column`` starts."""
    depth, count, expecting, quote = 0, -1, False, ""
    for r in range(row, len(lines)):
        text = lines[r]
        c = column if r == row else 0
        while c < len(text):
            ch = text[c]
            if quote:
                if ch == "\\" and quote == '"':
                    c += 1
                elif ch == quote:
                    quote = ""
            elif ch == "#":
                break
            elif depth == 0:
                if ch == "[":
                    depth, expecting = 1, True
                elif not ch.isspace():
                    return None
            elif ch in "\"'":
                if depth == 1 and expecting:
                    count, expecting = count + 1, False
                    if count == index:
                        return r
                quote = ch
            elif ch in "[{":
                if depth == 1 and expecting:
                    count, expecting = count + 1, False
                    if count == index:
                        return r
                depth += 1
            elif ch in "]}":
                depth -= 1
                if depth == 0:
                    return None
            elif ch == "," and depth == 1:
                expecting = True
            elif depth == 1 and expecting and not ch.isspace():
                count, expecting = count + 1, False
                if count == index:
                    return r
            c += 1
    return None


def find_line(text: str, path: str) -> int | None:
    """1-based line of ``path`` in TOML ``text``, or None when it cannot be followed."""
    lines = text.splitlines()
    headers = []
    for i, line in enumerate(lines):
        match = _HEADER.match(line)
        if match:
            name = ".".join(p.strip().strip("\"'") for p in match.group(2).split("."))
            headers.append((i, match.group(1) == "[[", name))
    prefix, lo, hi = "", 0, len(lines)
    found: int | None = None
    for name, index in _parts(path):
        full = f"{prefix}.{name}" if prefix else name
        tables = [
            h for h in headers if lo <= h[0] < hi and h[2] == full and (index is None or h[1])
        ]
        if not tables and index is None:
            # A sub-table may be written after other tables ([attacker.retreat] below
            # [defender]): TOML allows it anywhere later in the file.
            tables = [h for h in headers if h[0] >= lo and h[2] == full and not h[1]]
            hi = len(lines)
        if tables:
            if index is not None and index >= len(tables):
                return found
            start = tables[index or 0][0]
            hi = next(
                (
                    h[0]
                    for h in headers
                    if start < h[0] < hi and (h[2] == full or not h[2].startswith(full + "."))
                ),
                hi,
            )
            prefix, lo, found = full, start, start + 1
            continue
        if index is None and any(lo <= h[0] < hi and h[2].startswith(full + ".") for h in headers):
            prefix = full  # a table only named by its sub-tables' headers
            continue
        own_end = next((h[0] for h in headers if lo < h[0] < hi), hi)
        if lo == 0 and headers and headers[0][0] == 0 and prefix == "":
            own_end = 0
        key = re.compile(rf"""^\s*["']?{re.escape(name)}["']?\s*=""")
        row = next((r for r in range(lo, own_end) if key.match(lines[r])), None)
        if row is None:
            return found
        if index is None:
            return row + 1  # the value (an inline table at most) is on this line
        element = _element_line(lines, row, lines[row].index("=") + 1, index)
        return row + 1 if element is None else element + 1
    return found
