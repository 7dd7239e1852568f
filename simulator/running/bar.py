"""The bar a run draws on a terminal: rich's live display, drawing the lines
:func:`simulator.running.progress.bar_lines` makes at the console's width."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import suppress
from typing import Any

from rich.console import Console, RenderableType
from rich.progress import Progress
from rich.text import Text

from .interrupt import taken_off_at_exit


class Bar(Progress):
    """rich's live display drawing the lines it is given at the console's width."""

    def __init__(
        self, lines: Callable[[int], list[tuple[str, str]]], console: Console, **kwargs: Any
    ) -> None:
        self.lines = lines  # before rich's set-up, which draws once
        self.drawn_on = console
        super().__init__(console=console, **kwargs)

    def start(self) -> None:
        super().start()
        taken_off_at_exit.append(self.stop)

    def stop(self) -> None:
        with suppress(ValueError):
            taken_off_at_exit.remove(self.stop)
        super().stop()

    def get_renderables(self) -> Iterable[RenderableType]:
        text = Text(no_wrap=True, overflow="ignore")
        for i, (line, bar) in enumerate(self.lines(self.drawn_on.width)):
            if i:
                text.append("\n")
            if bar and bar in line:
                before, after = line.split(bar, 1)
                filled = bar.count("\u2501")
                text.append(before, style="bold")
                text.append(bar[:filled], style="bar.complete")
                text.append(bar[filled:], style="bar.back")
                text.append(after)
            else:
                text.append(line)
        yield text
