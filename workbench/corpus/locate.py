"""Locating production chunks in the documents: text or offsets -> a span of ``Document.text``.

A production system returns, per hit, its own chunk text (LangChain ``page_content``, a
Chroma document, a LlamaIndex node) and sometimes offsets into the file it chunked. A
:class:`Locator` turns that into a span of the loaded document, in this order:

1. **offsets** that point at the text: ``start``/``end`` given with the text, and the text is
   there (exact, or equal after normalisation);
2. **exact**: the text occurs once in the document (``str.find``);
3. **normalised**: the text occurs once after both sides are normalised (:func:`matching_form`:
   NFC, NFKC, zero-width characters and soft hyphens removed, each whitespace run one space,
   ends stripped). The span maps back to code points of the original text;
4. **front_matter**: the text begins with the file's YAML front matter (``---`` lines), which
   the loader strips from ``Document.text``; the rest must then start the body;
5. **aligned**: the text of another extraction of the same file (pypdf, BeautifulSoup, a
   LlamaIndex reader: other whitespace, hyphenation, ligatures, page furniture), aligned in
   the normalised document (:func:`~workbench.corpus.align.align`) with a score >= ``align``
   (default :data:`~workbench.corpus.align.ALIGN_THRESHOLD`; ``align=None`` turns it off).
   Texts under :data:`~workbench.corpus.align.MIN_ALIGN_CHARS` characters, or that align as
   well elsewhere, are never aligned. ``Location.score`` is the alignment's score.

Several occurrences are *ambiguous*: an offset hint resolves them only when exactly one
occurrence starts at the hinted position, or ``after=`` is given (a chunking listed in
document order: the first occurrence starting at or after it); otherwise
:class:`LocateError` says how many there are and where. Nothing is ever guessed. Offsets
alone (no text) are taken as offsets into ``Document.text``; offsets into the raw file
(front matter, BOM, CRLF line ends, non-NFC text) are mapped to the body by
:class:`RawOffsets` when the raw text is given (``raw={doc_id: raw_text}``, or
:func:`raw_texts` for a folder).

Conventions: offsets are half-open code-point ranges; a located span never starts or ends
on whitespace the hit text does not have (normalised matches are trimmed to the first and
last matched non-space character).
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, dataclass
from pathlib import Path

import numpy as np

from workbench.corpus.align import ALIGN_THRESHOLD, MIN_ALIGN_CHARS, Alignment, align
from workbench.corpus.offsets import (
    FENCE,
    MAX_CANDIDATES,
    PROBLEMS,
    LocateError,
    Normalised,
    RawOffsets,
    find_spans,
    matching_form,
    occurrences,
)
from workbench.corpus.types import Corpus, Document
from workbench.io import WorkbenchError
from workbench.text import normalize_text

__all__ = ["HOW", "PROBLEMS", "LocateError", "Location", "Locator", "RawOffsets", "matching_form",
           "raw_texts"]

HOW = ("offsets", "exact", "normalised", "front_matter", "aligned")
_WORD = re.compile(r"\w+")
#: How many occurrences are listed when ``after=`` chooses among them.
_ALL = 100_000


@dataclass(frozen=True)
class Location:
    """A located span ``[start, end)`` of ``Document.text``; ``how`` is one of :data:`HOW`;
    ``score`` the alignment score (0-100) of an ``aligned`` location, else None."""

    doc_id: str
    start: int
    end: int
    how: str
    _: KW_ONLY
    score: float | None = None


def _header_line(line: str) -> bool:
    """Whether a line may belong to a YAML header (``key: value``, a list item, blank)."""
    return ":" in line or line.startswith(("-", " ")) or not line.strip()


def _strip_front_matter(text: str) -> str | None:
    """The part of ``text`` after a leading front matter block (or after the closing fence of
    one that began before the hit), None if it has none."""
    body = text.lstrip("\ufeff")
    if body.startswith("---"):
        fence = FENCE.search(body, body.find("\n") + 1) if "\n" in body else None
        lines = body.splitlines()[1:]
        if fence is None and any(":" in line for line in lines) and all(map(_header_line,
                                                                             lines)):
            return ""  # the first piece of a header that a splitter cut before its fence
    else:
        fence = FENCE.search(body)  # the hit began inside the header (its first line is cut)
        if fence is not None and not all(map(_header_line,
                                             body[: fence.start()].splitlines()[1:])):
            fence = None
    if fence is None:
        return None
    rest = body[fence.end():]
    return rest[1:] if rest.startswith("\n") else rest


class Locator:
    """Locates hit texts and offsets in ``documents`` (a Corpus or any iterable/mapping of
    Documents); ``raw`` maps document ids to the raw file text that offsets refer to;
    ``align`` is the lowest alignment score taken (None: no alignment)."""

    def __init__(self, documents: Mapping[str, Document] | Iterable[Document],
                 raw: Mapping[str, str] | None = None,
                 align: float | None = ALIGN_THRESHOLD):
        if align is not None and not 0 < align <= 100:
            raise WorkbenchError(f"align must be a score in (0, 100] or None, not {align!r}")
        self.align = align
        if isinstance(documents, Corpus):  # already id-unique
            corpus = documents
        else:
            docs = documents.values() if isinstance(documents, Mapping) else documents
            corpus = Corpus(docs, "the documents given")
        self.documents: dict[str, Document] = dict(corpus)
        self.raw = dict(raw or {})
        self._norm: dict[str, Normalised] = {}
        self._maps: dict[tuple[str, int], RawOffsets] = {}
        self._all: tuple[str, list[int], list[str]] | None = None
        self._words: dict[str, set[str]] | None = None

    def __repr__(self) -> str:
        return f"Locator({len(self.documents)} documents, {len(self.raw)} raw files)"

    def document(self, doc_id: str) -> Document:
        doc = self.documents.get(doc_id)
        if doc is None:
            uuid = len(doc_id) == 36 and doc_id.count("-") == 4
            why = (" (a LlamaIndex reader's uuid ref_doc_id: keep the file's path in the "
                   "metadata as file_path, or read with SimpleDirectoryReader(filename_as_id="
                   "True), or pass doc_id=)") if uuid else ""
            raise LocateError("unknown_document", f"document {doc_id!r} is not in the corpus "
                              f"given{why}: load the documents the production system indexed")
        return doc

    def raw_map(self, doc_id: str, raw: str | None = None) -> RawOffsets | None:
        """The raw-offset map of a document (``raw`` overrides the one given at init)."""
        raw = raw if raw is not None else self.raw.get(doc_id)
        if raw is None:
            return None
        key = (doc_id, hash(raw))
        if key not in self._maps:
            self._maps[key] = RawOffsets(raw, self.document(doc_id).text, doc_id)
        return self._maps[key]

    def _normalised(self, doc: Document) -> Normalised:
        if doc.id not in self._norm:
            self._norm[doc.id] = Normalised(doc.text)
        return self._norm[doc.id]

    def locate(self, text: str | None = None, doc_id: str | None = None,
               start: int | None = None, end: int | None = None,
               *, raw: str | None = None, after: int | None = None) -> Location:
        """Locate one hit (see the module doc for the order of the rules). ``start``/``end``
        are offsets into the raw file when a raw text is known for the document (``raw`` or
        the Locator's ``raw``), else into ``Document.text``; ``after`` chooses among repeated
        texts (the first occurrence starting at or after it). Raises :class:`LocateError`."""
        if text is None:
            if doc_id is None or start is None or end is None:
                raise LocateError("empty", "a hit needs its text, or a document id with "
                                  "start and end offsets")
            return self._by_offsets(doc_id, start, end, raw)
        if not text.strip():
            raise LocateError("empty", "the hit text is empty or only whitespace")
        if doc_id is None:
            return self._anywhere(text)
        doc = self.document(doc_id)
        hint = None
        if start is not None:
            mapping = self.raw_map(doc_id, raw)
            if mapping is not None:
                hint = mapping.to_body(start)
            elif 0 <= start <= len(doc.text):
                hint = start
            if hint is not None:
                stop = hint + len(text) if end is None or mapping is not None else end
                if doc.text[hint:stop] == text:
                    return Location(doc.id, hint, stop, "offsets")
                if end is not None and matching_form(doc.text[hint:stop]) == matching_form(text):
                    s, e = _trimmed(doc.text, hint, min(stop, len(doc.text)))
                    return Location(doc.id, s, e, "offsets")
        return self._in_document(doc, text, hint, after)

    def _by_offsets(self, doc_id: str, start: int, end: int, raw: str | None) -> Location:
        doc = self.document(doc_id)
        if not (isinstance(start, int) and isinstance(end, int)) or isinstance(
                start, bool) or isinstance(end, bool):
            raise LocateError("bad_offsets", f"offsets of a hit in {doc_id!r} must be integers")
        mapping = self.raw_map(doc_id, raw)
        limit = len(doc.text) if mapping is None else None
        if start < 0 or end <= start or (limit is not None and end > limit):
            raise LocateError("bad_offsets", f"offsets [{start}, {end}) are not a non-empty "
                              f"range inside document {doc_id!r} ({len(doc.text)} characters)")
        if mapping is not None:
            s, e = mapping.to_body(start), mapping.to_body(end)
            if e <= s:
                raise LocateError("front_matter", f"offsets [{start}, {end}) of {doc_id!r} "
                                  "fall in the front matter or outside the text: the hit "
                                  "holds no document text")
            return Location(doc_id, s, e, "offsets")
        return Location(doc_id, start, end, "offsets")

    def _in_document(self, doc: Document, text: str, hint: int | None,
                     after: int | None = None, aligns: bool = True) -> Location:
        norm = self._normalised(doc)
        how, spans = find_spans(doc.text, text, norm, limit=_ALL if after is not None else
                                MAX_CANDIDATES + 1)
        if how == "exact":
            return self._pick_spans(doc, spans, hint, how, text, after)
        if spans:
            lead = len(text) - len(text.lstrip())
            return self._pick_spans(doc, spans, None if hint is None else hint + lead,
                                    "normalised", text, after)
        rest = _strip_front_matter(text)
        if rest is not None:
            if not rest.strip():
                raise LocateError("front_matter", f"the hit holds only front matter of "
                                  f"{doc.id!r}, no document text")
            try:
                located = self._in_document(doc, rest, None)
            except LocateError as exc:
                if exc.kind != "missing":
                    raise
            else:
                first = len(doc.text) - len(doc.text.lstrip())
                if located.start <= first:
                    return Location(doc.id, located.start, located.end, "front_matter")
        tried = ""
        if self.align is not None and aligns:
            aligned = self._aligned(doc, norm, text, after)
            if isinstance(aligned, Location):
                return aligned
            tried = f", aligned (best score {aligned:.0f} < {self.align:g})"
        raise LocateError("missing", f"text {_preview(text)} not found in document {doc.id!r} "
                          "(tried: exactly, after whitespace/Unicode normalisation, without "
                          f"front matter{tried}); {_nearest(norm.text, text)}")

    def _aligned(self, doc: Document, norm: Normalised, text: str,
                 after: int | None) -> Location | float:
        """The aligned location of ``text`` (module doc, rule 5), else its best score."""
        needle = matching_form(text)
        if self.align is None or len(needle) < MIN_ALIGN_CHARS:
            return 0.0
        found = align(needle, norm.text, self.align)
        if found.score >= self.align and found.ambiguous and after is not None:
            skip = int(np.searchsorted(norm.first, after))
            later = align(needle, norm.text[skip:], self.align)
            found = Alignment(later.score, later.start + skip, later.end + skip, later.ambiguous)
        if found.score < self.align:
            return found.score
        if found.ambiguous:
            raise LocateError("ambiguous", f"text {_preview(text)} aligns with more than one "
                              f"passage of document {doc.id!r} (score >= {self.align:g}): "
                              "give the hit's start offset to choose one")
        start, end = norm.span(found.start, found.end)
        return Location(doc.id, *_trimmed(doc.text, start, end), "aligned", score=found.score)

    @staticmethod
    def _pick_spans(doc: Document, spans: list[tuple[int, int]], hint: int | None, how: str,
                    text: str, after: int | None = None) -> Location:
        if len(spans) == 1:
            return Location(doc.id, spans[0][0], spans[0][1], how)
        if hint is not None:
            at = [s for s in spans if s[0] == hint]
            if len(at) == 1:
                return Location(doc.id, at[0][0], at[0][1], how)
        later = [s for s in spans if after is not None and s[0] >= after]
        if later:
            return Location(doc.id, later[0][0], later[0][1], how)
        many = f"{len(spans)}" if len(spans) <= MAX_CANDIDATES else f"more than {MAX_CANDIDATES}"
        starts = ", ".join(str(s) for s, _ in spans[:MAX_CANDIDATES])
        raise LocateError("ambiguous", f"text {_preview(text)} occurs {many} times in "
                          f"document {doc.id!r} (at {starts}): give the hit's start offset "
                          "(and the raw file, if offsets are into it) to choose one")

    def _likely(self, text: str) -> list[str]:
        """The documents holding at least half of the words of ``text`` (the only ones an
        alignment >= the threshold can be in; the words of each document counted once)."""
        if self.align is None:
            return []
        if self._words is None:
            self._words = {d: set(_WORD.findall(self._normalised(doc).text.casefold()))
                           for d, doc in self.documents.items()}
        words = set(_WORD.findall(matching_form(text).casefold()))
        return [d for d, have in self._words.items()
                if words and len(words & have) >= len(words) / 2]

    def _anywhere(self, text: str) -> Location:
        if self._all is None:
            ids = list(self.documents)
            texts = [self.documents[d].text for d in ids]
            starts, at = [], 0
            for t in texts:
                starts.append(at)
                at += len(t) + 1
            self._all = ("\0".join(texts), starts, ids)
        joined, starts, ids = self._all
        found = occurrences(joined, text, 2)
        if len(found) == 1:
            i = bisect.bisect_right(starts, found[0]) - 1
            return Location(ids[i], found[0] - starts[i], found[0] - starts[i] + len(text),
                            "exact")
        if len(found) > 1:
            raise LocateError("ambiguous", f"text {_preview(text)} occurs more than once in "
                              "the corpus: give the hit's document id")
        hits: list[Location] = []
        for aligns in (False, True):  # aligned only where nothing matched, in likely documents
            for doc_id in (ids if not aligns else self._likely(text) if not hits else []):
                try:
                    hits.append(self._in_document(self.documents[doc_id], text, None,
                                                  aligns=aligns))
                except LocateError as exc:
                    if exc.kind == "ambiguous":
                        raise
        if len(hits) == 1:
            return hits[0]
        if hits:
            raise LocateError("ambiguous", f"text {_preview(text)} is found in "
                              f"{len(hits)} documents ({', '.join(h.doc_id for h in hits[:5])})"
                              ": give the hit's document id")
        raise LocateError("missing", f"text {_preview(text)} is not found in any document "
                          "(exactly, after whitespace/Unicode normalisation"
                          + (", or aligned" if self.align is not None else "") + ")")


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` without leading and trailing whitespace."""
    piece = text[start:end]
    return start + len(piece) - len(piece.lstrip()), end - (len(piece) - len(piece.rstrip()))


def _longest(norm: str, needle: str, suffix: bool) -> int:
    """The length of the longest prefix (or suffix) of ``needle`` that occurs in ``norm``."""
    lo, hi = 0, len(needle)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if (needle[-mid:] if suffix else needle[:mid]) in norm:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _nearest(norm: str, text: str) -> str:
    """Where the normalised hit text stops matching ``norm`` (a normalised document): its
    longest prefix or suffix found, at which offset, and what each side has there."""
    needle = matching_form(text)
    head, tail = _longest(norm, needle, False), _longest(norm, needle, True)
    if max(head, tail) < 8:
        return ("no stretch of it occurs in the document: is it the right document, and "
                "text of the extraction (markdown, PDF tool) the corpus was loaded with?")
    n = len(needle)
    if head >= tail:
        at = norm.find(needle[:head])
        return (f"nearest match: its first {head} of {n} normalised characters occur at "
                f"{at} of the normalised document; then the hit has "
                f"{needle[head:head + 20]!r} where the document has "
                f"{norm[at + head:at + head + 20]!r}")
    at = norm.find(needle[n - tail:])
    return (f"nearest match: its last {tail} of {n} normalised characters occur at {at} of "
            f"the normalised document; before them the hit has "
            f"{needle[max(0, n - tail - 20):n - tail]!r} where the document has "
            f"{norm[max(0, at - 20):at]!r}")


def _preview(text: str, n: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= n else flat[: n - 3] + "...")


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def raw_texts(folder: str | Path, documents: Iterable[Document]) -> dict[str, str]:
    """``{doc_id: raw file text}`` for the ``.md`` / ``.txt`` files of ``folder``: each file is
    matched to the document whose text it ends with (after the loader's CRLF and normal-form
    changes: :func:`~workbench.text.normalize_text`), so offsets into the files can be mapped
    (``Locator(docs, raw=...)``)."""
    by_body: dict[str, list[str]] = {}
    for doc in documents:
        by_body.setdefault(_digest(doc.text), []).append(doc.id)
    out: dict[str, str] = {}
    for path in sorted(Path(folder).rglob("*")):
        if path.suffix not in (".md", ".txt") or not path.is_file():
            continue
        with path.open(encoding="utf-8", newline="") as fh:  # keep CRLF: offsets count it
            raw = fh.read()
        text = normalize_text(raw.replace("\r\n", "\n"))
        starts = [0, *(m.end() + 1 for m in FENCE.finditer(text, 0, min(len(text), 65536)))]
        for start in starts:
            ids = by_body.get(_digest(text[start:]))
            if ids and len(ids) == 1:
                out[ids[0]] = raw
                break
    return out
