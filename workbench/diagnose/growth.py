"""Growing the golden set from incidents: a bug report or a traced question becomes a golden
item whose evidence is located in the corpus by quote (:meth:`~workbench.corpus.Span.locate`:
an absent or ambiguous quote is refused). Append it with :func:`workbench.golden.add_case`."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.corpus import Document, Span
from workbench.diagnose.traces import Trace
from workbench.golden import Evidence, GoldenItem
from workbench.io import WorkbenchError

__all__ = ["case_from_bug_report", "case_from_trace"]


def case_from_bug_report(question: str, quotes: Sequence[tuple[str, str]],
                         must_mention: Sequence[str] = (), *, corpus: Mapping[str, Document],
                         qid: str | None = None, category: str = "uncategorised",
                         source: str = "real", answerable: bool = True,
                         **extra: Any) -> GoldenItem:
    """A golden item from a bug report: each ``(doc_id, quote)`` is located in the corpus
    with :meth:`Span.locate` (an absent or ambiguous quote is refused). Append it with
    :func:`workbench.golden.add_case`. ``qid`` defaults to ``real-`` + a hash of the
    question; ``extra`` fields (e.g. ``reported="2026-03-02"``) are kept."""
    evidence = []
    for doc_id, quote in quotes:
        doc = corpus.get(doc_id)
        if doc is None:
            raise WorkbenchError(f"document {doc_id!r} is not in the corpus: quote evidence from "
                             "one of its documents")
        span = Span.locate(doc, quote)
        evidence.append(Evidence(span.doc_id, span.start, span.end, span.text_in(doc)))
    if answerable and not evidence:
        raise WorkbenchError("an answerable case needs at least one (doc_id, quote) of evidence")
    digest = hashlib.sha1(question.strip().casefold().encode("utf-8")).hexdigest()[:8]
    return GoldenItem(qid or f"real-{digest}", question.strip(), evidence=tuple(evidence),
                      answer_must_mention=tuple(must_mention), category=category,
                      source=source, answerable=answerable, extra=dict(extra))


def case_from_trace(trace: Trace, quote: str, doc_id: str, *, corpus: Mapping[str, Document],
                    must_mention: Sequence[str] = (), category: str | None = None,
                    source: str = "real", qid: str | None = None, **extra: Any) -> GoldenItem:
    """A golden item for a traced question (its qid, query and, by default, category),
    its evidence located by ``quote``."""
    return case_from_bug_report(trace.query, [(doc_id, quote)], must_mention, corpus=corpus,
                                qid=qid or trace.qid,
                                category=category or trace.category or "uncategorised",
                                source=source, **extra)
