"""Plots of a run's result, one function per panel; the studies' panels
(:mod:`.study_plots`) and saving (:mod:`.figures`) are re-exported here.

Every panel takes what it draws and an optional matplotlib ``Axes`` (a new figure's
when omitted) and returns the axes. Only the outcome-column contract is used, so every
ruleset gets the same plots. Figures are built without pyplot, on the Agg canvas: no
global backend state is touched (notebooks keep their inline backend, servers need no
display), and :func:`save` writes through a temporary file and a rename, so a plot on
disk is never half written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .. import rulesets
from ..results.result import Result
from ..results.stats import OUTCOMES
from ..rulesets import words

if TYPE_CHECKING:
    pass
from .figures import (
    COLOURS,
    FORMATS,
    HORIZONTAL,
    axes_for,
    check_output,
    figure_of,
    new_figure,
    save,
    say,
    won,
)
from .study_plots import (
    comparison_panel,
    heatmap_panel,
    matrix_figure,
    matrix_panel,
    sweep_figure,
    sweep_panel,
    target_panel,
    tornado_panel,
    worth_panel,
)

__all__ = [
    "FORMATS",
    "casualty_panel",
    "casualty_sides",
    "check_output",
    "comparison_panel",
    "figure_of",
    "flags_panel",
    "heatmap_panel",
    "matrix_figure",
    "matrix_panel",
    "new_figure",
    "outcome_panel",
    "report_figure",
    "save",
    "survival_panel",
    "sweep_figure",
    "sweep_panel",
    "target_panel",
    "tornado_panel",
    "worth_panel",
]


def outcome_panel(result: Result, ax: Axes | None = None) -> Axes:
    """Probability of each outcome with its 95% interval, as horizontal bars."""
    ax = axes_for(ax)
    outcomes = result.outcomes
    estimates = [result.win(o) for o in outcomes]
    p = np.array([e[0] for e in estimates])
    errors = np.array([[e[0] - e[1] for e in estimates], [e[2] - e[0] for e in estimates]])
    rows = np.arange(len(outcomes))
    ax.barh(
        rows,
        p,
        xerr=errors,
        color=[COLOURS[o] for o in outcomes],
        capsize=4,
        error_kw={"elinewidth": 1.2},
    )
    ax.set_yticks(rows, [won(o) for o in outcomes])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("probability (bars: 95% interval)")
    ax.set_title(f"Outcome, {result.n:,} battles")
    for row, (value, _, high) in zip(rows, estimates, strict=True):
        # Beside the interval's end, or inside the bar when that end is near the edge.
        inside = high > 0.8
        ax.text(
            value - 0.02 if inside else high + 0.02,
            float(row),
            f"{100 * value:.2f}%",
            va="center",
            ha="right" if inside else "left",
            color="white" if inside else "black",
        )
    return ax


def survival_panel(result: Result, ax: Axes | None = None) -> Axes:
    """P(still undecided after t) for each outcome (battles ending that way) and for all.

    Exact step functions from the tally's step histograms, not from kept rows.
    """
    ax = axes_for(ax)
    unit = rulesets.get(result.scenario.ruleset).step_unit
    ax.set_title("Break timing")
    total = result.tally.steps
    limited = result.turn_limit_battles or 0
    if total.n and limited == total.n:
        return say(ax, f"Every battle reached the turn limit undecided ({total.n:,} battles).")
    if total.n and total.quantile(0.0) == total.quantile(1.0):
        steps = int(total.quantile(0.0))
        return say(ax, f"Every battle was decided after exactly {steps:,} {unit}.")
    for outcome, histogram in zip(OUTCOMES, result.tally.steps_by_outcome, strict=True):
        if histogram.n:
            t, alive = histogram.survival()
            ax.step(
                t,
                alive,
                where="post",
                color=COLOURS[outcome],
                label=f"{won(outcome)} ({histogram.n:,})",
            )
    if total.n:
        t, alive = total.survival()
        ax.step(
            t,
            alive,
            where="post",
            color="black",
            linestyle="--",
            linewidth=1,
            label=f"all battles ({total.n:,})",
        )
    ax.set_ylim(0, 1.02)
    ax.set_xlim(left=0)
    ax.set_xlabel(f"t ({unit})")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("P(still undecided after t)")
    ax.legend(loc="upper right", fontsize="small")
    return ax


def casualty_sides(result: Result) -> list[str]:
    """The sides that have casualty columns, in the order the ruleset reports them."""
    sides: list[str] = []
    for name in result.tally.columns:
        parts = name.split(".")
        if parts[0] == "casualties" and len(parts) >= 3 and parts[1] not in sides:
            sides.append(parts[1])
    return sides


def starting_strength(result: Result) -> dict[tuple[str, str], int]:
    """(side, unit type) -> how many the side starts with, where the ruleset says."""
    from ..errors import BattleOddsError

    try:
        forces = rulesets.get(result.scenario.ruleset).forces(result.scenario.model)
    except (BattleOddsError, AttributeError, TypeError):
        return {}
    return {(side, kind): count for side, kind, count in forces}


def lost_unit(result: Result) -> str:
    """What a casualty counts: men, or (blocks) steps."""
    template = rulesets.get(result.scenario.ruleset).column_words.get("casualties", "")
    return "steps" if template.startswith("steps") else "men"


def casualty_panel(result: Result, side: str = "attacker", ax: Axes | None = None) -> Axes:
    """Losses per unit type of one side: box from the exact histograms (box: quartiles,
    line: median, whiskers: 10% and 90%, diamond: mean), and where the ruleset says how
    many of a type the side starts with, that number as a bar and in the label."""
    ax = axes_for(ax)
    prefix = f"casualties.{side}."
    army = words.ARMY.get(side, side)
    unit = lost_unit(result)
    start = starting_strength(result)
    ax.set_title(f"{unit.capitalize()} lost by {army}")
    stats: list[dict[str, Any]] = []
    for name, h in result.tally.columns.items():
        if name.startswith(prefix) and h.n:
            kind = name.removeprefix(prefix)
            stats.append(
                {
                    "kind": kind,
                    "label": kind.replace("_", " ")
                    + (f" (of {start[(side, kind)]})" if (side, kind) in start else ""),
                    "start": start.get((side, kind)),
                    "med": h.quantile(0.5),
                    "q1": h.quantile(0.25),
                    "q3": h.quantile(0.75),
                    "whislo": h.quantile(0.1),
                    "whishi": h.quantile(0.9),
                    "mean": h.mean(),
                    "fliers": [],
                }
            )
    if stats and all(s["mean"] == 0 for s in stats):
        return say(ax, f"No man of {army} died\nin any of the {result.n:,} battles.")
    if stats and all(s["whislo"] == s["whishi"] == s["mean"] for s in stats):
        lost = ", ".join(f"{s['mean']:g} {s['kind']}" for s in stats)
        return say(ax, f"In every battle {army}\nlost exactly {lost}.")
    if stats:
        ax.bxp(
            [{k: v for k, v in s.items() if k not in ("start", "kind")} for s in stats],
            **HORIZONTAL,
            showmeans=True,
            patch_artist=True,
            boxprops={"facecolor": COLOURS.get(side, "#95a5a6"), "alpha": 0.5},
            meanprops={"marker": "D", "markerfacecolor": "white", "markeredgecolor": "black"},
        )
        for row, entry in enumerate(stats, start=1):
            if entry["start"] is not None:
                ax.plot([entry["start"]], [row], marker="|", markersize=16, color="black")
        ax.invert_yaxis()
        # Losses are whole men: an axis of at least one man, from none.
        left, right = ax.get_xlim()
        ax.set_xlim(min(left, -0.05), max(right, 1.05))
    else:
        return say(ax, f"The ruleset reports no losses per type for {army}.")
    marked = " (| at the start)" if start else ""
    ax.set_xlabel(f"{unit} lost per battle{marked}\nbox 25-75%, whiskers 10-90%, \u25c7 mean")
    return ax


def flags_panel(result: Result, ax: Axes | None = None) -> Axes:
    """Probabilities of the ruleset's yes/no extras (leader captured, castle fallen...)."""
    from ..results.stats import wilson
    from ..running.precision import flag_successes

    ax = axes_for(ax)
    names = [n for n in result.tally.columns if n in result.flags]
    estimates = [
        wilson(flag_successes(result.tally.columns[n]), result.tally.columns[n].n) for n in names
    ]
    rows = np.arange(len(names))
    p = np.array([e[0] for e in estimates])
    errors = np.array([[e[0] - e[1] for e in estimates], [e[2] - e[0] for e in estimates]])
    ax.barh(rows, p, xerr=errors.reshape(2, len(names)), color="#8e44ad", alpha=0.7, capsize=3)
    ruleset = rulesets.get(result.scenario.ruleset)
    ax.set_yticks(rows, [ruleset.describe_column(n) for n in names])
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel("probability (bars: 95% interval)")
    ax.set_title("Other outcomes")
    return ax


def report_figure(
    result: Result, width: float = 12.0, height: float = 8.0, dpi: float = 100
) -> Figure:
    """Outcome probabilities, break timing, and casualties per side (and the yes/no
    extras, if the ruleset reports any) in one figure of ``width x height`` inches."""
    figure = new_figure(width, height, dpi)
    sides = casualty_sides(result)
    has_flags = any(n in result.flags for n in result.tally.columns)
    # Two rows of sub-figures, each laid out on its own: one grid whose columns are
    # shared by both rows makes constrained layout collapse when tick labels differ.
    top, bottom = np.asarray(figure.subfigures(2, 1)).ravel()
    upper = top.subplots(1, 2)
    outcome_panel(result, upper[0])
    survival_panel(result, upper[1])
    lower = bottom.subplots(1, max(len(sides), 1) + (1 if has_flags else 0), squeeze=False)[0]
    casualty_axes = [
        casualty_panel(result, side, ax)
        for ax, side in zip(lower, sides or ["attacker"], strict=False)
    ]
    # One scale for both sides' losses: a side that lost 5 is not drawn as long as one
    # that lost 50.
    drawn = [ax for ax in casualty_axes if ax.lines or ax.patches]
    if len(drawn) > 1:
        left = min(ax.get_xlim()[0] for ax in drawn)
        right = max(ax.get_xlim()[1] for ax in drawn)
        for ax in drawn:
            ax.set_xlim(left, right)
    if has_flags:
        flags_panel(result, lower[-1])
    ruleset = result.scenario.ruleset
    figure.suptitle(f"{result.scenario.name} ({ruleset}), seed {result.seed}", fontweight="bold")
    return figure
