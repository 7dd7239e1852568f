"""battle-odds' tests (docs/testing.md). ``ROOT``, the repository's folder, is computed
here once for every test module and helper (``from tests import ROOT``)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
