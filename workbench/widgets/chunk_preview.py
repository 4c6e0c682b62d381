"""Chunk preview: a document with its chunk boundaries, overlaps and golden answer spans.

``chunk_preview_html`` is the static form: alternating chunk backgrounds, overlap regions
hatched, each chunk's id and token count on hover, golden spans underlined, spans that no
single chunk holds whole in red, and a count ("3 of 12 answer spans are cut"). The hover
also names the page(s) and heading path a chunk came from, and the extraction warnings of a
PDF / HTML / DOCX document (scanned pages, columns read across, hyphenation) head the view.
Chunks are ordered by their offsets, never by their ids (production ids are uuids). All
document text is HTML-escaped, with bidi controls shown as ``[U+202E]`` (``escape_html``).
A conversation chunk's mark names its turns and speakers (``[t1#0 · 2 turns: customer,
agent]``). ``ChunkPreview`` adds controls (chunker, unit, size, overlap, document, chunk) and
exposes ``selected_chunk_id``; the overlap slider is disabled (and says so) for chunkers
without a character overlap; controls wrap instead of shrinking when the preview is narrow.
A semantic chunker embeds through ``cache`` (:func:`workbench.retrieval.with_embedder`).
``ChunkPreviewPair`` shows two configs side by side.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import ipywidgets as widgets

from workbench.chunking import CHUNKER_KINDS, split_spans
from workbench.corpus import Chunk, Document, Span, extraction_warnings
from workbench.corpus.reader import Reader, ReaderRequired, require_reader
from workbench.retrieval import EmbeddingCache, Encoder, with_embedder
from workbench.text import escape_html
from workbench.text.tokens import get_counter
from workbench.widgets.keywords import refuse_unknown_keywords

#: What the preview shows for a document its reader may not read.
WITHHELD = "document withheld: this reader may not read it"

STYLE = """<style>
.wb-preview{font-family:ui-monospace,monospace;font-size:12px;white-space:pre-wrap;
  line-height:1.6;max-height:520px;overflow:auto;border:1px solid #ccc;padding:6px}
.wb-c0{background:#e8f0fe}.wb-c1{background:#fef3e0}
.wb-ov{background:repeating-linear-gradient(45deg,#d7c7f7,#d7c7f7 4px,#efe6ff 4px,#efe6ff 8px)}
.wb-sel{outline:2px solid #1a73e8}
.wb-gold{text-decoration:underline 2px #188038}
.wb-cut{text-decoration:underline 2px #d93025;color:#d93025}
.wb-mark{font-size:9px;color:#555;vertical-align:super}
.wb-summary{font-family:sans-serif;font-size:13px;margin:4px 0}
.wb-summary .bad{color:#d93025;font-weight:bold}
</style>"""


def chunk_preview_html(doc: Document, chunks: Sequence[Chunk], spans: Sequence[Span] = (),
                       *, selected: str | None = None, label: str = "",
                       token_counts: dict[str, int] | None = None,
                       user_groups: Reader | Iterable[str] | str | None = None) -> str:
    """Static HTML of ``doc`` painted with ``chunks`` (its own) and golden ``spans``, for
    ``user_groups`` (:func:`~workbench.corpus.reader.require_reader`): a document they may
    not read, or one with a chunk they may not read, is withheld."""
    reader = require_reader("chunk_preview_html", user_groups, documents=[doc], chunks=chunks)
    if not reader.can_read(doc) or any(c.doc_id == doc.id and not reader.can_read_chunk(c, doc)
                                       for c in chunks):
        return f"<p class='wb-summary'>{escape_html(WITHHELD)}</p>"
    chunks = sorted((c for c in chunks if c.doc_id == doc.id and c.end > c.start),
                    key=lambda c: (c.start, c.end, c.id))
    shade = {c.id: n % 2 for n, c in enumerate(chunks)}
    spans = [s for s in spans if s.doc_id == doc.id]
    cut = {(s.start, s.end) for s in split_spans(chunks, spans)}
    counts = token_counts or {}
    points = sorted({0, len(doc.text), *(p for c in chunks for p in (c.start, c.end)),
                     *(p for s in spans for p in (s.start, s.end))})
    starts = {c.start: c for c in chunks}
    parts: list[str] = []
    # sweep: chunks whose [start, end) covers each elementary segment
    active: list[Chunk] = []
    pending = list(chunks)
    for a, b in itertools.pairwise(points):
        active = [c for c in active if c.end > a]
        while pending and pending[0].start <= a:
            c = pending.pop(0)
            if c.end > a:
                active.append(c)
        if a in starts:
            c = starts[a]
            parts.append(f'<span class="wb-mark" data-chunk="{escape_html(c.id)}">'
                         f"[{escape_html(_mark(c))}]</span>")
        classes = []
        if len(active) > 1:
            classes.append("wb-ov")
        elif active:
            classes.append(f"wb-c{shade[active[0].id]}")
        if selected and any(c.id == selected for c in active):
            classes.append("wb-sel")
        for s in spans:
            if s.start <= a and b <= s.end:
                classes.append("wb-cut" if (s.start, s.end) in cut else "wb-gold")
                break
        title = " | ".join(_hover(c, counts) for c in active)
        parts.append(f'<span class="{" ".join(classes)}" title="{escape_html(title)}">'
                     f"{escape_html(doc.text[a:b])}</span>")
    n_cut = len(cut)
    if not spans:
        verdict = "no golden answer span lies in this document (nothing to cut)"
    elif n_cut:
        verdict = f'<span class="bad">{n_cut} of {len(spans)} answer spans are cut</span>'
    else:
        verdict = f"0 of {len(spans)} answer spans are cut"
    summary = (f'<div class="wb-summary"><b>{escape_html(label or "chunks")}</b> · '
               f"{escape_html(doc.id)} · {len(doc.text):,} characters · {len(chunks)} chunks · "
               f"{verdict}</div>")
    warnings = "".join(f'<div class="wb-summary"><span class="bad">extraction: '
                       f"{escape_html(w.kind)}</span> {escape_html(w.message)}</div>"
                       for w in extraction_warnings(doc))
    return f'{STYLE}{summary}{warnings}<div class="wb-preview">{"".join(parts)}</div>'


def _mark(chunk: Chunk) -> str:
    """A chunk's mark: its id, and for a conversation chunk its turns and speakers."""
    speakers = chunk.metadata.get("speakers")
    if not speakers:
        return chunk.id
    turns = chunk.metadata.get("turns", 0)
    return f"{chunk.id} · {turns} turn{'s' if turns != 1 else ''}: " + ", ".join(
        str(s) for s in speakers)


def _hover(chunk: Chunk, counts: dict[str, int]) -> str:
    """A chunk's id, token count and where it came from (pages, heading path)."""
    parts = [chunk.id]
    if chunk.id in counts:
        parts.append(f"{counts[chunk.id]} tokens")
    pages = chunk.metadata.get("pages")
    if pages:
        parts.append(f"page {pages[0]}" if len(pages) == 1 else f"pages {pages[0]}-{pages[-1]}")
    path = chunk.metadata.get("heading_path") or chunk.metadata.get("section_path")
    if path:
        parts.append(" > ".join(str(h) for h in path))
    if chunk.metadata.get("speakers"):  # a conversation chunk: its turns and speakers
        parts.append(f"{chunk.metadata.get('turns', 0)} turns: "
                     + ", ".join(str(s) for s in chunk.metadata["speakers"]))
    for key in ("term", "symbol"):  # a glossary entry, a code definition
        if chunk.metadata.get(key):
            parts.append(f"{key} {chunk.metadata[key]}")
    return " · ".join(parts)


#: the chunkers the preview offers: every kind the spec parser knows, but those the one size
#: slider cannot set (``document`` has no size, ``parent`` has two)
KINDS = tuple(kind for kind in CHUNKER_KINDS if kind not in ("document", "parent"))
#: the kinds whose spec takes a character / token ``overlap``
OVERLAP_KINDS = ("fixed", "recursive")


def _flexible(min_width: str) -> widgets.Layout:
    """A control that grows with the row and wraps below ``min_width`` instead of
    shrinking (a slider at half width would otherwise be a dot)."""
    return widgets.Layout(width="auto", min_width=min_width, flex="1 1 auto")


_ROW = widgets.Layout(flex_flow="row wrap", align_items="center", width="100%")


@refuse_unknown_keywords
class ChunkPreview(widgets.VBox):  # type: ignore[misc]  # ipywidgets ships no types
    """Interactive preview of one document under a chosen chunker.

    Readable from Python: ``spec`` (the chunker spec), ``chunks``, ``selected_chunk_id``.
    """

    def __init__(self, documents: Sequence[Document] | Document, spans: Sequence[Span] = (),
                 *, kind: str = "fixed", size: int = 800, overlap: int = 100, unit: str = "chars",
                 header: bool = False, counter: str = "minilm",
                 cache: EmbeddingCache | None = None,
                 user_groups: Reader | Iterable[str] | str | None = None):
        docs = [documents] if isinstance(documents, Document) else list(documents)
        if not docs:
            raise ValueError("ChunkPreview needs at least one document")
        self.reader = require_reader("ChunkPreview", user_groups, documents=docs)
        self.documents = self.reader.documents({d.id: d for d in docs})
        if not self.documents:
            raise ReaderRequired("ChunkPreview: none of these documents is readable by "
                                 f"groups {sorted(self.reader.groups or ())}")
        self.spans = list(spans)
        self.header = header
        self.counter = get_counter(counter)
        self.cache = cache
        self._encoders: dict[str, Encoder] = {}
        short = {"description_width": "initial"}
        self.doc_select = widgets.Dropdown(options=list(self.documents), description="document",
                                           style=short, layout=_flexible("180px"))
        self.kind = widgets.Dropdown(options=KINDS, value=kind, description="chunker",
                                     style=short, layout=_flexible("170px"))
        self.unit = widgets.ToggleButtons(options=["chars", "tokens"], value=unit,
                                          style={"button_width": "64px"},
                                          layout=widgets.Layout(width="auto",
                                                                min_width="140px"))
        self.size = widgets.IntSlider(value=size, min=50, max=3000, step=50, description="size",
                                      continuous_update=False, style=short,
                                      layout=_flexible("320px"))
        self.overlap = widgets.IntSlider(value=overlap, min=0, max=1000, step=25,
                                         description="overlap", continuous_update=False,
                                         style=short, layout=_flexible("320px"))
        self.chunk_select = widgets.Dropdown(options=[], description="chunk", style=short,
                                             layout=_flexible("190px"))
        self.view = widgets.HTML()
        self.errors = widgets.Output()
        self.chunks: list[Chunk] = []
        self._painting = True
        for control in (self.doc_select, self.kind, self.unit, self.size, self.overlap):
            control.observe(self._rechunk, names="value")
        self.chunk_select.observe(self._repaint, names="value")
        super().__init__([
            widgets.HBox([self.doc_select, self.kind, self.unit], layout=_ROW),
            widgets.HBox([self.size, self.overlap, self.chunk_select], layout=_ROW),
            self.view, self.errors])
        self._rechunk()

    @property
    def document(self) -> Document:
        return self.documents[self.doc_select.value]

    @property
    def spec(self) -> str:
        parts = [f"size={self.size.value}", f"unit={self.unit.value}"]
        if self.kind.value in OVERLAP_KINDS:
            parts.append(f"overlap={min(self.overlap.value, self.size.value - 1)}")
        if self.header:
            parts.append("header=true")
        return f"{self.kind.value}:{','.join(parts)}"

    @property
    def selected_chunk_id(self) -> str | None:
        value = self.chunk_select.value
        return str(value) if value else None

    def to_html(self) -> str:
        counts = {c.id: self.counter.count(c.embed_text) for c in self.chunks}
        return chunk_preview_html(self.document, self.chunks, self.spans,
                                  selected=self.selected_chunk_id, label=self.spec,
                                  token_counts=counts,
                                  user_groups=self.reader)

    def _rechunk(self, _change: Any = None) -> None:
        takes = self.kind.value in OVERLAP_KINDS
        self.overlap.disabled = not takes
        self.overlap.description = "overlap" if takes else "overlap (n/a)"
        self.overlap.tooltip = None if takes else f"{self.kind.value} chunks take no overlap"
        with self.errors:
            chunker = with_embedder(self.spec, self.cache, self._encoders)
            self.chunks = chunker.chunk(self.document)
            ids = [c.id for c in self.chunks]
            keep = self.chunk_select.value if self.chunk_select.value in ids else None
            self._painting = False
            self.chunk_select.options = [("(none)", ""), *[(i, i) for i in ids]]
            self.chunk_select.value = keep or ""
            self._painting = True
            self._repaint()

    def _repaint(self, _change: Any = None) -> None:
        if not self._painting:
            return
        with self.errors:
            self.view.value = self.to_html()


@refuse_unknown_keywords
class ChunkPreviewPair(widgets.HBox):  # type: ignore[misc]  # ipywidgets ships no types
    """Two chunk previews side by side on the same documents and spans (``left``,
    ``right``); the document choice of the left one drives both."""

    def __init__(self, documents: Sequence[Document], spans: Sequence[Span] = (),
                 left: dict[str, Any] | None = None, right: dict[str, Any] | None = None,
                 *, user_groups: Reader | Iterable[str] | str | None = None):
        reader = require_reader("ChunkPreviewPair", user_groups, documents=documents)
        self.left = ChunkPreview(documents, spans, **(left or {}), user_groups=reader)
        self.right = ChunkPreview(documents, spans, **(right or {"kind": "recursive",
                                                                  "overlap": 0}),
                                  user_groups=reader)
        widgets.link((self.left.doc_select, "value"), (self.right.doc_select, "value"))
        for p in (self.left, self.right):
            p.layout = widgets.Layout(width="50%", min_width="0")
        super().__init__([self.left, self.right], layout=widgets.Layout(width="100%"))
