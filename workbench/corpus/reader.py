"""The reader view: every surface that shows, writes, exports or sends document text reads
the documents through one :class:`Reader`, and the surfaces are listed here, once.

A :class:`Reader` is the groups of the person (or system) the text is for; ``Reader(None)``,
spelled :data:`UNRESTRICTED`, is the unrestricted evaluation view (every document). A
surface takes ``user_groups=`` (a group name, a list of them, a :class:`Reader` or
:data:`UNRESTRICTED`) and turns it into a reader with :func:`require_reader`: where the corpus
declares access (:func:`declared_access`: any document or chunk with an ``acl``), a surface
given no reader refuses to start (:class:`ReaderRequired`, one line saying how to name one),
so no default shows restricted text; where nothing declares access, no reader means
everyone. The view's checks are :mod:`workbench.corpus.access`'s (:func:`can_read_chunk`:
the document's and the chunk's ACL, unknown documents refused).

:data:`SURFACES` is the inventory of surfaces (``module:qualname`` -> what it outputs);
:data:`NOT_SURFACES` lists the public callables that take a corpus, documents or chunks but
output no document text to a person, a file or a model, each group with its reason.
``tests/corpus/test_reader_surfaces.py`` runs every surface with a canary corpus for a
non-member and fails on a public callable taking a corpus that neither list names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from workbench.corpus.access import EVERYONE, acl_of, can_read, can_read_chunk, user_groups_of
from workbench.corpus.chunk_table import ChunkList
from workbench.corpus.types import Chunk, Document
from workbench.io import WorkbenchError

__all__ = ["NOT_SURFACES", "SURFACES", "UNRESTRICTED", "Reader", "ReaderRequired",
           "declared_access", "reaches_readers_of", "require_reader"]


@dataclass(frozen=True)
class Reader:
    """Whom text is shown to: ``groups`` (trimmed, case-folded; empty: a user in no group),
    or None for :data:`UNRESTRICTED` (every document, for evaluation only)."""

    groups: frozenset[str] | None

    @classmethod
    def of(cls, user_groups: Reader | Iterable[str] | str | None) -> Reader:
        """A reader from a group name, a list of them or a reader; None is
        :data:`UNRESTRICTED` only through :func:`require_reader`'s check."""
        if isinstance(user_groups, Reader):
            return user_groups
        return cls(user_groups_of(user_groups))

    def can_read(self, doc: Document | None) -> bool:
        """Whether this reader may read ``doc`` (None, an unknown document: no, unless
        unrestricted)."""
        if self.groups is None:
            return True
        return doc is not None and can_read(self.groups, doc.acl)

    def can_read_chunk(self, chunk: Chunk, doc: Document | None) -> bool:
        """:func:`~workbench.corpus.access.can_read_chunk` for this reader."""
        return can_read_chunk(self.groups, chunk, doc)

    def documents(self, documents: Mapping[str, Document]) -> dict[str, Document]:
        """The documents of ``documents`` this reader may read, in order."""
        return {i: d for i, d in documents.items() if self.can_read(d)}

    def chunks(self, chunks: Iterable[Chunk],
               documents: Mapping[str, Document]) -> ChunkList:
        """The chunks this reader may read (document and chunk ACL), in order (a list that
        keeps its index for scoring)."""
        return ChunkList(c for c in chunks if self.can_read_chunk(c, documents.get(c.doc_id)))


#: The unrestricted evaluation view, named: every document, whatever its ``acl``.
UNRESTRICTED = Reader(None)


class ReaderRequired(WorkbenchError):
    """A surface over a corpus that declares access was given no reader."""


def declared_access(documents: Mapping[str, Document] | Iterable[Document],
                    chunks: Iterable[Chunk] | None = None) -> str | None:
    """The id of the first document (or chunk) that declares an ``acl``, or None when nothing
    in the corpus declares access."""
    docs = documents.values() if isinstance(documents, Mapping) else documents
    for doc in docs:
        if "acl" in doc.metadata:
            return doc.id
    for chunk in chunks or ():
        if "acl" in chunk.metadata:
            return chunk.id
    return None


def require_reader(surface: str, user_groups: Reader | Iterable[str] | str | None, *,
                   documents: Mapping[str, Document] | Iterable[Document],
                   chunks: Iterable[Chunk] | None = None) -> Reader:
    """The reader ``surface`` shows text to. ``user_groups=None`` where the corpus declares
    access raises :class:`ReaderRequired`; where it does not, None is everyone."""
    if user_groups is not None:
        return Reader.of(user_groups)
    declared = declared_access(documents, chunks)
    if declared is not None:
        raise ReaderRequired(
            f"{surface}: {declared!r} declares access (acl), so name who reads: "
            "user_groups=['engineering'] (the reader's groups, [] for none), or "
            "user_groups=UNRESTRICTED (workbench.corpus) to show every document to an evaluator")
    return UNRESTRICTED


def _restricting(chunk: Chunk, doc: Document | None) -> list[frozenset[str]]:
    """The ACLs that restrict ``chunk`` (its document's, its own), everyone's left out."""
    acls = (doc.acl if doc is not None else (), acl_of(chunk.metadata, f"chunk {chunk.id!r}"))
    return [frozenset(acl) for acl in acls if acl and EVERYONE not in acl]


def reaches_readers_of(chunk: Chunk, doc: Document | None, target: Chunk,
                       target_doc: Document | None) -> bool:
    """Whether everyone who may read ``target`` may read ``chunk`` too: each ACL restricting
    ``chunk`` (its document's, its own) holds every group of some ACL restricting the target
    (a public chunk reaches everyone; a restricted one never reaches a public target's
    readers). What a synthetic item may borrow from its target's neighbours."""
    theirs = _restricting(target, target_doc)
    return all(any(t <= mine for t in theirs) for mine in _restricting(chunk, doc))


#: Every surface that shows, writes, exports or sends document text, and what it outputs.
#: Each reads documents through :func:`require_reader`.
SURFACES: dict[str, str] = {
    "workbench.generation.context:assemble_context": "the prompt's passages",
    "workbench.generation.context:passthrough_context": "the prompt's passages, as retrieved",
    "workbench.generation.oracle:run_generation_eval": "prompts sent to the generator",
    "workbench.generation.oracle:context_swap": "prompts sent to the generator",
    "workbench.generation.oracle:oracle_context": "the gold passages as a context",
    "workbench.generation.position:handbook_position_items": "passages placed in prompts",
    "workbench.synthetic.questions:generate_synthetic": "targets and distractors sent to "
                                                         "the question writer; items written",
    "workbench.synthetic.questions:sample_chunks": "target chunks for the question writer",
    "workbench.synthetic.questions:find_distractors": "distractor chunks for the writer",
    "workbench.evaluation.failures:worst_failures": "retrieved text, evidence windows",
    "workbench.evaluation.evaluation:Evaluation.worst": "retrieved text, evidence windows",
    "workbench.widgets.trace_viewer_worst:worst_traces": "retrieved text, evidence windows",
    "workbench.diagnose.traces:trace_question": "the prompt sent, the trace recorded",
    "workbench.widgets.trace_viewer:trace_viewer_html": "trace HTML: passages, facts",
    "workbench.widgets.trace_viewer:TraceViewer": "trace widget: passages, facts",
    "workbench.widgets.trace_viewer:worst_traces_html": "trace HTML: passages, facts",
    "workbench.report.html:render_report": "report HTML",
    "workbench.report.html:write_report": "report file",
    "workbench.widgets.chunk_preview:chunk_preview_html": "a document with its chunks",
    "workbench.widgets.chunk_preview:ChunkPreview": "a document with its chunks",
    "workbench.widgets.chunk_preview:ChunkPreviewPair": "a document under two chunkings",
    "workbench.widgets.labeller:Labeller": "search hits, the document view, saved quotes",
    "workbench.widgets.labeller:Labeller.for_review": "the document view of drifted spans",
    "workbench.golden.labelling:LabellingSession": "quotes saved into the golden set",
    "workbench.golden.labelling:make_item": "a golden item's quotes",
    "workbench.golden.labelling:span_warnings": "warnings quoting other documents",
    "workbench.golden.agreement:agreement": "two labellers' questions, quotes side by side",
    "workbench.golden.exchange:to_label_studio": "a Label Studio task file",
    "workbench.golden.exchange:to_argilla": "an Argilla record file",
    "workbench.widgets.realism_scorer:RealismScorer": "synthetic questions and passages",
    "workbench.widgets.realism_scorer:realism_scorer_html": "synthetic questions, passages",
}

#: Public callables that take a corpus, documents or chunks and output no document text to
#: a person, a file or a model; each group says why.
NOT_SURFACES: dict[str, str] = {
    # Loading, chunking, locating and indexing: they build the nouns the surfaces read, and
    # every chunk keeps its document (and so its acl) for the surfaces to check.
    **dict.fromkeys([
        "workbench.corpus.loaders:load_documents", "workbench.corpus.admission:require_access",
        "workbench.corpus.extract:refuse_lookalike_sidecars",
        "workbench.corpus.locate:Locator", "workbench.corpus.locate:raw_texts",
        "workbench.corpus.location_report:LocationReport.of",
        "workbench.corpus.location_report:LocatedChunks", "workbench.corpus.types:Corpus",
        "workbench.chunking.base:chunk_corpus", "workbench.chunking.base:ChunkerBase.chunk_corpus",
        "workbench.golden.datasets:load_dataset", "workbench.golden.datasets:dataset_kind",
        # the tools' exports hold what a reader was sent (to_label_studio / to_argilla) and
        # labelled; the items keep their evidence's access wherever they are shown
        "workbench.golden.label_import:from_label_studio",
        "workbench.golden.label_import:from_argilla",
        "workbench.golden.labelling:FactIndex", "workbench.retrieval.bm25:bm25_for",
        "workbench.golden.reanchor:reanchor", "workbench.golden.golden_set:GoldenSet.anchor",
        "workbench.golden.golden_set:add_case",
        "workbench.generation.chunk_context:contextualize",
        "workbench.generation.chunk_context:ContextCost",
        "workbench.generation.chunk_context:ContextCost.static_header",
        "workbench.retrieval.adapters:wrap",
        "workbench.retrieval.adapters.chroma:from_chroma",
        "workbench.retrieval.adapters.chroma:collection_chunks",
        "workbench.retrieval.adapters.langchain:from_langchain",
        "workbench.retrieval.adapters.langchain:chunks_from_documents",
        "workbench.retrieval.adapters.llamaindex:from_llamaindex",
        "workbench.retrieval.adapters.llamaindex:chunks_from_nodes",
        "workbench.retrieval.callable_retriever:CallableRetriever",
        "workbench.retrieval.callable_retriever:production_chunks",
        "workbench.retrieval.production_hits:HitLocator",
        "workbench.retrieval:make_retriever", "workbench.retrieval.bm25:BM25Retriever",
        "workbench.retrieval.dense:DenseRetriever", "workbench.retrieval.expand:NeighbourExpander",
        "workbench.retrieval.filtered:chunk_fields",
        "workbench.retrieval.filtered:FilteredRetriever",
        "workbench.retrieval.rerank:chunk_texts", "workbench.retrieval.rerank:CrossEncoderReranker",
        "workbench.retrieval.rerank:EncoderReranker",
        "workbench.retrieval.rerank:RerankedRetriever",
        "workbench.evaluation.run_files:read_run", "workbench.evaluation.run_files:read_log",
        "workbench.evaluation.run_files:read_chunks", "workbench.evaluation.run_log:LogLocator",
        "workbench.evaluation.run_log:inspect_log",
        "workbench.cli.retrieval:chunker_spec", "workbench.cli.retrieval:chunk_with_progress",
        "workbench.cli.retrieval:pick_encoder", "workbench.cli.retrieval:build_retriever",
        "workbench.cli.retrieval:reanchored",
    ], "builds what the surfaces read"),
    # The reader view itself: it applies a reader (and refuses without one) for a surface.
    **dict.fromkeys([
        "workbench.corpus.reader:Reader.documents", "workbench.corpus.reader:Reader.chunks",
        "workbench.corpus.reader:declared_access", "workbench.corpus.reader:require_reader",
        "workbench.widgets.trace_viewer:viewed_as",
    ], "the reader view"),
    # Scoring: ids, offsets and numbers only (a table of ranks or scores shows no text).
    **dict.fromkeys([
        "workbench.chunking.diagnostics:split_spans", "workbench.chunking.diagnostics:split_rate",
        "workbench.chunking.diagnostics:near_duplicate_pairs",
        "workbench.chunking.diagnostics:diagnose_chunking",
        "workbench.metrics.evidence:ChunkIndex", "workbench.corpus.chunk_table:ChunkTable",
        "workbench.corpus.chunk_table:ChunkTable.of", "workbench.corpus.chunk_table:ChunkList",
        "workbench.metrics.relevance:Relevance", "workbench.widgets.labeller:propose_span",
        "workbench.metrics.spans:span_precision_omega", "workbench.metrics.spans:RangeIndex",
        "workbench.golden.golden_set:GoldenSet.problems",
        "workbench.golden.golden_set:GoldenSet.validate",
        "workbench.golden.golden_set:GoldenSet.doc_qrels",
        "workbench.golden.items:GoldenItem.doc_ids", "workbench.golden.items:GoldenItem.doc_grades",
        "workbench.golden.items:can_read_item",
        "workbench.evaluation.scoring:evaluate",
        "workbench.evaluation.filtered:compare_filtered",
        "workbench.evaluation.pipeline:dataset_defaults",
        "workbench.evaluation.pipeline:Pipeline.for_dataset",
        "workbench.evaluation.pipeline:PipelineRun", "workbench.evaluation.pipeline:run_pipeline",
        "workbench.evaluation.run_files:write_run", "workbench.evaluation.pipeline:gate_config",
        "workbench.sweep.result:first_relevant_rank_table", "workbench.sweep.runner:run_sweep",
        "workbench.generation.rewrite:evaluate_rewrites",
        "workbench.synthetic.measures:overlap_table",
        "workbench.diagnose.diagnosis:trace_relevance",
        "workbench.diagnose.diagnosis:diagnose_trace",
        "workbench.diagnose.diagnosis:diagnosis_table",
        "workbench.report.html:restricted_ids",
    ], "ids, offsets and numbers only"),
    # Traces and cases built from a recorded trace: ids and offsets (the text is re-read
    # through a surface: the trace viewer, the report).
    **dict.fromkeys([
        "workbench.diagnose.traces:make_trace", "workbench.diagnose.traces:traces_from_result",
        "workbench.diagnose.growth:case_from_bug_report",
        "workbench.diagnose.growth:case_from_trace",
    ], "records ids and offsets; text is shown through the trace viewer or the report"),
}

