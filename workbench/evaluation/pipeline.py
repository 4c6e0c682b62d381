"""One pipeline description, built the same way everywhere.

A :class:`Pipeline` names what is measured: the chunker spec, the retriever (and its
encoder), k, the metrics and the relevance (level, ``grade_threshold``,
``evidence_threshold``). :func:`run_pipeline` is the one way from a pipeline, a corpus and a
golden set to an Evaluation: ``workbench eval``, the gate
(:func:`workbench.gate.evaluate_pipeline`), a sweep's configuration
(:meth:`workbench.sweep.SweepResult.pipeline`) and notebooks build from it, so the gate's
number for a configuration is ``workbench eval``'s.

Defaults that depend on the dataset (:func:`dataset_defaults`): a BEIR folder is chunked
``document:title=true`` (whole documents, title + text, as BEIR scores them) and scored at
document level; anything else is chunked ``fixed:size=800,overlap=100`` at chunk level. The
encoder, when none is named, is chosen for the language of the chunks and questions
(:func:`workbench.retrieval.choose_encoder`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, replace
from pathlib import Path
from typing import Any

from workbench.chunking import chunk_corpus
from workbench.corpus import Chunk, Corpus
from workbench.evaluation.evaluation import Evaluation, evaluate
from workbench.golden import GoldenSet
from workbench.golden.datasets import BEIR_CHUNKER, dataset_kind
from workbench.io import InputError, WorkbenchError
from workbench.metrics import DEFAULT_EVIDENCE_THRESHOLD, default_metrics
from workbench.retrieval import EmbeddingCache, Retriever, make_retriever, with_embedder

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
