"""The output README.md and docs/*.md show, from fresh runs of the commands they show it for.

A shown output is a fenced block whose lines starting with ``$ battle-odds`` are commands and
whose other lines are what they print (``...`` where the page leaves lines out; a long line
may be wrapped on the page). ``python docs/regenerate.py`` runs every such command in a
temporary folder, as a reader would (in a terminal 80 columns wide, from the repository's
root through a link to its scenarios), and writes each shown line back with the numbers of
the run; ``--check`` only says which differ. tests/test_doc_outputs.py runs the same
commands and compares the numbers: a probability shown with its interval must lie inside
the run's interval, every other number (battles, seeds, means, states, ...) must be the
run's, and times (``0.70 s``) are neither compared nor rewritten: a page states them with
the machine they were measured on. ``--figures`` also redraws the pictures the pages show
(docs/*.png) with the commands they name, and stores each one's numbers beside it
(docs/X.json: the command and its --json answer, for the tests to compare). A block
preceded by the comment ``<!-- regenerate: slow -->`` is left to this script; the tests
skip it, as they skip rerunning the SLOW_FIGURES.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COLUMNS = 80
SLOW = "<!-- regenerate: slow -->"
#: A number as the commands print it: 23.93%, 100,000, -15.6, +1.5, 0.88275.
NUMBER = re.compile(r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?%?(?![\w])")
#: A time: not compared, machines differ.
TIME = re.compile(r"\b\d+(?:\.\d+)? s\b")


@dataclass
class Command:
    line: str  # as the page shows it, without "$ "
    shown: list[str] = field(default_factory=list)  # the output lines the page shows

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.line)[1:]

    @property
    def is_json(self) -> bool:
        return "--json" in self.argv


@dataclass
class Block:
    page: Path
    start: int  # character offset of the block's body in the page
    end: int
    commands: list[Command]
    slow: bool

    @property
    def name(self) -> str:
        first = self.commands[0].line if self.commands else ""
        return f"{self.page.relative_to(ROOT).as_posix()}: {first[:60]}"


def blocks(page: Path) -> Iterator[Block]:
    """The page's fenced blocks that show a battle-odds command's output."""
    text = page.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    offset = 0
    opened: int | None = None  # offset of the open block's body
    before = ""
    for number, line in enumerate(lines):
        if line.startswith("```"):
            if opened is None:
                opened = offset + len(line)
                before = lines[number - 1].strip() if number else ""
            else:
                block = _block(page, text[opened:offset], opened, offset, before == SLOW)
                if block is not None:
                    yield block
                opened = None
        offset += len(line)


def _block(page: Path, body: str, start: int, end: int, slow: bool) -> Block | None:
    commands: list[Command] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            commands.append(Command(line[2:].strip()))
        elif commands:
            commands[-1].shown.append(line)
    if any(c.line.startswith("battle-odds ") and c.shown for c in commands):
        return Block(page, start, end, commands, slow)
    return None


def every_block() -> list[Block]:
    return [b for page in PAGES for b in blocks(page)]


def run(command: Command, cwd: Path) -> str:
    """What the command prints (stdout, then stderr) in ``cwd``, COLUMNS wide."""
    from typer.testing import CliRunner

    from simulator.cli import app

    here = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(app, command.argv, env={"COLUMNS": str(COLUMNS)})
    finally:
        os.chdir(here)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.stdout + result.stderr


def workspace() -> tempfile.TemporaryDirectory[str]:
    """A fresh folder with the repository's scenarios and examples where a reader's
    clone has them."""
    folder = tempfile.TemporaryDirectory(prefix="battle-odds-docs-")
    (Path(folder.name) / "scenarios").symlink_to(ROOT / "scenarios")
    (Path(folder.name) / "examples").symlink_to(ROOT / "examples")
    return folder


def mask(line: str) -> str:
    """The line's words without its numbers or spacing: how lines are paired."""
    return " ".join(NUMBER.sub("#", TIME.sub("TIME", line)).split())


def numbers(line: str) -> list[float]:
    return [
        float(n.rstrip("%").replace(",", "").lstrip("+"))
        for n in NUMBER.findall(TIME.sub("", line))
    ]


def intervals(values: list[float]) -> set[int]:
    """Indices of estimates followed by their interval: p, low, high with low <= p <= high."""
    found: set[int] = set()
    for i in range(len(values) - 2):
        p, low, high = values[i : i + 3]
        if low <= p <= high and low < high and not found & {i - 1, i - 2}:
            found.add(i)
    return found


def number_problems(shown: str, printed: str) -> list[str]:
    """How the page's numbers on a line differ from the run's (empty: they agree)."""
    page, run_ = numbers(shown), numbers(printed)
    if len(page) != len(run_):
        return [f"page {shown.strip()!r}, run {printed.strip()!r}"]
    problems = []
    estimated = intervals(run_)
    skip: set[int] = set()
    for i, (p, r) in enumerate(zip(page, run_, strict=True)):
        if i in skip:
            continue
        if i in estimated:
            low, high = run_[i + 1], run_[i + 2]
            half = (high - low) / 2
            inside = low <= p <= high
            near = abs(page[i + 1] - low) <= half and abs(page[i + 2] - high) <= half
            if not (inside and near):
                problems.append(
                    f"{shown.strip()!r}: {p:g} ({page[i + 1]:g}-{page[i + 2]:g}) is not within "
                    f"the run's interval {low:g}-{high:g} (run: {printed.strip()!r})"
                )
            skip |= {i + 1, i + 2}
        elif p != r:
            problems.append(f"{shown.strip()!r}: {p:g} where the run prints {r:g}")
    return problems


def pair_lines(shown: list[str], printed: list[str]) -> Iterator[tuple[list[str], str | None]]:
    """Each shown line with the printed text it stands for, in order (None when the run
    printed nothing like it). Either side may wrap a line the other prints as one: up to
    five lines of each are joined to find the pair."""
    at = 0
    i = 0
    rows = [s for s in shown if s.strip() and s.strip() != "..."]
    while i < len(rows):
        for width in range(1, 6):
            joined = " ".join(rows[i : i + width])
            hit = _find(mask(joined), numbers(joined)[:1], printed, at)
            if hit is not None:
                start, stop = hit
                rest = "".join(" " + p.strip() for p in printed[start + 1 : stop])
                yield rows[i : i + width], printed[start].rstrip() + rest
                at, i = stop, i + width
                break
        else:
            yield [rows[i]], None
            i += 1


def _find(wanted: str, first: list[float], printed: list[str], at: int) -> tuple[int, int] | None:
    """Where from ``at`` the printed lines (one, or up to five joined) read ``wanted``. Rows
    alike but for their numbers (a sweep's, a search's probes) are told apart by their
    first number, the value probed."""
    for height in range(1, 6):
        spans = [(j, j + height) for j in range(at, len(printed) - height + 1)]
        alike = [s for s in spans if mask(" ".join(printed[s[0] : s[1]])) == wanted]
        same = [s for s in alike if first and numbers(printed[s[0]])[:1] == first]
        if same or alike:
            return (same or alike)[0]
    return None


def json_shown(shown: list[str]) -> dict:
    """The page's abridged JSON (", ..." where keys are left out) as an object."""
    return json.loads(re.sub(r",\s*\.\.\.", "", "\n".join(shown)))


#: How far a stored figure's number may stand from a fresh run's: a fitted price or a
#: residual is the end of an iterative solve (SciPy's root finding and least squares), whose
#: last digits move with the NumPy and SciPy releases and the machine's BLAS (seen: 2e-12
#: apart after a NumPy/SciPy upgrade, the same seed and battles). Nine digits is far below
#: any interval this project reports and far above that noise.
FLOAT_NOISE = 1e-9


def json_problems(page: object, run_: object, where: str = "") -> list[str]:
    if isinstance(page, dict):
        if not isinstance(run_, dict):
            return [f"{where}: the run has no object here"]
        if set(page) == {"p", "low", "high"} and all(k in run_ for k in page):
            low, high = run_["low"], run_["high"]
            half = (high - low) / 2
            ok = low <= page["p"] <= high and all(
                abs(page[k] - run_[k]) <= half for k in ("low", "high")
            )
            return [] if ok else [f"{where}: page {page}, run's interval {low:.5f}-{high:.5f}"]
        problems = []
        for key, value in page.items():
            if key not in run_:
                problems.append(f"{where}.{key}: not in the run's output")
            else:
                problems += json_problems(value, run_[key], f"{where}.{key}")
        return problems
    if isinstance(page, list) and isinstance(run_, list) and len(page) == len(run_):
        return [
            problem
            for i, (shown, fresh) in enumerate(zip(page, run_, strict=True))
            for problem in json_problems(shown, fresh, f"{where}[{i}]")
        ]
    if isinstance(page, float) and isinstance(run_, (int, float)):
        # The page's digits, exponent included (2.4e-07 has eight after the point).
        exponent = Decimal(repr(page)).as_tuple().exponent
        digits = max(0, -exponent) if isinstance(exponent, int) else 0
        same = (
            run_ == page
            or round(run_, digits) == page
            or math.isclose(run_, page, rel_tol=FLOAT_NOISE, abs_tol=FLOAT_NOISE)
        )
        return [] if same else [f"{where}: page {page}, run {run_}"]
    return [] if page == run_ else [f"{where}: page {page!r}, run {run_!r}"]


def check(block: Block, cwd: Path) -> list[str]:
    """What the page shows that the block's commands, run now, do not print."""
    problems = []
    for command in block.commands:
        if not command.line.startswith("battle-odds "):
            continue
        printed = run(command, cwd)
        if not command.shown:
            continue
        if command.is_json:
            problems += json_problems(
                json_shown(command.shown), json.JSONDecoder().raw_decode(printed)[0], "$"
            )
            continue
        for shown, line in pair_lines(command.shown, printed.splitlines()):
            if line is None:
                problems.append(f"{shown[0].strip()!r}: the run prints no such line")
            else:
                problems += number_problems(" ".join(shown), line)
    return [f"$ {block.commands[0].line}: {p}" for p in problems]


def refreshed(command: Command, printed: str) -> list[str]:
    """The shown lines with the run's numbers: a shown line becomes the printed line it
    stands for; a wrapped one keeps its wrapping and takes the printed numbers in turn; an
    abridged JSON object keeps its keys and takes the run's values."""
    if command.is_json:
        return _json_refreshed(command.shown, json.JSONDecoder().raw_decode(printed)[0])
    out: list[str] = []
    rest = list(command.shown)
    for shown, line in pair_lines(command.shown, printed.splitlines()):
        at = rest.index(shown[0])
        out += rest[:at]
        rest = rest[at + len(shown) :]
        if line is None:
            out += shown
        elif len(shown) == 1:
            # A time is the page's to state with its machine (README says which): kept.
            times = iter(TIME.findall(shown[0]))
            out.append(TIME.sub(lambda m, t=times: next(t, m.group(0)), line.rstrip()))
        else:
            values = iter(NUMBER.findall(TIME.sub("", line)))
            for part in shown:
                out.append(NUMBER.sub(lambda m, v=values: next(v, m.group(0)), part))
    return out + rest


#: In abridged JSON: a key, and after it a number, an opening brace or something else.
JSON_TOKEN = re.compile(r'"(\w+)":\s*(?:(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)|(\{))|(\})')


def _json_refreshed(shown: list[str], run_: dict) -> list[str]:
    text = "\n".join(shown)
    path: list[str] = []
    pieces = []
    at = 0
    for match in JSON_TOKEN.finditer(text):
        key, number, opening, closing = match.groups()
        if closing:
            if path:
                path.pop()
            continue
        if opening:
            path.append(key)
            continue
        if number is None:
            continue
        value: object = run_
        for step in (*path, key):
            value = value.get(step) if isinstance(value, dict) else None
        if isinstance(value, (int, float)):
            pieces.append(text[at : match.start(2)])
            pieces.append(repr(round(value, 5)) if isinstance(value, float) else str(value))
            at = match.end(2)
    pieces.append(text[at:])
    return "".join(pieces).split("\n")


def regenerate(pages: list[Path], write: bool) -> list[str]:
    """Rerun every shown output of the pages, in page order, each block in a fresh folder;
    the names of the blocks whose lines changed (written back when ``write``)."""
    stale = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        replacements = []
        for block in blocks(page):
            with workspace() as folder:
                body: list[str] = []
                for command in block.commands:
                    body.append(f"$ {command.line}")
                    if command.line.startswith("battle-odds "):
                        printed = run(command, Path(folder))
                        body += refreshed(command, printed) if command.shown else []
                    else:
                        body += command.shown
                replaced = "\n".join(body) + "\n"
                if replaced != text[block.start : block.end]:
                    stale.append(block.name)
                    replacements.append((block, replaced))
        new = text
        for block, replaced in reversed(replacements):
            new = new[: block.start] + replaced + new[block.end :]
        if write and new != text:
            page.write_text(new, encoding="utf-8")
    return stale


#: A figure a page shows, with the command that draws it: ``battle-odds ... -o docs/X.png``
#: in backticks (prose) or on a line of a fenced block.
FIGURE = re.compile(r"(?:`|^)(battle-odds [^`\n]*(?:\n[^`\n]*)?? -o (docs/[\w.-]+\.png))", re.M)


def figure_commands() -> dict[str, list[str]]:
    """Each docs/*.png a page names with the command that draws it: its arguments."""
    found: dict[str, list[str]] = {}
    for page in PAGES:
        for command, path in FIGURE.findall(page.read_text(encoding="utf-8")):
            # A block's "\" at the end of a line continues the command (not an escape).
            found[path] = shlex.split(" ".join(command.replace("\\\n", " ").split()))[1:]
    return found


#: A picture of the page taken by a browser test: ``BATTLE_ODDS_SCREENSHOT=docs/x.png pytest ...``.
SCREENSHOT = re.compile(r"`BATTLE_ODDS_SCREENSHOT=(docs/[\w.-]+\.png) (pytest [^`\n]+)`")


def screenshot_commands() -> dict[str, list[str]]:
    """Each docs/*.png a page names with the browser test that takes it: its pytest line."""
    found: dict[str, list[str]] = {}
    for page in PAGES:
        for path, command in SCREENSHOT.findall(page.read_text(encoding="utf-8")):
            found[path] = shlex.split(command)
    return found


#: Figures whose commands take too long for the tests to rerun: none since the studies'
#: engine (the price search 18 s, the meta game on its prices 8 s, the army search 7 s,
#: on 2 cores); a figure added here is checked by this script alone.
SLOW_FIGURES: tuple[str, ...] = ()


def data_path(figure: str) -> Path:
    """Where a figure's numbers are stored: beside it, ``docs/matrix.png`` ->
    ``docs/matrix.json``."""
    return ROOT / Path(figure).with_suffix(".json")


def figure_data(argv: list[str], printed: str) -> dict:
    """What is stored beside a figure: the command that drew it and its --json answer."""
    return {"command": ["battle-odds", *argv], "answer": json.JSONDecoder().raw_decode(printed)[0]}


def regenerate_figures(only: list[str] | None = None) -> list[str]:
    """Redraw the figures the pages show (slow: minutes), stored with a 256-colour
    palette to keep the repository small, each with its numbers beside it (the command's
    --json answer, drawn in the same run) for the tests to compare."""
    from PIL import Image

    drawn = []
    here = Path.cwd()
    os.chdir(ROOT)
    try:
        for path, argv in figure_commands().items():
            if only and path not in only:
                continue
            printed = run(Command("battle-odds " + shlex.join([*argv, "--json"])), ROOT)
            with Image.open(ROOT / path) as image:
                image.convert("RGB").quantize(256).save(ROOT / path, optimize=True)
            if "{" not in printed:
                raise SystemExit(f"{path}: the command printed no answer:\n{printed}")
            data = figure_data(argv, printed[printed.index("{") :])
            data_path(path).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
            drawn.append(path)
        for path, argv in screenshot_commands().items():
            if only and path not in only:
                continue
            env = {**os.environ, "BATTLE_ODDS_SCREENSHOT": path}
            subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, env=env, check=True)
            drawn.append(path)
    finally:
        os.chdir(here)
    return drawn


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    parser.add_argument("--figures", action="store_true", help="also redraw docs/*.png")
    parser.add_argument(
        "--figure", action="append", help="with --figures: only this one (docs/X.png)"
    )
    parser.add_argument("pages", nargs="*", type=Path, help="pages (default: all)")
    options = parser.parse_args()
    if options.figures and not options.check:
        for path in regenerate_figures(options.figure):
            print(f"redrawn: {path}")
    stale = regenerate([p.resolve() for p in options.pages] or PAGES, write=not options.check)
    for name in stale:
        print(("stale: " if options.check else "regenerated: ") + name)
    return 1 if options.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
