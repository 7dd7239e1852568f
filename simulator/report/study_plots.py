"""Plots of the balance studies: sweeps and target searches, comparisons, worth,
sensitivity (tornado) and the equal-cost matrix. One function per panel, as in
:mod:`simulator.report.plots`, which re-exports them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .. import rulesets
from ..errors import BattleOddsError
from ..rulesets import words

if TYPE_CHECKING:
    from ..studies.compare import Comparison
    from ..studies.matrix import Matrix
    from ..studies.sensitivity import Sensitivity
    from ..studies.sweep import Sweep, TargetSearch
    from ..studies.worth import Worth
from .figures import COLOURS, axes_for, new_figure, percent_colorbar, won


def _path_words(sweep_or_search: Any, path: str) -> str:
    scenario = sweep_or_search.scenario
    return rulesets.get(scenario.ruleset).describe_path(path, scenario.data)


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
    changed = _differences(a, b)
    return f"{a.name}\nB: {changed}" if changed else f"{a.name}\nB and A: the same battle"


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    """Scenario data as dotted paths to values (list items by index)."""
    if isinstance(data, dict):
        found: dict[str, Any] = {}
        for key, value in data.items():
            found.update(_flat(value, f"{prefix}.{key}" if prefix else str(key)))
        return found
    if isinstance(data, list) and any(isinstance(v, dict | list) for v in data):
        found = {}
        for i, value in enumerate(data):
            found.update(_flat(value, f"{prefix}[{i}]"))
        return found
    return {prefix: data}


def _differences(a: Any, b: Any, most: int = 2) -> str:
    """What B changes from A in words ("terrain swamp, not land"), the first ``most``
    changes: a comparison of two unnamed variants says what its B is."""
    from .question import value_words

    ruleset = rulesets.get(a.ruleset)
    before, after = _flat(dict(a.data)), _flat(dict(b.data))
    ignored = {"name", "description", "battles", "seed"}
    changes = []
    for path in dict.fromkeys([*before, *after]):
        if path in ignored or before.get(path) == after.get(path):
            continue
        said = ruleset.describe_path(path, b.data).replace("_", " ")
        old = "none" if path not in before else value_words(before[path])
        new = "none" if path not in after else value_words(after[path])
        changes.append(f"{said} {new}, not {old}")
    shown = "; ".join(changes[:most])
    return shown + (f" (and {len(changes) - most} more changes)" if len(changes) > most else "")


def _knob_words(knob: Any) -> str:
    side = knob["side"] if isinstance(knob["side"], str) else None
    return words.describe_knob(knob["kind"], side, str(knob["subject"]), str(knob["field"]))


def sweep_panel(sweep: Sweep, ax: Axes | None = None, target: float | None = None) -> Axes:
    """P(outcome) against the varied value with its 95% band (one --vary)."""
    ax = axes_for(ax)
    frame = sweep.frame
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
        ax.plot(x, p, marker="o", markersize=3, color=colour, label=f"P({won(sweep.outcome)})")
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
            label=f"P({won(sweep.outcome)}), 95% interval",
        )
        ax.set_xticks(x, [str(v) for v in vary.values])
        ax.set_xlim(-0.5, len(x) - 0.5)
    if target is not None:
        ax.axhline(target, color="black", linestyle=":", linewidth=1, label=f"target {target:g}")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(_path_words(sweep, vary.path))
    ax.set_ylabel(f"P({won(sweep.outcome)})")
    ax.set_title(
        f"{sweep.scenario.name}: P({won(sweep.outcome)}) by {_path_words(sweep, vary.path)}"
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
    ax = axes_for(ax, 7.0, 5.5)
    rows_vary, cols_vary = sweep.varies
    # An interrupted sweep has the first points only: the rest of the grid stays blank.
    shape = (len(rows_vary.values), len(cols_vary.values))
    run = sweep.frame["p"].to_numpy() if sweep.points else np.zeros(0)
    grid = np.concatenate([run, np.full(shape[0] * shape[1] - len(run), np.nan)]).reshape(shape)
    image = ax.imshow(
        grid,
        origin="lower",
        aspect="auto",
        cmap="RdBu_r" if sweep.outcome == "attacker" else "RdBu",
        vmin=0,
        vmax=1,
        interpolation="nearest",
    )
    quantity = quantity or f"P({won(sweep.outcome)})"
    percent_colorbar(ax, image, quantity)
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
            if np.isnan(p):
                continue
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
    ax = axes_for(ax)
    frame = search.frame.sort_values(search.vary.path)
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
    return probability_axes(
        ax,
        _path_words(search, search.vary.path),
        search.outcome,
        f"{search.scenario.name}: target search",
    )


def probability_axes(ax: Axes, xlabel: str, outcome: str, title: str) -> Axes:
    """Labels, limits, legend and grid of a panel of P(outcome) against a value."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"P({won(outcome)})")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title)
    ax.legend(loc="best", fontsize="small")
    ax.grid(alpha=0.3)
    return ax


def comparison_panel(comparison: Comparison, ax: Axes | None = None) -> Axes:
    """B - A for each outcome, in points: the paired interval (the outcome's colour) with
    the estimate marked and written beside it and, fainter above it, the independent
    one; the legend shows both kinds of interval."""
    from matplotlib.lines import Line2D

    ax = axes_for(ax)
    outcomes = comparison.outcomes
    rows = np.arange(len(outcomes))
    for row, outcome in zip(rows, outcomes, strict=True):
        paired, independent = comparison.win(outcome), comparison.win_independent(outcome)
        ax.plot(
            [100 * independent.low, 100 * independent.high],
            [row - 0.22] * 2,
            color="#bbbbbb",
            linewidth=6,
            solid_capstyle="butt",
        )
        ax.plot(
            [100 * paired.low, 100 * paired.high],
            [row] * 2,
            color=COLOURS[outcome],
            linewidth=9,
            solid_capstyle="butt",
        )
        ax.plot(
            [100 * paired.difference],
            [row],
            marker="o",
            markersize=9,
            color="black",
            markerfacecolor="white",
        )
        ax.annotate(
            f"{100 * paired.difference:+.2f} ({100 * paired.low:+.2f} to {100 * paired.high:+.2f})",
            (100 * max(paired.high, independent.high), row),
            xytext=(8, 0),
            textcoords="offset points",
            va="center",
            fontsize="small",
        )
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_yticks(rows, [won(o) for o in outcomes])
    ax.set_ylim(len(outcomes) - 0.5, -0.7)
    low = min(100 * comparison.win_independent(o).low for o in outcomes)
    high = max(100 * comparison.win_independent(o).high for o in outcomes)
    span = max(high - low, 1.0)
    # Room on the right for the values written beside the intervals.
    ax.set_xlim(min(low, 0) - 0.05 * span, max(high, 0) + 0.9 * span)
    ax.set_xlabel(f"P(B) - P(A) in points, 95% intervals, {comparison.n:,} battles")
    ax.set_title(_comparison_title(comparison), fontsize="medium")
    handles = [
        Line2D([], [], color="#555555", linewidth=9, label="paired (common random numbers)"),
        Line2D([], [], color="#bbbbbb", linewidth=6, label="as two independent runs"),
        Line2D(
            [], [], marker="o", color="black", markerfacecolor="white", linestyle="", label="B - A"
        ),
    ]
    # Below the axes: inside, it covers an interval wherever the differences fall.
    ax.legend(
        handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, fontsize="small"
    )
    return ax


def worth_panel(worth: Worth, ax: Axes | None = None) -> Axes:
    """The probes of a worth search: P(side wins) with n men of Y added, with intervals,
    against P with X (dotted, its band shaded) and the answer (or the range) marked."""
    ax = axes_for(ax)
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
    return probability_axes(
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
    ax = axes_for(ax, 8.0, max(3.0, 0.45 * len(knobs) + 1.5))
    colour = COLOURS[result.side]
    rows = np.arange(len(knobs))
    for direction, offset, alpha in (("down", -0.2, 0.45), ("up", 0.2, 1.0)):
        part = frame[frame["direction"] == direction].set_index("knob").reindex(knobs)
        # In points, as the table prints them: +1.5 is P going from 24.1% to 25.6%.
        diff = 100 * part["diff"].to_numpy(dtype=float)
        low, high = 100 * part["low"].to_numpy(float), 100 * part["high"].to_numpy(float)
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
    reach = 100 * np.nanmax(np.abs(frame[["low", "high"]].to_numpy(float))) if len(frame) else 0.0
    reach = 1.0 if not np.isfinite(reach) or reach == 0 else reach
    ax.set_xlim(-1.25 * reach, 1.25 * reach)
    ax.set_xlabel(
        f"change in P({won(result.side)}) in points, paired 95% intervals\n"
        "(beside each bar: the value stepped to)"
    )
    ax.set_title(
        f"{result.scenario.name}: which number matters\n"
        f"P({won(result.side)}) = {100 * result.base:.1f}%, {result.battles:,} battles per change, "
        f"seed {result.seed}",
        fontsize="medium",
    )
    ax.legend(loc="lower right", fontsize="small")
    ax.grid(axis="x", alpha=0.3)
    return ax


def matrix_panel(matrix: Matrix, ax: Axes | None = None) -> Axes:
    """Who beats whom at equal cost: P(attacker wins) for each pair of unit types (rows
    attack, columns defend) on a diverging scale centred at 1/2, each cell showing the
    probability over its 95% interval (``0%`` over ``0-1``: never a "0% \u00b11" that reaches
    below nothing)."""
    n = len(matrix.types)
    ax = axes_for(ax, *_matrix_size(n))
    p, low, high = (matrix.grid(c) for c in ("p", "low", "high"))
    image = ax.imshow(p, cmap="RdBu_r", vmin=0, vmax=1, interpolation="nearest")
    percent_colorbar(ax, image, "P(attacker wins)", fraction=0.05, pad=0.02)
    cell_font = "small" if n <= 10 else "x-small" if n <= 14 else "xx-small"
    small = "medium" if n <= 10 else "small" if n <= 14 else "x-small"
    for (r, c), value in np.ndenumerate(p):
        ax.text(
            c,
            r,
            f"{100 * value:.0f}%\n{100 * low[r, c]:.0f}-{100 * high[r, c]:.0f}",
            ha="center",
            va="center",
            fontsize=cell_font,
            linespacing=1.1,
            color="white" if abs(value - 0.5) > 0.3 else "black",
        )
    labels = [f"{t.replace('_', ' ')} ({matrix.men[t]})" for t in matrix.types]
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
        f"P(attacker wins) over its 95% interval, {matrix.battles:,} battles a pair, "
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
