"""The sweep itself: :func:`run_sweep` plans one task per distinct chunking, runs the tasks on an
executor (in process, a process pool or Dask: :func:`make_executor`), keeps finished
configurations in a resume state file and assembles the :class:`SweepResult`."""

from __future__ import annotations

import concurrent.futures as cf
import hashlib
import json
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pandas as pd

from workbench.corpus import Corpus, Document
from workbench.evaluation import Run
from workbench.golden import GoldenSet
from workbench.io import (
    InputError,
    WorkbenchError,
    WorkbenchWarning,
    append_text,
    iter_jsonl,
)
from workbench.metrics import (
    DEFAULT_EVIDENCE_THRESHOLD,
    DEFAULT_METRICS,
    at_k,
    canonical_name,
    default_metrics,
    parse_metric,
)
from workbench.retrieval.base import Hit
from workbench.retrieval.cache import EmbeddingCache
from workbench.sweep import worker
from workbench.sweep.grid import (
    SweepConfig,
    as_list,
    expand_grid,
    param_label,
)
from workbench.sweep.holdout import HoldoutSplit, load_or_split, split_path
from workbench.sweep.result import SweepResult

#: Bumped when a configuration's stored result changes shape, so old state lines re-run.
RESULT_FORMAT = 2


def _worker() -> Callable[[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The task function, :func:`workbench.sweep.worker.run_group` (pickled by that path),
    looked up on its module when a sweep runs, so that replacing
    ``workbench.sweep.worker.run_group`` (as the tests do) takes effect."""
    return worker.run_group


class InProcessExecutor(cf.Executor):
    """Runs each task when it is submitted, in this process (the default)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        future: cf.Future[Any] = cf.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to the caller through the future
            future.set_exception(exc)
        return future



def _fingerprint(obj: Any) -> str:
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


#: What :func:`_assemble` reads of one configuration's results (the worker's output).
_RESULT_KEYS = ("rows", "excluded", "hits", "found_rank", "cost", "embedded", "reused")


def _read_state(path: Path) -> dict[str, dict[str, Any]]:
    """The finished configurations of a resume state file: one ``{"key", "format",
    "result"}`` per line. Lines of an older :data:`RESULT_FORMAT` can never match a key of
    this one: they are skipped, with one warning that counts them (lines written before the
    format was recorded are older when their result lacks a field this format has). A line
    of this format that is not such an entry raises InputError naming ``file:line`` and the
    field (delete the line: that configuration runs again)."""
    done: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return done
    again = "delete the line and that configuration will run again"
    older = 0
    for where, row in iter_jsonl(path, "sweep state"):
        if not isinstance(row, dict) or not isinstance(row.get("key"), str):
            raise InputError(where, f"must be an object with a text 'key'; {again}",
                             field="key")
        fmt = row.get("format")
        result = row.get("result")
        complete = isinstance(result, dict) and all(k in result for k in _RESULT_KEYS)
        if (fmt is None and isinstance(result, dict) and not complete) \
                or (type(fmt) is int and fmt < RESULT_FORMAT):
            older += 1
            continue
        if fmt is not None and fmt != RESULT_FORMAT:
            raise InputError(where, f"is {str(fmt)[:20]!r}, not a result format this "
                             f"workbench reads ({RESULT_FORMAT}); {again}", field="format")
        if not complete or not isinstance(result, dict):
            raise InputError(where, f"is {str(result)[:40]!r}, not a finished configuration's "
                             f"results; {again}", field="result")
        done[row["key"]] = result
    if older:
        warnings.warn(f"{path}: {older} line(s) hold results of an older sweep format and "
                      "were skipped (their configurations run again; delete them to tidy the "
                      "file)", WorkbenchWarning, stacklevel=3)
    return done


def run_sweep(grid: Mapping[str, Any], golden: GoldenSet, corpus: Corpus | Iterable[Document],
              *, metrics: Sequence[str] | None = None, k: int = 5,
              executor: cf.Executor | None = None,
              cache: EmbeddingCache | str | Path | None = None, progress: bool = True,
              state_path: str | Path | None = None, position_depth: int = 10,
              evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD,
              holdout: float | None = None, holdout_seed: int = 0) -> SweepResult:
    """Evaluate every configuration of ``grid`` (see the module docstring) on ``golden``.

    ``cache``: an EmbeddingCache or its folder (default: ``EmbeddingCache()``, the one cache
    folder's ``embeddings/``); other executors get its folder. ``position_depth``: hits kept
    per question for the retrieval-position view (metrics use the configuration's own depth).
    Relevance is judged as by :func:`workbench.evaluate` (``evidence_threshold`` for evidence
    spans), so every configuration scores every question, whatever its chunking.

    ``holdout``: a fraction of the questions kept out of the ranking (see
    :mod:`workbench.sweep.holdout`): split once with ``holdout_seed``, stored beside
    ``state_path`` (and reused by a resumed sweep); every configuration still scores every
    question, ``result.leaderboard()`` ranks on the tuning part and ``result.confirm()``
    reports the winner on the held-out part.
    """
    grid = dict(grid)
    split = None if holdout is None else load_or_split(
        split_path(state_path) if state_path else None, golden, holdout, holdout_seed)
    if "metrics" in grid:
        listed = as_list(grid.pop("metrics"))
        metrics = metrics or [str(m) for m in listed]
    configs, skipped = expand_grid(grid, k)
    if not configs:
        reasons = "; ".join(sorted({s["reason"] for s in skipped}))
        raise WorkbenchError(f"the grid has no valid configuration ({reasons})")
    ks = sorted({c.k for c in configs})
    names = ([canonical_name(m) for m in metrics] if metrics
             else default_metrics(ks[0]) if len(ks) == 1 else list(DEFAULT_METRICS))
    names = list(dict.fromkeys(names))
    documents = corpus.documents if isinstance(corpus, Corpus) else list(corpus)
    docs = [(d.id, d.text, d.title, dict(d.metadata)) for d in documents]
    gold = [item.to_json() for item in golden]
    data_key = _fingerprint([docs, gold])
    in_process = executor is None or isinstance(executor, InProcessExecutor)
    executor = executor or InProcessExecutor()
    if cache is None:
        cache = EmbeddingCache()
    elif not isinstance(cache, EmbeddingCache | str | Path):
        raise WorkbenchError(f"cache must be an EmbeddingCache or a folder, not {type(cache)}")
    folder = cache.root if isinstance(cache, EmbeddingCache) else Path(cache)
    cache_ref = cache if in_process else str(folder.resolve())
    encoders: dict[str, Any] = {}
    plans: dict[str, dict[str, Any]] = {}
    for c in configs:
        concrete = [at_k(m, c.k) for m in names]
        depth = max([c.k, *[parse_metric(m).k or 0 for m in concrete]])
        enc_key = c.encoder_id
        if enc_key is not None:
            encoders[enc_key] = c.encoder
        key = _fingerprint([RESULT_FORMAT, data_key, c.spec, c.retriever, enc_key, c.k,
                            concrete, position_depth, evidence_threshold])
        plans[c.name] = {"key": key, "retriever": c.retriever, "encoder_key": enc_key,
                         "k": c.k, "metrics": concrete, "depth": depth}
    state = Path(state_path) if state_path else None
    done = _read_state(state) if state else {}
    resumed = sum(1 for p in plans.values() if p["key"] in done)
    groups: dict[str, list[dict[str, Any]]] = {}
    for c in configs:
        if plans[c.name]["key"] not in done:
            groups.setdefault(c.spec, []).append(plans[c.name])
    from tqdm.auto import tqdm

    bar = tqdm(total=len(configs), initial=resumed, desc="sweep", unit="config",
               disable=not progress)

    def task(spec: str, group: list[dict[str, Any]]) -> dict[str, Any]:
        return {"spec": spec, "configs": group, "docs": docs, "golden": gold, "cache": cache_ref,
                "encoders": {p["encoder_key"]: encoders[p["encoder_key"]] for p in group
                             if p["encoder_key"] is not None},
                "position_depth": position_depth, "progress": progress and in_process,
                "evidence_threshold": evidence_threshold}

    def record(results: dict[str, dict[str, Any]]) -> None:
        done.update(results)
        if state is not None:  # re-read under the lock: a concurrent sweep's lines stay
            append_text(state, "".join(json.dumps({"key": key, "format": RESULT_FORMAT,
                                                   "result": r}, ensure_ascii=False) + "\n"
                                       for key, r in results.items()),
                        what="sweep state", make_parents=True)
        bar.update(len(results))

    try:
        if isinstance(executor, InProcessExecutor):  # one chunking at a time, saved as it ends
            for spec, group in groups.items():
                record(executor.submit(_worker(), task(spec, group)).result())
        else:
            futures = [executor.submit(_worker(), task(spec, group))
                       for spec, group in groups.items()]
            try:
                for future in cf.as_completed(futures):
                    record(future.result())
            except BaseException:
                for f in futures:
                    f.cancel()
                for f in futures:  # keep what finished before the failure
                    if f.done() and not f.cancelled() and f.exception() is None:
                        results = f.result()
                        if not set(results) <= set(done):
                            record(results)
                raise
    finally:
        bar.close()
    return _assemble(configs, plans, done, golden, names, skipped, resumed, split,
                     evidence_threshold)


def _assemble(configs: list[SweepConfig], plans: dict[str, dict[str, Any]],
              done: dict[str, dict[str, Any]], golden: GoldenSet, names: list[str],
              skipped: list[dict[str, Any]], resumed: int,
              split: HoldoutSplit | None = None,
              evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD) -> SweepResult:
    items = {i.qid: i for i in golden}
    frames, runs, rows, found = [], {}, [], {}
    excluded: dict[str, set[str]] = {}
    for c in configs:
        plan = plans[c.name]
        r = done[plan["key"]]
        generic = dict(zip(plan["metrics"], names, strict=True))  # recall@5 -> recall@k
        table = pd.DataFrame(r["rows"], columns=["metric", "qid", "relevance", "value"])
        frame = pd.DataFrame({
            "system": c.name, "qid": table["qid"],
            "category": [items[q].category for q in table["qid"]],
            "source": [items[q].source for q in table["qid"]],
            "relevance": table["relevance"],
            "metric": [generic[m] for m in table["metric"]],
            "value": table["value"].astype(float)})
        for key, value in c.params.items():
            frame[key] = pd.Series([param_label(value) if key == "encoder" and value is not None
                                    else value] * len(frame), dtype=object)
        frames.append(frame)
        for reason, ids in r["excluded"].items():
            excluded.setdefault(reason, set()).update(ids)
        hits = {q: tuple(Hit(cid, score, rank, c.retriever)
                         for rank, (cid, score) in enumerate(hs, start=1))
                for q, hs in r["hits"].items()}
        runs[c.name] = Run(c.name, MappingProxyType(hits), params=MappingProxyType(
            {key: v for key, v in c.params.items() if key != "encoder"}))
        found[c.name] = dict(r["found_rank"])
        rows.append({"config": c.name, **{key: (param_label(v) if key == "encoder" and v is not None
                                                else v) for key, v in c.params.items()},
                     "spec": c.spec, "retriever_name": c.retriever, "k_value": c.k,
                     **r["cost"], "embedded": r["embedded"], "reused": r["reused"]})
    costs = pd.DataFrame(rows).set_index("config")
    frame = pd.concat(frames, ignore_index=True)
    for key in configs[0].params:
        frame[key] = frame[key].infer_objects()
    return SweepResult(frame, {k: sorted(v) for k, v in excluded.items()}, runs, costs,
                       skipped=skipped,
                       found_rank=found, resumed=resumed, holdout=split,
                       evidence_threshold=evidence_threshold)


def make_executor(spec: str | None) -> tuple[cf.Executor | None, Callable[[], None]]:
    """``None`` (in process), ``processes:N`` (a spawn-based process pool) or
    ``dask://HOST:PORT`` (a running Dask scheduler; its ``client.get_executor()``).
    Returns the executor and a function that shuts it down."""
    if not spec:
        return None, lambda: None
    if spec.startswith("processes:"):
        import multiprocessing

        try:
            n = int(spec.split(":", 1)[1])
        except ValueError:
            n = 0
        if n < 1:
            raise WorkbenchError(f"--executor {spec!r}: give processes:N with N >= 1")
        pool = cf.ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"))
        return pool, lambda: pool.shutdown(cancel_futures=True)
    if spec.startswith("dask://"):
        try:
            from distributed import Client
        except ImportError:
            raise WorkbenchError("--executor dask://...: install dask[distributed] "
                             "(pip install 'workbench[scale]')") from None
        try:
            client = Client("tcp://" + spec[len("dask://"):], timeout="20s")
        except OSError as exc:
            raise WorkbenchError(f"--executor {spec!r}: cannot reach the Dask scheduler ({exc})")\
                from None
        return client.get_executor(), client.close
    raise WorkbenchError(f"--executor {spec!r}: give dask://HOST:PORT or processes:N")
