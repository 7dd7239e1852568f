"""The ``terminal`` marker (tests/conftest.py): which tests .ci/run runs again at 60 and 200
columns under a long TMPDIR, and the watch that keeps a test that prints off the list of
those that print nothing."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import click
import pytest
import rich.console
from click.testing import CliRunner

from tests.conftest import PRINTS_NOTHING, TERMINAL_MODULES, _watching_output, only_terminal_tests


def test_each_way_of_printing_is_seen_and_the_watch_leaves_nothing_patched() -> None:
    before = (subprocess.Popen.__init__, CliRunner.invoke, rich.console.Console.__init__)
    with _watching_output() as seen:
        pass
    assert seen == []
    with _watching_output() as seen:
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    assert seen == ["started a process"]
    with _watching_output() as seen:  # a process whose output goes nowhere prints nothing
        subprocess.run(
            [sys.executable, "-c", "pass"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
    assert seen == []
    with _watching_output() as seen:
        rich.console.Console(file=None)
    assert seen == ["made a rich console"]
    with _watching_output() as seen:
        CliRunner().invoke(click.Command("hello", callback=lambda: None), [])
    assert seen == ["ran the command line"]
    assert (subprocess.Popen.__init__, CliRunner.invoke, rich.console.Console.__init__) == before


@pytest.mark.parametrize(
    ("expression", "only"),
    [
        ("terminal and not slow", True),
        ("terminal and slow", True),
        ("terminal", True),
        ("", False),
        ("not slow", False),
        ("slow", False),
        ("terminal or slow", False),
        ("not terminal", False),
    ],
)
def test_a_session_of_terminal_tests_only_is_told_from_the_others(
    expression: str, only: bool
) -> None:
    assert only_terminal_tests(SimpleNamespace(option=SimpleNamespace(markexpr=expression))) is (
        only
    )


def test_the_tests_that_print_nothing_are_of_terminal_modules() -> None:
    assert set(PRINTS_NOTHING) <= TERMINAL_MODULES
    assert all(names for names in PRINTS_NOTHING.values())
