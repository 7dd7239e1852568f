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

echo "load before pytest: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
status=0
pytest -q -p no:cacheprovider || status=$?
echo "pytest (the first tier, an empty Numba cache): $(( $(date +%s) - start )) s, exit status $status"

if [ "${1:-}" = "--slow" ]; then
    echo "load before the slow tier: $(cut -d' ' -f1-3 /proc/loadavg)"
    start=$(date +%s)
    slow=0
    pytest -q -p no:cacheprovider -m slow -n 0 || slow=$?
    echo "pytest -m slow -n 0: $(( $(date +%s) - start )) s, exit status $slow"
    [ "$status" != 0 ] || status=$slow
fi
exit "$status"
