"""Loading models: on first use, once, under a lock, with a cap on their threads.

:class:`LazyModel` is how every bundled model loads (the sentence-transformers and e5
encoders, the cross-encoder, the local generator): the first caller loads it while the others
wait, the load is timed (``load_seconds``), and ``threads`` caps the thread pool it runs on
(torch's by default: on a small machine an oversubscribed OpenMP pool is dramatically
slower). Loaders that go through transformers turn its own progress bars off
(:func:`quiet_transformers`): nested in ours they leave escape codes in logs.

Importing this module is cheap: torch and transformers are imported when a model loads.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from workbench.io import WorkbenchError

__all__ = ["THREADS_ENV", "LazyModel", "LoadedOnFirstUse", "default_threads", "quiet_transformers",
           "set_torch_threads"]

#: Environment variable capping the threads of encoders left to choose their own.
THREADS_ENV = "WORKBENCH_THREADS"

Model = TypeVar("Model")


def set_torch_threads(threads: int) -> int:
    """Set torch's intra-op thread count (when it differs); return the previous count."""
    import torch

    before = int(torch.get_num_threads())
    if before != threads:
        torch.set_num_threads(threads)
    return before


def default_threads(threads: int | None = None) -> int:
    """``threads`` when given, else every core the machine is not busy with (the 1-minute
    load average subtracted, at least one), capped by ``WORKBENCH_THREADS`` when set."""
    cores = os.cpu_count() or 1
    if threads:
        return int(threads)
    try:
        busy = os.getloadavg()[0]
    except OSError:  # not on this platform
        busy = 0.0
    chosen = max(1, min(cores, round(cores - busy)))
    cap = os.environ.get(THREADS_ENV, "").strip()
    if cap:
        try:
            chosen = min(chosen, max(1, int(cap)))
        except ValueError:
            raise WorkbenchError(f"{THREADS_ENV}={cap!r}: give a whole number of threads") from None
    return chosen


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """No progress bars and no log lines below errors from transformers inside the block (its
    notes on a model's config, such as an unrecognised ``loss_type`` while a model is traced,
    are not the user's business); a no-op without transformers."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    enabled = hf_logging.is_progress_bar_enabled()
    verbosity = hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if enabled:
            hf_logging.enable_progress_bar()


class LazyModel(Generic[Model]):
    """``load()`` run on the first :meth:`get`, once, under a lock, with ``threads`` applied
    first (:meth:`cap_threads`, through ``set_threads``: torch's by default; ``None`` where
    the model caps its threads itself); ``load_seconds`` is how long it took."""

    def __init__(self, load: Callable[[], Model], threads: int | None = 1,
                 set_threads: Callable[[int], object] | None = set_torch_threads):
        self._load = load
        self.threads = threads
        self._set_threads = set_threads
        self._model: Model | None = None
        self._lock = threading.Lock()
        self.load_seconds: float | None = None

    def cap_threads(self) -> None:
        """Apply the thread cap (models call it before each run too: another library in the
        process may have changed the pool)."""
        if self.threads and self._set_threads is not None:
            self._set_threads(int(self.threads))

    def get(self) -> Model:
        """The model, loading it if no one has yet."""
        model = self._model
        if model is not None:
            return model
        with self._lock:
            if self._model is None:
                started = time.perf_counter()
                self.cap_threads()
                self._model = self._load()
                self.load_seconds = time.perf_counter() - started
            return self._model


class LoadedOnFirstUse:
    """What a model wrapper holding its :class:`LazyModel` in ``_lazy`` shows of it: the
    loaded ``model`` (loading it on first access), ``threads`` (its cap) and ``load_seconds``."""

    _lazy: LazyModel[Any]

    @property
    def model(self) -> Any:
        """The loaded model (loads it on first access)."""
        return self._lazy.get()

    @property
    def threads(self) -> int | None:
        return self._lazy.threads

    @property
    def load_seconds(self) -> float | None:
        return self._lazy.load_seconds
