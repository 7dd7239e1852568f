// battle-odds serve: the calculator page. Plain JavaScript, no build step, nothing
// fetched from elsewhere. The server does the work and chooses the words; this page
// reads the form, keeps the question in the address, and draws what arrives.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const COLOURS = { attacker: "#c0392b", defender: "#2980b9", draw: "#7f8c8d", all: "#000",
  attacker_withdrew: "#e59866", defender_withdrew: "#85c1e9", fighting: "#f4d03f" };
const OWN_KEYS = ["ruleset", "attacker", "defender", "toml", "seed", "battles", "precision"];

let offered = null; // /api/rulesets
let source = null; // the EventSource of the question running
let current = null; // {run, described}
let typing = null; // the timer of "answer as I type"
let last = null; // the last answer drawn
let unfolded = null; // the battle as it unfolds of the last answer (its steps)
let retreatAsked = 0; // the retreat panel's questions: an answer to an older one is dropped
// The step the slider shows: the address's "#step=t" (a shared link), then the slider's.
let wantedStep = parseInt((location.hash.match(/step=(\d+)/) || [])[1], 10) || null;

function setState(state) {
  document.body.dataset.state = state;
  $("stop").disabled = state !== "running";
}

function pct(p, digits = 2) {
  return p === null || p === undefined ? "-" : (100 * p).toFixed(digits) + "%";
}

function num(x) {
  if (x === null || x === undefined) return "-";
  return Number.isInteger(x) ? x.toLocaleString("en") :
    x.toLocaleString("en", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

function ruleset() {
  return offered.rulesets.find((r) => r.name === $("ruleset").value);
}

function mode() {
  return document.querySelector("input[name=mode]:checked").value;
}

// -- the form -----------------------------------------------------------------------

// The fieldset of a group of settings: the ruleset's own, or a side's stop rule and the
// battle in progress (under "Stop rules and a battle in progress").
function groupBox(group) {
  if (group === "settings") return $("settings");
  let box = $("rule-groups").querySelector(`fieldset[data-group="${CSS.escape(group)}"]`);
  if (!box) {
    box = document.createElement("fieldset");
    box.dataset.group = group;
    const legend = document.createElement("legend");
    legend.textContent = ruleset().groups[group] || group;
    box.append(legend);
    $("rule-groups").append(box);
  }
  return box;
}

function buildSettings() {
  const box = $("settings");
  box.querySelectorAll(".setting").forEach((e) => e.remove());
  $("rule-groups").textContent = "";
  for (const s of ruleset().settings) {
    const row = document.createElement("label");
    row.className = "setting";
    row.title = s.doc;
    const words = document.createElement("span");
    words.textContent = s.words;
    row.append(words);
    let input;
    if (s.kind === "choice" || s.kind === "bool") {
      input = document.createElement("select");
      const choices = s.kind === "bool" ? ["true", "false"] : s.choices;
      const shown = s.default === null ? "" : String(s.default);
      input.append(new Option(shown ? `(${shown})` : "(default)", ""));
      for (const c of choices) input.append(new Option(c, c));
    } else {
      input = document.createElement("input");
      input.size = s.kind === "names" || s.kind === "text" ? 18 : 10;
      let hint = s.default === null ? "" : Array.isArray(s.default) ?
        s.default.join(", ") : String(s.default);
      if (s.kind === "names") hint = `${hint || "none"}; of ${s.choices.join(", ")}`;
      if (s.lo !== null && s.hi !== null) hint = `${hint} (${s.lo}..${s.hi})`;
      input.placeholder = hint.trim();
    }
    input.dataset.path = s.path;
    input.name = s.path;
    input.addEventListener("input", changed);
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") run(); });
    row.append(input);
    groupBox(s.group || "settings").append(row);
  }
  // The groups in the server's order (each side's stop rule, then the battle in progress).
  for (const group of Object.keys(ruleset().groups || {})) {
    const found = $("rule-groups").querySelector(`fieldset[data-group="${CSS.escape(group)}"]`);
    if (found) $("rule-groups").append(found);
  }
  box.hidden = !ruleset().settings.some((s) => (s.group || "settings") === "settings");
  $("rules").hidden = $("rule-groups").children.length === 0;
  const example = ruleset().example;
  $("syntax").textContent = (ruleset().syntax ? ruleset().syntax + " " : "") + (example.attacker ?
    `E.g. attacker "${example.attacker}", defender "${example.defender}".` : "");
  complete($("attacker"));
  complete($("defender"));
}

// Unit names completed from the ruleset's list: the datalist offers the line typed so
// far with its last word completed.
function complete(input) {
  const list = $(input.getAttribute("list"));
  list.textContent = "";
  const text = input.value;
  const cut = Math.max(text.lastIndexOf(","), text.lastIndexOf(";")) + 1;
  const head = text.slice(0, cut);
  const item = text.slice(cut);
  const m = item.match(/^(\s*(?:[+-]?\d+\s+)?)([A-Za-z_][\w .'-]*)?$/);
  if (!m) return;
  const lead = m[1];
  const word = (m[2] || "").toLowerCase();
  const names = ruleset().units.filter((u) => u.toLowerCase().startsWith(word));
  if (names.length === 1 && names[0].toLowerCase() === word) return;
  for (const name of names.slice(0, 30)) {
    const option = document.createElement("option");
    option.value = head + lead + name;
    list.append(option);
  }
}

function params() {
  const p = new URLSearchParams();
  if (mode() === "toml") {
    p.set("toml", $("toml").value);
  } else {
    p.set("ruleset", $("ruleset").value);
    p.set("attacker", $("attacker").value);
    p.set("defender", $("defender").value);
    for (const input of $("question").querySelectorAll("[data-path]")) {
      if (input.value.trim()) p.set(input.dataset.path, input.value.trim());
    }
  }
  for (const key of ["seed", "battles", "precision"]) {
    if ($(key).value.trim()) p.set(key, $(key).value.trim());
  }
  return p;
}

function fill(p) {
  if (p.has("toml")) {
    document.querySelector("input[name=mode][value=toml]").checked = true;
    $("toml").value = p.get("toml");
    buildSettings();
  } else {
    if (p.has("ruleset") && offered.rulesets.some((r) => r.name === p.get("ruleset"))) {
      $("ruleset").value = p.get("ruleset");
    }
    buildSettings();
    $("attacker").value = p.get("attacker") || "";
    $("defender").value = p.get("defender") || "";
    for (const [key, value] of p) {
      if (OWN_KEYS.includes(key)) continue;
      const input = $("question").querySelector(`[data-path="${CSS.escape(key)}"]`);
      if (input) {
        input.value = value;
        // A stop rule the link carries is shown, not folded away.
        if ($("rule-groups").contains(input)) $("rules").open = true;
      }
    }
  }
  for (const key of ["seed", "battles", "precision"]) $(key).value = p.get(key) || "";
  showMode();
}

function showMode() {
  $("armies").hidden = mode() !== "armies";
  $("file").hidden = mode() !== "toml";
}

function changed() {
  if (!$("live").checked) return;
  clearTimeout(typing);
  typing = setTimeout(run, 700);
}

// -- asking -------------------------------------------------------------------------

function showError(message) {
  $("error").textContent = "error: " + message;
  $("error").hidden = false;
  setState("error");
}

function halt() {
  if (source) source.close();
  if (current && document.body.dataset.state === "running") {
    fetch("/api/stop?run=" + current.run, { method: "POST" }).catch(() => {});
  }
  source = null;
}

function run() {
  clearTimeout(typing);
  $("arrived").hidden = true;
  halt();
  const p = params();
  const size = new TextEncoder().encode($("toml").value).length;
  if (mode() === "toml" && size > offered.limits.scenario_bytes) {
    // Said here: the server would refuse an address this long without a word.
    showError(`pasted scenario: ${size.toLocaleString("en")} bytes: the page takes scenarios` +
      ` of up to ${offered.limits.scenario_bytes / 1024} KB (run a longer one with battle-odds run FILE)`);
    return;
  }
  history.replaceState(null, "", "?" + p.toString());
  $("error").hidden = true;
  $("exact-note").textContent = "";
  unfolded = null;
  $("unfolding").hidden = true;
  for (const cell of document.querySelectorAll("#outcomes td.exact")) cell.textContent = "";
  setState("running");
  $("status").textContent = "starting ...";
  const es = new EventSource("/api/run?" + p.toString());
  source = es;
  let finished = false;
  es.addEventListener("start", (e) => {
    current = JSON.parse(e.data);
    described(current);
    if (current.exact) solve(p, es);
  });
  es.addEventListener("progress", (e) => draw(JSON.parse(e.data)));
  // The ruleset's kernels are still loading (or compiling): what, and about how long.
  es.addEventListener("waiting", (e) => {
    $("answer").hidden = false;
    $("status").textContent = JSON.parse(e.data).words + " ...";
  });
  es.addEventListener("done", (e) => {
    finished = true;
    es.close();
    const answer = JSON.parse(e.data);
    draw(answer);
    unfolding(answer.unfolding);
    if (answer.described) {
      // Stopped: the link, the address and the command ask the battles fought.
      described(answer.described);
      history.replaceState(null, "", "?" + answer.described.address);
    }
    setState(answer.partial ? "stopped" : "done");
  });
  es.addEventListener("error", (e) => {
    if (finished) return;
    finished = true;
    es.close();
    if (e.data) {
      showError(JSON.parse(e.data).error);
    } else if (source === es) {
      showError("the connection to the server was lost (is battle-odds serve still running?)");
    }
  });
}

function stop() {
  if (!current || document.body.dataset.state !== "running") return;
  $("status").textContent = "stopping ...";
  fetch("/api/stop?run=" + current.run, { method: "POST" }).catch(() => {
    if (source) source.close();
    setState("stopped");
  });
}

function solve(p, es) {
  $("exact-note").textContent = "solving exactly ...";
  fetch("/api/exact?" + p.toString()).then((r) => r.json()).then((answer) => {
    if (source !== es) return; // an answer to a question asked before
    if (answer.unavailable || answer.error) {
      $("exact-note").textContent = "exact: " + (answer.unavailable || answer.error);
      return;
    }
    current.solved = answer;
    drawExact();
  }).catch(() => { $("exact-note").textContent = ""; });
}

function drawExact() {
  const answer = current && current.solved;
  if (!answer) return;
  for (const w of answer.win) {
    const cell = document.querySelector(`#outcomes tr[data-outcome="${w.outcome}"] td.exact`);
    if (cell) { cell.textContent = pct(w.p, 4); cell.dataset.p = w.p; }
  }
  const expected = answer.expected.map((e) => `${e.words} ${num(e.value)}`).join("; ");
  $("exact-note").textContent =
    `exact: ${answer.states.toLocaleString("en")} states, ${answer.seconds} s; expected ${expected}`;
}

function described(d) {
  $("answer").hidden = false;
  $("outcomes").classList.toggle("no-exact", !d.exact);
  $("seed-shown").textContent = d.seed;
  $("version-shown").textContent = d.version;
  $("hash-shown").textContent = d.scenario_hash;
  $("share").dataset.address = d.address;
  share();
  $("command-text").textContent = d.command ||
    "(no one-line command asks this: copy as TOML, then battle-odds run FILE.toml)";
  $("toml-text").textContent = d.toml;
  $("copy-command").disabled = !d.command;
}

// -- drawing ------------------------------------------------------------------------

function rows(table, cells, key) {
  const body = $(table).querySelector("tbody");
  body.textContent = "";
  for (const item of cells) {
    const tr = document.createElement("tr");
    if (key) tr.dataset[key[0]] = item[key[1]];
    for (const [text, cls, data] of item.cells) {
      const td = document.createElement("td");
      td.textContent = text;
      if (cls) td.className = cls;
      if (data !== undefined && data !== null) td.dataset.p = data;
      tr.append(td);
    }
    body.append(tr);
  }
}

function draw(a) {
  last = a;
  $("answer").hidden = false;
  const when = `${a.seconds.toFixed(2)} s`;
  if (a.running) {
    $("status").textContent = a.planned ?
      `${a.battles.toLocaleString("en")} of ${a.planned.toLocaleString("en")} battles, ${when} ...` :
      `${a.battles.toLocaleString("en")} battles so far, ${when} ...`;
  } else if (a.partial) {
    $("status").textContent =
      `stopped: the answer of the first ${a.battles.toLocaleString("en")} battles (partial)`;
  } else {
    $("status").textContent = `${a.scenario} (${a.ruleset}): ` +
      `${a.battles.toLocaleString("en")} battles, ${when}` +
      (a.precision ? `; precision ${a.precision}` : "");
  }
  rows("outcomes", a.win.map((w) => ({
    outcome: w.outcome,
    cells: [[w.words], [pct(w.p), "p", w.p], [`${pct(w.low)} - ${pct(w.high)}`, "interval"],
      ["", "exact"]],
  })), ["outcome", "outcome"]);
  drawExact();
  bars(a.win);
  $("steps-title").textContent = a.titles.steps;
  rows("steps", a.steps.map((s) => ({
    cells: [[s.words], [num(s.mean)], [num(s.q10)], [num(s.q50)], [num(s.q90)]],
  })));
  $("survival-title").textContent = a.titles.survival;
  survival(a);
  $("casualties-title").textContent = a.titles.casualties;
  rows("casualties", a.casualties.map((c) => ({
    cells: [[c.words], [num(c.mean)], [num(c.q10)], [num(c.q50)], [num(c.q90)]],
  })));
  $("survivors-title").textContent = a.titles.survivors;
  survivorChoices(a);
  survivors();
  // Waves: the table run prints, in its words.
  $("waves-box").hidden = !a.waves;
  if (a.waves) {
    $("waves-title").textContent = a.waves.title;
    const head = $("waves").querySelector("thead tr");
    head.textContent = "";
    for (const c of a.waves.columns) head.append(Object.assign(document.createElement("th"), { textContent: c }));
    rows("waves", a.waves.rows.map((r) => ({ cells: r.map((c) => [c]) })));
    $("waves-note").textContent = a.waves.note;
  }
  $("extras-box").hidden = a.extras.length === 0;
  rows("extras", a.extras.map((x) => ({
    cells: x.probability ?
      [[x.words], [pct(x.mean), "p", x.mean], [""]] :
      [[x.words], [num(x.mean)], [`${num(x.q10)} / ${num(x.q50)} / ${num(x.q90)}`]],
  })));
  const notes = $("notes");
  notes.textContent = "";
  for (const n of a.notes) {
    const li = document.createElement("li");
    li.textContent = "note: " + n;
    notes.append(li);
  }
  $("seed-shown").textContent = a.seed;
  $("battles-shown").textContent = a.battles.toLocaleString("en");
  $("version-shown").textContent = a.version;
  $("hash-shown").textContent = a.scenario_hash;
  $("kernel-shown").textContent = a.kernel;
}

function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function bars(win) {
  const svg = $("bars");
  svg.textContent = "";
  const left = 130, width = 420;
  svg.setAttribute("viewBox", `0 0 640 ${14 + 32 * win.length}`);
  win.forEach((w, i) => {
    const y = 8 + i * 32;
    svg.append(el("text", { x: 4, y: y + 15, class: "label" }, w.words));
    svg.append(el("rect", { x: left, y, width: width, height: 20, class: "track" }));
    svg.append(el("rect", { x: left, y, width: Math.max(0, w.p * width), height: 20,
      fill: COLOURS[w.outcome] }));
    const lo = left + w.low * width, hi = left + w.high * width;
    svg.append(el("line", { x1: lo, x2: hi, y1: y + 10, y2: y + 10, class: "whisker" }));
    svg.append(el("line", { x1: lo, x2: lo, y1: y + 4, y2: y + 16, class: "whisker" }));
    svg.append(el("line", { x1: hi, x2: hi, y1: y + 4, y2: y + 16, class: "whisker" }));
    svg.append(el("text", { x: left + width + 6, y: y + 15, class: "label" }, pct(w.p)));
  });
}

// A step chart of series {words, colour, t[], p[]}: p holds from t on, until the next t.
function steps(svg, series, xLabel, yLabel, start) {
  svg.textContent = "";
  const W = 420, H = 260, L = 46, R = 10, T = 10, B = 40;
  const xs = series.flatMap((s) => s.t);
  const xmax = Math.max(1, ...xs);
  const X = (t) => L + (t / xmax) * (W - L - R);
  const Y = (p) => T + (1 - p) * (H - T - B);
  svg.append(el("rect", { x: L, y: T, width: W - L - R, height: H - T - B, class: "frame" }));
  for (const p of [0, 0.25, 0.5, 0.75, 1]) {
    svg.append(el("line", { x1: L, x2: W - R, y1: Y(p), y2: Y(p), class: "grid" }));
    svg.append(el("text", { x: L - 4, y: Y(p) + 4, class: "tick", "text-anchor": "end" },
      p.toFixed(2)));
  }
  for (const t of [0, xmax / 2, xmax]) {
    svg.append(el("text", { x: X(t), y: H - B + 14, class: "tick", "text-anchor": "middle" },
      Math.round(t).toLocaleString("en")));
  }
  svg.append(el("text", { x: (L + W - R) / 2, y: H - 6, class: "axis", "text-anchor": "middle" },
    xLabel));
  svg.append(el("text", { x: 12, y: (T + H - B) / 2, class: "axis", "text-anchor": "middle",
    transform: `rotate(-90 12 ${(T + H - B) / 2})` }, yLabel));
  series.forEach((s, i) => {
    let d = `M ${X(0)} ${Y(start)}`;
    s.t.forEach((t, j) => { d += ` H ${X(t)} V ${Y(s.p[j])}`; });
    d += ` H ${X(xmax)}`;
    svg.append(el("path", { d, class: "curve", stroke: s.colour,
      "stroke-dasharray": s.dashed ? "5 3" : "none" }));
    svg.append(el("text", { x: W - R - 4, y: T + 14 + 14 * i, class: "legend",
      "text-anchor": "end", fill: s.colour }, s.words));
  });
}

function survival(a) {
  const series = a.survival.map((s) => ({ words: s.words, t: s.t, p: s.p,
    colour: COLOURS[s.outcome] || "#000", dashed: s.outcome === "all" }));
  steps($("survival"), series, `t (${a.step_unit})`, a.titles.survival_axis, 1);
}

function survivorChoices(a) {
  const select = $("survivor-type");
  const had = select.value;
  const types = a.casualties.filter((c) => c.start !== undefined);
  const names = types.map((c) => c.metric);
  if (names.join() !== Array.from(select.options).map((o) => o.value).join()) {
    select.textContent = "";
    for (const c of types) select.append(new Option(`${kept(c)} (${c.start})`, c.metric));
    if (names.includes(had)) select.value = had;
  }
}

// "soldiers of the attacking army": a type's men, in the reports' words.
function kept(c) {
  return c.words.replace(" lost by ", " of ");
}

// P(at least k of a type survive) = P(lost <= start - k), from the casualty histogram.
function atLeast(c, k) {
  let p = 0;
  c.at_most.lost.forEach((lost, i) => { if (lost <= c.start - k) p = c.at_most.p[i]; });
  return k <= 0 ? 1 : p;
}

function survivors() {
  if (!last) return;
  const c = last.casualties.find((x) => x.metric === $("survivor-type").value);
  const svg = $("survivors");
  if (!c) {
    svg.textContent = "";
    $("survivor-p").textContent = last.casualties.length ?
      "(the ruleset does not count its losses in men of a type at the start)" : "";
    return;
  }
  // Every whole k up to the men at the start (at most 400 of them, evenly spread).
  const n = Math.min(c.start, 400);
  const t = [], p = [];
  for (let i = 0; i <= n; i++) {
    const k = Math.round((i * c.start) / Math.max(n, 1));
    t.push(k);
    p.push(atLeast(c, k));
  }
  const points = { words: kept(c), colour: "#8e44ad", t, p };
  steps(svg, [points], `k (${kept(c)})`, "P(at least k survive)", 1);
  const k = parseInt($("survivor-k").value, 10);
  $("survivor-p").textContent = Number.isFinite(k) ?
    `P(at least ${k} ${kept(c)} survive) = ${pct(atLeast(c, k))}` : "";
  $("survivor-p").dataset.p = Number.isFinite(k) ? atLeast(c, k) : "";
}

// -- the battle as it unfolds ------------------------------------------------------

// The link to this question, at the step the slider shows ("#step=t": the page's own,
// not sent to the server).
function share() {
  const address = $("share").dataset.address;
  if (address === undefined) return;
  const t = unfolded ? `#step=${$("step").value}` : (wantedStep ? `#step=${wantedStep}` : "");
  $("share").href = "?" + address + t;
}

// The answer's steps arrive whole with it: the slider then shows any step's state
// without asking the server again.
function unfolding(u) {
  unfolded = u && u.steps && u.steps.length ? u : null;
  $("unfolding").hidden = !u;
  if (!u) return;
  $("unfolding-title").textContent = u.title + (u.step_words ? ` (${u.step_words})` : "");
  const notes = (u.notes || []).slice();
  if (u.unavailable) notes.push(u.unavailable);
  $("unfolding-note").textContent = notes.map((n) => "note: " + n).join("\n");
  $("unfolding").querySelector(".slider").hidden = !unfolded;
  if (!unfolded) return;
  const slider = $("step");
  const first = u.steps[0].step, lastStep = u.steps[u.steps.length - 1].step;
  slider.min = first;
  slider.max = lastStep;
  const t = wantedStep || parseInt(slider.value, 10) || first;
  slider.value = Math.min(lastStep, Math.max(first, t));
  showStep();
}

function stepRow(t) {
  // Steps run one by one from the first; a battle decided before t counts as it ended.
  return unfolded.steps.find((r) => r.step === t) || unfolded.steps[unfolded.steps.length - 1];
}

function showStep() {
  if (!unfolded) return;
  const t = parseInt($("step").value, 10);
  const row = stepRow(t);
  // "1 strike", "3 strikes" (every ruleset's step unit is a plural in -s).
  const unit = t === 1 ? unfolded.unit.replace(/s$/, "") : unfolded.unit;
  const words = `${t.toLocaleString("en")} ${unit}`;
  $("step-shown").textContent = words;
  $("step").setAttribute("aria-valuetext", "after " + words);
  $("step-states").querySelector("th").textContent = `after ${words}`;
  rows("step-states", row.states.map((st) => ({
    state: st.state,
    cells: [[st.words], [pct(st.p), "p", st.p], [`${pct(st.low)} - ${pct(st.high)}`, "interval"]],
  })), ["state", "state"]);
  rows("step-men", row.men_left.map((m) => ({
    key: m.key,
    cells: [[`${m.words} (of ${m.start.toLocaleString("en")})`], [num(m.mean), "mean", m.mean],
      [num(m.q10)], [num(m.q50)], [num(m.q90)]],
  })), ["key", "key"]);
  bands(t);
  share();
}

// Each side's men left after each step: the 10%-90% band and the mean, the step shown
// marked.
function bands(t) {
  const svg = $("bands");
  svg.textContent = "";
  const W = 420, H = 260, L = 46, R = 10, T = 10, B = 40;
  const steps = unfolded.steps;
  const sides = ["attacker", "defender"];
  const start = (side) => steps[0].men_left.find((m) => m.key === side).start;
  const ymax = Math.max(1, ...sides.map(start));
  // From the step the battle is given at (0, or its from_step) to the last recorded.
  const xmin = steps[0].step - 1, xmax = Math.max(xmin + 1, steps[steps.length - 1].step);
  const X = (x) => L + ((x - xmin) / (xmax - xmin)) * (W - L - R);
  const Y = (y) => T + (1 - y / ymax) * (H - T - B);
  svg.append(el("rect", { x: L, y: T, width: W - L - R, height: H - T - B, class: "frame" }));
  for (const f of [0, 0.5, 1]) {
    svg.append(el("text", { x: L - 4, y: Y(f * ymax) + 4, class: "tick", "text-anchor": "end" },
      Math.round(f * ymax).toLocaleString("en")));
    const at = xmin + f * (xmax - xmin);
    svg.append(el("text", { x: X(at), y: H - B + 14, class: "tick", "text-anchor": "middle" },
      Math.round(at).toLocaleString("en")));
  }
  svg.append(el("text", { x: (L + W - R) / 2, y: H - 6, class: "axis", "text-anchor": "middle" },
    `after t (${unfolded.unit})`));
  svg.append(el("text", { x: 12, y: (T + H - B) / 2, class: "axis", "text-anchor": "middle",
    transform: `rotate(-90 12 ${(T + H - B) / 2})` }, "men left"));
  sides.forEach((side, i) => {
    const men = steps.map((r) => r.men_left.find((m) => m.key === side));
    const x0 = X(xmin), y0 = Y(start(side));
    const upper = men.map((m, j) => `${X(steps[j].step)},${Y(m.q90)}`);
    const lower = men.map((m, j) => `${X(steps[j].step)},${Y(m.q10)}`).reverse();
    svg.append(el("polygon", { points: [`${x0},${y0}`, ...upper, ...lower].join(" "),
      class: "band", fill: COLOURS[side] }));
    const mean = [`${x0},${y0}`, ...men.map((m, j) => `${X(steps[j].step)},${Y(m.mean)}`)];
    svg.append(el("polyline", { points: mean.join(" "), class: "curve", stroke: COLOURS[side] }));
    svg.append(el("text", { x: W - R - 4, y: T + 14 + 14 * i, class: "legend",
      "text-anchor": "end", fill: COLOURS[side] },
      `${men[0].words}: mean, 10%-90%`));
  });
  svg.append(el("line", { x1: X(t), x2: X(t), y1: T, y2: H - B, class: "now" }));
}

// -- copying ------------------------------------------------------------------------

function copy(text) {
  const done = () => { $("copied").textContent = "copied"; };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, () => fallbackCopy(text, done));
  } else {
    fallbackCopy(text, done);
  }
}

function fallbackCopy(text, done) {
  const area = document.createElement("textarea");
  area.value = text;
  document.body.append(area);
  area.select();
  try { document.execCommand("copy"); done(); } catch (e) { /* the text is shown below */ }
  area.remove();
}

// -- start --------------------------------------------------------------------------

// Which rulesets' kernels are still loading after the server started (a fresh install
// compiles them, minutes in all): asked again each second until every one is ready.
// -- the retreat panel: the best retreat rule of one side (battle-odds retreat) ----------

function findRetreat() {
  const p = params();
  p.set("side", $("retreat-side").value);
  if ($("retreat-win").value.trim()) p.set("win_value", $("retreat-win").value.trim());
  if ($("retreat-method").value) p.set("method", $("retreat-method").value);
  const asked = ++retreatAsked;
  const box = $("retreat");
  box.dataset.state = "working";
  $("retreat-status").textContent = "finding the best rule ...";
  for (const id of ["retreat-rule", "retreat-words"]) $(id).textContent = "";
  $("retreat-values").hidden = true;
  $("retreat-map").hidden = true;
  fetch("/api/retreat?" + p.toString()).then((r) => r.json()).then((a) => {
    if (asked !== retreatAsked) return;
    if (a.error) {
      $("retreat-status").textContent = a.error;
      box.dataset.state = "error";
      return;
    }
    drawRetreat(a);
    box.dataset.state = "done";
  }).catch(() => {
    if (asked !== retreatAsked) return;
    $("retreat-status").textContent = "the connection to the server was lost";
    box.dataset.state = "error";
  });
}

function fixed(x) {
  return x === null || x === undefined ? "-" :
    x.toLocaleString("en", { minimumFractionDigits: 3, maximumFractionDigits: 3 });
}

function interval(e) {
  return !e || e.low === null ? "exact" : `${fixed(e.low)} to ${fixed(e.high)}`;
}

function drawRetreat(a) {
  $("retreat-status").textContent = `Best retreat rule for the ${a.side}; ${a.size}` +
    (a.partial ? " (PARTIAL: stopped before its battles were all run)" : "");
  $("retreat-rule").textContent = `The rule: ${a.rule}.`;
  const table = [["best rule", a.value, null], ["never retreat", a.never, a.gain_over_never]];
  if (a.own) table.push([`your rule (${a.own_rule})`, a.own, a.gain_over_own]);
  // Simulated: no rule is worth more than each battle's best with hindsight (loose).
  if (a.upper) table.push(["upper bound (hindsight)", a.upper, null]);
  rows("retreat-values", table.map(([name, v, gain]) => ({
    key: name.split(" ")[0],
    cells: [[name], [fixed(v.value), "value"], [interval(v)],
      [gain ? fixed(gain.value) : "", "gain"], [gain ? interval(gain) : ""]],
  })), ["row", "key"]);
  $("retreat-values").hidden = false;
  $("retreat-words").textContent = "";
  for (const line of [...a.words, ...a.notes]) $("retreat-words").append(Object.assign(
    document.createElement("li"), { textContent: line }));
  retreatMap(a);
}

// The map: the side's men left (up) against the other's (across), each cell where the
// rule fights on, withdraws, or both (positions or battles there that differ by type,
// nobles, structure or step).
function retreatMap(a) {
  const svg = $("retreat-map");
  svg.textContent = "";
  svg.hidden = a.cells.length === 0;
  if (!a.cells.length) return;
  const other = a.side === "attacker" ? "defender" : "attacker";
  const most = (key) => Math.max(1, ...a.cells.map((c) => c[key]));
  const ownMost = most("own"), enemyMost = most("enemy");
  const left = 48, top = 26, width = 340, height = 220;
  const w = width / (enemyMost + 1), h = height / (ownMost + 1);
  svg.append(el("rect", { x: left, y: top, width, height, class: "frame" }));
  for (const c of a.cells) {
    const kind = c.fight && c.withdraw ? "both" : (c.withdraw ? "withdraw" : "fight");
    const cell = el("rect", { x: left + c.enemy * w, y: top + height - (c.own + 1) * h,
      width: w, height: h, class: `cell ${kind}` });
    cell.append(el("title", {}, `${c.own} left against ${c.enemy}: ${kind}`));
    svg.append(cell);
  }
  svg.append(el("text", { x: left + width / 2, y: top + height + 30, class: "axis",
    "text-anchor": "middle" }, `${other}'s men left (0 to ${enemyMost})`));
  svg.append(el("text", { x: 14, y: top + height / 2, class: "axis", "text-anchor": "middle",
    transform: `rotate(-90 14 ${top + height / 2})` }, `${a.side}'s men left (0 to ${ownMost})`));
  let x = left;
  for (const kind of ["fight", "withdraw", "both"]) {
    svg.append(el("rect", { x, y: 6, width: 12, height: 12, class: `cell ${kind} key` }));
    svg.append(el("text", { x: x + 16, y: 16, class: "legend" }, kind));
    x += 90;
  }
}

function readiness() {
  fetch("/api/ready").then((r) => (r.ok ? r.json() : null)).then((data) => {
    if (!data) return;
    const pending = data.rulesets.filter((r) => ["waiting", "loading", "compiling"].includes(r.state));
    $("readiness").hidden = pending.length === 0;
    $("readiness").textContent = pending.length
      ? "Not ready yet: " + pending.map((r) => r.words).join("; ") +
        ". Questions for these rulesets wait for them; the others are answered at once."
      : "";
    if (pending.length) setTimeout(readiness, 1000);
  }).catch(() => setTimeout(readiness, 3000));
}

function start() {
  // A refusal is a line of text (the server's key not shown yet, say): shown as it is.
  const refused = (r) => r.text().then((line) => { throw Object.assign(new Error(line), { refused: true }); });
  fetch("/api/rulesets").then((r) => (r.ok ? r.json() : refused(r))).then((data) => {
    offered = data;
    for (const r of data.rulesets) $("ruleset").append(new Option(r.name, r.name));
    // The ruleset `battle-odds odds` takes unless told otherwise.
    if (data.rulesets.some((r) => r.name === data.defaults.ruleset)) {
      $("ruleset").value = data.defaults.ruleset;
    }
    $("seed").placeholder = String(data.defaults.seed);
    $("battles").placeholder = data.defaults.battles.toLocaleString("en");
    const p = new URLSearchParams(location.search);
    const asked = p.has("attacker") || p.has("toml");
    if (asked) {
      fill(p);
    } else {
      buildSettings();
      $("attacker").value = ruleset().example.attacker;
      $("defender").value = ruleset().example.defender;
    }
    $("version-shown").textContent = data.version;
    readiness();
    setState("idle");
    // A question another site's page opened waits for Run: no other site starts work here.
    if (asked && document.body.dataset.arrived === "elsewhere") {
      $("arrived").hidden = false;
    } else if (asked) {
      run();
    }
  }).catch((e) => showError(
    e.refused ? e.message : "cannot reach the server (is battle-odds serve running?)"));

  $("question").addEventListener("submit", (e) => e.preventDefault());
  // Settings open on a wide screen; folded on a phone, so Run and the answer come first.
  $("more").open = window.matchMedia("(min-width: 700px)").matches;

  $("ruleset").addEventListener("change", () => {
    buildSettings();
    $("attacker").value = ruleset().example.attacker;
    $("defender").value = ruleset().example.defender;
    changed();
  });
  for (const id of ["attacker", "defender"]) {
    $(id).addEventListener("input", () => { complete($(id)); changed(); });
  }
  for (const id of ["seed", "battles", "precision", "toml"]) $(id).addEventListener("input", changed);
  for (const radio of document.querySelectorAll("input[name=mode]")) {
    radio.addEventListener("change", () => { showMode(); changed(); });
  }
  $("run").addEventListener("click", run);
  $("retreat-find").addEventListener("click", findRetreat);
  $("stop").addEventListener("click", stop);
  for (const id of ["attacker", "defender", "seed", "battles", "precision"]) {
    $(id).addEventListener("keydown", (e) => { if (e.key === "Enter") run(); });
  }
  $("survivor-type").addEventListener("change", survivors);
  // The slider: arrows, Page Up/Down, Home and End move it too (a range input's own keys).
  $("step").addEventListener("input", () => {
    wantedStep = parseInt($("step").value, 10);
    showStep();
  });
  $("survivor-k").addEventListener("input", survivors);
  $("copy-command").addEventListener("click", () => copy($("command-text").textContent));
  $("copy-toml").addEventListener("click", () => copy($("toml-text").textContent));
  const drop = $("toml");
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const file = e.dataTransfer.files[0];
    if (file) file.text().then((text) => { drop.value = text; run(); });
  });
  window.addEventListener("beforeunload", halt);
}

start();
