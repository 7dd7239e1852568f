"""Old names of the public studies, kept working for one release with a warning.

The studies speak one vocabulary (docs/balance.md, "The Python API"): ``battles`` for a
scenario's battles (a search's first look included: ``first_battles`` in 0.1) and
``.frame`` a property of every answer (``Sweep.frame()`` and ``TargetSearch.frame()``
were methods in 0.1). An old spelling works through 0.1 and goes in :data:`UNTIL`; it
says what to write instead with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from ...errors import ParameterError

if TYPE_CHECKING:
    import pandas as pd

P = ParamSpec("P")
R = TypeVar("R")

#: The release in which the old names go.
UNTIL = "0.2.0"


def renamed_keywords(**new_of_old: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A study that still takes each old keyword (``first_battles=``) as its new one
    (``battles=``), with a :class:`DeprecationWarning`; both at once is an error."""

    def wrap(study: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(study)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            for old, new in new_of_old.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise ParameterError(
                        old, None, f"the old name of {{{new}}}: give {{{new}}} alone"
                    )
                warnings.warn(
                    f"{study.__name__}({old}=...) is now {study.__name__}({new}=...); "
                    f"{old} goes in {UNTIL}",
                    DeprecationWarning,
                    stacklevel=2,
                )
                kwargs[new] = kwargs.pop(old)
            return study(*args, **kwargs)

        return call

    return wrap


def property_frame(frame: pd.DataFrame, owner: str) -> pd.DataFrame:
    """``frame`` as an answer's ``.frame`` property returns it, still callable as the
    method it was (``sweep.frame()``) with a :class:`DeprecationWarning`. A frame
    derived from it (a selection, a sort) is a plain DataFrame."""
    return _called_frame_type(owner)(frame)


@functools.cache
def _called_frame_type(owner: str) -> type[pd.DataFrame]:
    import pandas as pd  # at use: pandas takes a while to import

    class CalledFrame(pd.DataFrame):
        """A DataFrame that, called, warns and returns itself (a method turned property)."""

        @property
        def _constructor(self) -> Callable[..., pd.DataFrame]:
            return pd.DataFrame

        def __call__(self) -> pd.DataFrame:
            warnings.warn(
                f"{owner}.frame is a property now: write .frame, not .frame(); "
                f"the call goes in {UNTIL}",
                DeprecationWarning,
                stacklevel=2,
            )
            return self

    return CalledFrame


def reads_frame(method: Callable[[Any], pd.DataFrame]) -> Any:
    """``.frame`` as a property of the answer whose method ``method`` builds it."""
    owner = method.__qualname__.split(".")[0]
    return property(functools.wraps(method)(lambda self: property_frame(method(self), owner)))
