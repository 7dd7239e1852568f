"""The figure of ``battle-odds calibrate``: the PIT histogram of the real losses and the
reliability diagram of the winners."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .figures import COLOURS, new_figure, say

if TYPE_CHECKING:
    from ..studies.calibrate import Calibration


def pit_panel(calibration: Calibration, ax: Axes) -> Axes:
    """Where each real loss fell in the model's distribution of it (mid-PIT): flat when
    the model's spreads are right, U-shaped when too narrow, humped when too wide."""
    counts = np.asarray(calibration.pit_counts, float)
    if counts.sum() == 0:
        return say(ax, "no recorded losses to place")
    bins = len(counts)
    edges = np.linspace(0.0, 1.0, bins + 1)
    ax.bar(edges[:-1], counts, width=1.0 / bins, align="edge", color="#7f8c8d", edgecolor="white")
    ax.axhline(counts.sum() / bins, color="black", linestyle="--", linewidth=1, label="calibrated")
    ax.set_xlim(0, 1)
    ax.set_xlabel("where the real loss fell in the model's distribution (PIT)")
    ax.set_ylabel("recorded losses")
    ax.set_title(
        f"{calibration.coverage:.0%} of {calibration.losses} losses inside the 5-95% band",
        fontsize=10,
    )
    ax.legend(loc="upper center", fontsize=8)
    return ax


def reliability_panel(calibration: Calibration, ax: Axes) -> Axes:
    """The share of battles the attacker won against the model's P(attacker wins), by
    tenths of the prediction; the diagonal is a calibrated model."""
    kept = [(n, p, o) for n, p, o in calibration.reliability if n]
    if not kept:
        return say(ax, "no battles scored")
    n, predicted, observed = (np.array(x, float) for x in zip(*kept, strict=True))
    ax.plot([0, 1], [0, 1], color="black", linestyle="--", linewidth=1, label="calibrated")
    ax.scatter(predicted, observed, s=20 + 200 * n / n.max(), color=COLOURS["attacker"], zorder=3)
    for x, y, count in zip(predicted, observed, n, strict=True):
        ax.annotate(
            f"{int(count)}", (x, y), textcoords="offset points", xytext=(6, -10), fontsize=8
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("model's P(attacker wins)")
    ax.set_ylabel("share the attacker won")
    ax.set_title(f"Brier {calibration.brier:.3f}, log loss {calibration.log_loss:.3f}", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    return ax


def calibration_figure(calibration: Calibration, dpi: float = 100) -> Figure:
    figure = new_figure(10.0, 4.2, dpi)
    left, right = figure.subplots(1, 2)
    reliability_panel(calibration, left)
    pit_panel(calibration, right)
    name = calibration.path or "calibration"
    figure.suptitle(f"{name}: {len(calibration.rows)} real battles", fontsize=11)
    return figure
