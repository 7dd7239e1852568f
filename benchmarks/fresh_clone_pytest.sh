#!/usr/bin/env bash
# README's test command as a new contributor meets it: a fresh clone of this tree (its
# committed state), a new virtual environment, `pip install -e ".[dev]"`, then `pytest`
# timed on an empty Numba cache (the session's `battle-odds warm` included), then the slow
# tier if asked. Prints the processor, the load before each step and each step's time.
#
#     benchmarks/fresh_clone_pytest.sh            # the first tier (README's `pytest`)
#     benchmarks/fresh_clone_pytest.sh --slow     # then `pytest -m slow -n 0` as .ci/run does
#
# The clone and its environment go to a new temporary folder (removed at the end unless
# KEEP=1). Run it on a quiet machine: the figures in README's "Set up" and docs/testing.md
# were taken so.
set -euo pipefail
tree="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$work"' EXIT
python="${PYTHON:-python3}"

echo "processor: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; $(date -u '+%Y-%m-%d %H:%M UTC')"
git clone --quiet "$tree" "$work/clone"
cd "$work/clone"
"$python" -m venv "$work/venv"
# shellcheck disable=SC1091
source "$work/venv/bin/activate"
echo "load before installing: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
pip install --quiet --upgrade pip
pip install --quiet -e ".[dev]"
echo "pip install -e \".[dev]\": $(( $(date +%s) - start )) s"

# A new contributor's Python writes bytecode caches (the tree's own modules, compiled
# once, and pytest's rewritten test modules); a machine that sets PYTHONDONTWRITEBYTECODE
# (this project's CI sandbox does) would compile them again in every process the tests
# start. benchmarks/latency.py drops it for its commands alike.
if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
    echo "PYTHONDONTWRITEBYTECODE is set here: the tests run without it, as on a new contributor's machine"
    unset PYTHONDONTWRITEBYTECODE
fi
echo "load before pytest: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
status=0
pytest -q -p no:cacheprovider 2>&1 | tee "$work/pytest.log" || status=${PIPESTATUS[0]}
total=$(( $(date +%s) - start ))
echo "pytest (the first tier, an empty Numba cache): $total s, exit status $status"
# The session's warm (tests/conftest.py) says its kernel paths and its time; the tests'
# own share is pytest's "in N s" (its clock starts once the warm is done).
sed -n 's/^battle-odds warm: \([0-9]* kernel paths\).*/  the session'"'"'s warm: \1/p; s/^battle-odds warm: every kernel ready, \([0-9]*\) s$/  the session'"'"'s warm: \1 s/p' "$work/pytest.log"
sed -n 's/.* in \([0-9.]*\)s\( (.*)\)\{0,1\}\( =*\)\{0,1\}$/  the tests after it: \1 s/p' "$work/pytest.log" | tail -1

if [ "${1:-}" = "--slow" ]; then
    echo "load before the slow tier: $(cut -d' ' -f1-3 /proc/loadavg)"
    start=$(date +%s)
    slow=0
    pytest -q -p no:cacheprovider -m slow -n 0 || slow=$?
    echo "pytest -m slow -n 0: $(( $(date +%s) - start )) s, exit status $slow"
    [ "$status" != 0 ] || status=$slow
fi
exit "$status"
