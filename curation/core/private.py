"""Private local state: the folders and files holding raw text, the surrogate map or the key are readable by
their owner only (folders 0700, files 0600), whatever the process umask and wherever the key comes from.

Modes are set explicitly with chmod after creation (mkdir/open modes are filtered by the umask, and DuckDB
creates its files itself). A folder the pipeline did not create is tightened only when it is its own state
folder (``.curation``): the owner's project folder is left as it is, with a warning, and the files in it are
still made 0600.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

STATE_DIR_NAME = ".curation"
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_WARNED: set[str] = set()


def private_dir(path: Path) -> Path:
    """Create ``path`` as a 0700 folder (missing parents as usual); tighten an existing state folder to 0700."""
    path = Path(path)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)  # parents are the owner's (e.g. base_dir): umask modes
        try:
            path.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:  # another process made it meanwhile
            pass
        else:
            _chmod(path, PRIVATE_DIR_MODE)
    if path.name == STATE_DIR_NAME:
        if _group_or_other_access(path):
            _chmod(path, PRIVATE_DIR_MODE)
    elif _group_or_other_access(path) and str(path) not in _WARNED:
        _WARNED.add(str(path))
        log.warning("%s is accessible by group/others; its private files are 0600, prefer a 0700 folder", path)
    return path


def private_file(path: Path) -> None:
    """Make an existing file 0600 (a no-op when it already is, or when it does not exist)."""
    path = Path(path)
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return
    if mode != PRIVATE_FILE_MODE:
        _chmod(path, PRIVATE_FILE_MODE)


def private_db_files(path: Path) -> None:
    """A DuckDB file and its write-ahead log, 0600."""
    for candidate in (Path(path), Path(f"{path}.wal")):
        private_file(candidate)


def _group_or_other_access(path: Path) -> bool:
    try:
        return bool(stat.S_IMODE(path.stat().st_mode) & 0o077)
    except FileNotFoundError:
        return False


def _chmod(path: Path, mode: int) -> None:
    try:
        os.chmod(path, mode)
    except PermissionError:  # not ours (e.g. a shared parent): say so rather than fail the run
        log.warning("cannot make %s private (mode %o): not owned by this user", path, mode)
