"""Helpers shared by the benchmark scripts: the processor, the machine's load and the run's
command."""

from __future__ import annotations

import os
import platform
import shlex
import sys


def load_average() -> str:
    """The 1, 5 and 15 minute load averages: read the rates of a shared machine with them."""
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def processor() -> str:
    """The processor's model name (``lscpu``'s "Model name"), which every figure depends on."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown processor"


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
