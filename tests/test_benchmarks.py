"""benchmarks/run.py works end to end: ``--quick`` runs every measurement with small
budgets and writes the report, keeping the notes below its marker. (Speed itself is
asserted in the benchmark's report, never in a timed test.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_quick_benchmark_writes_every_table_and_keeps_the_notes(tmp_path: Path) -> None:
    doc = tmp_path / "benchmarks.md"
    doc.write_text("old tables\n<!-- notes -->\n\n## Notes kept\n")
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--write", str(doc)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    text = doc.read_text()
    assert "old tables" not in text
    assert text.endswith("<!-- notes -->\n\n## Notes kept\n")
    assert "Produced by `python benchmarks/run.py --quick --write`" in text
    for heading in ("The yardstick", "olympia kernels", "Scaling", "Targets"):
        assert f"## {heading}" in text
    # The odds process ran on the skip kernel and its answer held the exact one.
    assert "kernel `skip`" in text
    assert "inside the 99.9% sampling tolerance" in text
    assert "- odds answer within the 99.9% tolerance of the exact 0.999781: met" in text
    for battle in ("benchmark small", "benchmark medium", "benchmark large", "yardstick"):
        assert f"| {battle} |" in text
    assert "| 100 |" in text  # a scaling row
