"""Writing output files so that an interrupted run loses nothing that was there before."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

#: The most characters of a file's name its temporary file repeats: a name may have 255
#: bytes, and the temporary one adds a dot, eight random characters and ``.tmp``.
NAME_IN_TEMPORARY = 200


def temporary_prefix(path: Path) -> str:
    """The prefix of ``path``'s temporary file: a dot and the start of its name."""
    return f".{path.name[:NAME_IN_TEMPORARY]}."


def followed(path: str | Path) -> Path:
    """``path``, or the file a symbolic link there points to: an output written through
    a link replaces the link's target and leaves the link, as ``open()`` would, instead
    of putting a file in the link's place."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def write_atomically(path: str | Path, data: str | bytes) -> None:
    """Write to a temporary file beside ``path`` (the target of a symbolic link there),
    flush it to disk, then rename it over ``path``: readers see the old file or the new
    one, never half of one."""
    path = followed(path)
    payload = data.encode() if isinstance(data, str) else data
    fd, temporary = tempfile.mkstemp(
        prefix=temporary_prefix(path), suffix=".tmp", dir=path.parent or "."
    )
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


def write_folder_atomically(path: str | Path, files: dict[str, str]) -> None:
    """Write a new folder ``path`` holding ``files`` (relative path -> text): built in a
    temporary folder beside it, then renamed into place, so ``path`` appears whole or
    not at all. Raises ``FileExistsError`` if ``path`` exists."""
    path = Path(path)
    temporary = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        # mkdtemp creates the folder 0700; give it the mode of any new folder of the user.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o777 & ~umask)
        for relative, text in files.items():
            target = temporary / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, text)
        if path.exists():
            raise FileExistsError(path)
        os.rename(temporary, path)
    except BaseException:
        shutil.rmtree(temporary, ignore_errors=True)
        raise
