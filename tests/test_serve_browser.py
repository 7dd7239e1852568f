"""The calculator page in a real browser: Debian's headless Chromium driven through
Selenium (.ci/run installs ``chromium`` and ``chromium-driver``; nothing downloads a
browser). Load the page, enter two armies, see the probabilities arrive and match
``battle-odds odds`` on the same seed; open the shared link in a new page and get the
same numbers; a misspelt unit shows the error with its suggestion and the next question
still works; stop a long run.

``BATTLE_ODDS_SCREENSHOT=docs/serve.png`` also saves the page docs/serve.md shows.
"""

from __future__ import annotations

import os
import shlex
import tempfile
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette")
webdriver = pytest.importorskip("selenium.webdriver")

from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from simulator import simulate  # noqa: E402
from simulator.serve.question import Question  # noqa: E402

from .serving import ROOT, Server, odds_json, serving  # noqa: E402

ATTACKER, DEFENDER = "noble, 20 soldier, 10 archer@1", "noble, 26 pikeman"

CHROMIUM = "/usr/bin/chromium"
DRIVER = "/usr/bin/chromedriver"
#: Headless, as root, and quiet: no sandbox (root), no GPU, nothing fetched in the
#: background (the network is closed), no first-run pages.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1200,1700",
)

if not (Path(CHROMIUM).exists() and Path(DRIVER).exists()):
    if os.environ.get("CI"):
        pytest.fail(f"{CHROMIUM} or {DRIVER} missing: .ci/run installs chromium", pytrace=False)
    pytest.skip("no Chromium: apt-get install chromium chromium-driver", allow_module_level=True)


@pytest.fixture(scope="module")
def server():
    yield from serving()


#: Where Chromium keeps its profile and its own temporary files. Chromium listens on a
#: Unix socket inside them, and a socket's path is at most 107 bytes: under a long TMPDIR
#: (a deep CI workspace) Chromium could not start at all, so it gets a short folder.
SHORT_TEMPORARY = "/tmp" if os.access("/tmp", os.W_OK) else None


@pytest.fixture(scope="module")
def browser():
    with tempfile.TemporaryDirectory(prefix="bo-chromium-", dir=SHORT_TEMPORARY) as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        service = Service(DRIVER, env={**os.environ, "TMPDIR": profile})
        driver = webdriver.Chrome(service=service, options=options)
        driver.set_page_load_timeout(60)
        yield driver
        driver.quit()


def wait_for(driver, state: str, timeout: float = 120) -> None:
    """Wait until the page is in ``state`` (its body's ``data-state``)."""
    deadline = time.monotonic() + timeout
    while True:
        now = driver.execute_script(
            "return [document.body.dataset.state, document.getElementById('error').textContent,"
            " document.getElementById('status').textContent];"
        )
        if now[0] == state:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"the page did not reach '{state}' in {timeout} s: {now}")
        time.sleep(0.05)


def ask(driver, attacker: str, defender: str, seed: str, battles: str) -> None:
    """Type a question into the form (answer-as-you-type off) and press Run."""
    live = driver.find_element(By.ID, "live")
    if live.is_selected():
        live.click()
    for field, text in (
        ("attacker", attacker),
        ("defender", defender),
        ("seed", seed),
        ("battles", battles),
    ):
        box = driver.find_element(By.ID, field)
        box.clear()
        box.send_keys(text)
    driver.find_element(By.ID, "run").click()


def shown(driver) -> dict[str, object]:
    """The numbers on the page: each outcome's probability and interval, the provenance."""
    rows = driver.find_elements(By.CSS_SELECTOR, "#outcomes tbody tr")
    return {
        "p": {
            r.get_attribute("data-outcome"): float(
                r.find_element(By.CSS_SELECTOR, "td.p").get_attribute("data-p")
            )
            for r in rows
        },
        "interval": [r.find_element(By.CSS_SELECTOR, "td.interval").text for r in rows],
        "hash": driver.find_element(By.ID, "hash-shown").text,
        "seed": driver.find_element(By.ID, "seed-shown").text,
        "battles": driver.find_element(By.ID, "battles-shown").text,
        "version": driver.find_element(By.ID, "version-shown").text,
    }


# Slow tier (docs/testing.md): 8.4 s, quiet, the kernels cached
@pytest.mark.slow
def test_two_armies_answer_as_odds_does_and_the_link_gives_the_same(server, browser):
    browser.get(server.page)
    wait_for(browser, "idle", 60)
    # A setting, from the form the declarations generate.
    setting = browser.find_element(By.CSS_SELECTOR, '[data-path="defender.break_point"]')
    setting.clear()
    setting.send_keys("40")
    ask(browser, ATTACKER, DEFENDER, "4242", "60000")
    wait_for(browser, "done")
    page = shown(browser)
    command = browser.find_element(By.ID, "command-text").text
    assert command.startswith("battle-odds odds ") and "--defender-break 40" in command
    cli = odds_json(*shlex.split(command)[2:])
    assert cli["seed"] == 4242 and cli["battles"] == 60_000
    assert page["p"] == {o: cli["win"][o]["p"] for o in ("attacker", "defender", "draw")}
    assert page["hash"] == cli["scenario_hash"]
    assert page["seed"] == "4242" and page["battles"] == "60,000"
    assert page["version"] == cli["version"]
    # The drawn answer: the bars, break timing and survivors' curves are on the page.
    assert browser.find_elements(By.CSS_SELECTOR, "#bars rect")
    assert browser.find_elements(By.CSS_SELECTOR, "#survival path.curve")
    assert browser.find_elements(By.CSS_SELECTOR, "#survivors path.curve")
    assert "Decided after (strikes)" in browser.find_element(By.ID, "steps-title").text
    assert "soldiers lost by the attacking army" in browser.find_element(By.ID, "casualties").text
    assert "[[attacker.units]]" in browser.find_element(By.ID, "toml-text").text
    # The exact answer beside the Monte Carlo one (a small battle: olympia's solver),
    # inside the Monte Carlo answer's 99.9% interval.
    exact = WebDriverWait(browser, 120, poll_frequency=0.05).until(
        lambda d: d.execute_script(
            "const c = document.querySelector('#outcomes tr[data-outcome=attacker] td.exact');"
            "return c && c.dataset.p ? parseFloat(c.dataset.p) : null;"
        )
    )
    p, n = page["p"]["attacker"], 60_000
    assert abs(exact - p) < 3.29 * (p * (1 - p) / n) ** 0.5
    # P(at least k survive), worked out in the page from the casualty histogram.
    k = browser.find_element(By.ID, "survivor-k")
    k.clear()
    k.send_keys("5")
    kind = browser.find_element(By.ID, "survivor-type").get_attribute("value")
    assert kind == "attacker.soldier"
    shown_p = float(browser.find_element(By.ID, "survivor-p").get_attribute("data-p"))
    question = Question.of(
        {"attacker": ATTACKER, "defender": DEFENDER, "defender.break_point": "40"}
    )
    lost = simulate(question.scenario, 60_000, 4242).tally.columns["casualties.attacker.soldier"]
    expected = lost.counts[lost.values <= 20 - 5].sum() / lost.n
    assert shown_p == pytest.approx(expected, abs=1e-6)
    assert (
        "P(at least 5 soldiers of the attacking army survive)"
        in browser.find_element(By.ID, "survivor-p").text
    )
    screenshot = os.environ.get("BATTLE_ODDS_SCREENSHOT")
    if screenshot:
        from PIL import Image  # matplotlib's dependency: stored as the docs' figures are

        assert browser.save_screenshot(str(ROOT / screenshot))
        with Image.open(ROOT / screenshot) as image:
            image.convert("RGB").quantize(256).save(ROOT / screenshot, optimize=True)
    link = browser.find_element(By.ID, "share").get_attribute("href")
    assert "attacker=" in link and "seed=4242" in link and "defender.break_point=40" in link
    browser.switch_to.new_window("tab")
    try:
        browser.get(link)
        wait_for(browser, "done")
        assert shown(browser) == page
    finally:
        browser.close()
        browser.switch_to.window(browser.window_handles[0])


def step_shown(driver) -> dict[str, object]:
    """What the step slider shows: its step and range, each state's probability, each
    side's and type's mean men left, and the band chart's marker."""
    return driver.execute_script(
        "const s = document.getElementById('step');"
        "const p = {}; const men = {};"
        "for (const r of document.querySelectorAll('#step-states tbody tr'))"
        "  p[r.dataset.state] = parseFloat(r.querySelector('td.p').dataset.p);"
        "for (const r of document.querySelectorAll('#step-men tbody tr'))"
        "  men[r.dataset.key] = parseFloat(r.querySelector('td.mean').dataset.p);"
        "const now = document.querySelector('#bands line.now');"
        "return {step: parseInt(s.value), min: parseInt(s.min), max: parseInt(s.max),"
        " words: document.getElementById('step-shown').textContent, p: p, men: men,"
        " marker: now ? parseFloat(now.getAttribute('x1')) : null};"
    )


# Slow tier (docs/testing.md): 1.8 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_step_slider_shows_the_state_after_each_step(server, browser):
    from simulator.running.unfolding import run_steps

    browser.get(server.page)
    wait_for(browser, "idle", 60)
    # Every battle decided within the 100 steps the page shows (72 strikes at most).
    attacker, defender = "noble, 10 soldier, 5 archer@1", "noble, 12 pikeman"
    ask(browser, attacker, defender, "77", "6000")
    wait_for(browser, "done")
    assert browser.find_element(By.ID, "unfolding").is_displayed()
    assert (
        "The battle as it unfolds (strikes" in browser.find_element(By.ID, "unfolding-title").text
    )
    answer = shown(browser)["p"]
    # The same battles, each stopped after every step, worked out here.
    scenario = Question.of({"attacker": attacker, "defender": defender}).scenario
    steps = run_steps(scenario, None, 77, 0, 6000).tally.steps
    first = step_shown(browser)
    assert (first["min"], first["max"]) == (1, max(steps))
    # The keyboard moves it: End to the last step, where every battle is decided. (Its
    # cuts run on olympia's strike kernel, the answer on the skip kernel: the same
    # battles in distribution, drawn differently, so within their 99.9% intervals.)
    slider = browser.find_element(By.ID, "step")
    slider.send_keys(Keys.END)
    end = step_shown(browser)
    assert end["step"] == max(steps) and end["words"] == f"{max(steps)} strikes"
    assert end["p"]["fighting"] == 0.0
    for outcome, p in answer.items():
        assert end["p"][outcome] == steps[max(steps)].p(outcome)[0]
        assert abs(end["p"][outcome] - p) <= 3.29 * (2 * p * (1 - p) / 6000) ** 0.5
    # Left arrow: a step back, a state of its own, no request made.
    slider.send_keys(Keys.HOME)
    for _ in range(3):
        slider.send_keys(Keys.ARROW_RIGHT)
    at = step_shown(browser)
    assert at["step"] == 4 and at["marker"] < end["marker"]
    counts = steps[4]
    assert at["p"]["fighting"] == pytest.approx(counts.p("fighting")[0], abs=1e-12)
    assert at["p"]["fighting"] > 0.9  # four strikes in: nearly every battle goes on
    for key in ("attacker", "defender", "attacker.soldier", "defender.pikeman"):
        assert at["men"][key] == pytest.approx(counts.men_left[key].mean(), abs=1e-9)
    assert at["men"]["attacker"] > end["men"]["attacker"]
    # Bands of men left, and the link carries the step shown.
    assert len(browser.find_elements(By.CSS_SELECTOR, "#bands polygon.band")) == 2
    link = browser.find_element(By.ID, "share").get_attribute("href")
    assert link.endswith("#step=4")
    browser.get(link)
    wait_for(browser, "done")
    assert step_shown(browser)["step"] == 4
    assert step_shown(browser)["p"] == at["p"]


def rule_field(server, browser, path: str):
    """A fresh page's field of a stop rule (or the step reached), its heading opened."""
    browser.get(server.page)
    wait_for(browser, "idle", 60)
    rules = browser.find_element(By.ID, "rules")
    if not rules.get_attribute("open"):
        rules.find_element(By.TAG_NAME, "summary").click()
    field = browser.find_element(By.CSS_SELECTOR, f'[data-path="{path}"]')
    assert field.is_displayed()
    return field


# Slow tier (docs/testing.md): 6.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_stop_rule_in_a_shared_link_gives_the_same_answer(server, browser):
    field = rule_field(server, browser, "defender.retreat.at_most")
    field.send_keys("12")  # 26 pikemen: the defender withdraws at 12 or fewer
    # ... in a battle given after its 5th strike
    browser.find_element(By.CSS_SELECTOR, '[data-path="battle.from_step"]').send_keys("5")
    ask(browser, ATTACKER, DEFENDER, "4242", "20000")
    wait_for(browser, "done")
    page = shown(browser)
    assert set(page["p"]) == {
        "attacker",
        "defender",
        "draw",
        "attacker_withdrew",
        "defender_withdrew",
    }
    link = browser.find_element(By.ID, "share").get_attribute("href")
    assert page["p"]["defender_withdrew"] > 0.05, link
    assert page["p"]["attacker_withdrew"] == 0.0, link
    assert "defender withdrew" in browser.find_element(By.ID, "outcomes").text
    # The command line asks the same question and gets the same numbers.
    command = browser.find_element(By.ID, "command-text").text
    assert "--defender-retreat 'at most 12' --from-step 5" in command
    cli = odds_json(*shlex.split(command)[2:])
    assert page["p"] == {o: cli["win"][o]["p"] for o in page["p"]}
    # The slider's last step has the withdrawals too.
    browser.find_element(By.ID, "step").send_keys(Keys.END)
    end = step_shown(browser)
    # (from strike 6, the first after the battle's 5th; the page shows 100 strikes: a
    # few battles last longer)
    assert end["min"] == 6 and end["step"] == 105 and end["p"]["fighting"] < 0.01
    assert 0.05 < end["p"]["defender_withdrew"] <= page["p"]["defender_withdrew"]
    # The link, opened in a fresh page, restores the rule and gives the same answer.
    link = browser.find_element(By.ID, "share").get_attribute("href")
    assert "defender.retreat.at_most=12" in link and "battle.from_step=5" in link
    browser.switch_to.new_window("tab")
    try:
        browser.get(link)
        wait_for(browser, "done")
        restored = browser.find_element(By.CSS_SELECTOR, '[data-path="defender.retreat.at_most"]')
        assert restored.get_attribute("value") == "12" and restored.is_displayed()
        step = browser.find_element(By.CSS_SELECTOR, '[data-path="battle.from_step"]')
        assert step.get_attribute("value") == "5"
        assert shown(browser) == page
        assert step_shown(browser)["p"] == end["p"]
    finally:
        browser.close()
        browser.switch_to.window(browser.window_handles[0])


# Slow tier (docs/testing.md): 2.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_bad_stop_rule_is_the_command_lines_line(server, browser):
    field = rule_field(server, browser, "attacker.retreat.gone")
    field.send_keys("knigt")
    ask(browser, ATTACKER, DEFENDER, "1", "2000")
    wait_for(browser, "error")
    error = browser.find_element(By.ID, "error").text
    assert "'knigt' is not a type this side fields" in error and "Traceback" not in error
    field.clear()
    field.send_keys("archer")
    browser.find_element(By.ID, "run").click()
    wait_for(browser, "done")


# Slow tier (docs/testing.md): 3.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_probabilities_arrive_while_the_battles_run(server, browser):
    browser.get(server.page)
    wait_for(browser, "idle", 60)
    ask(browser, "noble, 20 soldier", "noble, 22 pikeman", "1", "4000000")
    seen: list[tuple[str, str]] = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        # Read in one script: the page redraws its rows as results arrive.
        state, battles, interval = browser.execute_script(
            "const cell = document.querySelector('#outcomes td.interval');"
            "return [document.body.dataset.state,"
            " document.getElementById('battles-shown').textContent,"
            " cell ? cell.textContent : ''];"
        )
        if state == "running" and interval and (not seen or seen[-1][0] != battles):
            seen.append((battles, interval))
        if state == "done":
            break
        time.sleep(0.05)
    wait_for(browser, "done")
    assert len(seen) >= 2, seen  # more than one answer so far before the last
    widths = [_width(interval) for _, interval in seen]
    final = _width(browser.find_element(By.CSS_SELECTOR, "#outcomes td.interval").text)
    assert final < widths[0]


def _width(interval: str) -> float:
    low, high = (float(x.strip().rstrip("%")) for x in interval.split(" - "))
    return high - low


# Slow tier (docs/testing.md): 2.4 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_misspelt_unit_is_shown_and_the_next_question_works(server, browser):
    browser.get(server.page)
    wait_for(browser, "idle", 60)
    ask(browser, "noble, 20 soldeir", "noble, 22 pikeman", "1", "5000")
    wait_for(browser, "error")
    error = browser.find_element(By.ID, "error")
    assert error.is_displayed()
    assert "unknown unit type 'soldeir'" in error.text
    assert "did you mean 'soldier'" in error.text
    assert "Traceback" not in browser.page_source
    ask(browser, "noble, 20 soldier", "noble, 22 pikeman", "1", "5000")
    wait_for(browser, "done")
    assert not browser.find_element(By.ID, "error").is_displayed()
    assert sum(shown(browser)["p"].values()) == pytest.approx(1.0)


def stop_a_long_run(server, browser, seed: str) -> float:
    """Ask 10**10 battles, press Stop once some are counted; seconds until it stopped."""
    browser.get(server.page)
    wait_for(browser, "idle", 60)
    ask(browser, "noble, 20 soldier", "noble, 22 pikeman", seed, "10000000000")
    WebDriverWait(browser, 120, poll_frequency=0.05).until(
        lambda d: d.find_element(By.ID, "battles-shown").text not in ("", "0")
    )
    browser.find_element(By.ID, "stop").click()
    began = time.monotonic()
    wait_for(browser, "stopped", 30)
    return time.monotonic() - began


# Slow tier (docs/testing.md): 1.9 s, quiet, the kernels cached
@pytest.mark.slow
def test_stop_ends_a_long_run_with_the_answer_so_far(server, browser):
    assert stop_a_long_run(server, browser, "1") < 5
    assert "partial" in browser.find_element(By.ID, "status").text
    assert server.running() == 0


# Slow tier (docs/testing.md): 4.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_stopped_answers_link_asks_the_battles_fought(server, browser):
    stop_a_long_run(server, browser, "3")
    page = shown(browser)
    fought = page["battles"].replace(",", "")
    link = browser.find_element(By.ID, "share").get_attribute("href")
    command = browser.find_element(By.ID, "command-text").text
    assert f"battles={fought}&" in link + "&" and "10000000000" not in link
    assert f"-n {fought}" in command and "10000000000" not in command
    assert f"battles={fought}" in browser.current_url
    cli = odds_json(*shlex.split(command)[2:])
    assert page["p"] == {o: cli["win"][o]["p"] for o in ("attacker", "defender", "draw")}
    browser.get(link)
    wait_for(browser, "done")
    assert shown(browser) == page


# Slow tier (docs/testing.md): 2.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_page_fits_a_phone(server, browser, tmp_path):
    width, height = 375, 812
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 2, "mobile": True},
    )
    try:
        browser.get(server.page)
        wait_for(browser, "idle", 60)
        # Settings folded, Run on the first screen.
        assert not browser.find_element(By.ID, "more").get_attribute("open")
        run = browser.find_element(By.ID, "run").rect
        assert run["y"] + run["height"] <= height
        browser.find_element(By.CSS_SELECTOR, "#more summary").click()  # seed and battles
        ask(browser, ATTACKER, DEFENDER, "4242", "20000")
        browser.find_element(By.CSS_SELECTOR, "#more summary").click()
        wait_for(browser, "done")
        # The answer begins on the first screen; nothing is wider than the screen.
        assert browser.find_element(By.ID, "outcomes").rect["y"] < height
        wide = browser.execute_script(
            "const w = document.documentElement.clientWidth; const out = [];"
            "for (const e of document.querySelectorAll('body *')) {"
            "  const r = e.getBoundingClientRect();"
            "  if (r.width && r.right > w + 0.5) out.push(e.tagName + '#' + e.id + ' ' + r.right);"
            "} return [w, document.documentElement.scrollWidth, out];"
        )
        assert wide[0] == width and wide[1] <= width, wide
        assert wide[2] == [], wide
        # The step slider: on the screen's width, moved by the keyboard.
        slider = browser.find_element(By.ID, "step")
        browser.execute_script("arguments[0].scrollIntoView()", slider)
        assert slider.is_displayed() and slider.rect["x"] + slider.rect["width"] <= width
        before = step_shown(browser)
        slider.send_keys(Keys.ARROW_RIGHT)
        after = step_shown(browser)
        assert after["step"] == before["step"] + 1 and after["men"] != before["men"]
        shot = os.environ.get("BATTLE_ODDS_PHONE_SCREENSHOT")
        if shot:  # the first screen, and the answer's tables further down
            browser.save_screenshot(shot)
            browser.execute_script("document.getElementById('steps').scrollIntoView()")
            browser.save_screenshot(shot.replace(".png", "-tables.png"))
        browser.find_element(By.CSS_SELECTOR, "#more summary").click()
        assert browser.find_element(By.CSS_SELECTOR, '[data-path="battle.terrain"]').is_displayed()
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width
        # The stop rules, folded on a phone, open inside the screen too.
        assert not browser.find_element(By.ID, "rules").get_attribute("open")
        browser.find_element(By.CSS_SELECTOR, "#rules summary").click()
        rule = browser.find_element(By.CSS_SELECTOR, '[data-path="defender.retreat.at_most"]')
        assert rule.is_displayed() and rule.rect["x"] + rule.rect["width"] <= width
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


# Slow tier (docs/testing.md): the page in Chromium, whose start (about 5 s) each worker pays
@pytest.mark.slow
def test_completion_offers_the_rulesets_unit_names(server, browser):
    browser.get(server.page)
    wait_for(browser, "idle", 60)
    box = browser.find_element(By.ID, "attacker")
    box.clear()
    box.send_keys("noble, 5 pik")
    options = browser.find_elements(By.CSS_SELECTOR, "#attacker-units option")
    assert [o.get_attribute("value") for o in options] == ["noble, 5 pikeman"]


def paste_box(server, browser):
    """A fresh page's box for a pasted scenario (answer-as-you-type off: Run asks)."""
    browser.get(server.page)
    wait_for(browser, "idle", 60)
    browser.find_element(By.ID, "live").click()
    browser.find_element(By.CSS_SELECTOR, "input[name=mode][value=toml]").click()
    return browser.find_element(By.ID, "toml")


# Slow tier (docs/testing.md): 1.2 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_pasted_scenario_is_answered_and_its_errors_name_the_line(server, browser):
    box = paste_box(server, browser)
    text = (ROOT / "scenarios" / "olympia" / "knights_vs_pikemen.toml").read_text()
    misspelt = text.replace("knight = 10", "knigt = 10")
    browser.execute_script("arguments[0].value = arguments[1];", box, misspelt)
    browser.find_element(By.ID, "run").click()
    wait_for(browser, "error")
    error = browser.find_element(By.ID, "error").text
    assert "pasted scenario:18:" in error and "did you mean 'knight'" in error
    browser.execute_script("arguments[0].value = arguments[1];", box, text)
    browser.find_element(By.ID, "battles").send_keys("20000")
    browser.find_element(By.ID, "run").click()
    wait_for(browser, "done")
    expected = Question.of({"toml": text}).scenario.hash
    assert browser.find_element(By.ID, "hash-shown").text == expected
    assert browser.find_element(By.ID, "battles-shown").text == "20,000"


# Slow tier (docs/testing.md): 2.7 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_answer_follows_the_typing(server, browser):
    browser.get(server.page)
    wait_for(browser, "idle", 60)
    assert browser.find_element(By.ID, "live").is_selected()
    battles = browser.find_element(By.ID, "battles")
    battles.send_keys("3000")
    wait_for(browser, "done")  # asked without pressing Run
    assert browser.find_element(By.ID, "battles-shown").text == "3,000"
    box = browser.find_element(By.ID, "defender")
    box.send_keys(", 5 archer@1")
    WebDriverWait(browser, 120, poll_frequency=0.05).until(
        lambda d: (
            "archers lost by the defending army" in d.find_element(By.ID, "casualties").text
            and d.find_element(By.TAG_NAME, "body").get_attribute("data-state") == "done"
        )
    )
    assert "defender.archer" not in browser.find_element(By.TAG_NAME, "body").text


# Slow tier (docs/testing.md): 1.7 s, quiet, the kernels cached
@pytest.mark.slow
def test_another_ruleset_brings_its_own_settings_and_words(server, browser):
    browser.get(server.page)
    wait_for(browser, "idle", 60)
    Select(browser.find_element(By.ID, "ruleset")).select_by_value("blocks")
    assert browser.find_elements(By.CSS_SELECTOR, '[data-path="policy.withdraw"]')
    assert not browser.find_elements(By.CSS_SELECTOR, '[data-path="battle.terrain"]')
    wait_for(browser, "done", 600)  # blocks' kernel loads at its first question
    assert browser.find_element(By.ID, "steps-title").text.startswith("Decided after (phases")
    command = browser.find_element(By.ID, "command-text").text
    assert command.startswith("battle-odds odds --ruleset blocks ")


# Slow tier (docs/testing.md): the page in Chromium, whose start (about 5 s) each worker pays
@pytest.mark.slow
def test_a_precision_target_instead_of_battles(server, browser):
    browser.get(server.page)
    wait_for(browser, "idle", 60)
    live = browser.find_element(By.ID, "live")
    if live.is_selected():
        live.click()
    browser.find_element(By.ID, "precision").send_keys("0.005")
    browser.find_element(By.ID, "run").click()
    wait_for(browser, "done")
    status = browser.find_element(By.ID, "status").text
    assert "precision reached: widest 95% half-width" in status
    assert "precision=0.005" in browser.find_element(By.ID, "share").get_attribute("href")
    assert "--precision 0.005" in browser.find_element(By.ID, "command-text").text


# -- another site's page -----------------------------------------------------------------


class _Elsewhere:
    """A second local server: another origin's page (the attacker's, in the browser of
    whoever runs ``serve``) that tries every way a page can make a request to it."""

    def __init__(self, page: str) -> None:
        import http.server
        import threading

        body = page.encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _attack(target: str) -> str:
    """Another site's page: an iframe of the page with a long question and of the answer
    stream, a form sent into a frame and into a new tab, a no-cors fetch and an
    EventSource, each asking 10**10 battles; the title counts what it sent."""
    from urllib.parse import urlencode

    question = urlencode({"attacker": ATTACKER, "defender": DEFENDER, "battles": "10000000000"})
    fields = "".join(
        f'<input type="hidden" name="{k}" value="{v}">'
        for k, v in (("attacker", ATTACKER), ("defender", DEFENDER), ("battles", "10000000000"))
    )
    return f"""<!doctype html><html><head><title>nothing</title></head><body>
<iframe src="{target}?{question}"></iframe>
<iframe src="{target}api/run?{question}"></iframe>
<iframe name="sink"></iframe>
<form id="framed" action="{target}api/run" method="GET" target="sink">{fields}</form>
<form id="tab" action="{target}" method="GET" target="_blank">{fields}</form>
<script>
let sent = 0;
document.getElementById("framed").submit(); sent++;
document.getElementById("tab").submit(); sent++;
fetch("{target}api/run?{question}", {{mode: "no-cors", credentials: "include"}})
  .catch(() => {{}}); sent++;
fetch("{target}api/exact?{question}", {{mode: "no-cors", credentials: "include"}})
  .catch(() => {{}}); sent++;
new EventSource("{target}api/run?{question}", {{withCredentials: true}}); sent++;
document.title = "sent " + sent;
</script></body></html>"""


# Slow tier (docs/testing.md): 13.6 s for its 2 cases, quiet, the kernels cached
@pytest.mark.slow
@pytest.mark.parametrize("name", ["localhost", "127.0.0.1"])
def test_another_sites_page_cannot_start_a_question(server, browser, name):
    # This browser holds the server's cookie (its first visit traded the secret for it):
    # the cookie alone does not let another origin's page start work.
    browser.get(server.page)
    wait_for(browser, "idle", 60)
    home = browser.current_window_handle
    before = server.get("/api/status")["refused"]
    elsewhere = _Elsewhere(_attack(server.url))
    try:
        # localhost: another site; 127.0.0.1 on another port: the same site (the browser
        # sends the SameSite cookie), another origin.
        browser.get(f"http://{name}:{elsewhere.port}/")
        WebDriverWait(browser, 30, poll_frequency=0.05).until(lambda d: d.title == "sent 5")
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            status = server.get("/api/status")
            assert status["questions"] == 0 and status["running"] == 0, status
            time.sleep(0.1)
        # Each attempt reached the server and was refused (the iframes, the form into a
        # frame, the fetches, the EventSource: at least 5 requests).
        assert server.get("/api/status")["refused"] - before >= 5
        # The form that opened the page in a new tab: the question is shown, not asked.
        opened = [h for h in browser.window_handles if h != home]
        assert opened, "the form's new tab did not open"
        browser.switch_to.window(opened[0])
        wait_for(browser, "idle", 60)
        assert browser.find_element(By.ID, "arrived").is_displayed()
        assert browser.find_element(By.ID, "battles").get_attribute("value") == "10000000000"
        assert server.get("/api/status")["questions"] == 0
    finally:
        elsewhere.close()
        for handle in browser.window_handles:
            if handle != home:
                browser.switch_to.window(handle)
                browser.close()
        browser.switch_to.window(home)
    # The page itself still asks and is answered.
    browser.get(server.page)
    wait_for(browser, "idle", 60)
    ask(browser, "noble, 5 soldier", "noble, 5 pikeman", "1", "2000")
    wait_for(browser, "done")


# A fresh install's compile watched in Chromium (41 s at load 4): slow tier.
@pytest.mark.slow
def test_the_page_says_which_rulesets_still_compile(browser, tmp_path):
    # A fresh install: an empty Numba cache, confrontation's kernels compiled after the
    # server listens.
    fresh = Server(
        warm="confrontation", ready=False, env={"NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    ).start()
    try:
        browser.get(fresh.page)
        wait_for(browser, "idle", 60)
        said = WebDriverWait(browser, 60, poll_frequency=0.05).until(
            lambda d: (
                "compiling the confrontation kernel" in d.find_element(By.ID, "readiness").text
                and d.find_element(By.ID, "readiness").text
            )
        )
        assert said.startswith("Not ready yet: confrontation: compiling the confrontation ")
        assert "(first start after install only)" in said
        Select(browser.find_element(By.ID, "ruleset")).select_by_value("confrontation")
        live = browser.find_element(By.ID, "live")
        if live.is_selected():
            live.click()
        browser.find_element(By.ID, "run").click()
        # Asked while compiling, the question says what it waits for, then is answered.
        seen = set()
        deadline = time.monotonic() + 600
        while browser.find_element(By.TAG_NAME, "body").get_attribute("data-state") != "done":
            seen.add(browser.find_element(By.ID, "status").text)
            assert time.monotonic() < deadline, seen
            time.sleep(0.05)
        assert any(s.startswith("confrontation: compiling the ") for s in seen), seen
        WebDriverWait(browser, 30, poll_frequency=0.1).until(
            lambda d: not d.find_element(By.ID, "readiness").is_displayed()
        )
    finally:
        assert fresh.stop() == 0, fresh.errors


# Slow tier (docs/testing.md): 1.3 s, quiet, the kernels cached
@pytest.mark.slow
def test_a_pasted_scenario_with_waves_shows_its_waves_on_a_phone(server, browser):
    width = 375
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 812, "deviceScaleFactor": 2, "mobile": True},
    )
    try:
        box = paste_box(server, browser)
        text = (ROOT / "examples" / "waves" / "raids_on_a_gate.toml").read_text()
        browser.execute_script("arguments[0].value = arguments[1];", box, text)
        browser.find_element(By.ID, "run").click()
        wait_for(browser, "done")
        assert browser.find_element(By.ID, "waves-title").text.startswith("Waves: the attacker's")
        cells = [
            [c.text for c in r.find_elements(By.TAG_NAME, "td")]
            for r in browser.find_elements(By.CSS_SELECTOR, "#waves tbody tr")
        ]
        assert [c[0] for c in cells] == ["1", "2", "3"] and len(cells[0]) == 7
        assert "a scenario with waves" in browser.find_element(By.ID, "unfolding-note").text
        assert not browser.find_element(By.CSS_SELECTOR, "#unfolding .slider").is_displayed()
        browser.execute_script("document.getElementById('waves').scrollIntoView()")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= width
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


# Slow tier (docs/testing.md): 4.1 s, quiet, the kernels cached
@pytest.mark.slow
def test_the_retreat_panel_shows_the_rule_its_value_and_its_map(server, browser):
    """The panel finds the defender's best retreat rule of the question asked (exact on
    this small battle): the rule in words, its value and what it gains over never
    retreating, as best_retreat gives them, and the map's cells; a win value of 0 is
    the command line's line."""
    from simulator.studies.retreat import best_retreat

    browser.get(server.page)
    wait_for(browser, "idle", 60)
    attacker, defender = "noble, 8 soldier", "noble, 10 pikeman"
    ask(browser, attacker, defender, "3", "200")
    wait_for(browser, "done")
    panel = browser.find_element(By.ID, "retreat")
    panel.find_element(By.TAG_NAME, "summary").click()
    Select(browser.find_element(By.ID, "retreat-side")).select_by_value("defender")
    win = browser.find_element(By.ID, "retreat-win")
    win.send_keys("5")
    browser.find_element(By.ID, "retreat-find").click()
    WebDriverWait(browser, 60).until(lambda d: panel.get_attribute("data-state") == "done")
    scenario = Question.of({"attacker": attacker, "defender": defender}).scenario
    expected = best_retreat(scenario, "defender", 5.0, method="exact")
    assert browser.find_element(By.ID, "retreat-rule").text == f"The rule: {expected.words()}."
    best = browser.find_element(By.CSS_SELECTOR, '#retreat-values tr[data-row="best"] td.value')
    assert float(best.text) == pytest.approx(expected.value, abs=5e-4)
    gain = browser.find_element(By.CSS_SELECTOR, '#retreat-values tr[data-row="never"] td.gain')
    assert float(gain.text) == pytest.approx(expected.value - expected.never, abs=5e-4)
    cells = browser.find_elements(By.CSS_SELECTOR, "#retreat-map rect.cell:not(.key)")
    withdraw = browser.find_elements(By.CSS_SELECTOR, "#retreat-map rect.withdraw:not(.key)")
    assert len(cells) > len(withdraw) > 0
    # Exact: the value is the optimum, no bound is shown; simulated: the hindsight bound.
    assert not browser.find_elements(By.CSS_SELECTOR, '#retreat-values tr[data-row="upper"]')
    Select(browser.find_element(By.ID, "retreat-method")).select_by_value("simulated")
    browser.find_element(By.ID, "retreat-find").click()
    WebDriverWait(browser, 60).until(
        lambda d: (
            panel.get_attribute("data-state") == "done"
            and "simulated" in d.find_element(By.ID, "retreat-status").text
        )
    )
    value = '#retreat-values tr[data-row="{}"] td.value'
    upper = float(browser.find_element(By.CSS_SELECTOR, value.format("upper")).text)
    assert upper >= float(browser.find_element(By.CSS_SELECTOR, value.format("best")).text)
    win.clear()
    win.send_keys("0")
    browser.find_element(By.ID, "retreat-find").click()
    WebDriverWait(browser, 60).until(lambda d: panel.get_attribute("data-state") == "error")
    assert browser.find_element(By.ID, "retreat-status").text == (
        "Retreat: win value 0: expected a number more than 0"
    )
