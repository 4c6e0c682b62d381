"""What a logged run's hits say about themselves: their offset convention and cut texts.

:func:`inspect_log` reads a run log once, recording every hit that reaches the documents
(text, offsets, the raw file its metadata points at) through the same hit rules as scoring
(:class:`~workbench.retrieval.CallableRetriever`), then detects the offset convention from
the texts (:func:`~workbench.corpus.conventions.detect_convention`) and texts cut by the
logger (:func:`~workbench.corpus.truncation.detect_truncation`). :class:`LogLocator` then
locates the hits under that convention, cut texts by their prefix, extended to the
production chunk that starts there when that chunking is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from workbench.corpus import Chunk, Document, LocateError, Location, Locator
from workbench.corpus.conventions import (
    BODY,
    RAW,
    Convention,
    Detection,
    OffsetSample,
    detect_convention,
    parse_convention,
)
from workbench.corpus.offsets import find_spans, matching_form
from workbench.corpus.truncation import Truncation, detect_truncation
from workbench.io import WorkbenchError
from workbench.retrieval import CallableRetriever

__all__ = ["LogLocator", "LogReport", "inspect_log"]


@dataclass
class LogReport:
    """What reading a log found: the ``convention`` its offsets were read in (and the
    ``detection`` when it was detected), the ``truncation`` of its texts (None: not cut),
    and, once read, how many cut texts were located by their prefix, ``extended`` to the
    production chunk, or kept as the prefix."""

    convention: Convention
    detection: Detection | None = None
    truncation: Truncation | None = None
    cut: int = 0
    _: KW_ONLY
    extended: int = 0
    notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        """The report as note lines (for the CLI)."""
        out = []
        if self.detection is not None and self.detection.checked:
            out.append(f"run offsets: {self.detection.message}")
        if self.truncation is not None:
            kept = self.cut - self.extended
            out.append(f"run texts: {self.truncation}; {self.cut} located by their prefix, "
                       f"{self.extended} extended to the production chunk, {kept} kept as the "
                       "prefix" + ("" if not kept else
                                   " (give the production chunking, --chunks, to extend them)"))
        return out + self.notes


class LogLocator(Locator):
    """A :class:`~workbench.corpus.Locator` for a log: offsets are read in ``convention``
    (into ``files``, ``{doc_id: raw file text}``, for the file references) and mapped to the
    document text; texts cut as ``truncation`` says are located by their prefix and
    extended to the one chunk of ``extend_to`` that starts there and begins with it."""

    def __init__(self, documents: Mapping[str, Document] | Iterable[Document], *,
                 files: Mapping[str, str] | None = None, convention: Convention = BODY,
                 truncation: Truncation | None = None, extend_to: Iterable[Chunk] | None = None,
                 report: LogReport | None = None):
        super().__init__(documents)
        self.files = dict(files or {})
        self.convention = convention
        self.truncation = truncation
        self.report = report if report is not None else LogReport(convention, None, truncation)
        self._starts: dict[tuple[str, int], list[Chunk]] = {}
        for c in extend_to or ():
            self._starts.setdefault((c.doc_id, c.start), []).append(c)

    def locate(self, text: str | None = None, doc_id: str | None = None,
               start: int | None = None, end: int | None = None,
               *, raw: str | None = None, after: int | None = None) -> Location:
        s, e = start, end
        if start is not None and doc_id is not None:
            doc = self.document(doc_id)
            try:
                s, e = self.convention.to_body(doc, raw if raw is not None
                                               else self.files.get(doc_id), start, end)
            except LocateError:
                if text is None:
                    raise
                s = e = None  # the text still locates the hit
        if text is None or self.truncation is None or not self._cut(text, doc_id):
            return super().locate(text, doc_id, s, e, after=after)
        self.report.cut += 1
        prefix = self.truncation.prefix(text)
        if doc_id is not None and s is not None and e is not None and e > s:
            doc = self.document(doc_id)
            if matching_form(doc.text[s:e]).startswith(matching_form(prefix)):
                self.report.extended += int(e - s > len(prefix))
                return Location(doc_id, s, e, "offsets")
        try:
            found = super().locate(prefix, doc_id, s, None)
        except LocateError as exc:
            found = self._among_chunks(prefix, doc_id, exc)
        chunk = self._chunk_at(found.doc_id, found.start, prefix)
        if chunk is None:
            return found
        self.report.extended += int(chunk.end > found.end)
        return Location(found.doc_id, chunk.start, chunk.end, found.how)

    def _cut(self, text: str, doc_id: str | None) -> bool:
        assert self.truncation is not None
        if not self.truncation.is_cut(text):
            return False
        if self.truncation.mark and doc_id in self.documents:  # a text that ends with "..."
            return text not in self.documents[doc_id].text
        return True

    def _chunk_at(self, doc_id: str, start: int, prefix: str) -> Chunk | None:
        want = matching_form(prefix)
        text = self.document(doc_id).text
        fits = {(c.start, c.end): c for c in self._starts.get((doc_id, start), ())
                if matching_form(text[c.start:c.end]).startswith(want)}
        return next(iter(fits.values())) if len(fits) == 1 else None

    def _among_chunks(self, prefix: str, doc_id: str | None, exc: LocateError) -> Location:
        """A prefix found several times in its document: the one occurrence a production
        chunk starts at, else the locator's error."""
        if exc.kind != "ambiguous" or doc_id is None or not self._starts:
            raise exc
        spans = find_spans(self.document(doc_id).text, prefix, limit=1000)[1]
        at = [s for s in spans if self._chunk_at(doc_id, s[0], prefix) is not None]
        if len(at) != 1:
            raise exc
        return Location(doc_id, at[0][0], at[0][1], "exact")


class _Recorder(Locator):
    """Records each hit the resolver would locate and locates none of them."""

    def __init__(self, documents: Mapping[str, Document] | Iterable[Document]):
        super().__init__(documents)
        self.where = ""
        self.hits: list[tuple[str | None, str | None, int | None, int | None, str | None, str]] = []

    def locate(self, text: str | None = None, doc_id: str | None = None,
               start: int | None = None, end: int | None = None,
               raw: str | None = None,
               after: int | None = None,  # noqa: ARG002 - Locator's signature
               ) -> Location:
        self.hits.append((text, doc_id, start, end, raw, self.where))
        raise LocateError("missing", "recorded")


def inspect_log(lines: Callable[[], Iterator[tuple[str, Any, list[Any]]]],
                documents: Mapping[str, Document] | Iterable[Document], *,
                files: Mapping[str, str] | None = None, offsets: str | Convention = "auto",
                truncated: str = "auto", scores: str = "similarity") -> LogReport:
    """Detect a log's offset convention (``offsets="auto"``; else the one declared) and its
    cut texts (``truncated="auto"``; ``"off"`` never). ``lines`` yields ``(where, row,
    hits)``. Raises ``ValueError`` when the convention is ambiguous or no convention fits
    (naming the hit)."""
    if truncated not in ("auto", "off"):
        raise WorkbenchError(f"truncated must be 'auto' or 'off', not {truncated!r}")
    declared = None if offsets == "auto" else parse_convention(offsets)
    recorder = _Recorder(documents)
    ranker = CallableRetriever(lambda _q: [], "log", documents=recorder, scores=scores,
                               unlocated="keep")
    for where, row, items in lines():
        recorder.where = where
        if row.get("offsets") is not None:
            declared = _declared(where, row["offsets"], declared)
        ranker.rank(items, None, where)
    truncation = None
    if truncated == "auto":
        truncation = detect_truncation(t for t, *_ in recorder.hits if t is not None)
    if declared is not None:
        return LogReport(declared, None, truncation)
    files = dict(files or {})
    samples = []
    for text, doc_id, start, end, raw, where in recorder.hits:
        if start is None or doc_id is None or doc_id not in recorder.documents:
            continue
        cut = truncation is not None and text is not None and truncation.is_cut(text)
        if cut and truncation is not None and text is not None:
            text = truncation.prefix(text)
        samples.append(OffsetSample(recorder.documents[doc_id], text, start, end, where=where,
                                    raw=raw if raw is not None else files.get(doc_id), prefix=cut))
    detection = detect_convention(samples)
    if detection.convention is None:
        raise WorkbenchError(detection.message)
    return LogReport(detection.convention, detection, truncation)


def _declared(where: str, value: Any, before: Convention | None) -> Convention:
    """The convention a line declares (``"offsets"``, as :func:`write_run` writes it); it
    must agree with the one declared before (by an earlier line or the caller)."""
    if not isinstance(value, str):
        raise WorkbenchError(f"{where}: field 'offsets' must be a convention string such as "
                         f"{BODY.spec!r}")
    try:
        mine = parse_convention(value)
    except ValueError as exc:
        raise WorkbenchError(f"{where}: field 'offsets': {exc}") from None
    if before is not None and mine != before:
        raise WorkbenchError(f"{where}: field 'offsets' declares {mine.spec} but {before.spec} "
                         "was declared (by an earlier line or --run-offsets): one convention "
                         "per log")
    return mine


def default_offsets(raw: Mapping[str, str] | None, offsets: str | Convention | None
                    ) -> str | Convention:
    """``offsets`` as given; None is :data:`~workbench.corpus.conventions.RAW` when raw
    files are given (offsets into them, as before detection existed), else ``auto``."""
    if offsets is not None:
        return offsets
    return RAW if raw is not None else "auto"
