"""One pipeline description, built the same way everywhere.

A :class:`Pipeline` names what is measured: the chunker spec, the retriever (and its
encoder), k, the metrics and the relevance (level, ``grade_threshold``,
``evidence_threshold``). :func:`run_pipeline` is the one way from a pipeline, a corpus and a
golden set to an Evaluation: ``workbench eval``, the gate (through
:func:`evaluate_pipeline`), a sweep's configuration
(:meth:`workbench.sweep.SweepResult.pipeline`) and notebooks build from it, so the gate's
number for a configuration is ``workbench eval``'s.

The same pipeline as a mapping, the config a gate baseline records and re-runs
(:func:`gate_config`, :func:`pipeline_config`): corpus and golden paths plus the options of
:data:`DEFAULTS`, each checked for its type by :func:`check_config` (an unknown key is
refused naming the closest known one); :func:`evaluate_pipeline` loads and runs one.

Defaults that depend on the dataset (:func:`dataset_defaults`): a BEIR folder is chunked
``document:title=true`` (whole documents, title + text, as BEIR scores them) and scored at
document level; anything else is chunked ``fixed:size=800,overlap=100`` at chunk level. The
encoder, when none is named, is chosen for the language of the chunks and questions
(:func:`workbench.retrieval.choose_encoder`).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, replace
from pathlib import Path
from typing import Any

from workbench.chunking import chunk_corpus
from workbench.corpus import Chunk, Corpus
from workbench.evaluation.evaluation import Evaluation
from workbench.evaluation.scoring import evaluate
from workbench.golden import GoldenSet
from workbench.golden.datasets import BEIR_CHUNKER, dataset_kind, load_dataset
from workbench.io import InputError, WorkbenchError, is_int
from workbench.metrics import DEFAULT_EVIDENCE_THRESHOLD, default_metrics
from workbench.retrieval import EmbeddingCache, Retriever, make_retriever, with_embedder
from workbench.retrieval.base import MAX_K

DEFAULT_CHUNKER = "fixed:size=800,overlap=100"


def dataset_defaults(corpus: str | Path, golden: str | Path | None = None) -> tuple[str, str]:
    """The chunker spec and level a pipeline over this dataset takes by default (see the
    module docstring)."""
    if dataset_kind(corpus, golden) == "beir":
        return BEIR_CHUNKER, "document"
    return DEFAULT_CHUNKER, "chunk"


def require_answerable(golden: GoldenSet, source: Any) -> None:
    """Refuse an empty golden set, or one whose questions are all unanswerable (retrieval
    metrics have nothing to score); ``source`` names the file in the message."""
    where = str(getattr(golden, "path", None) or source)
    if not len(golden):
        raise InputError(where, "the golden set holds no questions; add some (see "
                         "workbench.golden)")
    if not golden.answerable:
        raise InputError(where, f"all {len(golden)} questions are unanswerable, so retrieval "
                         "has nothing to find; label evidence or relevant_chunk_ids on some")


@dataclass(frozen=True)
class Pipeline:
    """chunk -> retrieve -> evaluate, described. ``chunker`` / ``level`` None: the dataset's
    default (:meth:`for_dataset`); ``encoder`` None: chosen for the language; ``metrics``
    None: the default metrics at ``k``."""

    chunker: str | None = None
    retriever: str = "bm25"
    encoder: str | None = None
    k: int = 5
    _: KW_ONLY
    metrics: tuple[str, ...] | None = None
    level: str | None = None
    grade_threshold: int = 1
    evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Pipeline:
        """From a mapping of the same keys (a gate config; other keys are ignored)."""
        metrics = config.get("metrics")
        return cls(config.get("chunker"), config.get("retriever") or "bm25",
                   config.get("encoder"), int(config.get("k") or 5),
                   metrics=tuple(metrics) if metrics else None, level=config.get("level"),
                   grade_threshold=int(config.get("threshold") or 1),
                   evidence_threshold=float(config.get("evidence_threshold")
                                            or DEFAULT_EVIDENCE_THRESHOLD))

    def for_dataset(self, corpus: str | Path, golden: str | Path | None = None) -> Pipeline:
        """This pipeline with the dataset's defaults filled in (chunker, level, metrics)."""
        chunker, level = dataset_defaults(corpus, golden)
        return replace(self, chunker=self.chunker or chunker, level=self.level or level,
                       metrics=self.metrics or tuple(default_metrics(self.k)))


#: ``chunker`` / ``level`` None: the dataset's default
#: (:func:`dataset_defaults`, as ``workbench eval``).
DEFAULTS: dict[str, Any] = {"golden": None, "chunker": None,
                            "retriever": "bm25", "encoder": None, "k": 5, "metrics": None,
                            "level": None, "threshold": 1,
                            "evidence_threshold": DEFAULT_EVIDENCE_THRESHOLD}
#: Config keys that hold file paths (a baseline writes them relative to its folder).
PATH_KEYS = ("corpus", "golden")



def _text_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str | Path)


_CONFIG_CHECKS: dict[str, tuple[Any, str]] = {
    "corpus": (lambda v: isinstance(v, str | Path) and str(v).strip() != "", "a path"),
    "golden": (_text_or_none, "a path or null"),
    "chunker": (lambda v: isinstance(v, str), "a chunker spec"),
    "retriever": (lambda v: isinstance(v, str), "a retriever name"),
    "encoder": (_text_or_none, "an encoder name or null"),
    "k": (lambda v: is_int(v) and 1 <= v <= MAX_K, f"a positive integer of at most {MAX_K:,}"),
    "metrics": (lambda v: v is None or (isinstance(v, list | tuple) and len(v) > 0
                                        and all(isinstance(m, str) for m in v)),
                "a non-empty list of metric names or null"),
    "level": (lambda v: v in ("chunk", "document"), "'chunk' or 'document'"),
    "threshold": (lambda v: is_int(v) and v >= 0, "an integer >= 0"),
    "evidence_threshold": (lambda v: isinstance(v, int | float) and not isinstance(v, bool)
                           and 0 < v <= 1, "a number in (0, 1]"),
}


def check_config(config: Any, where: str, pipeline: bool = True,
                 locate: Callable[[str], str] | None = None) -> None:
    """Refuse a config that is not a mapping with values of the right type for its known
    keys, naming ``where`` (``file:line`` or "gate config") and the key. ``pipeline=True``
    (a config the gate re-runs) also refuses unknown keys, naming the closest known one; a
    baseline written from Python may record other keys (a description of its pipeline).
    ``locate(key)`` gives the ``file:line`` of a key, where known."""
    if not isinstance(config, Mapping):
        raise InputError(where, f"must be a mapping of options, not {config!r:.60}",
                         field="config")
    for key, value in config.items():
        if key not in _CONFIG_CHECKS and not pipeline:
            continue
        if key not in _CONFIG_CHECKS:
            close = difflib.get_close_matches(str(key), list(_CONFIG_CHECKS), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise InputError(locate(key) if locate else where, f"unknown option; {hint}known: "
                             f"{', '.join(_CONFIG_CHECKS)}", field=f"config.{key}")
        check, wanted = _CONFIG_CHECKS[key]
        if not check(value):
            raise InputError(locate(key) if locate else where,
                             f"must be {wanted}, not {value!r:.60}", field=f"config.{key}")


def pipeline_config(config: Mapping[str, Any], where: str = "gate config") -> dict[str, Any]:
    """:func:`gate_config` of a recorded config that the gate re-runs: every key must be a
    pipeline option (an unknown one, such as a typo'd ``chunkr``, would be dropped and the
    gate would score a different pipeline)."""
    check_config(config, where)
    if not config.get("corpus"):
        raise InputError(where, "is missing: give --corpus (and --golden) to create a baseline",
                         field="config.corpus")
    return _with_defaults(config["corpus"], config.get("golden"),
                          {k: v for k, v in config.items() if k not in PATH_KEYS})


def gate_config(corpus: str | Path, golden: str | Path | None = None, **options: Any
                ) -> dict[str, Any]:
    """The pipeline a baseline records: corpus, golden, chunker, retriever, encoder, k,
    metrics, level, threshold, evidence_threshold (defaults: BM25 over the dataset's chunker
    and level as ``workbench eval`` takes them, k=5, relevance as in
    :func:`workbench.evaluate`; an option
    given as None takes its default). An unknown option is refused, naming the closest."""
    # a known option given as None takes its default; an unknown one is refused even as None
    check_config({"corpus": corpus, "golden": golden,
                  **{k: v for k, v in options.items() if v is not None or k not in DEFAULTS}},
                 "gate config")
    return _with_defaults(corpus, golden, options)


def _with_defaults(corpus: str | Path, golden: str | Path | None,
                   options: Mapping[str, Any]) -> dict[str, Any]:
    """The full pipeline config from checked options (None: the default)."""
    config = {"corpus": str(corpus), **DEFAULTS,
              **{k: v for k, v in options.items() if v is not None}}
    config["golden"] = None if golden is None else str(golden)
    config["metrics"] = list(config["metrics"] or default_metrics(config["k"]))
    chunker, level = dataset_defaults(corpus, golden)
    config["chunker"] = config["chunker"] or chunker
    config["level"] = config["level"] or level
    return config


@dataclass(frozen=True)
class PipelineRun:
    """What :func:`run_pipeline` built: the Evaluation, the chunks and the retriever."""

    evaluation: Evaluation
    chunks: list[Chunk]
    retriever: Retriever


def run_pipeline(pipeline: Pipeline, corpus: Corpus, golden: GoldenSet, *,
                 chunks: Sequence[Chunk] | None = None, cache: EmbeddingCache | None = None,
                 progress: bool = False, source: Any = "golden set") -> PipelineRun:
    """Chunk ``corpus`` (or take ``chunks``, made with ``pipeline.chunker``), index it, search
    every question and score them. The golden set must hold answerable questions
    (:func:`require_answerable`, naming ``source``) and match the corpus."""
    if pipeline.chunker is None or pipeline.level is None:
        raise WorkbenchError("resolve the pipeline first: pipeline.for_dataset(corpus, golden)")
    require_answerable(golden, source)
    golden.validate(corpus)
    if chunks is None:
        from tqdm.auto import tqdm

        docs = tqdm(corpus.documents, desc="chunking", unit="doc", delay=1.0,
                    disable=not progress, dynamic_ncols=True)
        chunks = chunk_corpus(with_embedder(pipeline.chunker, cache), docs)
    chunks = list(chunks)
    if not chunks:
        empty = [str(d.metadata.get("source", d.id)) for d in corpus.documents
                 if not d.text.strip()]
        raise InputError(empty[0] if empty else "corpus", f"no chunk to index: "
                         f"{len(empty)} of {len(corpus.documents)} document(s) have no text "
                         f"({', '.join(empty[:3])}{', ...' if len(empty) > 3 else ''}): an "
                         "empty or script-only HTML file, or an image-only PDF (run OCR first); "
                         "add documents with text", field="text")
    retriever = make_retriever(pipeline.retriever, chunks, encoder=pipeline.encoder,
                               cache=cache, queries=[i.question for i in golden],
                               progress=progress)
    ev = evaluate(retriever, golden, chunks,
                  metrics=list(pipeline.metrics) if pipeline.metrics else None, k=pipeline.k,
                  level=pipeline.level, grade_threshold=pipeline.grade_threshold,
                  evidence_threshold=pipeline.evidence_threshold, system=pipeline.retriever,
                  progress=progress)
    return PipelineRun(ev, chunks, retriever)


def evaluate_pipeline(config: Mapping[str, Any], progress: bool = False,
                      cache: EmbeddingCache | None = None) -> tuple[Evaluation, GoldenSet]:
    """Load, chunk, index and score the pipeline a config describes (checked by
    :func:`pipeline_config`), through :func:`run_pipeline` (as ``workbench eval``; dense
    embeddings through ``cache``, default ``EmbeddingCache()``)."""
    cfg = pipeline_config(config)
    corpus, golden = load_dataset(cfg["corpus"], cfg["golden"])
    pipeline = Pipeline.from_config(cfg).for_dataset(cfg["corpus"], cfg["golden"])
    run = run_pipeline(pipeline, corpus, golden, cache=cache, progress=progress,
                       source=cfg["golden"] or cfg["corpus"])
    return run.evaluation, golden
