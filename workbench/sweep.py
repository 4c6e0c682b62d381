"""Sweeps: evaluate a grid of retrieval configurations on one golden set, memoised.

A grid maps parameters to lists of values; every combination is one configuration::

    grid = {"chunker": ["fixed", "recursive"], "size": [200, 400, 800],
            "overlap": [0, "25%"], "header": [False, True], "retriever": ["bm25"], "k": [5]}
    result = sweep(grid, corpus, golden)          # a SweepResult (an Evaluation)
    result.leaderboard("recall@5")                # one row per config: mean [CI], n, cost

Parameters (a scalar means a one-value list):

    chunker    fixed | sentence | recursive | markdown, or a full chunker spec such as
               "parent:child=200,size=1000" (size/overlap/unit/header then do not apply)
    size       chunk budget (positive integer) in ``unit``
    overlap    integer, or a percentage of size such as "25%" (sentence: whole sentences;
               markdown takes none)
    unit       chars | tokens
    header     true | false | fields joined by '+' (title+section+date): contextual header
    retriever  bm25 | dense | hybrid (BM25 + dense, reciprocal rank fusion)
    encoder    minilm (default) | e5 | any sentence-transformers name or path; dense/hybrid only
    k          chunks the generator receives (default: the ``k`` argument)

Invalid combinations (overlap >= size, an overlap for markdown...) are skipped and listed in
``result.skipped`` with the reason. Metrics are evaluated at each configuration's k: a name
ending in ``@k`` (``recall@k``) means "at this configuration's k"; the default is the five
headline metrics, named concretely (``recall@5``) when the grid has one k, else ``recall@k``.

Grid files (``workbench sweep --grid GRID.yaml``, :func:`load_grid`) are YAML mappings of the
same keys plus ``metrics``::

    chunker: [fixed, recursive]
    size: [200, 400, 800]
    overlap: [0, 100]
    unit: chars
    retriever: [bm25]
    k: [5]
    metrics: [recall@5, mrr@5]

Errors name the file, the line and what is valid.

Memoisation: configurations sharing a chunking form one task, so each distinct chunking is
computed (and indexed) once; every ``embed_text`` goes through the :class:`EmbeddingCache`,
so a text is embedded once across the whole sweep (``embedded`` / ``reused`` per config).
Tasks run on any ``concurrent.futures.Executor`` (default: in this process, one after
another); for ``ProcessPoolExecutor`` or Dask (``client.get_executor()``) tasks carry the
corpus, the golden set and the cache *folder*, and results come back as plain data, so the
result equals the in-process one. Workers sharing a folder (local disk, or a network file
system across machines) share embeddings; the cache's shards are safe for concurrent writers.
Configurations that share a chunking run in one task, so the useful parallelism is the number
of distinct chunkings. With ``state_path``, each finished configuration is appended to a JSONL
file (atomically: the file is rewritten to a temporary file and renamed) and a restarted
sweep skips configurations already there.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import hashlib
import itertools
import json
import re
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from workbench.corpus import Corpus, Document
from workbench.evaluation import Evaluation, Run, default_metrics
from workbench.golden import GoldenSet, Problem, atomic_write_text, parse_item
from workbench.metrics import parse_metric
from workbench.retrieval.base import Hit

__all__ = [
    "GRID_KEYS",
    "RANK_BUCKETS",
    "SweepConfig",
    "SweepResult",
    "expand_grid",
    "first_relevant_rank_table",
    "load_grid",
    "refine",
    "sweep",
]

GRID_KEYS = ("chunker", "size", "overlap", "unit", "header", "retriever", "encoder", "k")
CHUNKER_KINDS = ("fixed", "sentence", "recursive", "markdown")
SWEEP_RETRIEVERS = ("bm25", "dense", "hybrid")
RANK_BUCKETS: tuple[tuple[int, int, str], ...] = ((1, 1, "1"), (2, 3, "2-3"), (4, 5, "4-5"),
                                                  (6, 10, "6-10"))
MISSING = "missing"
_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")
_HEADER_WORDS = {"true": True, "yes": True, "on": True, "1": True,
                 "false": False, "no": False, "off": False, "0": False}
VALID = {
    "chunker": f"one of {', '.join(CHUNKER_KINDS)} or a full chunker spec (kind:key=value,...)",
    "size": "a positive integer",
    "overlap": "an integer >= 0 or a percentage of size such as '25%'",
    "unit": "chars or tokens",
    "header": "true, false, or fields joined by '+' from title, section, date",
    "retriever": f"one of {', '.join(SWEEP_RETRIEVERS)}",
    "encoder": "minilm, e5 or a sentence-transformers model name or path",
    "k": "a positive integer",
    "metrics": "metric names such as recall@5, mrr@5, hit_rate@k (k = each config's k)",
}


# --------------------------------------------------------------------------- grid


def check_value(key: str, value: Any) -> str | None:
    """Why ``value`` is not valid for grid parameter ``key`` (None when it is)."""
    ok = True
    if key == "chunker":
        ok = isinstance(value, str) and (value in CHUNKER_KINDS or ":" in value)
        if ok and ":" in value:
            from workbench.chunking import parse_chunker

            try:
                parse_chunker(value)
            except ValueError as exc:
                return str(exc)
    elif key in ("size", "k"):
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
    elif key == "overlap":
        ok = (isinstance(value, int) and not isinstance(value, bool) and value >= 0) or (
            isinstance(value, str) and bool(_PERCENT.match(value)))
    elif key == "unit":
        ok = value in ("chars", "tokens")
    elif key == "header":
        ok = isinstance(value, bool) or (isinstance(value, str) and (
            value.lower() in _HEADER_WORDS
            or all(f in ("title", "section", "date") for f in value.split("+"))))
    elif key == "retriever":
        ok = value in SWEEP_RETRIEVERS
    elif key == "encoder":
        ok = (isinstance(value, str) and bool(value.strip())) or hasattr(value, "model_id")
    elif key == "metrics":
        try:
            _metric_name(str(value))
        except ValueError as exc:
            return str(exc)
        ok = isinstance(value, str)
    else:
        return f"unknown parameter {key!r}; valid parameters: {', '.join(GRID_KEYS)}, metrics"
    return None if ok else f"{value!r} is not valid for {key}: give {VALID[key]}"


def _values(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]


def _metric_name(name: str) -> str:
    """Canonical display name; ``@k`` templates stay templates (``R@k`` -> ``recall@k``)."""
    text = name.strip()
    if text.lower().endswith("@k") or "{k}" in text:
        base = text[:-2] if text.lower().endswith("@k") else text.replace("{k}", "1")
        base = base if "@" in base else f"{base}@1"
        return parse_metric(base).name.rsplit("@", 1)[0] + "@k"
    return parse_metric(text).name


def _concrete(metric: str, k: int) -> str:
    return metric[:-2] + f"@{k}" if metric.endswith("@k") else metric


def load_grid(path: str | Path) -> tuple[dict[str, list[Any]], list[str] | None]:
    """Read a YAML grid file: ``(grid, metrics)``. Raises ValueError naming
    ``file:line`` and what is valid for every problem found."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: grid file not found")
    text = path.read_text(encoding="utf-8")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ValueError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(node, yaml.MappingNode):
        line = node.start_mark.line + 1 if node is not None else 1
        raise ValueError(f"{path}:{line}: a grid file is a mapping of parameter: [values]; "
                         f"valid parameters: {', '.join(GRID_KEYS)}, metrics")
    problems: list[str] = []
    grid: dict[str, list[Any]] = {}
    metrics: list[str] | None = None
    loader = yaml.SafeLoader("")
    for key_node, value_node in node.value:
        key = str(key_node.value)
        where = f"{path}:{key_node.start_mark.line + 1}"
        if key not in (*GRID_KEYS, "metrics"):
            problems.append(f"{where}: unknown parameter {key!r}; valid parameters: "
                            f"{', '.join(GRID_KEYS)}, metrics")
            continue
        if key in grid or (key == "metrics" and metrics is not None):
            problems.append(f"{where}: {key!r} given twice; give it once with a list of values")
            continue
        items = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        if isinstance(value_node, yaml.MappingNode) or not items:
            problems.append(f"{where}: {key}: give a value or a list of values ({VALID[key]})")
            continue
        values = []
        for item in items:
            value = loader.construct_object(item, deep=True)
            why = check_value(key, value)
            if why:
                problems.append(f"{path}:{item.start_mark.line + 1}: {key}: {why}")
            values.append(value)
        if key == "metrics":
            metrics = [str(v) for v in values]
        else:
            grid[key] = values
    if problems:
        raise ValueError(f"{len(problems)} problem(s) in grid file {path}:\n  "
                         + "\n  ".join(problems))
    return grid, metrics


@dataclasses.dataclass(frozen=True)
class SweepConfig:
    """One configuration: its readable ``name`` (the Evaluation's system), the grid values
    (``params``), the chunker spec, and what is searched with it."""

    name: str
    params: Mapping[str, Any]
    spec: str
    retriever: str
    encoder: Any
    k: int

    @property
    def encoder_id(self) -> str | None:
        if self.encoder is None:
            return None
        return str(getattr(self.encoder, "model_id", self.encoder))


def _chunker_spec(p: dict[str, Any]) -> str:
    """The chunker spec for one combination of chunking parameters (ValueError if invalid)."""
    from workbench.chunking import parse_chunker

    kind = p["chunker"]
    if ":" in kind:
        return parse_chunker(kind).label
    parts = []
    size = p.get("size")
    if size is not None:
        parts.append(f"size={size}")
    overlap = p.get("overlap")
    if isinstance(overlap, str):
        if kind in ("sentence", "markdown"):
            raise ValueError(f"{kind} overlap cannot be a percentage")
        pct = float(_PERCENT.match(overlap).group(1))  # type: ignore[union-attr]
        overlap = round((size or 800) * pct / 100)
    if overlap is not None:
        if kind == "markdown" and overlap:
            raise ValueError("the markdown chunker takes no overlap")
        if kind == "sentence":
            parts.append(f"overlap_sentences={overlap}")
        elif kind != "markdown":
            if size is not None and overlap >= size:
                raise ValueError(f"overlap {overlap} >= size {size}")
            parts.append(f"overlap={overlap}")
    if p.get("unit") is not None:
        parts.append(f"unit={p['unit']}")
    header = p.get("header")
    if header is not None:
        word = header if isinstance(header, bool) else _HEADER_WORDS.get(str(header).lower())
        parts.append("header=" + (str(word).lower() if word is not None else str(header)))
    return parse_chunker(f"{kind}:{','.join(parts)}").label


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(getattr(value, "model_id", value))


def expand_grid(grid: Mapping[str, Any], k: int = 5
                ) -> tuple[list[SweepConfig], list[dict[str, Any]]]:
    """Every valid configuration of ``grid`` (in grid order) and the skipped combinations
    (``{"params": ..., "reason": ...}``). Parameters that do not apply (an encoder for BM25,
    size for a full chunker spec) become None and duplicates are dropped."""
    problems = [why for key, values in grid.items() for v in _values(values)
                if (why := check_value(key, v))]
    if problems:
        raise ValueError("invalid grid: " + "; ".join(problems))
    keys = [key for key in GRID_KEYS if key in grid]
    lists = [_values(grid[key]) for key in keys]
    seen: set[tuple[Any, ...]] = set()
    rows: list[tuple[dict[str, Any], str, str, Any, int]] = []
    skipped: list[dict[str, Any]] = []
    for combo in itertools.product(*lists):
        params = dict(zip(keys, combo, strict=True))
        full = {"chunker": "fixed", "retriever": "bm25", **params}
        if ":" in full["chunker"]:
            for key in ("size", "overlap", "unit", "header"):
                if key in params:
                    params[key] = None
        retriever = full["retriever"]
        encoder = full.get("encoder", "minilm") if retriever != "bm25" else None
        if retriever == "bm25" and "encoder" in params:
            params["encoder"] = None
        try:
            spec = _chunker_spec(full)
        except ValueError as exc:
            skipped.append({"params": params, "reason": str(exc)})
            continue
        kk = int(full.get("k", k))
        dedupe = (spec, retriever, _show(encoder) if encoder is not None else None, kk)
        if dedupe in seen:
            continue
        seen.add(dedupe)
        rows.append((params, spec, retriever, encoder, kk))
    varying = [key for key in keys
               if len({_show(r[0][key]) for r in rows if r[0][key] is not None}) > 1]
    configs: list[SweepConfig] = []
    names: set[str] = set()
    for params, spec, retriever, encoder, kk in rows:
        parts = [(_show(params[key]) if key in ("chunker", "retriever", "encoder")
                  else f"{key}={_show(params[key])}")
                 for key in varying if params[key] is not None]
        name = " ".join(parts) or f"{spec} {retriever}"
        base, n = name, 1
        while name in names:
            n += 1
            name = f"{base} #{n}"
        names.add(name)
        configs.append(SweepConfig(name, MappingProxyType(params), spec, retriever, encoder, kk))
    return configs, skipped


# --------------------------------------------------------------------------- workers


_LOCAL = threading.local()


def _encoder(ref: Any) -> Any:
    """An Encoder from a name (loaded once per process and thread) or the object itself."""
    if not isinstance(ref, str):
        return ref
    memo = _LOCAL.__dict__.setdefault("encoders", {})
    if ref not in memo:
        from workbench.retrieval.dense import get_encoder

        memo[ref] = get_encoder(ref)
    return memo[ref]


def _cache(ref: Any) -> Any:
    if ref is None or not isinstance(ref, str | Path):
        return ref
    memo = _LOCAL.__dict__.setdefault("caches", {})
    key = str(ref)
    if key not in memo:
        from workbench.cache import EmbeddingCache

        memo[key] = EmbeddingCache(key)
    return memo[key]


def _decode_docs(rows: Sequence[tuple[str, str, str, dict[str, Any]]]) -> list[Document]:
    return [Document(i, text, title, MappingProxyType(dict(meta))) for i, text, title, meta in rows]


def _decode_golden(rows: Sequence[dict[str, Any]]) -> GoldenSet:
    problems: list[Problem] = []
    items = [parse_item(row, f"golden[{i}]", problems) for i, row in enumerate(rows)]
    if problems:  # pragma: no cover - the rows come from valid items
        raise ValueError("; ".join(str(p) for p in problems))
    return GoldenSet([i for i in items if i is not None])


_TOKEN_COUNTS: dict[str, int] = {}


def _count_tokens(texts: list[str]) -> list[int]:
    """MiniLM token counts (the counter ``diagnose_chunking`` uses), memoised per process:
    chunkings of one sweep share most texts (header on/off, the zero-overlap baseline)."""
    from workbench.tokens import get_counter

    todo = list(dict.fromkeys(t for t in texts if t not in _TOKEN_COUNTS))
    if todo:
        if len(_TOKEN_COUNTS) > 500_000:
            _TOKEN_COUNTS.clear()
        counter = get_counter("minilm")
        batch = getattr(counter, "count_batch", None)
        counts = batch(todo) if batch is not None else [counter.count(t) for t in todo]
        _TOKEN_COUNTS.update(zip(todo, counts, strict=True))
    return [_TOKEN_COUNTS[t] for t in texts]


def _without_overlap(chunker: Any) -> Any:
    """The same chunker with every overlap set to 0 (None when it has none): the baseline
    of ``cost_multiplier``, as in ``diagnose_chunking``."""
    if not dataclasses.is_dataclass(chunker) or isinstance(chunker, type):
        return None
    names = {f.name for f in dataclasses.fields(chunker)}
    changes: dict[str, Any] = {n: 0 for n in ("overlap", "overlap_sentences", "child_overlap")
                               if n in names and getattr(chunker, n)}
    for n in ("base", "parent"):
        inner = _without_overlap(getattr(chunker, n)) if n in names else None
        if inner is not None:
            changes[n] = inner
    return dataclasses.replace(chunker, **changes) if changes else None


def _run_group(task: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Chunk once, index once per retriever, and evaluate every configuration of one
    chunking. Returns plain data (picklable, JSON-able) keyed by config key."""
    from workbench.chunking import chunk_corpus, parse_chunker, split_rate
    from workbench.evaluation import evaluate
    from workbench.retrieval.bm25 import BM25Retriever

    docs = _decode_docs(task["docs"])
    golden = _decode_golden(task["golden"])
    chunker = parse_chunker(task["spec"])
    chunks = chunk_corpus(chunker, docs)
    if not chunks:
        raise ValueError(f"chunker {task['spec']} produced no chunks")
    embed_counts = _count_tokens([c.embed_text for c in chunks])
    text_tokens = dict(zip([c.id for c in chunks], _count_tokens([c.text for c in chunks]),
                           strict=True))
    index_tokens = sum(embed_counts)
    cost = 1.0
    zero = _without_overlap(chunker)
    if zero is not None:
        base = sum(_count_tokens([c.embed_text for c in chunk_corpus(zero, docs)]))
        cost = index_tokens / base if base else 1.0
    spans = [ev for item in golden for ev in item.evidence]
    qrels = golden.qrels(chunks)
    questions = [item.question for item in golden]
    qids = [item.qid for item in golden]
    cache = _cache(task["cache"])
    depth_of = {c["key"]: max(c["depth"], task["position_depth"]) for c in task["configs"]}
    deepest: dict[tuple[str, Any], int] = {}
    for c in task["configs"]:
        ref = (c["retriever"], c["encoder_key"])
        deepest[ref] = max(deepest.get(ref, 0), depth_of[c["key"]])

    bm25: list[BM25Retriever] = []
    dense: dict[Any, Any] = {}
    searched: dict[tuple[str, Any], list[list[Hit]]] = {}

    def get_bm25() -> BM25Retriever:
        if not bm25:
            bm25.append(BM25Retriever(chunks))
        return bm25[0]

    def get_dense(enc_key: Any) -> tuple[Any, np.ndarray, int, int]:
        if enc_key not in dense:
            from workbench.retrieval.dense import DenseRetriever

            encoder = _encoder(task["encoders"][enc_key])
            vecs = cache.embed(encoder, [c.embed_text for c in chunks], kind="document",
                               progress=task["progress"])
            embedded, reused = cache.stats.embedded, cache.stats.reused
            qvecs = cache.embed(encoder, questions, kind="query", progress=False)
            retriever = DenseRetriever.from_vectors([c.id for c in chunks], vecs, encoder)
            dense[enc_key] = (retriever, qvecs, embedded, reused)
            return dense[enc_key]
        retriever, qvecs, _, _ = dense[enc_key]
        return retriever, qvecs, 0, len(chunks)

    out: dict[str, dict[str, Any]] = {}
    for c in task["configs"]:
        ref = (c["retriever"], c["encoder_key"])
        embedded = reused = 0
        depth = deepest[ref]
        if c["retriever"] == "bm25":
            if ref not in searched:
                b = get_bm25()
                searched[ref] = [b.search(q, depth) for q in questions]
        else:
            retriever, qvecs, embedded, reused = get_dense(c["encoder_key"])
            if ref not in searched:
                if c["retriever"] == "dense":
                    searched[ref] = retriever.search_vectors(qvecs, depth)
                else:
                    from workbench.retrieval.hybrid import HybridRetriever

                    fetch = max(50, depth)
                    b = get_bm25()
                    hybrid = HybridRetriever([b, retriever], name="hybrid")
                    dense_hits = retriever.search_vectors(qvecs, fetch)
                    searched[ref] = [hybrid.fuse([b.search(q, fetch), d], depth)
                                     for q, d in zip(questions, dense_hits, strict=True)]
        hits = searched[ref]
        run = Run(c["key"], MappingProxyType({q: tuple(h[: c["depth"]])
                                              for q, h in zip(qids, hits, strict=True)}))
        ev = evaluate(run, golden, chunks, metrics=c["metrics"], k=c["k"])
        frame = ev.frame
        prompt = [sum(text_tokens[h.chunk_id] for h in hs[: c["k"]]) for hs in hits]
        out[c["key"]] = {
            "qids": list(dict.fromkeys(frame["qid"])),
            "scores": {m: frame.loc[frame["metric"] == m, "value"].astype(float).tolist()
                       for m in c["metrics"]},
            "excluded": ev.excluded,
            "hits": {q: [[h.chunk_id, float(h.score)] for h in hs[: depth_of[c["key"]]]]
                     for q, hs in zip(qids, hits, strict=True)},
            "qrels": qrels,
            "cost": {"chunks": len(chunks), "index_tokens": int(index_tokens),
                     "cost_multiplier": float(cost),
                     "split_rate": float(split_rate(chunks, spans)),
                     "prompt_tokens_at_k": float(np.mean(prompt)) if prompt else 0.0},
            "embedded": int(embedded), "reused": int(reused),
        }
    return out


class InProcessExecutor(cf.Executor):
    """Runs each task when it is submitted, in this process (the default)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> cf.Future[Any]:
        future: cf.Future[Any] = cf.Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # handed to the caller through the future
            future.set_exception(exc)
        return future


# --------------------------------------------------------------------------- driver


def _fingerprint(obj: Any) -> str:
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _read_state(path: Path) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    if not path.exists():
        return done
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            done[row["key"]] = row["result"]
        except (json.JSONDecodeError, KeyError, TypeError):
            warnings.warn(f"{path}:{lineno}: unreadable sweep state line ignored; that "
                          "configuration will run again", stacklevel=3)
    return done


def sweep(grid: Mapping[str, Any], corpus: Corpus | Iterable[Document], golden: GoldenSet,
          metrics: Sequence[str] | None = None, k: int = 5, executor: cf.Executor | None = None,
          cache: Any = None, progress: bool = True, state_path: str | Path | None = None,
          position_depth: int = 10) -> SweepResult:
    """Evaluate every configuration of ``grid`` (see the module docstring) on ``golden``.

    ``cache``: an EmbeddingCache or a folder (default ``.workbench_cache/embeddings``);
    other executors get its folder. ``position_depth``: hits kept per question for the
    retrieval-position view (metrics use the configuration's own depth).
    """
    grid = dict(grid)
    if "metrics" in grid:
        listed = _values(grid.pop("metrics"))
        metrics = metrics or [str(m) for m in listed]
    configs, skipped = expand_grid(grid, k)
    if not configs:
        reasons = "; ".join(sorted({s["reason"] for s in skipped}))
        raise ValueError(f"the grid has no valid configuration ({reasons})")
    ks = sorted({c.k for c in configs})
    names = ([_metric_name(m) for m in metrics] if metrics
             else default_metrics(ks[0]) if len(ks) == 1
             else [m.replace("@{k}", "@k") for m in
                   ("recall@{k}", "precision@{k}", "hit_rate@{k}", "mrr@{k}", "ndcg@{k}")])
    names = list(dict.fromkeys(names))
    documents = corpus.documents if isinstance(corpus, Corpus) else list(corpus)
    docs = [(d.id, d.text, d.title, dict(d.metadata)) for d in documents]
    gold = [item.to_json() for item in golden]
    data_key = _fingerprint([docs, gold])
    in_process = executor is None or isinstance(executor, InProcessExecutor)
    executor = executor or InProcessExecutor()
    from workbench.cache import EmbeddingCache

    if cache is None:
        cache = EmbeddingCache()
    elif not isinstance(cache, EmbeddingCache | str | Path):
        raise ValueError(f"cache must be an EmbeddingCache or a folder, not {type(cache)}")
    folder = cache.root if isinstance(cache, EmbeddingCache) else Path(cache)
    cache_ref = cache if in_process else str(folder.resolve())
    encoders: dict[str, Any] = {}
    plans: dict[str, dict[str, Any]] = {}
    for c in configs:
        concrete = [_concrete(m, c.k) for m in names]
        depth = max([c.k, *[parse_metric(m).k or 0 for m in concrete]])
        enc_key = c.encoder_id
        if enc_key is not None:
            encoders[enc_key] = c.encoder
        key = _fingerprint([data_key, c.spec, c.retriever, enc_key, c.k, concrete,
                            position_depth])
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
                "position_depth": position_depth, "progress": progress and in_process}

    def record(results: dict[str, dict[str, Any]]) -> None:
        done.update(results)
        if state is not None:
            old = state.read_text(encoding="utf-8") if state.exists() else ""
            new = "".join(json.dumps({"key": key, "result": r}, ensure_ascii=False) + "\n"
                          for key, r in results.items())
            atomic_write_text(state, old + new)
        bar.update(len(results))

    try:
        if isinstance(executor, InProcessExecutor):  # one chunking at a time, saved as it ends
            for spec, group in groups.items():
                record(executor.submit(_run_group, task(spec, group)).result())
        else:
            futures = [executor.submit(_run_group, task(spec, group))
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
    return _assemble(configs, plans, done, golden, names, skipped, resumed)


def _assemble(configs: list[SweepConfig], plans: dict[str, dict[str, Any]],
              done: dict[str, dict[str, Any]], golden: GoldenSet, names: list[str],
              skipped: list[dict[str, Any]], resumed: int) -> SweepResult:
    items = {i.qid: i for i in golden}
    frames, runs, rows, qrels = [], {}, [], {}
    excluded: dict[str, set[str]] = {}
    for c in configs:
        plan = plans[c.name]
        r = done[plan["key"]]
        qids = r["qids"]
        values = [r["scores"][m] for m in plan["metrics"]]
        frame = pd.DataFrame({
            "system": c.name, "qid": qids * len(names),
            "category": [items[q].category for q in qids] * len(names),
            "source": [items[q].source for q in qids] * len(names),
            "metric": np.repeat(names, len(qids)),
            "value": np.asarray([v for vs in values for v in vs], dtype=float)})
        for key, value in c.params.items():
            frame[key] = pd.Series([_show(value) if key == "encoder" and value is not None
                                    else value] * len(frame), dtype=object)
        frames.append(frame)
        for reason, ids in r["excluded"].items():
            excluded.setdefault(reason, set()).update(ids)
        hits = {q: tuple(Hit(cid, score, rank, c.retriever)
                         for rank, (cid, score) in enumerate(hs, start=1))
                for q, hs in r["hits"].items()}
        runs[c.name] = Run(c.name, MappingProxyType(hits), params=MappingProxyType(
            {key: v for key, v in c.params.items() if key != "encoder"}))
        qrels[c.name] = r["qrels"]
        rows.append({"config": c.name, **{key: (_show(v) if key == "encoder" and v is not None
                                                else v) for key, v in c.params.items()},
                     "spec": c.spec, "retriever_name": c.retriever, "k_value": c.k,
                     **r["cost"], "embedded": r["embedded"], "reused": r["reused"]})
    table = pd.DataFrame(rows).set_index("config")
    frame = pd.concat(frames, ignore_index=True)
    for key in configs[0].params:
        frame[key] = frame[key].infer_objects()
    return SweepResult(frame, {k: sorted(v) for k, v in excluded.items()}, runs, table, skipped,
                       qrels, resumed)


# --------------------------------------------------------------------------- results


class SweepResult(Evaluation):
    """An Evaluation with one system per configuration (named by the parameters that vary)
    and the grid parameters as columns, plus:

    * ``configs``: one row per configuration: parameters, chunker ``spec``, ``chunks``,
      ``index_tokens``, ``cost_multiplier``, ``split_rate``, ``prompt_tokens_at_k`` (mean
      tokens of the top-k chunks returned, what the generator reads), ``embedded`` and
      ``reused`` (texts sent to the encoder / served from the cache);
    * ``skipped``: invalid combinations and why; ``qrels[config]``: span-derived relevance
      under that configuration's chunking; ``resumed``: configurations read from the state file.

    Note that ``configs`` is the cost table here, not ``Evaluation.configs()``; configuration
    labels (for ``compare``) are the system names, ``list(result.configs.index)``.
    """

    def __init__(self, frame: pd.DataFrame, excluded: Mapping[str, Sequence[str]],
                 runs: Mapping[str, Run], configs: pd.DataFrame,
                 skipped: Sequence[Mapping[str, Any]] = (),
                 qrels: Mapping[str, Mapping[str, Mapping[str, int]]] | None = None,
                 resumed: int = 0):
        super().__init__(frame, excluded, runs)
        self._configs = configs
        self.skipped = [dict(s) for s in skipped]
        self.qrels = dict(qrels or {})
        self.resumed = resumed

    @property
    def configs(self) -> pd.DataFrame:  # type: ignore[override]
        return self._configs

    @property
    def grid_params(self) -> list[str]:
        """The grid parameters (columns) of this sweep."""
        return [p for p in GRID_KEYS if p in self.params]

    @property
    def embedded(self) -> int:
        return int(self._configs["embedded"].sum())

    @property
    def reused(self) -> int:
        return int(self._configs["reused"].sum())

    def _labels(self) -> pd.Series:
        return self.frame["system"].astype(str)

    def metric_name(self, metric: str | None = None) -> str:
        """``metric`` as named in this sweep (default: the first); ``recall@k`` also finds
        ``recall@5`` when every configuration has k=5."""
        if metric is None:
            return self.metrics[0]
        if metric in self.metrics:
            return metric
        ks = self._configs["k_value"].unique()
        if metric.endswith("@k") and len(ks) == 1 and _concrete(metric, int(ks[0])) in self.metrics:
            return _concrete(metric, int(ks[0]))
        raise ValueError(f"metric {metric!r} is not in this sweep: {self.metrics}")

    def leaderboard(self, metric: str | None = None, category: str | None = None,
                    level: float = 0.95) -> pd.DataFrame:
        """One row per configuration, best ``metric`` first: parameters, mean, interval,
        n and cost. ``category`` restricts the questions to one category."""
        metric = self.metric_name(metric)
        frame = self.frame[self.frame["metric"] == metric]
        if category is not None:
            frame = frame[frame["category"] == category]
        summ = Evaluation(frame)._summarise(["system"], level).set_index("system")
        cost = self._configs.drop(columns=["retriever_name", "k_value"])
        table = cost.join(summ[["mean", "ci_low", "ci_high", "n"]], how="inner")
        table = table.sort_values(["mean", "index_tokens"], ascending=[False, True],
                                  kind="stable")
        table.insert(0, "metric", metric)
        return table

    def best(self, metric: str | None = None, category: str | None = None) -> str:
        """The name of the configuration with the highest mean ``metric`` (ties: the smaller
        index, then grid order)."""
        return str(self.leaderboard(metric, category).index[0])

    def params_of(self, config: str) -> dict[str, Any]:
        row = self._configs.loc[config]
        return {p: _plain(row[p]) for p in self.grid_params}

    def label(self, **params: Any) -> str:
        """The configuration whose parameters equal ``params`` (e.g. ``size=800,
        overlap=100``), for ``compare(baseline=...)``."""
        table = self._configs
        mask = pd.Series(True, index=table.index)
        for key, value in params.items():
            if key not in table.columns:
                raise ValueError(f"{key!r} is not a parameter of this sweep: {self.grid_params}")
            mask &= table[key].map(lambda v, want=value: _show(v) == _show(want))
        found = list(table.index[mask])
        if len(found) != 1:
            raise ValueError(f"{len(found)} configurations match {params}; "
                             f"add parameters to pick one of: {found or list(table.index)}")
        return str(found[0])

    def subset(self, **params: Any) -> SweepResult:
        """The configurations whose parameters equal ``params`` (a value or a list of
        values each), e.g. ``result.subset(k=5)``; comparisons then run among those only."""
        table = self._configs
        mask = pd.Series(True, index=table.index)
        for key, want in params.items():
            if key not in table.columns:
                raise ValueError(f"{key!r} is not a parameter of this sweep: {self.grid_params}")
            wanted = {_show(v) for v in _values(want)}
            mask &= table[key].map(lambda v, w=wanted: _show(v) in w)
        keep = list(table.index[mask])
        if not keep:
            raise ValueError(f"no configuration has {params}")
        frame = self.frame[self.frame["system"].isin(keep)]
        return SweepResult(frame, self.excluded, {k: self.runs[k] for k in keep},
                           table.loc[keep], self.skipped,
                           {k: v for k, v in self.qrels.items() if k in keep}, self.resumed)

    def best_by_category(self, metric: str | None = None, level: float = 0.95) -> pd.DataFrame:
        """Per category: the best configuration there, its mean [interval] and n, next to the
        overall best configuration's score in that category."""
        metric = self.metric_name(metric)
        overall = self.best(metric)
        rows = []
        for cat in sorted(self.frame["category"].unique()):
            board = self.leaderboard(metric, cat, level)
            top = board.iloc[0]
            rows.append({"category": cat, "n": int(top["n"]), "best_config": board.index[0],
                         "mean": top["mean"], "ci_low": top["ci_low"], "ci_high": top["ci_high"],
                         "overall_best": overall,
                         "overall_best_mean": board.loc[overall, "mean"]})
        return pd.DataFrame(rows).set_index("category")

    def __repr__(self) -> str:
        return (f"SweepResult({len(self._configs)} configs, {len(self.skipped)} skipped, "
                f"n={self.n} questions, metrics={self.metrics}, embedded={self.embedded}, "
                f"reused={self.reused}, resumed={self.resumed})")

    def _repr_html_(self) -> str:
        import html

        board = self.leaderboard().drop(columns=["metric"]).round(3).to_html(escape=True)
        note = (f"{len(self._configs)} configurations, n={self.n} questions; "
                f"{self.metrics[0]}, mean [95% bootstrap interval]; texts embedded "
                f"{self.embedded}, reused {self.reused}; {len(self.skipped)} skipped")
        return f"<div><p>{html.escape(note)}</p>{board}</div>"


def _plain(value: Any) -> Any:
    """numpy scalars to Python ones (grids are plain data)."""
    return value.item() if isinstance(value, np.generic) else value


def refine(result: SweepResult, metric: str | None = None, around: str | Mapping[str, Any]
           | None = None, params: Sequence[str] = ("size", "overlap"), points: int = 1
           ) -> dict[str, list[Any]]:
    """Coarse, then fine: a grid centred on the best configuration (or ``around``: a
    config name or parameter dict), with ``points`` evenly spaced values between it and each
    neighbouring coarse value for every numeric parameter in ``params`` (at an edge of the
    coarse grid, as far beyond the edge: the optimum may lie outside it). Values are integers;
    overlaps given as percentages stay percentages. Other parameters are fixed at the centre's
    values. Feed the result back to :func:`sweep`."""
    if around is None:
        centre = result.params_of(result.best(metric))
    elif isinstance(around, str):
        centre = result.params_of(around)
    else:
        centre = result.params_of(result.label(**around))
    grid: dict[str, list[Any]] = {}
    for key in result.grid_params:
        value = _plain(centre[key])
        coarse = [_plain(v) for v in result.configs[key].dropna().unique()]
        if key not in params or len(coarse) < 2 or value is None:
            if value is not None:
                grid[key] = [value]
            continue
        pct = isinstance(value, str)
        nums = sorted({float(_PERCENT.match(v).group(1)) if isinstance(v, str)  # type: ignore
                       else float(v) for v in coarse if isinstance(v, str) == pct})
        c = float(_PERCENT.match(value).group(1)) if pct else float(value)  # type: ignore
        i = nums.index(c)
        fine = {c}
        for j, mirror in ((i - 1, i + 1), (i + 1, i - 1)):
            # towards each neighbour; at an edge of the coarse grid, as far beyond it
            other = nums[j] if 0 <= j < len(nums) else 2 * c - nums[mirror]
            fine.update(c + (other - c) * s / (points + 1) for s in range(1, points + 1))
        low = 1 if key == "size" else 0
        out = sorted({round(v) for v in fine if round(v) >= low})
        grid[key] = [f"{v}%" for v in out] if pct else out
    return grid


# --------------------------------------------------------------------------- positions


def _bucket(rank: int | None, buckets: Sequence[tuple[int, int, str]]) -> str:
    if rank is not None:
        for lo, hi, name in buckets:
            if lo <= rank <= hi:
                return name
    return MISSING


def first_relevant_rank_table(ev: Evaluation, system: str | None = None,
                              qrels: Mapping[str, Mapping[str, int]] | GoldenSet | None = None,
                              chunks: Sequence[Any] | None = None, threshold: int = 1,
                              column: str = "category",
                              buckets: Sequence[tuple[int, int, str]] = RANK_BUCKETS
                              ) -> pd.DataFrame:
    """Where the first relevant chunk sits, per ``column`` (plus ``all``): counts and shares
    of questions in rank buckets 1, 2-3, 4-5, 6-10 and ``missing`` (no relevant chunk in the
    returned hits, or below the last bucket). Ranks are 1-based.

    From ``ev.runs[system].hits`` and qrels: given, derived from a GoldenSet (with
    ``chunks``), or, for a SweepResult, the qrels of that configuration's chunking. Only
    questions with a relevant chunk (grade >= ``threshold``) count.
    """
    system = system or next(iter(ev.runs), None)
    if system not in ev.runs:
        raise ValueError(f"no run named {system!r}; runs: {list(ev.runs)}")
    if qrels is None:
        qrels = getattr(ev, "qrels", {}).get(system)
        if qrels is None:
            raise ValueError("give qrels (or a GoldenSet and chunks) for this evaluation")
    elif isinstance(qrels, GoldenSet):
        qrels = qrels.qrels(chunks)
    groups = dict(zip(ev.frame["qid"], ev.frame[column], strict=True))
    order = [name for _, _, name in buckets] + [MISSING]
    rows = []
    for qid, judged in qrels.items():
        relevant = {cid for cid, g in judged.items() if g >= threshold}
        if not relevant or qid not in groups:
            continue
        hits = ev.runs[system].hits.get(qid, ())
        rank = next((h.rank for h in hits if h.chunk_id in relevant), None)
        rows.append({column: groups[qid], "bucket": _bucket(rank, buckets)})
    data = pd.DataFrame(rows, columns=[column, "bucket"])
    data = pd.concat([data.assign(**{column: "all"}), data], ignore_index=True)
    counts = data.groupby([column, "bucket"]).size()
    cats = ["all", *sorted(c for c in data[column].unique() if c != "all")]
    index = pd.MultiIndex.from_product([cats, order], names=[column, "bucket"])
    table = counts.reindex(index, fill_value=0).rename("count").reset_index()
    totals = table.groupby(column)["count"].transform("sum")
    table["n"] = totals
    table["share"] = (table["count"] / totals.where(totals > 0, 1)).astype(float)
    table.attrs["system"] = system
    return table


# --------------------------------------------------------------------------- command line


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
            raise ValueError(f"--executor {spec!r}: give processes:N with N >= 1")
        pool = cf.ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"))
        return pool, lambda: pool.shutdown(cancel_futures=True)
    if spec.startswith("dask://"):
        try:
            from distributed import Client
        except ImportError:
            raise ValueError("--executor dask://...: install dask[distributed] "
                             "(pip install 'workbench[scale]')") from None
        try:
            client = Client("tcp://" + spec[len("dask://"):], timeout="20s")
        except OSError as exc:
            raise ValueError(f"--executor {spec!r}: cannot reach the Dask scheduler ({exc})")\
                from None
        return client.get_executor(), client.close
    raise ValueError(f"--executor {spec!r}: give dask://HOST:PORT or processes:N")


def _num(value: Any) -> Any:
    value = _plain(value)
    return None if isinstance(value, float) and value != value else value


def sweep_rows(result: SweepResult) -> list[dict[str, Any]]:
    """One JSON-able row per configuration: parameters, metrics (mean, ci_low, ci_high, n),
    cost, and the texts embedded / reused."""
    summary: dict[tuple[str, str], dict[Any, Any]] = {
        (str(r["system"]), str(r["metric"])): r for r in result.summary().to_dict("records")}
    rows = []
    for name, cfg in result.configs.iterrows():
        metrics = {}
        for metric in result.metrics:
            s = summary[(str(name), metric)]
            metrics[metric] = {"mean": _num(s["mean"]), "ci_low": _num(s["ci_low"]),
                               "ci_high": _num(s["ci_high"]), "n": int(s["n"])}
        rows.append({
            "config": name, "params": {p: _num(cfg[p]) for p in result.grid_params},
            "spec": cfg["spec"], "metrics": metrics,
            "cost": {c: _num(cfg[c]) for c in ("chunks", "index_tokens", "cost_multiplier",
                                               "split_rate", "prompt_tokens_at_k")},
            "embedded": int(cfg["embedded"]), "reused": int(cfg["reused"])})
    return rows


def run_sweep_command(args: Any) -> int:
    """``workbench sweep``: see the module docstring for the grid file."""
    import sys

    from workbench.formats import load_dataset

    grid, metrics = load_grid(args.grid)
    corpus, golden = load_dataset(args.corpus, args.golden)
    golden.validate(corpus)
    executor, close = make_executor(args.executor)
    try:
        result = sweep(grid, corpus, golden, metrics=metrics, k=args.k, executor=executor,
                       cache=args.cache, progress=sys.stderr.isatty(), state_path=args.state)
    finally:
        close()
    metric = result.metrics[0]
    if args.json:
        print(json.dumps({"n": result.n, "metric_order": result.metrics,
                          "best": {m: result.best(m) for m in result.metrics},
                          "configs": sweep_rows(result),
                          "skipped": [{"params": {k: _num(v) for k, v in s["params"].items()},
                                       "reason": s["reason"]} for s in result.skipped],
                          "embedded": result.embedded, "reused": result.reused,
                          "resumed": result.resumed}, indent=2, ensure_ascii=False))
        return 0
    board = result.leaderboard(metric)
    table = pd.DataFrame({
        metric: [f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in
                 zip(board["mean"], board["ci_low"], board["ci_high"], strict=True)],
        "n": board["n"], "chunks": board["chunks"], "index_tokens": board["index_tokens"],
        "cost_x": board["cost_multiplier"].round(2), "split_rate": board["split_rate"].round(3),
        "prompt_tokens": board["prompt_tokens_at_k"].round(0).astype(int),
        "embedded": board["embedded"], "reused": board["reused"]}, index=board.index)
    with pd.option_context("display.width", 250, "display.max_columns", 20,
                           "display.max_colwidth", 60):
        print(f"{len(result.configs)} configurations, n={result.n} questions; "
              f"{metric}: mean [95% bootstrap interval], best first")
        print(table.to_string())
    print(f"best on {metric}: {result.best(metric)}")
    print(f"texts embedded: {result.embedded}, reused from the cache: {result.reused}; "
          f"resumed from state: {result.resumed}")
    for s in result.skipped:
        print(f"skipped {s['params']}: {s['reason']}")
    return 0
