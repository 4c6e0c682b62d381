"""The lock of a user file: a ``filelock`` lock on the sibling ``.{name}.lock`` (an empty
file that stays; the kernel releases the lock when a holder dies). :func:`locked` is
reentrant in one thread and exclusive between threads and processes; a read-modify-write
(append a golden case, ratchet a baseline) holds it around the read and the write, so
concurrent writers lose nothing. A lock that cannot be created or taken within
:data:`LOCK_TIMEOUT_S` is an :class:`~workbench.io.errors.InputError`.
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from pathlib import Path

from filelock import FileLock, Timeout

from workbench.io.errors import InputError

__all__ = ["LOCK_TIMEOUT_S", "lock_path", "locked"]

#: Seconds a writer waits for another writer's lock before giving up with an InputError.
LOCK_TIMEOUT_S = 120.0


def lock_path(path: str | Path) -> Path:
    """The lock file of ``path``: its sibling ``.{name}.lock``."""
    path = Path(path)
    return path.with_name(f".{path.name}.lock")


class _Locked(AbstractContextManager[None]):
    def __init__(self, path: Path, timeout: float):
        self.path, self.timeout = path, timeout
        self.lock: FileLock | None = None

    def __enter__(self) -> None:
        target = lock_path(self.path)
        try:  # filelock would wait out its timeout on a folder it cannot write: ask first
            target.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o666))
        except OSError as exc:
            raise InputError(str(self.path), f"cannot write here: the lock file {target} "
                             f"cannot be created ({exc.strerror or exc}); is the folder "
                             "writable?") from None
        try:
            self.lock = FileLock(target, timeout=self.timeout, is_singleton=True)
            self.lock.acquire()
        except Timeout:
            raise InputError(str(self.path), f"another process has held its lock ({target}) "
                             f"for over {self.timeout:.0f} s; wait for it to finish") from None
        except OSError as exc:
            raise InputError(str(self.path), f"cannot take the lock {target} "
                             f"({exc.strerror or exc}); is the folder writable?") from None

    def __exit__(self, *exc: object) -> None:
        if self.lock is not None:
            self.lock.release()


def locked(path: str | Path, timeout: float = LOCK_TIMEOUT_S) -> AbstractContextManager[None]:
    """Hold the lock of ``path`` (reentrant in one thread, exclusive between threads and
    processes): ``with locked(path): read, change, write``."""
    return _Locked(Path(path), timeout)
