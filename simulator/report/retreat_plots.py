"""The retreat map (``battle-odds retreat -o``): the side's men left against the other
side's, each cell coloured by the best rule's decision there (withdraw, fight, mixed where
positions with the same men differ by their types, nobles or structures)."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .figures import new_figure, say

#: Cell codes and their colours: no undecided position, fight, withdraw, both.
_EMPTY, _FIGHT, _WITHDRAW, _MIXED = 0, 1, 2, 3
_COLOURS = ("#ffffff", "#4c9a2a", "#c0392b", "#e6a23c")
_NAMES = ("", "fight", "withdraw", "both (by type, nobles, structure or step)")


def retreat_figure(result: Any, dpi: float = 100) -> Figure:
    """The best rule's map of ``result`` (a :class:`~simulator.studies.retreat.RetreatResult`)."""
    if getattr(result, "method", "exact") == "simulated":
        return _simulated_figure(result, dpi)
    figure = new_figure(6.4, 4.8, dpi)
    ax = figure.add_subplot()
    own, enemy, _nobles = result.men_left()
    decisions = [d for d in result.frame["decision"]]
    cells = np.zeros((max(own, default=0) + 1, max(enemy, default=0) + 1), np.int64)
    for o, e, d in zip(own, enemy, decisions, strict=True):
        code = {"fight": _FIGHT, "withdraw": _WITHDRAW}.get(d)
        if code is not None:
            cells[o, e] = code if cells[o, e] in (_EMPTY, code) else _MIXED
    ax.set_title(f"Best retreat rule for the {result.side}: {result.scenario.name}")
    _draw(ax, cells, result.side)
    return figure


def _draw(ax: Any, cells: np.ndarray, side: str) -> None:
    """One map: the side's men left (up) against the other's (across)."""
    other = "defender" if side == "attacker" else "attacker"
    if not cells.any():
        say(ax, "No undecided position: there is nothing to choose.")
        return
    ax.imshow(
        cells,
        origin="lower",
        cmap=ListedColormap(_COLOURS),
        vmin=0,
        vmax=len(_COLOURS) - 1,
        aspect="auto",
        interpolation="nearest",
    )
    ax.set_xlabel(f"{other}'s men left")
    ax.set_ylabel(f"{side}'s men left")
    used = sorted({int(c) for c in np.unique(cells)} - {_EMPTY})
    ax.legend(
        handles=[Patch(color=_COLOURS[c], label=_NAMES[c]) for c in used],
        loc="upper left",
        fontsize="small",
    )


def _simulated_figure(result: Any, dpi: float) -> Figure:
    """A simulated rule's map, one panel per band of steps (the rule weighs the step)."""
    bands = result.bands()
    figure = new_figure(4.0 * max(1, len(bands)) + 0.8, 4.4, dpi)
    figure.suptitle(f"Simulated best retreat rule for the {result.side}: {result.scenario.name}")
    if not bands:
        say(figure.add_subplot(), "No undecided position: there is nothing to choose.")
        return figure
    for i, (first, last, counts) in enumerate(bands):
        ax = figure.add_subplot(1, len(bands), i + 1)
        ax.set_title(f"after steps {first} to {last}" if first != last else f"after step {first}")
        _draw(ax, _simulated_cells(counts), result.side)
    return figure


def _simulated_cells(counts: np.ndarray) -> np.ndarray:
    """A simulated rule's cells from the fresh battles' decisions at each (own, enemy)
    men left: fight or withdraw where every battle there did the same, else both (the
    rule also weighs the step and each type's men)."""
    fight, out = counts[..., 0] > 0, counts[..., 1] > 0
    cells = np.full(fight.shape, _EMPTY, np.int64)
    cells[fight & ~out] = _FIGHT
    cells[out & ~fight] = _WITHDRAW
    cells[fight & out] = _MIXED
    return cells
