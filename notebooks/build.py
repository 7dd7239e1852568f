"""Build the balance-study notebooks (``python notebooks/build.py``).

The notebooks are generated so that they can be regenerated after an API change; the
test suite executes them with a small battle count (``BATTLE_ODDS_NOTEBOOK_BATTLES``).
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent


def rating(ruleset: str, unit: str, where: str = "") -> str:
    """A type's attack/defense as the package's unit table has it (``where``: "ship" or
    "swamp" for the ratings that replace the land ones there), so the prose cannot drift
    from the numbers the simulator uses."""
    from simulator import rulesets

    row = rulesets.get(ruleset).units().set_index("type").loc[unit]
    if where:
        return str(row[where])
    return f"{int(row['attack'])}/{int(row['defense'])}"


SETUP = """\
%matplotlib inline
import os

import matplotlib.pyplot as plt

import simulator
from simulator.report import plots
from simulator.studies.compare import compare
from simulator.studies.sweep import find_target, sweep

# The test suite sets a small count; a real study uses tens of thousands per point.
BATTLES = int(os.environ.get("BATTLE_ODDS_NOTEBOOK_BATTLES", "20000"))
SEED = 20261121


def in_words(result):
    # A run's summary with each measure in its ruleset's words (the columns stay in
    # result.summary() for code).
    ruleset = simulator.rulesets.get(result.scenario.ruleset)
    unit = ruleset.step_unit

    def said(group, metric):
        if group == "win":
            return "draw" if metric == "draw" else f"{metric} wins"
        if group == "steps":
            decided = f"{unit} to decide"
            ended = {"all": "", "draw": ", drawn"}
            return decided + ended.get(metric, f", {metric} won")
        prefix = "casualties." if group == "casualties" else ""
        return ruleset.describe_column(prefix + metric)

    frame = result.summary()
    frame["measure"] = [said(g, m) for g, m in zip(frame["group"], frame["metric"])]
    return frame.set_index("measure").drop(columns="metric")


def side_by_side(comparison):
    # A comparison's outcomes, A and B named by their battles, B - A with its paired
    # 95% interval.
    frame = comparison.summary().query("group == 'win'")
    frame.index = ["draw" if m == "draw" else f"{m} wins" for m in frame["metric"]]
    return frame[["a", "b", "difference", "low", "high"]].rename(
        columns={"a": f"A: {comparison.a.scenario.name}", "b": f"B: {comparison.b.scenario.name}",
                 "difference": "B - A", "low": "B - A low", "high": "B - A high"})"""

#: The extra imports of the studies that tabulate and write their conclusions.
STUDY_IMPORTS = """

import pandas as pd
from IPython.display import Markdown, display"""


def olympia_knight() -> nbformat.NotebookNode:
    cells = [
        new_markdown_cell(
            "# What is a knight worth in soldiers? (olympia)\n\n"
            f"A knight ({rating('olympia', 'knight')}) is rated far above a soldier "
            f"({rating('olympia', 'soldier')}). Here we ask the balance "
            "question directly: against a fixed pike wall, how many soldiers does it take to "
            "do what a given number of knights does, and how do terrain and weather move "
            "that exchange rate? Every number comes from the package; nothing is simulated "
            "in the notebook itself."
        ),
        new_code_cell(SETUP),
        new_code_cell(
            'def army(knights=0, soldiers=0, terrain="land", weather=()):\n'
            '    where = " ".join([terrain, *weather])\n'
            '    data = {"ruleset": "olympia",\n'
            '            "name": f"{knights} knights, {soldiers} soldiers, {where}",\n'
            '            "battle": {"terrain": terrain, "weather": list(weather)},\n'
            '            "attacker": {"units": [{"men": {"knight": knights,\n'
            '                                            "soldier": soldiers}}]},\n'
            '            "defender": {"units": [{"men": {"pikeman": 30}}]}}\n'
            '    return simulator.from_data(data, simulator.errors.Source("notebook"))\n\n'
            "KNIGHTS = 14\nknights = army(knights=KNIGHTS)\n"
            "result = simulator.simulate(knights, BATTLES, SEED)\n"
            "in_words(result).head(6)"
        ),
        new_markdown_cell(
            "The full picture of the knights' battle: who wins, when the "
            "battle breaks, and what it costs each side."
        ),
        new_code_cell("plots.report_figure(result, width=11, height=7)"),
        new_markdown_cell(
            "## Soldiers needed to match the knights\n"
            "Sweep the number of soldiers (no knights) and find where their win probability "
            "reaches the knights'. The points share random numbers, so the curve is smooth."
        ),
        new_code_cell(
            'p_knights = result.win("attacker")[0]\n'
            'soldiers = sweep(army(soldiers=10), ["attacker.soldier=10..80:5"],\n'
            "                 BATTLES // 4, SEED)\n"
            "fig, ax = plt.subplots(figsize=(7, 4))\n"
            "plots.sweep_panel(soldiers, ax, target=p_knights)\n"
            'ax.set_title(f"Soldiers alone; dotted: {KNIGHTS} knights win {p_knights:.0%}")\n'
            'soldiers.frame[["attacker.soldier", "p", "low", "high"]].rename(\n'
            '    columns={"attacker.soldier": "soldiers in the attacking army", "p": "P"})'
        ),
        new_code_cell(
            'search = find_target(army(soldiers=10), "attacker.soldier=10..120", '
            "min(max(p_knights, 0.05), 0.95),\n"
            "                     SEED, battles=max(BATTLES // 10, 200), "
            "max_battles=max(BATTLES, 1000))\n"
            "worth = search.value\n"
            'print(f"{KNIGHTS} knights win {p_knights:.1%}; soldiers needed for that: {worth}"\n'
            '      + ("" if search.sure else " (not sure: a probe near the answer was still "\n'
            '                                "undecided at its battle cap)"))'
        ),
        new_markdown_cell(
            "## Terrain and weather\n"
            f"In a swamp knights fight at {rating('olympia', 'knight', 'swamp')}; on land at "
            "full strength. Compare the "
            "knights' odds on common random numbers (battle *i* sees the same luck in both), "
            "so the difference is measured far more precisely than by two separate runs."
        ),
        new_code_cell(
            "rows = []\n"
            'for terrain, weather in [("swamp", ()), ("land", ("rain",)), ("land", ("wind",))]:\n'
            "    c = compare(knights, army(knights=KNIGHTS, terrain=terrain, weather=weather), "
            "BATTLES // 2, SEED)\n"
            '    d = c.win("attacker")\n'
            '    rows.append({"conditions": f"{terrain} {\' \'.join(weather)}".strip(), '
            '"land": d.a, "changed": d.b,\n'
            '                 "difference": d.difference, "low": d.low, "high": d.high})\n'
            "import pandas as pd\n"
            "pd.DataFrame(rows)"
        ),
        new_code_cell(
            'swamp = compare(knights, army(knights=KNIGHTS, terrain="swamp"), BATTLES // 2, SEED)\n'
            "plots.comparison_panel(swamp).figure"
        ),
        new_markdown_cell(
            "## Reading\n"
            "What the numbers above say, worded from them (so the text follows the data when "
            "the rules or the armies change):"
        ),
        new_code_cell(
            "def effect(r):\n"
            "    # A difference of probabilities, in percentage points.\n"
            '    if r["low"] <= 0 <= r["high"]:\n'
            "        return f\"do not change measurably ({100 * r['difference']:+.2f} points)\"\n"
            "    return (f\"change by {100 * r['difference']:+.1f} points \"\n"
            "            f\"(95%: {100 * r['low']:+.1f} to {100 * r['high']:+.1f})\")\n"
            "\n"
            "if not worth:\n"
            '    lines = ["no soldier count up to 120 matches the knights"]\n'
            "elif search.sure:\n"
            '    lines = [f"one knight is worth about {worth / KNIGHTS:.1f} soldiers here"]\n'
            "else:\n"
            '    lines = [f"not sure: one knight is worth roughly {worth / KNIGHTS:.1f} "\n'
            '             "soldiers here, but a probe near the answer was still undecided at "\n'
            '             "its battle cap, so the count of soldiers may be off by one or more"]\n'
            "for r in rows:\n"
            "    lines.append(f\"{r['conditions']}: the knights' odds {effect(r)}\")\n"
            'print("\\n".join(lines))'
        ),
        new_markdown_cell(
            "## When should the knights stop?\n"
            "Knights that may withdraw should not fight every battle to the end, nor give up "
            "at a number of knights picked by hand. Eight knights (cost 3 each) ride at "
            "twelve pikemen holding a ford, and a win is worth 20: the best retreat rule "
            "withdraws wherever withdrawing is worth more than fighting on, a battle being "
            "worth 20 if the knights win, less the cost of the knights lost. For a battle "
            "this small it is solved exactly (backward induction over the exact chain); "
            "for any battle it can be fitted on simulated ones (Longstaff-Schwartz) and "
            "valued on fresh ones, with 95% intervals (docs/retreat.md)."
        ),
        new_code_cell(
            "from simulator.report.retreat_plots import retreat_figure\n\n"
            'ford = simulator.load_scenario("../examples/retreat/knights_at_the_ford.toml")\n'
            'best = simulator.best_retreat(ford, side="attacker", win_value=20)\n'
            'print(f"The best rule: {best.words()}.")\n'
            'print(f"It is worth {best.value:.3f}, against {best.never:.3f} for never "\n'
            '      f"retreating and {best.own:.3f} for the file\'s own rule ({best.own_words}); "\n'
            '      "every figure exact.")\n'
            "retreat_figure(best)"
        ),
        new_code_cell(
            'fitted = simulator.best_retreat(ford, side="attacker", win_value=20,\n'
            '                                method="simulated", paths=BATTLES, '
            "battles=BATTLES, seed=SEED)\n"
            "a = fitted.answer\n"
            'print(f"Fitted on {a.paths:,} simulated battles and valued on {a.fresh:,} fresh "\n'
            '      f"ones, the rule is worth {a.value.value:.3f} (95%: {a.value.low:.3f} to "\n'
            '      f"{a.value.high:.3f}), {a.gain_over_never.value:+.3f} over never retreating "\n'
            '      f"(95%: {a.gain_over_never.low:+.3f} to {a.gain_over_never.high:+.3f}); "\n'
            '      f"the exact best rule is worth {best.value:.3f}: a fitted rule is one rule "\n'
            '      "among all, worth at most the best one.")'
        ),
    ]
    return new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )


def age_of_gods_pikemen() -> nbformat.NotebookNode:
    cells = [
        new_markdown_cell(
            "# Pikemen against mounted units (age_of_gods)\n\n"
            "In *The Age of Gods* a pikeman is a poor fighter (attack 5, defense 20) with one "
            "special rule: he doubles his defense against a mounted striker. How much is that "
            "rule worth? We take the bundled battle "
            "`scenarios/age_of_gods/pikemen_vs_knights.toml` (25 knights, "
            f"{rating('age_of_gods', 'knight')} and mounted, "
            "charge 40 pikemen with 8 archers behind them) and "
            "ask three questions:\n\n"
            "1. What does the rule change in this battle? The control is the same battle with the "
            "knights made unmounted (`units.knight.mounted = false`): same ratings on every "
            "terrain, only the pike rule no longer applies.\n"
            "2. How many pikemen does it take to hold the line, with and without the rule?\n"
            "3. What does terrain do to all of this?\n\n"
            "Every number is computed by the package below; the conclusions at the end are "
            "written from those numbers."
        ),
        new_code_cell(SETUP + STUDY_IMPORTS),
        new_code_cell(
            '''def battle(pikemen=40, knights=25, terrain="land", mounted=True):
    """The bundled pikemen-vs-knights battle; `mounted=False` is the control."""
    rider = "knights" if mounted else "knights on foot"
    data = {"ruleset": "age_of_gods", "name": f"{knights} {rider} vs {pikemen} pikemen, {terrain}",
            "battle": {"terrain": terrain},
            "units": {"knight": {"mounted": mounted}},
            "attacker": {"units": [{"men": {"knight": knights}}]},
            "defender": {"units": [{"men": {"pikeman": pikemen}},
                                   {"behind": 1, "men": {"archer": 8}}]}}
    return simulator.from_data(data, simulator.errors.Source("notebook"))


charge = battle()
result = simulator.simulate(charge, BATTLES, SEED)
in_words(result).head(6)'''
        ),
        new_markdown_cell(
            "The battle as it stands: who wins, in which round it breaks, and what each side loses."
        ),
        new_code_cell("plots.report_figure(result, width=11, height=7)"),
        new_markdown_cell(
            "## 1. The pike rule in this battle\n"
            "Both versions run on common random numbers (battle *i* of each uses the same random "
            "stream), so the difference is measured far more precisely than by two separate "
            "runs: the grey bars in the plot are what independent runs would give."
        ),
        new_code_cell(
            """rule = compare(charge, battle(mounted=False), BATTLES, SEED)
rule_win = rule.win("attacker")
knights_lost = rule.mean("casualties.attacker.knight")
pikemen_lost = rule.mean("casualties.defender.pikeman")
print(f"Knights win {rule_win.a:.1%} mounted and {rule_win.b:.1%} on foot: the rule changes "
      f"their chance by {100 * -rule_win.difference:+.1f} percentage points "
      f"(paired 95% interval {100 * -rule_win.high:+.1f} to {100 * -rule_win.low:+.1f}).")
print(f"Knights lost per battle: {knights_lost.a:.1f} mounted, {knights_lost.b:.1f} on foot; "
      f"pikemen lost: {pikemen_lost.a:.1f} against mounted knights, {pikemen_lost.b:.1f} on foot.")
side_by_side(rule)"""
        ),
        new_code_cell("plots.comparison_panel(rule).figure"),
        new_markdown_cell(
            "## 2. How many pikemen hold the line?\n"
            "Sweep the number of pikemen against the same 25 knights, mounted and on foot. The "
            "points of a sweep share their random numbers, so each curve is smooth; the bands "
            "are 95% intervals."
        ),
        new_code_cell(
            """PIKEMEN = "defender.units[0].men.pikeman"
curves = {"against mounted knights (pike rule)": sweep(charge, [f"{PIKEMEN}=10..80:5"],
                                                        BATTLES // 4, SEED, outcome="defender"),
          "against knights on foot": sweep(battle(mounted=False), [f"{PIKEMEN}=10..80:5"],
                                           BATTLES // 4, SEED, outcome="defender")}
fig, ax = plt.subplots(figsize=(8, 4.5))
for (label, curve), colour in zip(curves.items(), ["#2467a8", "#e67e22"]):
    frame = curve.frame
    ax.fill_between(frame[PIKEMEN], frame["low"], frame["high"], color=colour, alpha=0.25,
                    linewidth=0)
    ax.plot(frame[PIKEMEN], frame["p"], marker="o", markersize=3, color=colour, label=label)
ax.set_xlabel("pikemen in the front row")
ax.set_ylabel("P(defender wins)")
ax.set_ylim(-0.02, 1.02)
ax.grid(alpha=0.3)
ax.legend()
ax.set_title("25 knights charge: how many pikemen hold?")
pd.DataFrame({label: curve.frame.set_index(PIKEMEN)["p"]
              for label, curve in curves.items()}).rename_axis("pikemen in the front row")"""
        ),
        new_markdown_cell(
            "The target search finds the smallest number of pikemen that hold the line in at "
            "least half the battles, by bisection with enough battles at each probe to be sure "
            "of its side of the target."
        ),
        new_code_cell(
            """HOLD = 0.5
searches = {mounted: find_target(battle(mounted=mounted), f"{PIKEMEN}=10..150", HOLD, SEED,
                                 outcome="defender", battles=max(BATTLES // 10, 200),
                                 max_battles=max(BATTLES, 1000))
            for mounted in (True, False)}
fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for ax, (mounted, search) in zip(axes, searches.items()):
    plots.target_panel(search, ax)
    ax.set_title("against mounted knights" if mounted else "against knights on foot")
for mounted, search in searches.items():
    print(f"{'mounted' if mounted else 'on foot'}: {search.value} pikemen hold in at least "
          f"{HOLD:.0%} of battles ({len(search.probes)} values tried"
          + ("" if search.sure else "; not sure: a value next to the answer was still "
             "undecided at its battle cap") + ")")"""
        ),
        new_markdown_cell(
            "## 3. What terrain does\n"
            "Terrain changes both sides: in a swamp the knights fight at their swamp ratings "
            f"({rating('age_of_gods', 'knight', 'swamp')}) and the defender's ratings are "
            "multiplied by 0.75; forest, mountain and city "
            "multiply the defender's attack and defense by 1.5, 2 and 1.25. (A ship changes only "
            "pirates, so it is left out.) For each terrain, the pike rule's effect on common "
            "random numbers:"
        ),
        new_code_cell(
            """TERRAINS = ["land", "swamp", "forest", "mountain", "city"]
rows = []
for terrain in TERRAINS:
    c = compare(battle(terrain=terrain), battle(terrain=terrain, mounted=False), BATTLES // 2,
                SEED)
    d = c.win("attacker")
    rows.append({"terrain": terrain, "mounted": d.a, "on foot": d.b,
                 "rule effect": -d.difference, "effect low": -d.high, "effect high": -d.low})
by_terrain = pd.DataFrame(rows).set_index("terrain")
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
x = range(len(TERRAINS))
left.bar([i - 0.2 for i in x], by_terrain["mounted"], width=0.4, color="#2467a8",
         label="mounted knights")
left.bar([i + 0.2 for i in x], by_terrain["on foot"], width=0.4, color="#e67e22",
         label="knights on foot")
left.set_xticks(list(x), TERRAINS)
left.set_ylabel("P(knights win)")
left.set_title("The knights' chance by terrain")
left.legend()
effect = by_terrain["rule effect"]
right.errorbar(list(x), effect, yerr=[effect - by_terrain["effect low"],
                                      by_terrain["effect high"] - effect],
               fmt="o", color="black", capsize=4)
right.axhline(0, color="grey", linewidth=0.8)
right.set_xticks(list(x), TERRAINS)
right.set_ylabel("change in P(knights win)")
right.set_title("The pike rule's effect (paired 95% intervals)")
by_terrain.round(4)"""
        ),
        new_markdown_cell("## Conclusions (written from the numbers above)"),
        new_code_cell(
            '''def points(x):
    """A difference of probabilities in percentage points (never "-0.0")."""
    return f"{100 * x + 0.0:+.1f} points"


def effect_text(effect, low, high):
    if high < 0:
        return (f"takes {points(-effect)[1:]} off the knights' win probability "
                f"(95%: {points(-high)[1:]} to {points(-low)[1:]})")
    if low > 0:
        return (f"adds {points(effect)[1:]} to the knights' win probability "
                f"(95%: {points(low)[1:]} to {points(high)[1:]})")
    return ("changes the knights' win probability by no measurable amount "
            f"({points(low)} to {points(high)})")


def count_text(search):
    top = max(search.vary.values)
    return f"{search.value}" if search.value is not None else f"more than {top}"


mounted_need, foot_need = searches[True], searches[False]
lines = [f"- **In this battle** the pike rule "
         f"{effect_text(-rule_win.difference, -rule_win.high, -rule_win.low)}: the knights win "
         f"{rule_win.a:.1%} mounted against {rule_win.b:.1%} on foot, and lose "
         f"{knights_lost.a:.1f} men per battle mounted, {knights_lost.b:.1f} on foot."]
if mounted_need.value is not None and foot_need.value is not None:
    saved = foot_need.value - mounted_need.value
    worth = (f"the rule is worth {saved} pikemen ({saved / foot_need.value:.0%} fewer)"
             if saved > 0 else "the rule saves no pikemen at this precision")
    lines.append(f"- **In pikemen**, holding the line in {HOLD:.0%} of battles takes "
                 f"{mounted_need.value} pikemen against mounted knights and {foot_need.value} "
                 f"against the same knights on foot: {worth}"
                 + ("" if mounted_need.sure and foot_need.sure
                    else "; a probe next to the answer was still undecided at its battle cap, "
                    "so the count may be one off")
                 + ".")
else:
    lines.append(f"- **In pikemen**: {count_text(mounted_need)} are needed against mounted "
                 f"knights and {count_text(foot_need)} against knights on foot.")
strongest, weakest = effect.abs().idxmax(), effect.abs().idxmin()
best, worst = by_terrain["mounted"].idxmax(), by_terrain["mounted"].idxmin()
terrain_line = (f"- **Terrain**: the rule matters most in the {strongest} battle "
                f"({points(effect[strongest])}) and least in the {weakest} battle "
                f"({points(effect[weakest])}). Mounted knights win "
                f"{by_terrain['mounted'][best]:.1%} at best ({best}) and "
                f"{by_terrain['mounted'][worst]:.1%} at worst ({worst})")
if worst == weakest:
    terrain_line += (f": in the {worst} battle the terrain already beats the knights, so "
                     "there is little left for the pikes to take")
lines.append(terrain_line + ".")
display(Markdown("\\n".join(lines)))'''
        ),
    ]
    return new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )


def blocks_siege() -> nbformat.NotebookNode:
    cells = [
        new_markdown_cell(
            "# A siege in blocks: storm now or starve them out?\n\n"
            "Two Frank blocks hold a castle (the garrison of `scenarios/blocks/storm.toml`: "
            "Reynald B2 with 3 steps and Pilgrims C1 with 2, castle limit 2). A Saracen army of "
            "A2 blocks sits outside. A block in a castle takes two hits per step, so a storm is "
            "costly; siege attrition is slow (each castle block loses a step on a die of 1-3 at "
            "the end of every game turn) but costs the besiegers nothing, unless the garrison "
            "sallies against a weak besieger (it does here whenever it is stronger).\n\n"
            "The besieger's strength is counted in steps: *S* steps arrive as blocks of 4 (and "
            "one smaller block for the remainder). The castle **falls** when the besiegers "
            "alone hold the area: the garrison is stormed, starved, or destroyed in a sally. "
            "Two plans, and a mix:\n\n"
            '- **storm now**: storm in round 1 (`storm = "round1"`), one game turn;\n'
            '- **starve**: never storm (`storm = "never"`) and let attrition work for *K* '
            "turns;\n"
            "- **storm every turn** for *K* turns, for comparison at equal time."
        ),
        new_code_cell(SETUP + STUDY_IMPORTS),
        new_code_cell(
            '''CASTLE_LIMIT = 2
GARRISON = [{"name": "Reynald", "rating": "B2", "steps": 3, "at": "castle"},
            {"name": "Pilgrims", "rating": "C1", "steps": 2, "at": "castle"}]


def siege(strength, storm="never", turns=1, attrition=3):
    """An existing siege: `strength` steps of A2 blocks (4 steps each) before the castle."""
    sizes = [4] * (strength // 4) + ([strength % 4] if strength % 4 else [])
    data = {"ruleset": "blocks",
            "name": f"{strength} steps, storm {storm}, {turns} turn{'s' if turns > 1 else ''}",
            "battle": {"castle_limit": CASTLE_LIMIT, "siege": True, "turns": turns,
                       "attrition": attrition},
            "policy": {"storm": storm, "sally": "when_stronger"},
            "attacker": {"blocks": [{"name": f"emir{i + 1}", "rating": "A2", "steps": steps}
                                    for i, steps in enumerate(sizes)]},
            "defender": {"blocks": GARRISON}}
    return simulator.from_data(data, simulator.errors.Source("notebook"))


# Two full blocks fill the castle limit: the most that can storm at once.
FULL = 4 * CASTLE_LIMIT
storm_now = simulator.simulate(siege(FULL, "round1"), BATTLES, SEED)
in_words(storm_now).query("group != 'casualties'")'''
        ),
        new_markdown_cell(
            "One storm with two full blocks, in full: the outcome, when it is "
            "decided (rounds 1-3 of the turn; 4 is the siege attrition at its end), "
            "each block's losses, and how it happened (stormed, starved, sallies)."
        ),
        new_code_cell("plots.report_figure(storm_now, width=12, height=8)"),
        new_markdown_cell(
            "## P(castle falls) against the besieger's strength\n"
            "Every plan at every strength runs on the same seed and battle indices. Bands are "
            "95% (Wilson) intervals."
        ),
        new_code_cell(
            """STRENGTHS = range(2, 13)
HORIZON = 3
PLANS = {"storm now": ("round1", 1),
         f"starve {HORIZON} turns": ("never", HORIZON),
         f"starve {2 * HORIZON} turns": ("never", 2 * HORIZON),
         f"storm every turn, {HORIZON} turns": ("round1", HORIZON)}
rows = []
for strength in STRENGTHS:
    for plan, (storm, turns) in PLANS.items():
        r = simulator.simulate(siege(strength, storm, turns), BATTLES // 2, SEED)
        p, low, high = r.win("attacker")
        columns = r.tally.columns
        rows.append({"strength": strength, "plan": plan, "p": p, "low": low, "high": high,
                     "garrison wins": r.win("defender")[0],
                     "stormed": columns["castle_stormed"].mean(),
                     "starved": columns["castle_fell_to_attrition"].mean(),
                     "steps lost": columns["steps_lost.attacker"].mean(),
                     "sally": columns["sally_made"].mean()})
plans = pd.DataFrame(rows)
COLOURS = dict(zip(PLANS, ["#c0392b", "#2467a8", "#16a085", "#8e44ad"]))
fig, (falls, cost) = plt.subplots(1, 2, figsize=(12, 4.5))
for plan, group in plans.groupby("plan", sort=False):
    falls.fill_between(group["strength"], group["low"], group["high"], color=COLOURS[plan],
                       alpha=0.2, linewidth=0)
    falls.plot(group["strength"], group["p"], marker="o", markersize=3, color=COLOURS[plan],
               label=plan)
    cost.plot(group["strength"], group["steps lost"], marker="o", markersize=3,
              color=COLOURS[plan], label=plan)
falls.axvline(FULL, color="grey", linestyle=":", linewidth=1)
falls.set_xlabel("besieger's strength (steps)")
falls.set_ylabel("P(castle falls)")
falls.set_ylim(-0.02, 1.02)
falls.set_title("Does the castle fall?")
falls.legend(fontsize="small")
cost.set_xlabel("besieger's strength (steps)")
cost.set_ylabel("besieger steps lost per battle")
cost.set_title("What it costs the besiegers")
for ax in (falls, cost):
    ax.grid(alpha=0.3)
plans.pivot(index="strength", columns="plan", values="p")[list(PLANS)].round(3)"""
        ),
        new_markdown_cell(
            "## How long must they wait to match a storm?\n"
            "With two full blocks the besiegers can storm with everything the castle limit "
            "allows. How many game turns of siege give the same chance as storming now? The "
            "curve is P(starved within *K* turns); the dotted line is storming now. The "
            "target search then finds the smallest *K* that reaches it."
        ),
        new_code_cell(
            """p_storm = storm_now.win("attacker")[0]
waiting = sweep(siege(FULL, "never"), ["battle.turns=1..12"], BATTLES // 4, SEED)
fig, ax = plt.subplots(figsize=(8, 4))
plots.sweep_panel(waiting, ax, target=p_storm)
ax.set_title(f"Starving with {FULL} steps; dotted: storming now ({p_storm:.0%})")
match = find_target(siege(FULL, "never"), "battle.turns=1..30", min(max(p_storm, 0.01), 0.99),
                    SEED, battles=max(BATTLES // 10, 200), max_battles=max(BATTLES, 1000))
print(f"Storming now takes the castle with probability {p_storm:.1%}; starving matches it "
      f"after {match.value} turns"
      + ("." if match.sure else " (not sure: a value next to it was still undecided at its "
         "battle cap)."))"""
        ),
        new_markdown_cell(
            "## How harsh is the siege?\n"
            "The attrition number (a castle block loses a step on a die at or under it) is "
            "the scenario's `battle.attrition`. A grid of attrition against the turns waited "
            "shows where starving is a plan at all:"
        ),
        new_code_cell(
            """grid = sweep(siege(FULL, "never"), ["battle.attrition=1..6", "battle.turns=1..6"],
             BATTLES // 8, SEED)
fig, ax = plt.subplots(figsize=(7, 5))
# Never storming, the attacker takes the castle only by starving it: say so on the plot.
plots.heatmap_panel(grid, ax, quantity="P(castle starved)")
ax.set_title(f"P(castle starved) in %, {FULL} steps besieging");"""
        ),
        new_markdown_cell("## Conclusions (written from the numbers above)"),
        new_code_cell(
            """def at(plan, strength, column="p"):
    return float(plans[(plans["plan"] == plan) & (plans["strength"] == strength)][column].iloc[0])


weakest, strongest = min(STRENGTHS), max(STRENGTHS)
storm_curve = plans[plans["plan"] == "storm now"].set_index("strength")
full_and_more = storm_curve.loc[FULL:]
capped = full_and_more["low"].max() <= full_and_more["high"].min()
lines = [f"- **Storming now** takes the castle with probability {at('storm now', weakest):.1%} "
         f"with {weakest} steps and {at('storm now', strongest):.1%} with {strongest}; the "
         f"garrison wins outright in {at('storm now', weakest, 'garrison wins'):.1%} of the "
         f"weakest storms."]
if full_and_more["p"].nunique() == 1:
    lines.append(f"- **The castle limit caps the storm**: from {FULL} steps on (two full blocks) "
                 f"every strength gives exactly {full_and_more['p'].iloc[0]:.1%} on the same "
                 "random numbers: the extra blocks change nothing in a one-turn storm.")
elif capped:
    lines.append(f"- **The castle limit caps the storm**: from {FULL} steps on (two full blocks) "
                 f"every strength gives {full_and_more['p'].min():.1%} to "
                 f"{full_and_more['p'].max():.1%}, with overlapping intervals: more blocks "
                 "mostly wait outside.")
else:
    lines.append(f"- From {FULL} steps on, storming now still ranges from "
                 f"{full_and_more['p'].min():.1%} to {full_and_more['p'].max():.1%}.")
for turns in (HORIZON, 2 * HORIZON):
    plan = f"starve {turns} turns"
    starve = plans[plans["plan"] == plan].set_index("strength")
    better = [s for s in STRENGTHS if at("storm now", s) >= at(plan, s)]
    lines.append(f"- **Starving {turns} turns** takes it with probability "
                 f"{starve['p'][FULL]:.1%} at {FULL} steps (the garrison sallies in "
                 f"{starve['sally'][weakest]:.0%} of sieges against {weakest} steps, "
                 f"{starve['sally'][FULL]:.0%} against {FULL}); storming now does at least as "
                 "well "
                 + ("at no strength tried" if not better
                    else f"from {min(better)} steps on"
                    if better == list(range(min(better), strongest + 1))
                    else "at " + ", ".join(map(str, better)) + " steps") + " (point estimates).")
starving = plans[plans["plan"] == f"starve {HORIZON} turns"].set_index("strength")
sallied = starving[starving["sally"] > 0.5]
if len(sallied):
    weak = int(sallied["p"].idxmax())
    row = starving.loc[weak]
    lines.append(f"- **A weak besieger invites a sally**: with {weak} steps outside the garrison "
                 f"sallies in {row['sally']:.0%} of sieges and the castle falls in {row['p']:.1%} "
                 f"within {HORIZON} turns: {row['starved']:.1%} starved, {row['stormed']:.1%} "
                 f"stormed and {row['p'] - row['starved'] - row['stormed']:.1%} with the "
                 "garrison destroyed in the field.")
lines.append(f"- **The price of haste**: at {FULL} steps a storm costs the besiegers "
             f"{at('storm now', FULL, 'steps lost'):.2f} steps on average, starving "
             f"{HORIZON} turns {at(f'starve {HORIZON} turns', FULL, 'steps lost'):.2f}; storming "
             f"every turn for {HORIZON} turns takes the castle with probability "
             f"{at(f'storm every turn, {HORIZON} turns', FULL):.1%} for "
             f"{at(f'storm every turn, {HORIZON} turns', FULL, 'steps lost'):.2f} steps.")
if match.value is None:
    lines.append(f"- **Waiting** never matches storming now within {max(match.vary.values)} turns.")
else:
    lines.append(f"- **Waiting** {match.value} turns of siege matches storming now "
                 f"({p_storm:.1%})" + ("." if match.sure else ", not sure at this battle count."))
display(Markdown("\\n".join(lines)))"""
        ),
    ]
    return new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )


def balance_pass() -> nbformat.NotebookNode:
    cells = [
        new_markdown_cell(
            "# A balance pass (olympia)\n\n"
            "The bundled battle `scenarios/olympia/knights_vs_pikemen.toml`: a noble leads ten "
            "knights and twenty soldiers against a noble with forty pikemen. A balance pass asks "
            "four questions of it: what is a knight worth here, which number moves the battle "
            "most, who beats whom at equal cost, and what the attacker should add with twelve "
            "more men. Every number below is computed by the "
            "package, and the conclusions at the end are worded from those numbers."
        ),
        new_code_cell(
            SETUP + STUDY_IMPORTS + "\nfrom simulator.report.frontier import frontier_panel"
        ),
        new_code_cell(
            """scenario = simulator.load_scenario("../scenarios/olympia/knights_vs_pikemen.toml")
result = simulator.simulate(scenario, BATTLES, SEED)
p_attacker, low_attacker, high_attacker = result.win("attacker")
in_words(result).head(6)"""
        ),
        new_code_cell("plots.report_figure(result, width=11, height=7)"),
        new_markdown_cell(
            "## 1. What is a knight worth?\n"
            "The smallest number of soldiers that, added to the attacker instead of one more "
            "knight, wins at least as often. Each probe is a paired comparison on common random "
            "numbers, run until it is sure which side of the knight it is on (or until the "
            "battle cap, when the answer is a range)."
        ),
        new_code_cell(
            """knight = simulator.worth(scenario, side="attacker", add="1 knight", in_="soldier",
                         seed=SEED, battles=max(BATTLES // 4, 200),
                         max_battles=max(BATTLES * 8, 1000), max_n=30)
print(knight.sentence())
knight.frame[["n", "p", "p_with_x", "diff", "diff_low", "diff_high", "verdict", "battles"]].rename(
    columns={"n": "soldiers", "p": "P with them", "p_with_x": "P with the knight",
             "diff": "difference", "diff_low": "low", "diff_high": "high"})"""
        ),
        new_code_cell("plots.worth_panel(knight).figure"),
        new_markdown_cell(
            "## 2. Which number matters?\n"
            "Each count and each rating of the types present, one step down and one step up "
            "(one man; 10% of a rating), each against the battle as it stands on common random "
            "numbers. The tornado plot puts the largest effect at the top."
        ),
        new_code_cell(
            """knobs = simulator.sensitivity(scenario, BATTLES, SEED)
knobs.frame[["knob", "direction", "from", "to", "p", "diff", "low", "high"]]"""
        ),
        new_code_cell("plots.tornado_panel(knobs).figure"),
        new_markdown_cell(
            "## 3. Who beats whom at equal cost?\n"
            "Every fighter type against every other at the same budget. Olympia's rules price "
            "no unit, so every man costs 1 and equal cost is 20 men a side (a designer with a "
            'price list passes `costs={"knight": 3, ...}`). Rows attack and columns defend; each '
            "cell is the attacker's chance with its 95% interval, every pair on the same battle "
            "streams."
        ),
        new_code_cell(
            """TYPES = ["soldier", "pikeman", "swordsman", "archer", "knight", "elite_guard"]
at_cost = simulator.matrix("olympia", budget=20, types=TYPES,
                           battles=max(BATTLES // 10, 200), seed=SEED)
plots.matrix_figure(at_cost)"""
        ),
        new_code_cell(
            """# A type's record against the others: how often it wins attacking, and how often it
# is not beaten defending; a type whose whole row is above 1/2 (interval and all) dominates.
pairs = at_cost.frame[at_cost.frame.attacker_type != at_cost.frame.defender_type]
record = pd.DataFrame({
    "attacking": pairs.groupby("attacker_type")["p"].mean(),
    "defending": 1 - pairs.groupby("defender_type")["p"].mean(),
}).rename_axis("type")
record["overall"] = record.mean(axis=1)
dominating = [t for t, rows in pairs.groupby("attacker_type") if (rows["low"] > 0.5).all()]
dominated = [t for t, rows in pairs.groupby("attacker_type") if (rows["high"] < 0.5).all()]
record.sort_values("overall", ascending=False)"""
        ),
        new_markdown_cell(
            "## 4. What should the attacker bring?\n"
            "Twelve more men for the attacker, of soldiers, archers, swordsmen and knights, at "
            "most four of them knights: every such army (1,490 of them) races on the same "
            "battles, the armies surely worse drop out, and the answer comes with its "
            "guarantee. The frontier is the best army found at each cost: where the next man "
            "is worth the money, and where he stops being worth much."
        ),
        new_code_cell(
            """bring = simulator.best(scenario, budget=12, types="soldier,archer,swordsman,knight",
                      caps={"knight": 4}, seed=SEED, battles=max(BATTLES // 10, 200),
                      max_battles=max(BATTLES * 4, 1000), tolerance=0.01)
print(bring.sentence())
print(bring.guarantee())
bring.frontier[["cost", "army", "p", "low", "high", "battles"]]"""
        ),
        new_code_cell("frontier_panel(bring).figure"),
        new_markdown_cell(
            "## 5. What should each unit cost, and what will players build?\n"
            "A fair price list (in soldiers) makes every type win as often as it loses over "
            "its equal-cost matchups, averaged over the other types and both roles. Each "
            "matchup is fought once and kept, on the same battle streams, so the search solves "
            "the same equations at every step. Beside each fair price, the type's break-even "
            "price against each other type: a wide spread marks a counter-pick."
        ),
        new_code_cell(
            """from simulator.report.price_plots import meta_figure, prices_figure
from simulator.studies.meta import meta_of

fair = simulator.prices("olympia", TYPES, budgets=[20], battles=max(BATTLES // 20, 100),
                        seed=SEED)
print(("converged" if fair.converged else "not converged")
      + f", {fair.cells:,} pairs of counts fought")
fair.frame[["type", "price", "low", "high", "pairwise_min", "pairwise_max"]].rename(
    columns={"pairwise_min": "lowest break-even", "pairwise_max": "highest break-even"})"""
        ),
        new_code_cell("prices_figure(fair)"),
        new_markdown_cell(
            "Fed back: the same matrix at the fair prices (`costs=fair.costs()`, what `battle-odds "
            "prices --write costs.toml` writes). Each type's average win rate over the other "
            "types, both roles, before and after."
        ),
        new_code_cell(
            """priced = simulator.matrix("olympia", budget=20, types=TYPES, costs=fair.costs(),
                          battles=max(BATTLES // 10, 200), seed=SEED)


def win_rates(matrix):
    pairs = matrix.frame[matrix.frame.attacker_type != matrix.frame.defender_type]
    return ((pairs.groupby("attacker_type")["p"].mean()
             + 1 - pairs.groupby("defender_type")["p"].mean()) / 2).rename_axis("type")


even = pd.DataFrame({"at cost 1": win_rates(at_cost), "at the fair prices": win_rates(priced)})
spread = even.max() - even.min()
plots.matrix_figure(priced)"""
        ),
        new_code_cell(
            'even.assign(**{"men at the fair prices": [priced.men[t] for t in even.index]})'
        ),
        new_markdown_cell(
            "The meta: the equal-cost matrix read as a game in which each player picks a type "
            "(attacking and defending equally often), solved for its Nash equilibrium. The "
            "orange bars say how often a type is in the mix when the matrix is redrawn within "
            "its noise: a small weight that is not there most of the time is noise."
        ),
        new_code_cell(
            """meta_before = meta_of(at_cost, bootstrap=100)
meta_after = meta_of(priced, bootstrap=100)
meta_figure(meta_after)"""
        ),
        new_code_cell(
            """pd.DataFrame({"mix at cost 1": meta_before.weights, "mix at the fair prices":
              meta_after.weights, "in the mix (redrawn)": meta_after.support},
             index=list(meta_after.types))"""
        ),
        new_markdown_cell("## Conclusions"),
        new_code_cell(
            """frame = knobs.frame.dropna(subset=["diff"])
clear = frame[(frame["low"] > 0) | (frame["high"] < 0)]
noise = sorted(set(frame["knob"]) - set(clear["knob"]))


def step(row):
    return (f"{row['knob']} {row['from']:g} -> {row['to']:g}: {100 * row['diff']:+.1f} points "
            f"({100 * row['low']:+.1f} to {100 * row['high']:+.1f})")


strongest = list(dict.fromkeys(frame["knob"]))[:3]
lines = [f"- **As it stands** the attacker wins {p_attacker:.1%} "
         f"(95%: {low_attacker:.1%} to {high_attacker:.1%}, {result.n:,} battles)."]
lines.append(f"- **Worth**: {knight.sentence()}.")
lines.append("- **The knobs to turn** (largest effect first): " + "; ".join(
    step(frame[(frame.knob == k)].loc[frame[frame.knob == k]["diff"].abs().idxmax()])
    for k in strongest) + ".")
if noise:
    lines.append("- **Within noise** at this battle count: " + ", ".join(noise) + ".")
else:
    lines.append("- Every step of every number moves the attacker's chance measurably.")
best, worst = record["overall"].idxmax(), record["overall"].idxmin()


def names(types, one, many):
    return f"{', '.join(types)} {one if len(types) == 1 else many}"


lines.append(
    f"- **At equal cost** (20 men a side) {best} has the best record "
    f"({record.loc[best, 'overall']:.0%} of its battles against the other types) and {worst} "
    f"the worst ({record.loc[worst, 'overall']:.0%}); "
    + (names(dominating, "beats", "beat") + " every other type attacking" if dominating
       else "no type beats every other attacking")
    + (", and " + names(dominated, "loses", "lose") + " to every other type." if dominated
       else ", and no type loses to every other."))
lines.append(f"- **What to add** (twelve men, at most four knights): {bring.sentence()}.")
lines.append(
    f"- **Fair prices** (in soldiers, budget 20"
    + ("" if fair.converged else "; not sure: the search did not converge at this battle "
       "count, so take them as a first guess")
    + "): "
    + ", ".join(f"{t} {p.price:.2f}" for t, p in fair.prices.items())
    + "; at these prices the types' average win rates spread over "
    f"{spread['at the fair prices']:.0%} instead of {spread['at cost 1']:.0%} at cost 1. "
    "The meta at those prices: "
    + ", ".join(f"{t} {w:.0%}" for t, w in meta_after.mix.items()) + ".")
lines.append(
    f"- **A patch**: to move the attacker's chance most with one step, change "
    f"{strongest[0]}; to fine-tune it, change {list(dict.fromkeys(frame['knob']))[-1]}, "
    "the number with the smallest effect.")
display(Markdown("\\n".join(lines)))"""
        ),
    ]
    return new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )


NOTEBOOKS = {
    "olympia_knight_worth.ipynb": olympia_knight,
    "age_of_gods_pikemen.ipynb": age_of_gods_pikemen,
    "blocks_siege.ipynb": blocks_siege,
    "balance_pass.ipynb": balance_pass,
}


def build() -> list[Path]:
    written = []
    for name, make in NOTEBOOKS.items():
        path = HERE / name
        notebook = make()
        # Stable cell ids: a rebuild changes a notebook's file only where its cells changed.
        for index, cell in enumerate(notebook.cells):
            cell.id = f"{path.stem[:20]}-{index:02d}"
        nbformat.write(notebook, path)
        written.append(path)
    return written


if __name__ == "__main__":
    for path in build():
        print(path)
