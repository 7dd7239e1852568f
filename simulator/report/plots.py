"""Plots of results and sweeps, one function per panel.

Every panel takes what it draws and an optional matplotlib ``Axes`` (a new figure's
when omitted) and returns the axes. Only the outcome-column contract is used, so every
ruleset gets the same plots. Figures are built without pyplot, on the Agg canvas: no
global backend state is touched (notebooks keep their inline backend, servers need no
display), and :func:`save` writes through a temporary file and a rename, so a plot on
disk is never half written.
"""

from __future__ import annotations

import inspect
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .. import rulesets
from ..errors import BattleOddsError
from ..results.result import Result
from ..results.stats import OUTCOMES
from ..rulesets import words

if TYPE_CHECKING:
    from ..studies.compare import Comparison
    from ..studies.matrix import Matrix
    from ..studies.sensitivity import Sensitivity
    from ..studies.sweep import Sweep, TargetSearch
    from ..studies.worth import Worth

#: File types ``save`` writes (by suffix).
FORMATS = ("png", "svg", "pdf", "jpg", "jpeg")
COLOURS = {"attacker": "#c0392b", "defender": "#2467a8", "draw": "#7f8c8d"}
# Matplotlib 3.10 replaced bxp's ``vert=False`` by ``orientation=``; 3.11 deprecates vert.
_HORIZONTAL: dict[str, Any] = (
    {"orientation": "horizontal"}
    if "orientation" in inspect.signature(Axes.bxp).parameters
    else {"vert": False}
)


def new_figure(width: float = 6.4, height: float = 4.0, dpi: float = 100) -> Figure:
    """A figure on the Agg canvas, without pyplot."""
    figure = Figure(figsize=(width, height), dpi=dpi, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def figure_of(ax: Axes) -> Figure:
    """The top-level figure an axes is drawn in (through any sub-figures)."""
    figure = ax.figure
    while not isinstance(figure, Figure):
        figure = figure.figure
    return figure


def _axes(ax: Axes | None, width: float = 6.4, height: float = 4.0) -> Axes:
    return ax if ax is not None else new_figure(width, height).add_subplot()


def _label(outcome: str) -> str:
    return "draw" if outcome == "draw" else f"{outcome} wins"


def _say(ax: Axes, sentence: str) -> Axes:
    """A panel with nothing to draw says so in words instead of drawing empty axes."""
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.text(0.5, 0.5, sentence, ha="center", va="center", wrap=True, transform=ax.transAxes)
    return ax


def _percent_colorbar(ax: Axes, image: Any, label: str, **options: Any) -> Any:
    """A 0..1 colour bar labelled in % (the unit the cells are written in)."""
    colorbar = ax.figure.colorbar(image, ax=ax, **options)
    colorbar.set_label(f"{label}, %")
    colorbar.set_ticks([0, 0.25, 0.5, 0.75, 1], labels=["0", "25", "50", "75", "100"])
    return colorbar


def _path_words(sweep_or_search: Any, path: str) -> str:
    scenario = sweep_or_search.scenario
    return rulesets.get(scenario.ruleset).describe_path(path, scenario.data)


def outcome_panel(result: Result, ax: Axes | None = None) -> Axes:
    """Probability of each outcome with its 95% interval, as horizontal bars."""
    ax = _axes(ax)
    estimates = [result.win(o) for o in OUTCOMES]
    p = np.array([e[0] for e in estimates])
    errors = np.array([[e[0] - e[1] for e in estimates], [e[2] - e[0] for e in estimates]])
    rows = np.arange(len(OUTCOMES))
    ax.barh(
        rows,
        p,
        xerr=errors,
        color=[COLOURS[o] for o in OUTCOMES],
        capsize=4,
        error_kw={"elinewidth": 1.2},
    )
    ax.set_yticks(rows, [_label(o) for o in OUTCOMES])
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
    ax = _axes(ax)
    unit = rulesets.get(result.scenario.ruleset).step_unit
    ax.set_title("Break timing")
    total = result.tally.steps
    limited = result.turn_limit_battles or 0
    if total.n and limited == total.n:
        return _say(ax, f"Every battle reached the turn limit undecided ({total.n:,} battles).")
    if total.n and total.quantile(0.0) == total.quantile(1.0):
        steps = int(total.quantile(0.0))
        return _say(ax, f"Every battle was decided after exactly {steps:,} {unit}.")
    for outcome, histogram in zip(OUTCOMES, result.tally.steps_by_outcome, strict=True):
        if histogram.n:
            t, alive = histogram.survival()
            ax.step(
                t,
                alive,
                where="post",
                color=COLOURS[outcome],
                label=f"{_label(outcome)} ({histogram.n:,})",
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


def casualty_panel(result: Result, side: str = "attacker", ax: Axes | None = None) -> Axes:
    """Losses per unit type of one side: box from the exact histograms (box: quartiles,
    line: median, whiskers: 10% and 90%, diamond: mean)."""
    ax = _axes(ax)
    prefix = f"casualties.{side}."
    army = words.ARMY.get(side, side)
    ax.set_title(f"Men lost by {army}")
    stats = []
    for name, h in result.tally.columns.items():
        if name.startswith(prefix) and h.n:
            stats.append(
                {
                    "label": name.removeprefix(prefix),
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
        return _say(ax, f"No man of {army} died\nin any of the {result.n:,} battles.")
    if stats and all(s["whislo"] == s["whishi"] == s["mean"] for s in stats):
        lost = ", ".join(f"{s['mean']:g} {s['label']}" for s in stats)
        return _say(ax, f"In every battle {army}\nlost exactly {lost}.")
    if stats:
        ax.bxp(
            stats,
            **_HORIZONTAL,
            showmeans=True,
            patch_artist=True,
            boxprops={"facecolor": COLOURS.get(side, "#95a5a6"), "alpha": 0.5},
            meanprops={"marker": "D", "markerfacecolor": "white", "markeredgecolor": "black"},
        )
        ax.invert_yaxis()
        # Losses are whole men: an axis of at least one man, from none.
        left, right = ax.get_xlim()
        ax.set_xlim(min(left, -0.05), max(right, 1.05))
    else:
        return _say(ax, f"The ruleset reports no losses per type for {army}.")
    ax.set_xlabel("men lost per battle\n(box 25-75%, whiskers 10-90%, \u25c7 mean)")
    return ax


def flags_panel(result: Result, ax: Axes | None = None) -> Axes:
    """Probabilities of the ruleset's yes/no extras (leader captured, castle fallen...)."""
    from ..results.stats import wilson
    from ..running.precision import flag_successes

    ax = _axes(ax)
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
    for ax, side in zip(lower, sides or ["attacker"], strict=False):
        casualty_panel(result, side, ax)
    if has_flags:
        flags_panel(result, lower[-1])
    ruleset = result.scenario.ruleset
    figure.suptitle(f"{result.scenario.name} ({ruleset}), seed {result.seed}", fontweight="bold")
    return figure


def sweep_panel(sweep: Sweep, ax: Axes | None = None, target: float | None = None) -> Axes:
    """P(outcome) against the varied value with its 95% band (one --vary)."""
    ax = _axes(ax)
    frame = sweep.frame()
    vary = sweep.varies[0]
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in vary.values)
    x = frame[vary.path].to_numpy() if numeric else np.arange(len(frame))
    colour = COLOURS[sweep.outcome]
    p = frame["p"].to_numpy()
    if numeric:
        ax.fill_between(
            x,
            frame["low"],
            frame["high"],
            color=colour,
            alpha=0.25,
            linewidth=0,
            label="95% interval",
        )
        ax.plot(x, p, marker="o", markersize=3, color=colour, label=f"P({_label(sweep.outcome)})")
    else:
        # Values without an order between them (terrains, policies): points, no line.
        errors = np.vstack([p - frame["low"].to_numpy(), frame["high"].to_numpy() - p])
        ax.errorbar(
            x,
            p,
            yerr=errors,
            fmt="o",
            color=colour,
            capsize=5,
            label=f"P({_label(sweep.outcome)}), 95% interval",
        )
        ax.set_xticks(x, [str(v) for v in vary.values])
        ax.set_xlim(-0.5, len(x) - 0.5)
    if target is not None:
        ax.axhline(target, color="black", linestyle=":", linewidth=1, label=f"target {target:g}")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(_path_words(sweep, vary.path))
    ax.set_ylabel(f"P({_label(sweep.outcome)})")
    ax.set_title(
        f"{sweep.scenario.name}: P({_label(sweep.outcome)}) by {_path_words(sweep, vary.path)}"
    )
    ax.legend(loc="best", fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def heatmap_panel(sweep: Sweep, ax: Axes | None = None, quantity: str | None = None) -> Axes:
    """P(outcome) over a grid of two varied values (two --vary), as a heat map, the cells
    and the colour bar in %. ``quantity`` names what P(outcome) means in the battle at
    hand (a blocks siege with no storm: "P(castle starved)"): the colour bar and the title
    say it."""
    if len(sweep.varies) != 2:
        raise BattleOddsError("a heat map needs two --vary paths")
    ax = _axes(ax, 7.0, 5.5)
    rows_vary, cols_vary = sweep.varies
    grid = sweep.frame()["p"].to_numpy().reshape(len(rows_vary.values), len(cols_vary.values))
    image = ax.imshow(
        grid,
        origin="lower",
        aspect="auto",
        cmap="RdBu_r" if sweep.outcome == "attacker" else "RdBu",
        vmin=0,
        vmax=1,
        interpolation="nearest",
    )
    quantity = quantity or f"P({_label(sweep.outcome)})"
    _percent_colorbar(ax, image, quantity)
    ax.set_xticks(
        np.arange(len(cols_vary.values)),
        [str(v) for v in cols_vary.values],
        rotation=90 if len(cols_vary.values) > 12 else 0,
    )
    ax.set_yticks(np.arange(len(rows_vary.values)), [str(v) for v in rows_vary.values])
    ax.set_xlabel(_path_words(sweep, cols_vary.path))
    ax.set_ylabel(_path_words(sweep, rows_vary.path))
    ax.set_title(f"{sweep.scenario.name}: {quantity}, %")
    if grid.size <= 225:
        for (r, c), p in np.ndenumerate(grid):
            ax.text(
                c,
                r,
                f"{100 * p:.0f}",
                ha="center",
                va="center",
                fontsize="small",
                color="white" if abs(p - 0.5) > 0.3 else "black",
            )
    return ax


def sweep_figure(sweep: Sweep, target: float | None = None, dpi: float = 100) -> Figure:
    """The sweep's plot: a curve with its band for one --vary, a heat map for two."""
    figure = new_figure(8.0, 5.0, dpi)
    ax = figure.add_subplot()
    if len(sweep.varies) == 2:
        heatmap_panel(sweep, ax)
    else:
        sweep_panel(sweep, ax, target)
    return figure


def target_panel(search: TargetSearch, ax: Axes | None = None) -> Axes:
    """The probes of a target search with their intervals, the target and the answer."""
    ax = _axes(ax)
    frame = search.frame().sort_values(search.vary.path)
    x, p = frame[search.vary.path].to_numpy(dtype=float), frame["p"].to_numpy()
    errors = np.vstack([p - frame["low"].to_numpy(), frame["high"].to_numpy() - p])
    ax.errorbar(
        x,
        p,
        yerr=errors,
        fmt="o",
        color=COLOURS[search.outcome],
        capsize=4,
        label=f"probes (intervals at z = {search.z:.2f})",
    )
    ax.axhline(search.target, color="black", linestyle=":", label=f"target {search.target:g}")
    if search.value is not None:
        ax.axvline(
            float(search.value),
            color="green",
            linestyle="--",
            label=f"smallest reaching: {search.value}",
        )
    return _probability_axes(
        ax,
        _path_words(search, search.vary.path),
        search.outcome,
        f"{search.scenario.name}: target search",
    )


def _probability_axes(ax: Axes, xlabel: str, outcome: str, title: str) -> Axes:
    """Labels, limits, legend and grid of a panel of P(outcome) against a value."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"P({_label(outcome)})")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.legend(loc="best", fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def comparison_panel(comparison: Comparison, ax: Axes | None = None) -> Axes:
    """B - A for each outcome: the paired interval and, fainter, the independent one."""
    ax = _axes(ax)
    rows = np.arange(len(OUTCOMES))
    for row, outcome in zip(rows, OUTCOMES, strict=True):
        paired, independent = comparison.win(outcome), comparison.win_independent(outcome)
        ax.plot(
            [independent.low, independent.high],
            [row + 0.15] * 2,
            color="#bbbbbb",
            linewidth=6,
            solid_capstyle="butt",
            label="independent runs" if row == 0 else None,
        )
        ax.plot(
            [paired.low, paired.high],
            [row] * 2,
            color=COLOURS[outcome],
            linewidth=6,
            solid_capstyle="butt",
            label="paired (common random numbers)" if row == 0 else None,
        )
        ax.plot([paired.difference], [row], marker="|", color="black", markersize=14)
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(rows, [_label(o) for o in OUTCOMES])
    ax.invert_yaxis()
    ax.set_xlabel(f"P(B) - P(A), 95% intervals, {comparison.n:,} battles")
    ax.set_title(_comparison_title(comparison), fontsize="medium")
    # Below the axes: inside, it covers an interval wherever the differences fall.
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize="small")
    return ax


def _comparison_title(comparison: Comparison) -> str:
    """ "B vs A" by the scenarios' names; by their files when the names are the same."""
    a, b = comparison.a.scenario, comparison.b.scenario
    if a.name != b.name:
        return f"B: {b.name}\nvs A: {a.name}"
    files = [str(s.path) if s.path else "" for s in (b, a)]
    if all(files) and files[0] != files[1]:
        # Two files of one name in different folders: the shortest tails that differ.
        tails = [Path(f).name for f in files]
        if tails[0] == tails[1]:
            tails = [f"{Path(f).parent.name}/{Path(f).name}" for f in files]
        return f"{a.name}\nB ({tails[0]}) vs A ({tails[1]})"
    return f"{a.name}\nvariant B vs variant A"


def worth_panel(worth: Worth, ax: Axes | None = None) -> Axes:
    """The probes of a worth search: P(side wins) with n men of Y added, with intervals,
    against P with X (dotted, its band shaded) and the answer (or the range) marked."""
    ax = _axes(ax)
    frame = worth.frame
    p_x, low_x, high_x = worth.reference()
    n, p = frame["n"].to_numpy(float), frame["p"].to_numpy()
    colour = COLOURS[worth.side]
    ax.axhspan(low_x, high_x, color="black", alpha=0.1, linewidth=0)
    count, kind = worth.add
    named = kind if count == 1 else words.plural(kind)
    ax.axhline(p_x, color="black", linestyle=":", label=f"with {count} {named}: {p_x:.3f}")
    ax.errorbar(
        n,
        p,
        yerr=np.vstack([p - frame["low"].to_numpy(), frame["high"].to_numpy() - p]),
        fmt="o",
        color=colour,
        capsize=4,
        label=f"with n {words.plural(worth.in_)} (intervals at z = {worth.z:.2f})",
    )
    if worth.n is not None:
        ax.axvline(
            worth.n,
            color="green",
            linestyle="--",
            label=f"worth: {worth.n} {words.plural(worth.in_)}",
        )
    elif worth.low is not None:
        top = worth.max_n if worth.high is None else worth.high
        ax.axvspan(worth.low - 0.5, top + 0.5, color="green", alpha=0.15, label="worth: in here")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return _probability_axes(
        ax,
        f"n: {words.plural(worth.in_)} added to {words.ARMY.get(worth.side, worth.side)}",
        worth.side,
        f"{worth.scenario.name}: what {count} {named} is worth in {words.plural(worth.in_)}",
    )


def tornado_panel(result: Sensitivity, ax: Axes | None = None, top: int = 15) -> Axes:
    """The change in the win probability when each knob moves one step down (light bar)
    and up (dark bar), with the paired 95% intervals: the ``top`` knobs with the largest
    effect, the largest at the top."""
    frame = result.frame
    knobs = list(dict.fromkeys(frame["knob"]))[:top]
    ax = _axes(ax, 8.0, max(3.0, 0.45 * len(knobs) + 1.5))
    colour = COLOURS[result.side]
    rows = np.arange(len(knobs))
    for direction, offset, alpha in (("down", -0.2, 0.45), ("up", 0.2, 1.0)):
        part = frame[frame["direction"] == direction].set_index("knob").reindex(knobs)
        diff = part["diff"].to_numpy(dtype=float)
        low, high = part["low"].to_numpy(float), part["high"].to_numpy(float)
        ax.barh(
            rows + offset,
            np.nan_to_num(diff),
            height=0.4,
            xerr=np.nan_to_num(np.vstack([diff - low, high - diff])),
            color=colour,
            alpha=alpha,
            capsize=3,
            error_kw={"elinewidth": 1.0, "alpha": 1.0},
            label=f"one step {direction}",
        )
        # The value stepped to, just past the end of the interval.
        for row, (value, lo, hi, to) in enumerate(zip(diff, low, high, part["to"], strict=True)):
            right = np.isnan(value) or value >= 0
            ax.annotate(
                "n/a" if np.isnan(value) else f"{to:g}",
                (0 if np.isnan(value) else hi if right else lo, row + offset),
                xytext=(5 if right else -5, 0),
                textcoords="offset points",
                ha="left" if right else "right",
                va="center",
                fontsize="x-small",
                color="#444444",
            )
    first = frame.drop_duplicates("knob").set_index("knob")
    ax.set_yticks(rows, [f"{_knob_words(first.loc[k])} ({first.loc[k, 'from']:g})" for k in knobs])
    ax.invert_yaxis()
    ax.axvline(0, color="black", linewidth=0.8)
    reach = np.nanmax(np.abs(frame[["low", "high"]].to_numpy(float))) if len(frame) else 0.0
    reach = 1.0 if not np.isfinite(reach) or reach == 0 else reach
    ax.set_xlim(-1.25 * reach, 1.25 * reach)
    ax.set_xlabel(
        f"change in P({_label(result.side)}), paired 95% intervals\n"
        "(beside each bar: the value stepped to)"
    )
    ax.set_title(
        f"{result.scenario.name}: which number matters\n"
        f"P({_label(result.side)}) = {result.base:.3f}, {result.battles:,} battles per change, "
        f"seed {result.seed}",
        fontsize="medium",
    )
    ax.legend(loc="lower right", fontsize="small")
    ax.grid(axis="x", alpha=0.3)
    return ax


def _knob_words(knob: Any) -> str:
    side = knob["side"] if isinstance(knob["side"], str) else None
    return words.describe_knob(knob["kind"], side, str(knob["subject"]), str(knob["field"]))


def matrix_panel(matrix: Matrix, ax: Axes | None = None) -> Axes:
    """Who beats whom at equal cost: P(attacker wins) for each pair of unit types (rows
    attack, columns defend) on a diverging scale centred at 1/2, each cell showing the
    probability and its 95% interval's larger half-width, in points."""
    n = len(matrix.types)
    ax = _axes(ax, *_matrix_size(n))
    p, low, high = (matrix.grid(c) for c in ("p", "low", "high"))
    image = ax.imshow(p, cmap="RdBu_r", vmin=0, vmax=1, interpolation="nearest")
    _percent_colorbar(ax, image, "P(attacker wins)", fraction=0.05, pad=0.02)
    half = np.maximum(p - low, high - p)
    cell_font = "medium" if n <= 10 else "small" if n <= 14 else "x-small"
    small = "medium" if n <= 10 else "small" if n <= 14 else "x-small"
    for (r, c), value in np.ndenumerate(p):
        ax.text(
            c,
            r,
            f"{100 * value:.0f}%\n\u00b1{np.ceil(100 * half[r, c]):.0f}",
            ha="center",
            va="center",
            fontsize=cell_font,
            linespacing=1.1,
            color="white" if abs(value - 0.5) > 0.3 else "black",
        )
    labels = [f"{t} ({matrix.men[t]})" for t in matrix.types]
    ax.set_xticks(np.arange(n), labels)
    if n > 5:
        ax.tick_params(axis="x", labelrotation=35)
        for label in ax.get_xticklabels():
            label.set_horizontalalignment("right")
            label.set_rotation_mode("anchor")
    ax.set_yticks(np.arange(n), labels)
    ax.tick_params(labelsize=small)
    ax.set_xlabel("defending army (men)")
    ax.set_ylabel("attacking army (men)")
    ax.set_title(
        f"{matrix.ruleset}: who beats whom at equal cost (budget {matrix.budget:g})\n"
        f"P(attacker wins) \u00b1 95% interval, {matrix.battles:,} battles a pair, "
        f"seed {matrix.seed}",
        fontsize="medium",
    )
    return ax


def _matrix_size(types: int) -> tuple[float, float]:
    """Inches for square cells of about 0.6 inch, the labels and the colour bar."""
    return 2.9 + 0.6 * types, 2.1 + 0.55 * types


def matrix_figure(matrix: Matrix, dpi: float = 100) -> Figure:
    """The matrix heat map alone, sized to the number of types."""
    figure = new_figure(*_matrix_size(len(matrix.types)), dpi)
    matrix_panel(matrix, figure.add_subplot())
    return figure


def check_output(path: str | Path) -> tuple[Path, str, Path]:
    """The image path, its format and its folder; a bad suffix or a missing folder is an
    error (checked before a long run as well as when saving)."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise BattleOddsError(
            f"-o {path}: unknown image type '{path.suffix}': expected "
            + ", ".join(f".{f}" for f in FORMATS)
        )
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise BattleOddsError(f"-o {path}: no such folder '{folder}'")
    return path, fmt, folder


def save(figure: Figure, path: str | Path, dpi: float | None = None) -> Path:
    """Write ``figure`` to ``path`` (.png, .svg, .pdf or .jpg) through a temporary file and a
    rename in the same folder: the file is either the old one or the whole new one."""
    path, fmt, folder = check_output(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    # mkstemp makes the file private; give the plot the permissions a plain open() would.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temporary, 0o666 & ~umask)
    try:
        with os.fdopen(handle, "wb") as stream:
            figure.savefig(stream, format=fmt, dpi=dpi if dpi is not None else figure.dpi)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path
