"""What each retrieval metric means, declared in one place: its name and cutoff, the kinds of
relevance it is defined for, its trec_eval name, a one-line summary and the
threshold that makes something relevant. How a metric is computed lives elsewhere
(:mod:`~workbench.metrics.trec` for chunk-id and document relevance,
:mod:`~workbench.metrics.evidence` for evidence spans, :mod:`~workbench.metrics.spans` for
Chroma's character-span measures); every caller asks for metrics by name through
:func:`parse_metric`.

Names are owned here too, parsed and written in one place: a metric's canonical name is
``kind@k`` or its uncut name (``recall@5``, ``mrr``, ``map``; :attr:`Metric.name`); a
*template* names a metric at a k given later (``recall@k``; ``R@{k}`` and ``P_{k}`` read the
same): :func:`canonical_name` writes either, :func:`at_k` fills a template in,
:data:`DEFAULT_METRICS` are the headline templates and :func:`default_metrics` them at a k.
A name that is not a metric is one :class:`MetricNameError` (a ``ValueError``) listing the
valid forms. Relevance labels are written by :func:`relevance_label` and read back by
:func:`parse_relevance_label`.

Relevance kinds (every number carries one, as a label such as ``evidence>=0.75``):

``evidence``
    The item has evidence spans. The unit is the span; a span is found at the first rank
    where the union of the retrieved chunks holds ``threshold`` of its non-whitespace
    characters (default :data:`DEFAULT_EVIDENCE_THRESHOLD`). Independent of the chunking.
``chunk_id``
    The item is labelled with chunk ids (the seed format, graded ``relevance``) or comes
    from TREC/BEIR qrels: trec_eval semantics, relevant when ``grade >= threshold``
    (default 1, trec_eval's ``-l``).
``document``
    Documents are ranked where their best chunk ranks and judged with trec_eval semantics
    (the documents holding an item's evidence or labelled chunks are relevant).
"""

from __future__ import annotations

import math
import re
from dataclasses import KW_ONLY, dataclass
from typing import Literal

from workbench.io import WorkbenchError

__all__ = [
    "DEFAULT_EVIDENCE_THRESHOLD",
    "DEFAULT_GRADE_THRESHOLD",
    "DEFAULT_METRICS",
    "KINDS",
    "RELEVANCE_KINDS",
    "Metric",
    "MetricKind",
    "MetricNameError",
    "at_k",
    "canonical_name",
    "default_metrics",
    "parse_metric",
    "parse_relevance_label",
    "relevance_label",
    "trec_name",
]

# Measured (benchmarks/evidence_threshold.py): on the handbook (2,112 span x ranking x k cases
# over 11 chunkings) 0.75 agrees best with "every must-mention fact the span holds was
# retrieved" among the thresholds that never call a span found while a fact is cut off.
DEFAULT_EVIDENCE_THRESHOLD = 0.75
DEFAULT_GRADE_THRESHOLD = 1
RELEVANCE_KINDS = ("evidence", "chunk_id", "document")
_RANKED = frozenset(RELEVANCE_KINDS)
_EVIDENCE = frozenset({"evidence"})
_IDS = frozenset({"chunk_id", "document"})

Cutoff = Literal["required", "optional", "none"]
#: The headline metrics, as templates at the k the generator receives.
DEFAULT_METRICS = ("recall@k", "precision@k", "hit_rate@k", "mrr@k", "ndcg@k")


class MetricNameError(WorkbenchError):
    """A metric name that is not one (the message names it and lists the valid forms)."""


@dataclass(frozen=True)
class MetricKind:
    """The conventions of one kind of metric."""

    kind: str
    cutoff: Cutoff
    relevance: frozenset[str]
    _: KW_ONLY
    trec_cut: str | None
    trec_uncut: str | None
    summary: str
    uncut_name: str = ""
    needs_chunking: bool = False  # under evidence relevance: the ideal needs every chunk

    def __post_init__(self) -> None:
        if not self.uncut_name:
            object.__setattr__(self, "uncut_name", self.kind)


KINDS: dict[str, MetricKind] = {k.kind: k for k in (
    MetricKind("recall", "required", _RANKED, trec_cut="recall_{k}", trec_uncut=None,
               summary="share of the relevant units (spans, chunks, documents) found in the top k"),
    MetricKind("precision", "required", _RANKED, trec_cut="P_{k}", trec_uncut=None,
               summary="useful ranks in the top k divided by k (even when fewer were retrieved)"),
    MetricKind("hit_rate", "required", _RANKED, trec_cut="success_{k}", trec_uncut=None,
               summary="1 if anything relevant is found in the top k; not recall: one of four "
               "relevant units found gives hit rate 1 and recall 0.25"),
    MetricKind("mrr", "optional", _RANKED, trec_cut=None, trec_uncut="recip_rank",
               summary="1 / the first rank at which something relevant is found (0 if none)"),
    MetricKind("ndcg", "optional", _RANKED, trec_cut="ndcg_cut_{k}", trec_uncut="ndcg",
               summary="DCG with linear gain and log2(rank + 1) discount over the best DCG "
               "possible",
               needs_chunking=True),
    MetricKind("ap", "optional", _RANKED, trec_cut="map_cut_{k}", trec_uncut="map",
               summary="average precision: precision at each rank where a relevant unit is found, "
               "summed and divided by the number of relevant units", uncut_name="map"),
    MetricKind("r_precision", "none", _RANKED, trec_cut=None, trec_uncut="Rprec",
               summary="recall at k = the number of relevant units"),
    MetricKind("ndcg_retrieved", "required", _IDS, trec_cut=None, trec_uncut=None,
               summary="'retrieved-only' nDCG: the ideal re-sorts the retrieved grades "
               "(not trec_eval)"),
    MetricKind("coverage", "required", _EVIDENCE, trec_cut=None, trec_uncut=None,
               summary="share of the evidence's non-whitespace characters held by the top k "
               "(Chroma's token-level recall, in characters); no threshold"),
    MetricKind("span_precision", "required", _EVIDENCE, trec_cut=None, trec_uncut=None,
               summary="evidence characters in the top k over all retrieved characters, overlaps "
               "counted each time (Chroma's precision)"),
    MetricKind("span_iou", "required", _EVIDENCE, trec_cut=None, trec_uncut=None,
               summary="evidence characters retrieved over retrieved plus missed characters "
               "(Chroma's IoU)"),
    MetricKind("span_precision_omega", "none", _EVIDENCE, trec_cut=None, trec_uncut=None,
               summary="IoU if every chunk meeting the evidence were retrieved: a property of the "
               "chunking alone (Chroma's PrecisionΩ)", needs_chunking=True),
)}


@dataclass(frozen=True)
class Metric:
    """One metric: a ``kind`` of :data:`KINDS` and an optional rank cutoff ``k``.
    Build it with :func:`parse_metric`; ``name`` is canonical (``recall@5``, ``map``)."""

    name: str
    kind: str
    k: int | None = None

    @classmethod
    def of(cls, kind: str, k: int | None = None) -> Metric:
        spec = KINDS.get(kind)
        if spec is None:
            raise MetricNameError(f"unknown metric kind {kind!r}; valid forms: {VALID_FORMS}")
        if spec.cutoff == "required" and k is None:
            raise MetricNameError(f"{kind} needs a cutoff, e.g. {kind}@10")
        if spec.cutoff == "none" and k is not None:
            raise MetricNameError(f"{kind} takes no cutoff")
        if k is not None and k < 1:
            raise MetricNameError(f"the cutoff of {kind} must be a positive integer, got {k}")
        return cls(name=spec.uncut_name if k is None else f"{kind}@{k}", kind=kind, k=k)

    @property
    def spec(self) -> MetricKind:
        return KINDS[self.kind]

    def defined_for(self, relevance: str) -> bool:
        return relevance in self.spec.relevance


_ALIASES = {
    "precision": "precision", "p": "precision", "recall": "recall", "r": "recall",
    "hit_rate": "hit_rate", "hit": "hit_rate", "success": "hit_rate", "mrr": "mrr",
    "rr": "mrr", "ndcg": "ndcg", "ndcg_retrieved": "ndcg_retrieved", "ap": "ap", "map": "ap",
    "r_precision": "r_precision", "rprec": "r_precision", "coverage": "coverage",
    "span_recall": "coverage", "span_precision": "span_precision", "span_iou": "span_iou",
    "iou": "span_iou", "span_precision_omega": "span_precision_omega",
}
_TREC_CUT = {"P": "precision", "recall": "recall", "success": "hit_rate",
             "ndcg_cut": "ndcg", "map_cut": "ap"}
_TREC_PLAIN = {"recip_rank": "mrr", "map": "ap", "ndcg": "ndcg", "Rprec": "r_precision"}
_OURS_RE = re.compile(r"([a-z_]+?)(?:@(-?\d+))?")
_TREC_RE = re.compile(r"(P|recall|success|ndcg_cut|map_cut)_(-?\d+)")
VALID_FORMS = (
    "precision@k (P@k), recall@k (R@k), hit_rate@k (hit@k), mrr, mrr@k, ndcg, ndcg@k, map, "
    "ap@k, r_precision, ndcg_retrieved@k, coverage@k (span_recall@k), span_precision@k, "
    "span_iou@k, span_precision_omega; trec_eval names P_k, recall_k, success_k, ndcg_cut_k, "
    "map_cut_k, recip_rank, map, ndcg, Rprec (k a positive integer)"
)


def parse_metric(name: str | Metric) -> Metric:
    """Parse ``"recall@5"``, ``"P@5"``, ``"ndcg_cut_10"``, ``"recip_rank"``, ``"coverage@5"``...
    into a :class:`Metric`; a ValueError lists the valid forms."""
    if isinstance(name, Metric):
        return name
    if not isinstance(name, str):
        raise MetricNameError(f"a metric name must be a string such as 'recall@5', "
                              f"not {type(name).__name__}")
    return _parse(name.strip(), name)


def _parse(text: str, name: str) -> Metric:
    """``text`` as a metric; errors name ``name`` (what the caller wrote)."""
    if m := _TREC_RE.fullmatch(text):
        return Metric.of(_TREC_CUT[m[1]], int(m[2]))
    if text in _TREC_PLAIN:
        return Metric.of(_TREC_PLAIN[text])
    m = _OURS_RE.fullmatch(text.lower())
    if m is None or m[1] not in _ALIASES:
        raise MetricNameError(f"unknown metric {name!r}; valid forms: {VALID_FORMS}")
    return Metric.of(_ALIASES[m[1]], None if m[2] is None else int(m[2]))


def _template_base(text: str) -> str | None:
    """A template at k=1 (``recall@k`` -> ``recall@1``, ``P_{k}`` -> ``P_1``), else None."""
    if "{k}" in text:
        return text.replace("@{k}", "@1").replace("{k}", "1")
    if text.lower().endswith("@k"):
        return text[:-2] + "@1"
    return None


def canonical_name(name: str | Metric) -> str:
    """The canonical name of a metric (``P@5`` -> ``precision@5``, ``recip_rank`` -> ``mrr``)
    or of a template (``R@k``, ``recall@{k}``, ``recall_{k}`` -> ``recall@k``)."""
    if isinstance(name, str) and (base := _template_base(name.strip())) is not None:
        metric = _parse(base, name)
        if metric.k is None:
            raise MetricNameError(f"{name!r} is not a metric at k; valid forms: {VALID_FORMS}")
        return f"{metric.kind}@k"
    return parse_metric(name).name


def at_k(name: str | Metric, k: int) -> str:
    """A template at ``k`` (``recall@k`` -> ``recall@5``); a concrete name stays itself,
    canonical."""
    canonical = canonical_name(name)
    return Metric.of(canonical[:-2], k).name if canonical.endswith("@k") else canonical


def default_metrics(k: int) -> list[str]:
    """The headline metrics (:data:`DEFAULT_METRICS`) at the k the generator receives."""
    return [at_k(m, k) for m in DEFAULT_METRICS]


def trec_name(metric: str | Metric) -> str:
    """trec_eval's measure name for a metric (``precision@5`` -> ``P_5``, ``mrr`` ->
    ``recip_rank``, ``hit_rate@5`` -> ``success_5``). ValueError if trec_eval has none
    (``mrr@k``, ``ndcg_retrieved@k``, the evidence-only metrics)."""
    m = parse_metric(metric)
    fmt = m.spec.trec_uncut if m.k is None else m.spec.trec_cut
    if fmt is None:
        raise WorkbenchError(f"{m.name} has no trec_eval equivalent")
    return fmt.format(k=m.k)


def relevance_label(kind: str, threshold: float) -> str:
    """The label every number carries: ``evidence>=0.75``, ``chunk_id>=1``, ``document>=1``."""
    if kind not in RELEVANCE_KINDS:
        raise WorkbenchError(f"relevance must be one of {RELEVANCE_KINDS}, not {kind!r}")
    value = f"{threshold:g}" if kind == "evidence" else f"{int(threshold)}"
    return f"{kind}>={value}"


def parse_relevance_label(label: str) -> tuple[str, float]:
    """``(kind, threshold)`` of a label written by :func:`relevance_label`
    (``evidence>=0.75`` -> ``("evidence", 0.75)``); ValueError for anything else."""
    kind, sep, value = label.partition(">=")
    try:
        threshold = float(value)
    except ValueError:
        threshold = math.nan
    if not sep or kind not in RELEVANCE_KINDS or math.isnan(threshold) \
            or relevance_label(kind, threshold) != label:
        raise WorkbenchError(f"{label!r} is not a relevance label: give kind>=threshold with kind "
                         f"one of {', '.join(RELEVANCE_KINDS)} (e.g. evidence>=0.75)")
    return kind, threshold
