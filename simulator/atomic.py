"""Writing output files so that an interrupted run loses nothing that was there before."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(path: str | Path, data: str | bytes) -> None:
    """Write to a temporary file beside ``path``, flush it to disk, then rename it over
    ``path``: readers see the old file or the new one, never half of one."""
    path = Path(path)
    payload = data.encode() if isinstance(data, str) else data
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        # mkstemp creates the file 0600; the result should have the mode any new file of
        # the user gets (an existing file keeps its own), as a plain open() would give.
        os.fchmod(fd, _mode_for(path))
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _mode_for(path: Path) -> int:
    try:
        return path.stat().st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
