"""The worst failures among traces: :func:`worst_traces` ranks the traced questions by
:func:`workbench.evaluation.failures.worst_failures` (the one definition of "worst") over
the retrieval each trace recorded (:func:`traced_run`). ``TraceViewer``'s "worst first"
order and :func:`~workbench.widgets.trace_viewer.worst_traces_html` read this ranking.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from workbench.corpus import Chunk, Document
from workbench.corpus.reader import Reader
from workbench.diagnose import Trace
from workbench.evaluation import Run
from workbench.evaluation.failures import Failures, worst_failures
from workbench.golden import GoldenItem
from workbench.metrics import DEFAULT_EVIDENCE_THRESHOLD

__all__ = ["traced_run", "worst_traces"]


def traced_run(traces: Iterable[Trace]) -> Run:
    """The retrieval the traces recorded (ranked hits; expansions and oracle context left
    out), as a Run; a question traced twice keeps its first trace."""
    ranked: dict[str, list[str]] = {}
    for t in traces:
        hits = sorted((h for h in t.retrieved if h.source == "retrieval"), key=lambda h: h.rank)
        ranked.setdefault(t.qid, [h.chunk_id for h in hits])
    return Run.from_ranked(ranked, "traced")


def worst_traces(traces: Sequence[Trace], golden: Iterable[GoldenItem],
                 chunks: Sequence[Chunk], *, n: int = 10, k: int = 5,
                 evidence_threshold: float = DEFAULT_EVIDENCE_THRESHOLD,
                 documents: Mapping[str, Document] | None = None,
                 user_groups: Reader | Iterable[str] | str | None = None) -> Failures:
    """The ``n`` worst failing traced questions at ``k``, worst first, as ``user_groups``
    may see them (:func:`~workbench.evaluation.failures.worst_failures`)."""
    traced = {t.qid for t in traces}
    items = [i for i in golden if i.qid in traced]
    return worst_failures(traced_run(traces), items, chunks, n=n, k=k,
                          evidence_threshold=evidence_threshold, documents=documents,
                          user_groups=user_groups)
