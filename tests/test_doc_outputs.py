"""What README.md and docs/*.md show a command printing is what it prints: every shown
output is run (docs/regenerate.py finds them) and its numbers compared with the page's,
a probability within the run's own interval, every other number exactly. A page that has
drifted is brought back by ``python docs/regenerate.py``."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests import ROOT


def load_regenerate() -> ModuleType:
    spec = importlib.util.spec_from_file_location("regenerate", ROOT / "docs" / "regenerate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


regenerate = load_regenerate()
#: The docs' commands that take more than a second or two (a race of candidate armies, a
#: price search, a meta-game, the waves of a keep's siege or a tower's, the retreat rule's
#: search, the battle round by round from a given round): their pages and figures are
#: checked in the slow tier (.ci/run runs it), the rest in the first.
SLOW_COMMANDS = ("battle-odds best ", "battle-odds prices ", "battle-odds meta ",
                 "examples/waves/keep_under_siege.toml", "battle-odds retreat ",
                 "examples/waves/tower_in_three_assaults.toml",
                 'docs/unfolding.md: battle-odds odds --attacker "noble, 8 soldier"',
                 # blocks' battle as it unfolds, compiled by the slow tier only (tests/tiers.py)
                 "battle-odds run scenarios/blocks/relief.toml --by-round")  # fmt: skip
SLOW_FIGURES = ("docs/prices.png", "docs/designer_best.png", "docs/meta.png")


def tiered(value: object, slow: bool) -> object:
    return pytest.param(value, marks=pytest.mark.slow) if slow else value


BLOCKS = regenerate.every_block()


@pytest.mark.parametrize(
    "block",
    [tiered(b, any(command in b.name for command in SLOW_COMMANDS)) for b in BLOCKS],
    ids=lambda b: b.name,
)
def test_the_page_shows_what_the_command_prints(block) -> None:  # type: ignore[no-untyped-def]
    if block.slow:
        pytest.skip("a slow block: python docs/regenerate.py reruns it")
    with regenerate.workspace() as folder:
        problems = regenerate.check(block, Path(folder))
    assert problems == [], "run python docs/regenerate.py (then read the diff):\n" + "\n".join(
        problems
    )


def test_the_shown_outputs_are_found() -> None:
    """README's six questions and the shown outputs of the designer, exact and
    unfolding pages."""
    named = {(b.page.name, b.commands[0].argv[0]) for b in BLOCKS}
    assert {
        ("README.md", "run"),
        ("README.md", "exact"),
        ("README.md", "odds"),
        ("README.md", "sweep"),
        ("README.md", "new"),
        ("README.md", "schema"),
        ("designer.md", "worth"),
        ("exact.md", "odds"),
        ("unfolding.md", "run"),
    } <= named


PRINTED = """\
Knights against pikemen (olympia): 100,000 battles

  outcome         probability      95% interval
 ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━
  attacker wins        23.93%   23.67% - 24.20%
  defender wins        76.07%   75.80% - 76.33%
               12    48.65%   47.48%    49.82%    20,000     below
               13    63.03%   61.89%    64.16%    20,000   reaches
seed 20261121  battles 100,000  scenario hash 2ad510d0a1b3b107  kernel skip
time 1.21 s"""


def problems(shown: str) -> list[str]:
    found = []
    for rows, line in regenerate.pair_lines(shown.splitlines(), PRINTED.splitlines()):
        found += ["missing"] if line is None else regenerate.number_problems(" ".join(rows), line)
    return found


def test_a_figures_numbers_allow_a_solvers_last_digits_only() -> None:
    """A stored figure's number against a fresh run's: a solver's last digits (seen 2e-12
    apart across NumPy/SciPy releases) pass, inside lists too; a real change does not."""
    stored = {"residual": 2.4467771865886196e-07, "rows": [{"price": 1.0157330182301927}]}
    noisy = {"residual": 2.446752831925024e-07, "rows": [{"price": 1.0157330182300655}]}
    moved = {"residual": 2.4467771865886196e-07, "rows": [{"price": 1.0158}]}
    assert regenerate.json_problems(stored, noisy, "$") == []
    assert regenerate.json_problems(stored, moved, "$") == [
        "$.rows[0].price: page 1.0157330182301927, run 1.0158"
    ]
    assert regenerate.json_problems({"rows": [1, 2]}, {"rows": [1]}, "$") != []


def test_the_comparison_sees_what_differs() -> None:
    # Within the run's interval: a different stream of the same battle agrees.
    assert problems("  attacker wins        23.80%   23.55% - 24.08%\n...") == []
    # Outside it (README's question 5 before it was regenerated): reported.
    assert problems("  attacker wins        24.40%   24.10% - 24.70%") != []
    # Everything else exactly; a time is never compared; a wrapped line is one line.
    assert problems("seed 20261121  battles 100,000  scenario hash 2ad510d0a1b3b107") == ["missing"]
    footer = "seed 20261121  battles 100,000  scenario hash 2ad510d0a1b3b107  kernel skip  time"
    assert problems(f"{footer} 9.99 s") == []
    assert problems(footer.replace("100,000", "20,000") + " 1.21 s") != []
    # Rows alike but for their numbers are paired by the value probed.
    assert problems("               13    63.03%   61.89%    64.16%    20,000   reaches") == []
    assert problems("               13    63.03%   61.89%    64.16%    40,000   reaches") != []
    assert problems("  a line the run never prints") == ["missing"]


def test_abridged_json_is_compared_by_key() -> None:
    shown = [
        '{"win": {"attacker": {"p": 0.88275, "low": 0.87822, "high": 0.88714}},',
        ' "seed": 1, ...}',
    ]
    run = {"win": {"attacker": {"p": 0.847, "low": 0.842, "high": 0.852}}, "seed": 1, "x": 2}
    assert regenerate.json_problems(regenerate.json_shown(shown), run) != []
    run["win"]["attacker"] = {"p": 0.8830, "low": 0.8786, "high": 0.8873}
    assert regenerate.json_problems(regenerate.json_shown(shown), run) == []
    assert regenerate._json_refreshed(shown, run)[0].startswith('{"win": {"attacker": {"p": 0.883,')


#: A time in prose or output: "1.21 s", "0.50 ms", "211 s", "5 seconds", "2 minutes".
TIMING = re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)? ?(?:s|ms|seconds?|minutes?|min)\b")
#: What names a machine: the processor's model name, as lscpu gives it.
PROCESSOR = re.compile(r"\b(?:AMD|Intel|EPYC|Xeon|Ryzen|Core i\d|Apple M\d|Graviton|Ampere)\b")
#: What names how it was measured: a command in backticks or on a "$ " line.
COMMAND = re.compile(r"`(?:battle-odds|python|time)\s[^`]+`|^\$ ", re.MULTILINE)


def unattributed_timings(text: str) -> list[str]:
    """Times stated without the command and the processor they were measured with: each
    must have both in its paragraph (a fenced block counts as one) or a neighbouring one,
    or, for a generated page, in its header ("Produced by `...`", "Machine: ..."), or for
    a journal of one machine's runs, in its header's "Every figure on this page is from"
    sentence with the commands."""
    header = text[:800]
    if "Produced by `" in header and PROCESSOR.search(header):
        return []
    journal = "Every figure on this page is from" in header
    if journal and PROCESSOR.search(header) and COMMAND.search(header):
        return []
    paragraphs = [""]
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not line.strip() and not fenced:
            paragraphs.append("")
        else:
            paragraphs[-1] += line + "\n"
    found = []
    for i, paragraph in enumerate(paragraphs):
        near = "\n".join(paragraphs[max(0, i - 1) : i + 2])
        for timing in TIMING.findall(paragraph):
            if not (PROCESSOR.search(near) and COMMAND.search(near)):
                found.append(f"{timing!r} in: {' '.join(paragraph.split())[:100]}")
    return found


@pytest.mark.parametrize(
    "page", [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))], ids=lambda p: p.name
)
def test_timings_name_their_command_and_machine(page: Path) -> None:
    assert unattributed_timings(page.read_text(encoding="utf-8")) == []


def test_the_timing_check_sees_a_bare_time() -> None:
    assert unattributed_timings("Sensitivity takes 2.5 s on this machine.\n") != []
    assert (
        unattributed_timings("`battle-odds sensitivity x.toml` took 8.8 s on a 2-core AMD EPYC.\n")
        == []
    )


def test_every_figure_in_docs_names_the_command_that_draws_it() -> None:
    """python docs/regenerate.py --figures can redraw every picture the pages show (the
    page's screenshot is taken by its browser test)."""
    drawn = set(regenerate.figure_commands()) | set(regenerate.screenshot_commands())
    assert drawn == {p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.png")}


def test_readme_says_whether_the_run_holds_the_exact_answer() -> None:
    """Question 1's interval and question 2's exact answer: the prose between them says
    whether one holds the other, as the numbers shown (kept true by regenerate) have it."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    run = next(b for b in BLOCKS if b.page.name == "README.md" and b.commands[0].argv[0] == "run")
    exact = next(
        b for b in BLOCKS if b.page.name == "README.md" and b.commands[0].argv[0] == "exact"
    )
    interval = next(line for line in run.commands[0].shown if "attacker wins" in line)
    _, low, high = regenerate.numbers(interval)
    truth = regenerate.numbers(
        next(line for line in exact.commands[0].shown if "attacker wins" in line)
    )[0]
    says_not = "interval above does not hold the exact answer" in " ".join(text.split())
    assert says_not == (not low <= truth <= high), (interval, truth)


def test_every_figure_has_its_numbers_beside_it() -> None:
    """docs/X.png was drawn by the command its page names, whose --json answer (the
    figure's numbers) is stored in docs/X.json by python docs/regenerate.py --figures."""
    for figure, argv in regenerate.figure_commands().items():
        stored = regenerate.data_path(figure)
        assert stored.exists(), f"{figure}: no {stored.name}; run docs/regenerate.py --figures"
        data = json.loads(stored.read_text(encoding="utf-8"))
        assert data["command"] == ["battle-odds", *argv], figure
        assert isinstance(data["answer"], dict) and data["answer"], figure


def _without_times(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


@pytest.mark.parametrize(
    "figure",
    [
        tiered(figure, figure in SLOW_FIGURES)
        for figure in sorted(set(regenerate.figure_commands()) - set(regenerate.SLOW_FIGURES))
    ],
)
def test_a_figures_numbers_are_what_its_command_prints(figure: str) -> None:
    """The figure's stored numbers against a fresh run of its command (same seed: the
    same numbers; a figure is compared by its numbers, not its pixels)."""
    argv = regenerate.figure_commands()[figure]
    at = argv.index("-o")
    command = regenerate.Command(
        "battle-odds " + shlex.join([*argv[:at], *argv[at + 2 :], "--json"])
    )
    with regenerate.workspace() as folder:
        if "costs.toml" in argv:  # the price list the page's reader wrote first
            regenerate.run(
                regenerate.Command("battle-odds prices --ruleset olympia --write costs.toml"),
                Path(folder),
            )
        printed = regenerate.run(command, Path(folder))
    fresh = json.JSONDecoder().raw_decode(printed[printed.index("{") :])[0]
    stored = json.loads(regenerate.data_path(figure).read_text(encoding="utf-8"))["answer"]
    problems = regenerate.json_problems(_without_times(stored), _without_times(fresh), "$")
    assert problems == [], f"{figure}: run python docs/regenerate.py --figures\n" + "\n".join(
        problems
    )


def test_the_numbers_quoted_from_the_matrix_are_its_numbers() -> None:
    """designer.md quotes two cells of docs/matrix.png: they are the stored figure's."""
    text = " ".join((ROOT / "docs" / "designer.md").read_text(encoding="utf-8").split())
    cells = {
        (c["attacker"], c["defender"]): c
        for c in json.loads((ROOT / "docs" / "matrix.json").read_text(encoding="utf-8"))["answer"][
            "cells"
        ]
    }
    for (attacker, defender), wording in {
        ("archer", "pikeman"): r"20 archers attacking 20 pikemen win",
        ("pikeman", "archer"): r"20 pikemen attacking 20 archers",
    }.items():
        found = re.search(wording + r" (\d+)% \((\d+)-(\d+)\)", text)
        assert found is not None, wording
        cell = cells[(attacker, defender)]
        shown = [f"{100 * cell[k]:.0f}" for k in ("p", "low", "high")]
        assert list(found.groups()) == shown, (attacker, defender, shown)


def test_the_numbers_quoted_from_the_price_list_and_the_meta_are_theirs() -> None:
    """designer.md's fair prices, counter-pick spreads and mix are the stored figures'."""
    text = " ".join((ROOT / "docs" / "designer.md").read_text(encoding="utf-8").split())
    prices = json.loads((ROOT / "docs" / "prices.json").read_text(encoding="utf-8"))["answer"]
    listed = re.search(r"Olympia's fair prices, in soldiers: (.*?) \(on land", text)
    assert listed is not None
    for name, price in re.findall(r"([a-z ]+?) (\d+\.\d\d)", listed.group(1)):
        kind = name.strip().replace(" ", "_")
        assert f"{prices['prices'][kind]['price']:.2f}" == price, kind
    assert f"after fighting {prices['cells']:,} pairs of counts" in text
    for kind, cheap, dear in (("pikeman", "0.81", "1.75"), ("elite_guard", "2.07", "4.54")):
        pairs = sorted(q["price"] for q in prices["prices"][kind]["pairwise"])
        assert [f"{pairs[0]:.2f}", f"{pairs[-1]:.2f}"] == [cheap, dear], kind
    assert "0.81 soldiers against elite guard but 1.75 against pirates" in text
    assert "2.07 against crossbowmen but 4.54 against pikemen" in text
    meta = json.loads((ROOT / "docs" / "meta.json").read_text(encoding="utf-8"))["answer"]
    mix = ", ".join(f"{t.replace('_', ' ')} {100 * w:.0f}%" for t, w in meta["mix"].items())
    assert f"The mix is {mix.replace(', crossbowman', ' and crossbowman')}," in text, mix
