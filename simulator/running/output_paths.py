"""Output files checked before any battle is fought.

A run of an hour must not end in "no such folder" when it writes its answer. Every
option that names a file to write (``-o``, ``--keep-battles``, ``--checkpoint``,
``--junit``, ``--write``) is checked here first, and each way it can be wrong has its
own one-line error: a folder where a file is wanted, a missing folder, a file where a
folder is wanted (``/etc/passwd/x.png``), a folder or file that cannot be written, a
file type the option does not write.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..atomic import followed, temporary_prefix
from ..errors import BattleOddsError
from ..input.paths import not_a_folder

#: File types of the options that write one kind of file.
IMAGE = (".png", ".svg", ".pdf")
CSV = (".csv",)
XML = (".xml",)
JSON = (".json",)
TOML = (".toml",)


def check_output_path(
    path: str | Path, option: str, suffixes: Iterable[str] | None = None, kind: str = "file"
) -> Path:
    """``path`` as a file this process can create or replace, or a one-line error that
    names ``option`` (or starts with the path alone, for a command's argument: ``option``
    empty). ``suffixes``: the types of ``kind`` of file the option writes (None: any)."""
    where = f"{option} {path}" if option else str(path)
    try:
        # A symbolic link is followed on purpose: its target is the file written.
        path = followed(path)
        return _checked(path, where, None if suffixes is None else tuple(suffixes), kind)
    except OSError as exc:  # a name too long, a folder that cannot be searched
        raise BattleOddsError(f"{where}: {exc.strerror or exc}") from None


def _checked(path: Path, where: str, allowed: tuple[str, ...] | None, kind: str) -> Path:
    if path.is_dir():
        raise BattleOddsError(f"{where}: is a folder: expected a file name")
    if path.exists() and not path.is_file():  # /dev/null, a FIFO: never replaced
        raise BattleOddsError(f"{where}: not a regular file: expected a file to write")
    folder = path.parent
    blocked = not_a_folder(where, path)
    if blocked is not None:
        raise BattleOddsError(blocked)
    if not folder.is_dir():
        raise BattleOddsError(f"{where}: no such folder '{folder}'")
    if allowed is not None and path.suffix.lower() not in allowed:
        got = f"'{path.suffix}'" if path.suffix else "(no suffix)"
        raise BattleOddsError(f"{where}: unknown {kind} type {got}: expected {', '.join(allowed)}")
    reason = _cannot_create_beside(path)
    if reason is not None:
        raise BattleOddsError(f"{where}: cannot write in folder '{folder}' ({reason})")
    if path.exists() and not os.access(path, os.W_OK):
        raise BattleOddsError(f"{where}: the file is read-only")
    return path


#: Why a folder takes no new file, where the system's words mislead: /proc exists, yet
#: creating a file in it fails with "No such file or directory".
_REASONS = {
    errno.ENOENT: "it takes no new files",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EROFS: "a read-only file system",
}


def _cannot_create_beside(path: Path) -> str | None:
    """Why the atomic writer could not create its temporary file beside ``path`` (None:
    it can). Tried, not guessed from mode bits, which a read-only mount or a root
    process make lie; the name is the writer's, so a name too long fails here too."""
    try:
        handle, probe = tempfile.mkstemp(
            prefix=temporary_prefix(path), suffix=".tmp", dir=path.parent
        )
    except OSError as exc:
        return _REASONS.get(exc.errno or 0) or exc.strerror or "cannot write"
    os.close(handle)
    os.unlink(probe)
    return None
