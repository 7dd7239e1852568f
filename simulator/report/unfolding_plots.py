"""Plots of the battle as it unfolds (a :class:`~simulator.running.unfolding.StepResult`):
each side's men left after each step as bands, with the share still fighting; both
sides' men left together after one step as a heatmap. The words are the text tables'
(:mod:`.unfolding`)."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from .. import rulesets
from ..running.unfolding import StepResult
from .figures import COLOURS, axes_for, figure_of, new_figure, say


def men_left_panel(result: StepResult, ax: Axes | None = None) -> Axes:
    """Each side's men left after each step: the median, a band from 10% to 90%, and
    (right axis) the share of battles still fighting."""
    ax = axes_for(ax)
    unit = rulesets.get(result.scenario.ruleset).step_unit
    ax.set_title("The battle as it unfolds: men left after each step")
    steps = list(result.tally.steps)
    if not steps:
        return say(ax, "No step recorded (a run stopped before its first battles).")
    for side in ("attacker", "defender"):
        histograms = [result.tally.steps[t].men_left[side] for t in steps]
        low = [h.quantile(0.1) for h in histograms]
        mid = [h.quantile(0.5) for h in histograms]
        high = [h.quantile(0.9) for h in histograms]
        ax.fill_between(steps, low, high, step="mid", alpha=0.25, color=COLOURS[side])
        ax.step(steps, mid, where="mid", color=COLOURS[side], label=f"{side} men left (50%)")
    ax.set_xlabel(f"after ({unit})")
    ax.set_ylabel("men left (band: 10% to 90%)")
    ax.set_ylim(bottom=0)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fighting = ax.twinx()
    fighting.plot(
        steps,
        [result.tally.steps[t].p("fighting")[0] for t in steps],
        color="black",
        linestyle="--",
        linewidth=1,
        label="still fighting",
    )
    fighting.set_ylim(0, 1.02)
    fighting.set_ylabel("P(still fighting)")
    lines, labels = ax.get_legend_handles_labels()
    more, more_labels = fighting.get_legend_handles_labels()
    ax.legend(lines + more, labels + more_labels, loc="upper right", fontsize="small")
    return ax


def joint_panel(result: StepResult, step: int | None = None, ax: Axes | None = None) -> Axes:
    """Both sides' men left after ``step`` (default: the result's ``after``): P(the
    attacker's men left, the defender's), one cell each."""
    ax = axes_for(ax)
    step = step if step is not None else result.after
    unit = rulesets.get(result.scenario.ruleset).step_unit
    if step is None or step not in result.tally.steps:
        return say(ax, f"No state recorded after that step ({unit}).")
    attacker, defender, p = result.tally.joint(step)
    grid = np.zeros((int(attacker[-1]) + 1, int(defender[-1]) + 1))
    grid[np.ix_(attacker, defender)] = p
    # Scaled to the likeliest cell: the chances spread over many cells, each small.
    image = ax.imshow(
        grid, origin="lower", aspect="auto", cmap="viridis", vmin=0, vmax=float(grid.max())
    )
    fighting = result.tally.steps[step].p("fighting")[0]
    ax.set_title(f"Men left after {step:,} {unit} ({100 * fighting:.1f}% still fighting)")
    ax.set_xlabel("defender's men left")
    ax.set_ylabel("attacker's men left")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    colorbar = figure_of(ax).colorbar(image, ax=ax)
    colorbar.set_label("P(both), %")
    colorbar.ax.yaxis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=1))
    return ax


def unfolding_figure(result: StepResult, dpi: float = 100) -> Figure:
    """The men-left bands beside the joint heatmap (when a step was chosen)."""
    joint = result.after is not None
    figure = new_figure(12.8 if joint else 6.4, 4.4, dpi)
    axes = figure.subplots(1, 2 if joint else 1, squeeze=False)[0]
    men_left_panel(result, axes[0])
    if joint:
        joint_panel(result, ax=axes[1])
    return figure
