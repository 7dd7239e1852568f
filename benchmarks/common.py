"""Helpers shared by the benchmark scripts: the machine's load and the run's command."""

from __future__ import annotations

import os
import shlex
import sys


def load_average() -> str:
    """The 1, 5 and 15 minute load averages: read the rates of a shared machine with them."""
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def command_line() -> str:
    """How this benchmark was started, for the report."""
    return shlex.join(["python", *sys.argv])


def markdown_table(headers: list[str], rows: list[list[str]]) -> list[str]:
    """Lines of a markdown table, numbers (every column but the first) right-aligned."""
    return [
        "| " + " | ".join(headers) + " |",
        "|---|" + "---:|" * (len(headers) - 1),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]
