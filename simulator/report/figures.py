"""What every plot shares: new figures on the Agg canvas (no pyplot, no global backend
state: notebooks keep their inline backend, servers need no display), the side colours,
and :func:`save`, which writes through a temporary file and a rename so that a plot on
disk is never half written."""

from __future__ import annotations

import inspect
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ..atomic import temporary_prefix
from ..rulesets.words import won as won  # the plots' outcome labels (defined without matplotlib)
from ..running.output_paths import check_output_path

if TYPE_CHECKING:
    pass

#: File types ``save`` writes (by suffix).
FORMATS = ("png", "svg", "pdf", "jpg", "jpeg")
COLOURS = {
    "attacker": "#c0392b",
    "defender": "#2467a8",
    "draw": "#7f8c8d",
    # A withdrawal: its side's colour, lighter.
    "attacker_withdrew": "#e6a19a",
    "defender_withdrew": "#93b4d8",
}
# Matplotlib 3.10 replaced bxp's ``vert=False`` by ``orientation=``; 3.11 deprecates vert.
HORIZONTAL: dict[str, Any] = (
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


def axes_for(ax: Axes | None, width: float = 6.4, height: float = 4.0) -> Axes:
    return ax if ax is not None else new_figure(width, height).add_subplot()


def say(ax: Axes, sentence: str) -> Axes:
    """A panel with nothing to draw says so in words instead of drawing empty axes."""
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.text(0.5, 0.5, sentence, ha="center", va="center", wrap=True, transform=ax.transAxes)
    return ax


def percent_colorbar(ax: Axes, image: Any, label: str, **options: Any) -> Any:
    """A 0..1 colour bar labelled in % (the unit the cells are written in)."""
    colorbar = ax.figure.colorbar(image, ax=ax, **options)
    colorbar.set_label(f"{label}, %")
    colorbar.set_ticks([0, 0.25, 0.5, 0.75, 1], labels=["0", "25", "50", "75", "100"])
    return colorbar


def check_output(path: str | Path) -> tuple[Path, str, Path]:
    """The image path, its format and its folder; a bad suffix or a missing folder is an
    error (checked before a long run as well as when saving)."""
    path = check_output_path(path, "-o", tuple(f".{f}" for f in FORMATS), "image")
    return path, path.suffix.lower().lstrip("."), path.parent


def mark_partial(figure: Figure, note: str) -> None:
    """Say across the top of ``figure`` that it shows a partial answer (Ctrl-C)."""
    figure.text(
        0.5,
        0.998,
        f"PARTIAL: {note}",
        ha="center",
        va="top",
        color="#b00020",
        fontsize="large",
        fontweight="bold",
    )


def save(
    figure: Figure, path: str | Path, dpi: float | None = None, partial: str | None = None
) -> Path:
    """Write ``figure`` to ``path`` (.png, .svg, .pdf or .jpg) through a temporary file and a
    rename in the same folder: the file is either the old one or the whole new one.
    ``partial``: the figure shows an interrupted run; the note says so on it."""
    path, fmt, folder = check_output(path)
    if partial is not None:
        mark_partial(figure, partial)
    handle, temporary = tempfile.mkstemp(prefix=temporary_prefix(path), suffix=".tmp", dir=folder)
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
