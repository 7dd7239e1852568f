"""Where a path cannot lead: a file standing where a folder should be.

``/etc/passwd/x.png`` or ``notes.txt/b.toml`` names a file inside a file; the system
says "Not a directory", of neither. Reading (a scenario, a baseline) and writing
(:mod:`simulator.running.output_paths`) say which part is the file, in one wording.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..errors import BattleOddsError


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


#: The largest scenario or costs file read (bytes): hundreds of times a real one, and
#: small enough that no file read makes the machine run out of memory.
MAX_INPUT_BYTES = 1 << 20


def read_regular_file(path: Path, label: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (symbolic links followed), at most
    ``limit`` of them. A FIFO, a device or a socket is refused before it is opened
    (``/dev/zero`` never ends; opening a FIFO with no writer waits for ever), and so is
    a file larger than ``limit``. Raises ``OSError`` as ``open`` would for a file that
    is missing or cannot be read, and :class:`BattleOddsError` for the rest."""
    kind = stat.S_IFMT(os.stat(path).st_mode)
    if kind == stat.S_IFDIR:
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if kind != stat.S_IFREG:
        raise BattleOddsError(
            f"{label}: {_KINDS.get(kind, 'a special file')}, not a regular file: expected "
            "a file to read"
        )
    # O_NONBLOCK: should a FIFO take the file's place between the look and the open,
    # opening it still does not wait; fstat then refuses it.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise BattleOddsError(f"{label}: not a regular file: expected a file")
        if status.st_size > limit:
            raise BattleOddsError(
                f"{label}: {status.st_size:,} bytes: larger than the {limit:,} bytes read at most"
            )
        data = handle.read(limit + 1)
    if len(data) > limit:  # grew since fstat
        raise BattleOddsError(f"{label}: larger than the {limit:,} bytes read at most")
    return data


_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}
