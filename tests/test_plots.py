"""Plots: files of the right kind and size, figures with the panels asked for."""

from __future__ import annotations

import matplotlib.image
import pytest
from typer.testing import CliRunner

import simulator
from simulator.cli import app
from simulator.errors import BattleOddsError
from simulator.report import plots

SCENARIO = """
ruleset = "olympia"
name = "plot test"
seed = 7
[[attacker.units]]
men = { knight = 6, soldier = 10 }
[[defender.units]]
men = { pikeman = 20 }
"""


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("plots") / "battle.toml"
    path.write_text(SCENARIO)
    return path


@pytest.fixture(scope="module")
def result(scenario_file):
    return simulator.simulate(simulator.load_scenario(scenario_file), 3000, 7)


def test_report_figure_has_every_panel(result):
    figure = plots.report_figure(result)
    titles = [ax.get_title() for ax in figure.axes]
    assert titles[0] == "Outcome, 3,000 battles"
    assert "Break timing" in titles
    assert "Men lost by the attacking army" in titles and "Men lost by the defending army" in titles
    outcome = figure.axes[0]
    labels = [t.get_text() for t in outcome.get_yticklabels()]
    assert labels == ["attacker wins", "defender wins", "draw"]
    survival = figure.axes[titles.index("Break timing")]
    assert survival.get_ylabel() == "P(still undecided after t)"
    assert survival.get_xlabel() == "t (strikes)"
    casualties = figure.axes[titles.index("Men lost by the attacking army")]
    # The starting strength in the label and as a mark, one scale for both sides.
    assert [t.get_text() for t in casualties.get_yticklabels()] == [
        "knight (of 6)",
        "soldier (of 10)",
    ]
    starts = [line.get_xdata()[0] for line in casualties.lines if line.get_marker() == "|"]
    assert starts == [6, 10]
    other = figure.axes[titles.index("Men lost by the defending army")]
    assert casualties.get_xlim() == other.get_xlim()


def test_survival_curve_is_the_exact_histogram(result):
    ax = plots.survival_panel(result)
    total = result.tally.steps
    curve = ax.get_lines()[-1]
    t, alive = curve.get_xdata(), curve.get_ydata()
    steps = result.battles["steps"].to_numpy()
    for at in (0, int(total.quantile(0.5)), int(steps.max())):
        assert alive[list(t).index(at)] == pytest.approx((steps > at).mean(), abs=1e-12)


def test_panels_draw_into_a_given_axes(result):
    figure = plots.new_figure()
    ax = figure.add_subplot()
    assert plots.outcome_panel(result, ax) is ax
    assert len(ax.patches) == 3


# Slow tier (docs/testing.md): 4.8 s for its 3 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize(
    "suffix,magic", [(".png", b"\x89PNG\r\n\x1a\n"), (".svg", b"<?xml"), (".pdf", b"%PDF-")]
)
def test_cli_writes_each_format(scenario_file, tmp_path, suffix, magic):
    target = tmp_path / f"report{suffix}"
    run = CliRunner().invoke(app, ["plot", str(scenario_file), "-o", str(target), "-n", "2000"])
    assert run.exit_code == 0, run.output
    assert target.read_bytes().startswith(magic)
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_png_has_the_expected_size(scenario_file, tmp_path):
    target = tmp_path / "report.png"
    run = CliRunner().invoke(
        app, ["plot", str(scenario_file), "-o", str(target), "-n", "1000", "--dpi", "50"]
    )
    assert run.exit_code == 0, run.output
    height, width = matplotlib.image.imread(target).shape[:2]
    assert (width, height) == (600, 400)  # 12 x 8 inches at 50 dpi


def test_a_failed_write_keeps_the_old_file(result, tmp_path, monkeypatch):
    target = tmp_path / "report.png"
    target.write_bytes(b"old plot")
    figure = plots.report_figure(result)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(figure, "savefig", broken)
    with pytest.raises(OSError):
        plots.save(figure, target)
    assert target.read_bytes() == b"old plot"
    assert [p.name for p in tmp_path.iterdir()] == ["report.png"]


def test_unknown_image_type_is_a_user_error(result, scenario_file, tmp_path):
    with pytest.raises(BattleOddsError, match=r"unknown image type '\.gif'"):
        plots.save(plots.report_figure(result), tmp_path / "x.gif")
    run = CliRunner().invoke(
        app, ["plot", str(scenario_file), "-o", str(tmp_path / "x.gif"), "-n", "100"]
    )
    assert run.exit_code == 2
    assert "expected .png, .svg, .pdf, .jpg, .jpeg" in run.output
