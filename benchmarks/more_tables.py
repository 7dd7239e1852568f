"""The ruleset and statistics-overhead tables, printed and kept in docs/benchmarks.md.

    python benchmarks/more_tables.py [--quick] [--write]

``benchmarks/run.py`` calls :func:`print_and_write` last, with its own options; the
tables go into the notes part of docs/benchmarks.md (which run.py keeps), between
markers, replacing the tables of the previous run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
sys.path.insert(0, str(ROOT))

from benchmarks import overhead, rulesets  # noqa: E402
from simulator.atomic import write_atomically  # noqa: E402

BEGIN = "<!-- rulesets and overhead: written by benchmarks/more_tables.py -->"
END = "<!-- end of rulesets and overhead -->"


def sections(quick: bool) -> list[str]:
    return [
        "## Every ruleset's kernel against its pure-Python reference",
        "",
        *rulesets.section(quick),
        "",
        "## What the statistics cost: simulate against the bare kernel",
        "",
        *overhead.section(quick),
    ]


def with_tables(text: str, lines: list[str]) -> str:
    """``text`` with the block between the markers replaced by ``lines`` (appended, with
    the markers, when there is none yet)."""
    block = "\n".join([BEGIN, "", *lines, "", END])
    if BEGIN in text and END in text:
        before, rest = text.split(BEGIN, 1)
        return before + block + rest.split(END, 1)[1]
    return text.rstrip("\n") + "\n\n" + block + "\n"


def print_and_write(quick: bool, doc: Path | None) -> None:
    """Measure, print, and (when ``doc`` is given) put the tables into ``doc``."""
    lines = sections(quick)
    print("\n".join(lines))
    if doc is not None:
        write_atomically(doc, with_tables(doc.read_text() if doc.exists() else "", lines))
        print(f"wrote the ruleset and overhead tables into {doc}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--write", action="store_true", help=f"put the tables into {DOC}")
    args = parser.parse_args()
    print_and_write(args.quick, DOC if args.write else None)


if __name__ == "__main__":
    main()
