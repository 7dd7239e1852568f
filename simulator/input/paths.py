"""Where a path cannot lead: a file standing where a folder should be.

``/etc/passwd/x.png`` or ``notes.txt/b.toml`` names a file inside a file; the system
says "Not a directory", of neither. Reading (a scenario, a baseline) and writing
(:mod:`simulator.running.output_paths`) say which part is the file, in one wording.
"""

from __future__ import annotations

from pathlib import Path


def file_among_parents(folder: Path) -> Path | None:
    """The nearest existing one of ``folder`` and its parents when it is not a folder
    (None: it is one, or none exists)."""
    for parent in (folder, *folder.parents):
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def not_a_folder(where: str, path: Path) -> str | None:
    """``WHERE: 'PART' is a file, not a folder`` when a file stands among ``path``'s
    folders (None: none does)."""
    blocking = file_among_parents(path.parent)
    return None if blocking is None else f"{where}: '{blocking}' is a file, not a folder"
