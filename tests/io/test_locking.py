"""The lock of a file (workbench.io.locking): reentrant in a thread, exclusive between threads."""

from __future__ import annotations

import threading
import time

from workbench.io import (
    atomic_write_text,
    lock_path,
    locked,
)


def test_the_lock_is_reentrant_and_excludes_other_threads(tmp_path):
    target = tmp_path / "state.jsonl"
    order: list[str] = []
    def other() -> None:
        with locked(target):
            order.append("other")

    with locked(target), locked(target):  # nested in one thread: no deadlock
        atomic_write_text(target, "a\n")  # takes the same lock again
        worker = threading.Thread(target=other)
        worker.start()
        time.sleep(0.3)
        order.append("holder")
    worker.join(timeout=10)
    assert order == ["holder", "other"]
    assert lock_path(target).name == ".state.jsonl.lock"
