"""Pictures of a price list and of the meta game (``prices -o``, ``meta -o``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .figures import new_figure

if TYPE_CHECKING:
    from ..studies.machinery.price_list import Pairwise, Prices
    from ..studies.meta import Meta

ROLE_MARKERS = {"attacker": "^", "defender": "v"}


def prices_panel(prices: Prices, ax: Axes | None = None) -> Axes:
    """One row per type: its break-even price against each other type (each budget,
    attacking and defending) as points, its fair price as a black bar with its interval.
    A row whose points spread widely is a counter-pick, not a mispriced unit."""
    kinds = list(prices.types)
    if ax is None:
        ax = new_figure(*_prices_size(len(kinds))).add_subplot()
    budgets = list(prices.budgets)
    colours = _budget_colours(len(budgets))
    rows = {t: len(kinds) - 1 - i for i, t in enumerate(kinds)}
    for kind in kinds:
        row = rows[kind]
        fair = prices.prices[kind]
        for q in fair.pairwise:
            offset = 0.12 * (budgets.index(q.budget) - (len(budgets) - 1) / 2)
            offset += 0.04 if q.role == "attacker" else -0.04
            ax.plot(
                [q.low, q.high], [row + offset] * 2, color=colours[budgets.index(q.budget)], lw=0.8
            )
            ax.scatter(
                q.price,
                row + offset,
                marker=ROLE_MARKERS[q.role],
                s=22,
                color=colours[budgets.index(q.budget)],
                edgecolors="none" if q.beyond is None else "black",
                zorder=3,
            )
        ax.plot([fair.price] * 2, [row - 0.38, row + 0.38], color="black", lw=2.2, zorder=4)
        if not fair.pairwise:  # a search interrupted by Ctrl-C: no interval, no pairs
            continue
        ax.fill_betweenx(
            [row - 0.38, row + 0.38], fair.low, fair.high, color="black", alpha=0.15, zorder=2
        )
        # Name the matchups at the two ends of the row (every type has some: two types or more).
        # The cheapest below the row and to its left, the dearest above and to its right:
        # two ends close together never write over each other (or over the next row).
        cheapest, dearest = min(fair.pairwise, key=_price), max(fair.pairwise, key=_price)
        for end, ha, dy, va in ((cheapest, "right", -9, "top"), (dearest, "left", 9, "bottom")):
            ax.annotate(
                f"vs {end.against.replace('_', ' ')}",
                (end.price, row),
                xytext=(-3 if ha == "right" else 3, dy),
                textcoords="offset points",
                ha=ha,
                va=va,
                fontsize="x-small",
                color="#444444",
            )
    ax.set_yticks(
        [rows[t] for t in kinds],
        [f"{t.replace('_', ' ')}\n{prices.prices[t].price:.3g}" for t in kinds],
    )
    ax.set_ylim(-0.6, len(kinds) - 0.4)
    ax.margins(x=0.08)  # room for the names of the cheapest and dearest matchups
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter("{x:g}")
    ax.xaxis.set_minor_formatter("{x:g}")
    ax.tick_params(axis="x", which="minor", labelsize="x-small")
    ax.set_xlabel(f"price of one man, in {prices.base}s (log scale)")
    ax.grid(axis="x", which="both", alpha=0.25)
    handles = [
        Line2D([], [], color="black", lw=2.2, label="fair price (grey: interval)"),
        Line2D([], [], ls="", marker="^", color="grey", label="break-even attacking"),
        Line2D([], [], ls="", marker="v", color="grey", label="break-even defending"),
    ] + [
        Line2D([], [], ls="", marker="s", color=colours[i], label=f"budget {b:g}")
        for i, b in enumerate(budgets)
    ]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    state = "" if prices.converged else " (NOT CONVERGED)"
    ax.set_title(
        f"{prices.ruleset}: fair prices{state} and each type's break-even price against\n"
        f"every other type at its fair price, {prices.battles:,} battles a matchup, "
        f"seed {prices.seed}",
        fontsize="medium",
    )
    return ax


def _price(pair: Pairwise) -> float:
    return pair.price


def _budget_colours(n: int) -> list[tuple[float, float, float, float]]:
    from matplotlib import colormaps

    cmap = colormaps["viridis"]
    return [tuple(cmap(0.15 + 0.7 * i / max(n - 1, 1))) for i in range(n)]  # type: ignore[misc]


def _prices_size(types: int) -> tuple[float, float]:
    return 9.0, 1.6 + 0.75 * types


def prices_figure(prices: Prices, dpi: float = 100) -> Figure:
    figure = new_figure(*_prices_size(len(prices.types)), dpi)
    prices_panel(prices, figure.add_subplot())
    return figure


def meta_panel(meta: Meta, ax: Axes | None = None, support_ax: Axes | None = None) -> Axes:
    """The equilibrium mix: each type's weight (bars, written beside them) and, on an axis
    of its own (``support_ax``; beside the weights in ``meta_figure``), how often the type
    is in the mix of a redrawn game: two quantities, two scales, never bars over bars.
    Each row names the type's best reply and its score (below 0: the least bad reply)."""
    n = len(meta.types)
    if ax is None:
        figure = new_figure(*_meta_size(n))
        ax, support_ax = figure.subplots(1, 2, sharey=True, width_ratios=(3, 2))
    order = sorted(range(n), key=lambda i: (-meta.weights[i], -meta.support[i]))
    rows = np.arange(n)
    weights = np.array([meta.weights[i] for i in order])
    ax.barh(rows, weights, color="#2467a8")
    for row, weight in zip(rows, weights, strict=True):
        ax.text(weight + 0.02, float(row), f"{100 * weight:.0f}%", va="center", fontsize="small")
    labels = []
    for i in order:
        kind = meta.types[i]
        reply, score = meta.counter(kind)
        men = "" if meta.matrix is None else f", {meta.matrix.men[kind]} men"
        line = f"{kind.replace('_', ' ')}{men}\nbest reply: {reply.replace('_', ' ')} {score:+.2f}"
        if kind in meta.dominated_by:
            line += f"\ndominated by {meta.dominated_by[kind].replace('_', ' ')}"
        labels.append(line)
    ax.set_yticks(rows, labels, fontsize="small")
    ax.invert_yaxis()
    ax.set_xlim(0, 1.15)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1], ["0", "25%", "50%", "75%", "100%"])
    ax.set_xlabel("weight in the equilibrium mix")
    ax.grid(axis="x", alpha=0.25)
    if support_ax is not None:
        support = np.array([meta.support[i] for i in order])
        support_ax.barh(rows, support, color="#e67e22", alpha=0.85)
        for row, share in zip(rows, support, strict=True):
            support_ax.text(
                share + 0.02, float(row), f"{100 * share:.0f}%", va="center", fontsize="small"
            )
        support_ax.set_xlim(0, 1.2)
        support_ax.set_xticks([0, 0.5, 1], ["0", "50%", "100%"])
        support_ax.set_xlabel(f"in the mix of how many of\n{meta.bootstrap} redrawn games")
        support_ax.tick_params(axis="y", left=False)
        support_ax.grid(axis="x", alpha=0.25)
    where = ""
    if meta.matrix is not None:
        where = f"{meta.matrix.ruleset}, budget {meta.matrix.budget:g}, "
        where += f"{meta.matrix.battles:,} battles a pair: "
    title = (
        f"{where}what players will build\n(Nash equilibrium of the equal-cost game, "
        f"both roles; value {_zero(meta.value):+.3f})"
    )
    if support_ax is not None:
        ax.figure.suptitle(title, fontsize="medium")
    else:
        ax.set_title(title, fontsize="medium")
    return ax


def _zero(x: float) -> float:
    return 0.0 if math.isclose(x, 0.0, abs_tol=5e-4) else x


def _meta_size(types: int) -> tuple[float, float]:
    return 9.0, 1.8 + 0.75 * types


def meta_figure(meta: Meta, dpi: float = 100) -> Figure:
    figure = new_figure(*_meta_size(len(meta.types)), dpi)
    weights, support = figure.subplots(1, 2, sharey=True, width_ratios=(3, 2))
    meta_panel(meta, weights, support)
    return figure
