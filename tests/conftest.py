"""The test session's start (the kernels compiled first, in parallel, on an empty cache)
and the fixtures test modules share.

Every process of the session (pytest's own, and each ``battle-odds`` a test starts) loads
the kernels from the tree's Numba cache, which a fresh clone lacks: each kernel then
compiles in the first test that needs it, one after another on one core. Where several
kernels are missing, ``battle-odds warm`` compiles them first, as many at once as the
machine has cores (about half the time on two); a cache already filled costs nothing.
README's first tier warms the kernel paths its tests use, every path but
tests/tiers.py's ``SLOW_TIER_PATHS``; a session that runs slow tests warms those too.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import simulator
from tests import ROOT
from tests.tiers import SLOW_TIER_PATHS

#: The kernel modules whose cache index (``kernels/PACKAGE/__pycache__/MODULE.FUNCTION-*.nbi``,
#: olympia's in its package's folder) says the module's kernel was compiled in this tree.
KERNELS = (
    "olympia/chain",
    "olympia/skip",
    "olympia/strike",
    "olympia/exact",
    "age_of_gods",
    "blocks",
    "confrontation",
    "skirmish",
)


def missing_kernels(folder: Path) -> list[str]:
    """The modules of :data:`KERNELS` without a cached function under ``folder`` (the
    kernels' folder)."""
    missing = []
    for name in KERNELS:
        package, _, module = name.rpartition("/")
        if not any((folder / package / "__pycache__").glob(f"{module}.*.nbi")):
            missing.append(name)
    return missing


def selects_slow_tests(config: pytest.Config) -> bool:
    """Whether the session's ``-m`` expression lets slow tests run (a slow test may also
    be a terminal one): README's ``pytest`` (``-m "not slow"``) does not, ``pytest -m
    slow`` and ``.ci/run``'s later sessions do."""
    from _pytest.mark.expression import Expression

    expression = config.option.markexpr
    if not expression:
        return True
    compiled = Expression.compile(expression)
    return any(
        compiled.evaluate(functools.partial(_marked, marks))
        for marks in ({"slow"}, {"slow", "terminal"})
    )


def _marked(marks: set[str], name: str, **_: Any) -> bool:
    return name in marks


def warm_arguments(config: pytest.Config, folder: Path) -> list[str] | None:
    """``battle-odds warm``'s arguments for this session, or None where its kernels are
    cached already. A first-tier session compiles every kernel path but
    :data:`~tests.tiers.SLOW_TIER_PATHS`, where several modules lack kernels (a fresh
    clone); a session that runs slow tests compiles every path there, and where only
    those paths' own functions are missing (after a fresh clone's first tier), those
    paths."""
    missing = len(missing_kernels(folder)) >= 2
    if not selects_slow_tests(config):
        if not missing:
            return None
        from simulator import rulesets
        from simulator.cli.warm import jobs

        names = [job.name for job in jobs(list(rulesets.available()))]
        return [arg for name in names if name not in SLOW_TIER_PATHS for arg in ("--path", name)]
    if missing:
        return []
    lacking = [
        path
        for path, function in SLOW_TIER_PATHS.items()
        if not any(
            (folder / Path(function).parent / "__pycache__").glob(f"{Path(function).name}-*.nbi")
        )
    ]
    # After the first tier (.ci/run's order) only the paths it left: the others would be
    # loaded only, a process each (about 30 s on two cores).
    return [arg for path in lacking for arg in ("--path", path)] or None


def pytest_sessionstart(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        return  # a pytest-xdist worker: its controller warmed the cache before starting it
    if os.environ.get("NUMBA_CACHE_DIR") or os.environ.get("NUMBA_DISABLE_JIT") == "1":
        return  # a cache elsewhere, or none: the session's own choice
    arguments = warm_arguments(session.config, ROOT / "kernels")
    if arguments is None:
        return
    subprocess.run([sys.executable, "-m", "simulator", "warm", *arguments], cwd=ROOT, check=False)


#: The modules whose tests read what a command prints in a terminal (its lines, their
#: width, the paths in them) or start a browser under the session's temporary folder:
#: their tests are marked ``terminal``, and .ci/run runs them again at 60 and 200 columns
#: under a long TMPDIR (README's run is the 80 columns a script sees), so that no test
#: passes only at the width or the temporary folder of the machine it was written on.
TERMINAL_MODULES = frozenset(
    {
        "test_age_of_gods",
        "test_bad_inputs",
        "test_calibrate",
        "test_cli_options",
        "test_compare",
        "test_faults",
        "test_human_output",
        "test_interrupt",
        "test_olympia_exact_stops",
        "test_olympia_runs",
        "test_output_paths",
        "test_plugins",
        "test_progress_eta",
        "test_retreat",
        "test_serve_browser",
        "test_skirmish",
        "test_skirmish_unfolding",
        "test_stop_rules",
        "test_terminal_output",
        "test_unfolding",
        "test_unknowns",
        "test_waves",
    }
)

#: The tests of :data:`TERMINAL_MODULES` that print nothing: they call a kernel or the
#: library and check its numbers or its exceptions (the agreement tests among them), so
#: neither the width nor the temporary folder can reach what they check, and they are
#: not marked ``terminal`` (run again at each width they cost CI about as much as the
#: tests that print, for nothing). A test listed here that starts a process, runs the
#: command line in-process or makes a rich console fails (:func:`watch_quiet_test`), so
#: the list cannot hide a test that prints; a name here of no test in its module fails
#: the collection.
PRINTS_NOTHING: dict[str, frozenset[str]] = {
    "test_age_of_gods": frozenset(
        {
            "test_source_text_value_and_break_point",
            "test_noble_with_two_pikemen_fights_on_and_with_two_knights_does_not",
            "test_missile_cap_is_own_defenders_and_second_hits_are_wasted",
            "test_rain_grounds_archers_and_wind_halves_missiles",
            "test_melee_cap_is_four_strikes_per_enemy_front_man",
            "test_noble_against_noble_simultaneous_melee_and_terrain",
            "test_identical_front_line_armies_are_symmetric",
            "test_special_attack_strikes_its_targets_in_the_special_phase",
            "test_control_limits_field_the_strongest_men",
            "test_peasants_flee_and_count_as_casualties",
            "test_caps_count_defenders_in_kernel_and_reference",
            "test_shielded_noble_gives_no_melee_strikes_as_in_the_released_engine",
            "test_pikemen_double_their_defense_against_mounted_men",
            "test_kernel_agrees_with_stored_reference",
            "test_agreement_check_detects_a_broken_rule",
            "test_same_seed_same_battles_on_any_threads_and_chunks",
            "test_bundled_scenarios_run",
        }
    ),
    "test_bad_inputs": frozenset(
        {
            "test_a_replay_past_the_runs_battles_is_refused",
            "test_an_override_of_a_unit_type_is_still_read",
            "test_a_toml_file_with_a_byte_order_mark_is_read",
            "test_a_bad_baseline_number_is_located",
            "test_the_sample_baseline_still_reads",
        }
    ),
    "test_calibrate": frozenset(
        {
            "test_a_real_figure_is_placed_in_the_models_distribution",
            "test_scores_of_a_small_example_computed_by_hand",
            "test_a_winner_the_model_never_saw_counts_as_half_a_battle",
            "test_a_bad_battle_is_skipped_with_its_reason",
        }
    ),
    "test_cli_options": frozenset(
        {
            "test_plain_option_values_read_as_typer_reads_them",
        }
    ),
    "test_faults": frozenset(
        {
            "test_the_bounds_on_a_side_are_far_above_every_bundled_scenario",
            "test_rows_are_kept_unasked_only_where_they_fit",
        }
    ),
    "test_human_output": frozenset(
        {
            "test_the_question_names_armies_settings_and_ruleset",
        }
    ),
    "test_olympia_exact_stops": frozenset(
        {
            "test_three_against_three_attacker_withdraws_at_its_first_loss",
            "test_both_rules_at_the_first_loss_each_side_withdraws_half_the_time",
            "test_a_rule_true_from_the_start_withdraws_after_the_first_strike",
            "test_when_both_rules_hold_at_once_the_attacker_withdraws",
            "test_outnumbered_at_the_start_the_first_strike_can_lift_the_rule",
            "test_after_n_strikes_one_man_each",
            "test_from_step_shifts_the_strike_of_the_state_after",
            "test_rules_on_men_left_agree_with_a_recursion_over_changes",
            "test_the_answer_from_the_start_is_the_answer_from_each_position_after_n_strikes",
            "test_a_rule_that_never_holds_changes_nothing",
            "test_no_rule_no_withdrawal_in_the_answer",
            "test_withdrawals_in_the_json_are_shaped_as_the_wins",
            "test_after_is_refused_in_one_line_over_the_limit",
            "test_an_after_past_every_battles_end_is_the_answer_without_it",
            "test_a_battle_in_progress_is_solved_from_every_part_of_its_state",
            "test_a_battle_broken_before_its_first_strike_is_decided_by_it",
            "test_the_monte_carlo_holds_the_exact_answer",
            "test_the_monte_carlo_state_after_n_strikes_holds_the_exact_one",
            "test_the_reference_simulator_holds_the_exact_answer_with_rules",
        }
    ),
    "test_olympia_runs": frozenset(
        {
            "test_same_battles_on_any_threads_chunking_and_offset",
            "test_merged_statistics_equal_the_rows",
            "test_different_seeds_give_different_battles",
            "test_python_api_for_notebooks",
            "test_bundled_scenarios_cover_every_rule",
            "test_structure_protects_only_its_capacity",
        }
    ),
    "test_output_paths": frozenset(
        {
            "test_each_way_a_path_is_wrong_has_its_line",
            "test_a_type_the_option_does_not_write",
            "test_a_read_only_file_is_refused",
        }
    ),
    "test_plugins": frozenset(
        {
            "test_a_checkout_without_entry_points_still_finds_the_built_ins",
            "test_a_broken_plugin_is_named_in_one_line_and_breaks_nothing_else",
            "test_two_plugins_with_one_name_are_both_named",
            "test_a_module_entry_point_and_a_ruleset_class_both_work",
        }
    ),
    "test_progress_eta": frozenset(
        {
            "test_chunks_start_small_and_grow_to_the_chunk_size",
            "test_estimate_waits_for_a_long_enough_timing",
            "test_estimate_is_within_a_factor_of_two_from_its_first_answer",
            "test_estimate_of_a_real_run_is_within_a_factor_of_two_from_its_first_answer",
            "test_estimate_ignores_the_first_piece_of_work",
            "test_bar_fits_and_never_cuts_a_number",
            "test_format_seconds",
            "test_kernel_calls_stay_within_a_second",
            "test_estimate_is_never_many_times_slower_than_the_pieces_so_far",
            "test_a_scenario_may_ask_for_calls_of_up_to_a_second",
        }
    ),
    "test_retreat": frozenset(
        {
            "test_a_win_worth_nothing_withdraws_after_the_first_strike",
            "test_a_win_worth_much_never_withdraws_and_is_the_exact_solvers_value",
            "test_the_best_rule_is_no_worse_than_any_fixed_rule",
            "test_against_the_other_sides_rule_and_beside_its_own",
            "test_a_plain_python_monte_carlo_of_the_rule_agrees",
            "test_a_type_written_with_no_men_changes_nothing",
            "test_the_frame_has_one_row_per_position",
            "test_what_it_cannot_answer_is_refused",
            "test_the_slices_change_nothing",
            "test_bare_men_by_hand",
        }
    ),
    "test_skirmish": frozenset(
        {
            "test_kernel_agrees_with_stored_reference",
            "test_same_seed_same_battles_on_any_threads_and_chunks",
            "test_replay_is_the_battle_that_run_simulates",
            "test_move_logs_follow_the_rules",
            "test_chooser_takes_the_best_exact_expected_value",
            "test_hit_chance_is_the_closed_form_on_a_grid",
            "test_damage_roll_follows_its_distribution_on_a_grid",
            "test_duel_expected_damage_and_turns",
            "test_reference_damage_roll_has_the_same_law",
            "test_odd_q_neighbours",
            "test_three_way_field_sides_and_ids",
            "test_bundled_scenarios_run",
        }
    ),
    "test_skirmish_unfolding": frozenset(
        {
            "test_kernel_agrees_with_the_reference",
            "test_a_wrong_rule_is_noticed",
            "test_a_rule_only_ends_an_undecided_battle",
            "test_both_sides_at_once_the_attacker_withdraws",
            "test_from_step_counts_turns_from_the_battles_start",
            "test_a_healer_that_has_healed_heals_no_more",
            "test_the_docs_battle_in_progress_validates",
            "test_one_pass_is_run_until_battle_by_battle",
            "test_one_thread_and_all_threads_draw_the_same_battles",
            "test_bad_values_are_one_line",
        }
    ),
    "test_stop_rules": frozenset(
        {
            "test_the_one_line_rule_reads_back",
            "test_one_pass_and_a_step_at_a_time_record_the_same_states",
            "test_the_state_after_each_step_is_the_run_step_by_step",
            "test_the_outcome_plot_shows_the_withdrawals",
            "test_unknown_codes_keep_the_old_codes_and_carry_withdrawals",
            "test_ctrl_c_between_one_pass_blocks_keeps_the_whole_blocks",
        }
    ),
    "test_unfolding": frozenset(
        {
            "test_stopped_battles_are_the_whole_battles_so_far",
            "test_the_state_after_a_step_agrees_with_the_reference",
            "test_blocks_state_after_a_phase_agrees_with_the_reference",
            "test_a_changed_stop_is_noticed",
            "test_step_tally_merges_as_one_run",
            "test_counts_by_step_are_each_steps_own_counts",
            "test_step_tallies_merged_at_once_are_merged_in_turn",
            "test_by_round_records_to_the_turn_limit_and_the_longest_battle_seen",
            "test_by_round_on_one_thread_and_all_threads_is_the_same",
            "test_a_ruleset_without_the_capability_is_refused_in_one_line",
            "test_run_steps_counts_every_battle_at_every_step",
            "test_chunks_recorded_to_their_own_end_merge_as_one_run",
            "test_unfold_from_python_and_its_plots",
            "test_olympia_state_after_strikes_is_the_exact_one",
            "test_olympia_exact_state_long_after_is_the_exact_answer",
            "test_olympia_exact_state_refuses_what_it_does_not_solve",
        }
    ),
    "test_unknowns": frozenset(
        {
            "test_a_range_of_one_is_the_fixed_value_exactly",
            "test_the_integrated_answer_is_the_weighted_mixture_of_fixed_answers",
            "test_draws_follow_their_weights",
            "test_a_draws_value_looked_up_by_its_bucket_is_the_searched_one",
            "test_each_battle_is_its_combinations_battle_of_the_contract",
            "test_a_combination_is_validated_from_data_of_its_own",
            "test_same_battles_on_any_threads_chunks_and_blocks",
            "test_parse_unknown_reads_each_form",
            "test_the_exact_answer_of_ranges_is_the_mixture_of_exact_answers",
            "test_the_page_takes_ranges_in_its_army_fields",
        }
    ),
    "test_waves": frozenset(
        {
            "test_waves_keep_the_randomness_contract",
            "test_the_first_wave_is_the_battle_without_waves",
            "test_a_wave_fights_on_a_stream_of_its_own",
            "test_the_whole_battle_is_the_chain_of_its_waves",
            "test_waves_agree_with_the_reference",
            "test_the_reference_sees_a_wrong_survivor",
            "test_wave_rows_are_tidy",
            "test_a_plugin_that_declares_no_waves_is_refused_in_one_line",
            "test_distinct_rows_are_numpys",
        }
    ),
}

_PRINTS_NOTHING = pytest.StashKey[bool]()


def only_terminal_tests(config: pytest.Config) -> bool:
    """Whether the session's ``-m`` expression selects terminal tests only (.ci/run's
    runs at 60 and 200 columns): whatever other marks a test bears, none without
    ``terminal`` is selected."""
    from _pytest.mark.expression import Expression

    expression = config.option.markexpr
    if not expression:
        return False
    compiled = Expression.compile(expression)
    others = sorted(set(re.findall(r"[A-Za-z_][\w.-]*", expression)) - {"and", "or", "not"})
    others = [name for name in others if name != "terminal"]
    return not any(
        compiled.evaluate(functools.partial(_marked, set(marks)))
        for count in range(len(others) + 1)
        for marks in itertools.combinations(others, count)
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A session of terminal tests only collects :data:`TERMINAL_MODULES` alone: the
    others hold none (a collection of the whole suite is about 14 s of CPU a process,
    of each worker; of these modules, about 8)."""
    if (
        collection_path.suffix == ".py"
        and collection_path.name.startswith("test_")
        and collection_path.stem not in TERMINAL_MODULES
        and only_terminal_tests(config)
    ):
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    modules = {}
    for item in items:
        if item.module is None:
            continue
        module = item.module.__name__.rpartition(".")[2]
        if module not in TERMINAL_MODULES:
            if item.get_closest_marker("terminal") is not None:
                # A terminal session collects TERMINAL_MODULES only (pytest_ignore_collect).
                raise pytest.UsageError(
                    f"{item.nodeid} is marked terminal outside tests/conftest.py's "
                    "TERMINAL_MODULES: add its module there"
                )
            continue
        modules[module] = item.module
        if getattr(item, "originalname", item.name) in PRINTS_NOTHING.get(module, ()):
            item.stash[_PRINTS_NOTHING] = True
        else:
            item.add_marker(pytest.mark.terminal)
    stale = sorted(
        f"tests/{module}.py::{name}"
        for module, found in modules.items()
        for name in PRINTS_NOTHING.get(module, ())
        if not callable(getattr(found, name, None))
    )
    if stale:
        raise pytest.UsageError(f"tests/conftest.py's PRINTS_NOTHING names no test: {stale}")


@contextlib.contextmanager
def _watching_output() -> Iterator[list[str]]:
    """What the block does that could print: processes started (``subprocess``, save one
    whose output goes nowhere, as the second compile process of a cold kernel,
    kernels/_aside.py; ``multiprocessing``), the command line run in-process (click's
    ``CliRunner``), rich consoles made."""
    import multiprocessing.process

    import click.testing
    import rich.console

    seen: list[str] = []
    patched = (
        (subprocess.Popen, "__init__", "started a process"),
        (multiprocessing.process.BaseProcess, "start", "started a process"),
        (click.testing.CliRunner, "invoke", "ran the command line"),
        (rich.console.Console, "__init__", "made a rich console"),
    )
    originals = [getattr(owner, name) for owner, name, _ in patched]

    def watching(original: Any, what: str) -> Any:
        @functools.wraps(original)
        def watched(*args: Any, **kwargs: Any) -> Any:
            silent = kwargs.get("stdout") == kwargs.get("stderr") == subprocess.DEVNULL
            if not (original is originals[0] and silent):
                seen.append(what)
            return original(*args, **kwargs)

        return watched

    for (owner, name, what), original in zip(patched, originals, strict=True):
        setattr(owner, name, watching(original, what))
    try:
        yield seen
    finally:
        for (owner, name, _), original in zip(patched, originals, strict=True):
            setattr(owner, name, original)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    return (yield from watch_quiet_test(item, "its set-up"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    return (yield from watch_quiet_test(item, "its call"))


def watch_quiet_test(item: pytest.Item, phase: str) -> Any:
    """Run a phase of the test; a test of :data:`PRINTS_NOTHING` fails if it did anything
    that could print (it belongs back in the ``terminal`` tests)."""
    if not item.stash.get(_PRINTS_NOTHING, False):
        return (yield)
    with _watching_output() as seen:
        result = yield
    if seen:
        raise AssertionError(
            f"{item.nodeid} is listed in tests/conftest.py's PRINTS_NOTHING, but {phase} "
            f"{' and '.join(sorted(set(seen)))}: take it off the list (it is then marked "
            "terminal and run at each width)"
        )
    return result


@pytest.fixture(scope="session")
def knights_vs_pikemen() -> simulator.Scenario:
    """The yardstick scenario of the studies' and the library's tests (olympia's knights
    against pikemen: small, fast, every study can ask it), loaded once a session."""
    return simulator.load_scenario(ROOT / "scenarios" / "olympia" / "knights_vs_pikemen.toml")


#: A first-tier test's budget in seconds (its set-up, call and tear-down, the kernels
#: cached): README's ``pytest`` holds fast unit and command tests, and a test over this
#: belongs in the slow tier (``@pytest.mark.slow``) or should be made cheaper. Loose on
#: purpose, three times the second the first tier's tests take on a quiet machine, so
#: that a loaded one does not cry wolf; a warning, never a failure, as a time is the
#: machine's as much as the test's.
FIRST_TIER_BUDGET = 3.0
_first_tier_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "slow" not in report.keywords and report.outcome != "skipped":
        _first_tier_seconds[report.nodeid] = (
            _first_tier_seconds.get(report.nodeid, 0.0) + report.duration
        )


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    over = sorted(
        ((seconds, nodeid) for nodeid, seconds in _first_tier_seconds.items()
         if seconds > FIRST_TIER_BUDGET),
        reverse=True,
    )  # fmt: skip
    if not over or hasattr(config, "workerinput"):
        return
    terminalreporter.section("first-tier tests over their budget")
    terminalreporter.write_line(
        f"{len(over)} test(s) not marked slow took more than {FIRST_TIER_BUDGET:g} s "
        "(a loaded machine, or a kernel compiled in the test, can explain one; "
        "otherwise mark it @pytest.mark.slow or make it cheaper, docs/testing.md):"
    )
    for seconds, nodeid in over[:20]:
        terminalreporter.write_line(f"  {seconds:6.1f} s  {nodeid}")
