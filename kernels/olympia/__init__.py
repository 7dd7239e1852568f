"""Olympia's kernels (docs/olympia.md): the battle a strike at a time (``strike``), by its
changes (``skip``, its batches of deaths ``batch`` and its kinds of men ``kinds``), by a
walk of its Markov chain (``chain``), the chain solved exactly (``exact``) and the best
retreat on it (``retreat``), over the arrays whose columns ``layout`` names.

Age of Gods' kernel builds on olympia's (its army is olympia's group table with a few
more columns): the package gives it the layout's columns and the strike kernel's steps
it shares, as ``kernels.olympia.G_SIDE`` and ``kernels.olympia.strike_effect``.
"""

from .layout import *  # noqa: F403
from .layout import __all__ as _columns
from .strike import battle_start, keep_left, left_at, pick, refresh, strike_effect

__all__ = [*_columns, "battle_start", "keep_left", "left_at", "pick", "refresh", "strike_effect"]
