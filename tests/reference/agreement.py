"""Kernel against stored reference sample: the check every ruleset's agreement test runs.

The test's docstring states the power of the comparison for each of its cases, in lines
``<case>: winner 0.93, others 0.81``: the chance that a one-point shift
of P(attacker wins) is flagged, and the smallest such chance over the other columns for
a one-point move between neighbouring values (:func:`simulator.testing.agreement_power`).
The check recomputes both from the stored sample and fails when the docstring says
otherwise, so the stated figures cannot go stale; it also fails when either is under
MIN_POWER. ``python -m tests.reference.agreement`` prints the lines to state.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from simulator.testing import agreement_power, tally_agreement
from tests.reference.cases import KERNEL_BATTLES, Case
from tests.reference.generate import load_sample

#: The least power a one-point shift of P(attacker wins), and one point moved between
#: neighbouring values of any other column, must be seen with.
MIN_POWER = 0.8
#: The kernel's seed in every agreement test.
SEED = 5


def case_power(case: Case) -> tuple[float, str, float]:
    """The winner's power, the weakest other column and its power."""
    power = agreement_power(load_sample(case), KERNEL_BATTLES[case.ruleset])
    winner = power.pop("winner")
    weakest = min(power, key=power.__getitem__)
    return winner, weakest, power[weakest]


def power_line(case: Case) -> str:
    """The docstring line stating the power of the case's comparison."""
    winner, _, others = case_power(case)
    return f"{case.name}: winner {winner:.2f}, others {others:.2f}"


def stated_line(docstring: str | None, case: Case) -> str:
    found = re.search(rf"^\s*({re.escape(case.name)}: winner .*)$", docstring or "", re.M)
    return found.group(1).strip() if found else f"no line for {case.name!r} in the docstring"


def check_case(
    case: Case,
    docstring: str | None,
    changes: dict[str, str] | None = None,
    kernel_only: Sequence[str] = (),
) -> list[str]:
    """What is wrong with the kernel against the case's stored reference sample: the
    stated power (if it differs from the computed one or is too low), then every column
    that differs (:func:`simulator.testing.tally_agreement`). ``changes`` are applied to
    the scenario the kernel runs (a kernel choice), not to the one the sample is of."""
    reference = load_sample(case)
    line = power_line(case)
    failures = []
    if stated_line(docstring, case) != line:
        failures.append(f"the docstring should state: {line}")
    winner, weakest, others = case_power(case)
    for what, power in (("P(attacker wins)", winner), (weakest, others)):
        if power < MIN_POWER:
            failures.append(
                f"power {power:.2f} for a one-point shift of {what}: grow the sample"
                f" (python -m tests.reference.generate --grow {case.key})"
            )
    scenario = case.build()
    if changes:
        scenario = scenario.with_changes(changes)
    return failures + tally_agreement(
        scenario,
        reference,
        battles=KERNEL_BATTLES[case.ruleset],
        seed=SEED,
        kernel_only=kernel_only,
    )


def main() -> None:
    """Print the docstring lines of the cases whose samples are up to date (after a
    regeneration, paste them into the agreement tests' docstrings)."""
    from tests.reference.cases import CASES
    from tests.reference.generate import stale_reason

    for case in CASES:
        reason = stale_reason(case)
        if reason is not None:
            print(f"{case.ruleset}: {reason}")
            continue
        _, weakest, _ = case_power(case)
        print(f"{case.ruleset}: {power_line(case)} (the weakest: {weakest})")


if __name__ == "__main__":
    main()
