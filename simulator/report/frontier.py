"""The picture of a ``best`` answer: the chance to win against the cost of the army, the
best army found at each cost with its interval, and the chosen army marked."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from .figures import COLOURS, new_figure

if TYPE_CHECKING:
    from ..studies.best import BestArmy


def frontier_panel(answer: BestArmy, ax: Axes | None = None) -> Axes:
    """Every army evaluated (faint), the best found at each cost with its interval (the
    frontier), the armies not told apart from the chosen one and the chosen army."""
    if ax is None:
        ax = new_figure(7.2, 4.6).add_subplot()
    colour = COLOURS[answer.side]
    _labels(answer, ax)
    if not answer.tallies:  # interrupted before any army fought
        ax.text(0.5, 0.5, "no army evaluated", ha="center", va="center", transform=ax.transAxes)
        return ax
    every = answer.frame
    ax.scatter(
        every["cost"],
        every["p"],
        s=6,
        color="#95a5a6",
        alpha=0.35,
        linewidth=0,
        label=f"every army tried ({len(every):,})",
    )
    front = answer.frontier
    p = front["p"].to_numpy()
    ax.errorbar(
        front["cost"],
        p,
        yerr=np.vstack([p - front["low"].to_numpy(), front["high"].to_numpy() - p]),
        fmt="-o",
        markersize=3.5,
        color=colour,
        capsize=2,
        linewidth=1.2,
        label=f"best army at each cost ({answer.confidence:.0%} intervals)",
    )
    if answer.tied:
        tied = answer.frame[answer.frame["status"] == "tied"]
        ax.scatter(
            tied["cost"],
            tied["p"],
            s=110,
            facecolors="none",
            edgecolors="#e67e22",
            zorder=6,
            label="could not be told apart from it",
        )
    if answer.target is not None:
        ax.axhline(answer.target, color="black", linestyle=":", label=f"target: {answer.target:g}")
    if answer.chosen is not None:
        chosen_p = answer.win(answer.chosen)[0]
        cost = answer.offer.cost(answer.chosen)
        ax.scatter(
            [cost],
            [chosen_p],
            marker="*",
            s=260,
            color="#27ae60",
            edgecolors="black",
            zorder=5,
            label="the army to bring",
        )
        ax.annotate(
            f"{answer.offer.label(answer.chosen)}\nwins {chosen_p:.1%}",
            (cost, chosen_p),
            xytext=(0.97, 0.08),
            textcoords="axes fraction",
            ha="right",
            va="bottom",
            fontsize="small",
            zorder=7,
            bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "#27ae60"},
            arrowprops={"arrowstyle": "->", "color": "black", "lw": 0.8},
        )
    ax.legend(loc="best", fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def _labels(answer: BestArmy, ax: Axes) -> None:
    side = answer.side
    ax.set_ylim(-0.02, 1.02)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(f"what the army added to the {side} costs (budget {answer.offer.budget:g})")
    ax.set_ylabel(f"chance the {side} wins")
    searched = (
        ""
        if answer.exhaustive
        else f" ({answer.evaluated:,} of {answer.candidates:,} armies tried)"
    )
    ax.set_title(
        f"{answer.scenario.name}: what should the {side} bring?{searched}", fontsize="medium"
    )


def frontier_figure(answer: BestArmy, dpi: float = 100) -> Figure:
    figure = new_figure(7.2, 4.6, dpi)
    frontier_panel(answer, figure.add_subplot())
    return figure
