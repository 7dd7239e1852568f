"""Every balance-study notebook runs from top to bottom with a small battle count."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def test_notebooks_match_their_builder():
    """The committed notebooks are what notebooks/build.py writes (no hand edits lost)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("build_notebooks", NOTEBOOKS / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, make in module.NOTEBOOKS.items():
        on_disk = nbformat.read(NOTEBOOKS / name, as_version=4)
        assert [c.source for c in on_disk.cells] == [c.source for c in make().cells], name


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebook_executes(path, monkeypatch):
    monkeypatch.setenv("BATTLE_ODDS_NOTEBOOK_BATTLES", "1200")
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    ).execute()
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    assert len(images) >= 3, f"{path.name}: expected its plots in the outputs"
    assert os.environ["BATTLE_ODDS_NOTEBOOK_BATTLES"] == "1200"
