"""Documents, spans and chunks, and loading a corpus.

Conventions: text is NFC-normalised at load; offsets are code points into
``Document.text``; spans are half-open ``[start, end)``; chunk ids are
``{doc_id}#{ordinal}`` with ordinals from 0.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any


def nfc(text: str) -> str:
    """Unicode NFC normalisation (the one normal form used everywhere)."""
    return unicodedata.normalize("NFC", text)


@dataclass(frozen=True)
class Document:
    """One source document. ``metadata`` may carry version, effective_date,
    status ("current" | "superseded"), superseded_by and acl (groups allowed to read)."""

    id: str
    text: str
    title: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def acl(self) -> tuple[str, ...]:
        """Groups allowed to read; empty means everyone."""
        acl = self.metadata.get("acl") or ()
        return (acl,) if isinstance(acl, str) else tuple(acl)

    @property
    def is_current(self) -> bool:
        return str(self.metadata.get("status", "current")) != "superseded"


@dataclass(frozen=True)
class Span:
    """Half-open character range ``[start, end)`` in a document's text."""

    doc_id: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if not (0 <= self.start < self.end):
            raise ValueError(
                f"Span {self.doc_id}[{self.start}:{self.end}] is empty or negative: "
                "start must be >= 0 and end > start"
            )

    def __len__(self) -> int:
        return self.end - self.start

    def overlap(self, start: int, end: int) -> int:
        """Number of characters this span shares with ``[start, end)``."""
        return max(0, min(self.end, end) - max(self.start, start))

    def text_in(self, doc: Document) -> str:
        return doc.text[self.start : self.end]

    @classmethod
    def locate(cls, doc: Document, quote: str) -> Span:
        """The span of ``quote`` in ``doc``; refuses a quote that is absent or ambiguous."""
        quote = nfc(quote)
        if not quote.strip():
            raise ValueError("quote is empty: give the exact words of the evidence")
        first = doc.text.find(quote)
        if first < 0:
            raise ValueError(f"quote {quote[:60]!r} not found in document {doc.id!r}")
        if doc.text.find(quote, first + 1) >= 0:
            raise ValueError(
                f"quote {quote[:60]!r} occurs more than once in document {doc.id!r}: "
                "quote more words so it is unique"
            )
        return cls(doc.id, first, first + len(quote))


@dataclass(frozen=True)
class Chunk:
    """A retrievable unit. Invariant: ``document.text[start:end] == text``.

    ``embed_text`` is what gets embedded or indexed (may carry a contextual header);
    ``text`` is what the generator reads.
    """

    id: str
    doc_id: str
    start: int
    end: int
    text: str
    embed_text: str = ""
    parent_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if not self.embed_text:
            object.__setattr__(self, "embed_text", self.text)

    @property
    def content_hash(self) -> str:
        """sha256 of ``embed_text``: the embedding-cache key (with the model id)."""
        return hashlib.sha256(self.embed_text.encode("utf-8")).hexdigest()

    @property
    def ordinal(self) -> int:
        return int(self.id.rsplit("#", 1)[1])


class Corpus(Mapping[str, Document]):
    """An ordered, id-unique collection of documents (a read-only mapping id -> Document)."""

    def __init__(self, documents: Iterable[Document], source: str = "<memory>"):
        self._docs: dict[str, Document] = {}
        self.source = source
        for doc in documents:
            if doc.id in self._docs:
                raise ValueError(
                    f"{source}: duplicate document id {doc.id!r}: every document needs a unique id"
                )
            self._docs[doc.id] = doc

    def __getitem__(self, doc_id: str) -> Document:
        return self._docs[doc_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._docs)

    def __len__(self) -> int:
        return len(self._docs)

    def __repr__(self) -> str:
        chars = sum(len(d.text) for d in self._docs.values())
        return f"Corpus({len(self)} documents, {chars:,} characters, from {self.source})"

    @property
    def documents(self) -> list[Document]:
        return list(self._docs.values())


_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*\n", re.DOTALL)


def _parse_front_matter(raw: str, path: Path) -> tuple[dict[str, Any], str]:
    import yaml

    match = _FRONT_MATTER.match(raw)
    if not match:
        return {}, raw
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: front matter is not valid YAML ({exc}); fix the header")\
            from None
    if not isinstance(meta, dict):
        raise ValueError(f"{path}: front matter must be a mapping of key: value lines")
    return meta, raw[match.end() :]


def _document(doc_id: Any, text: Any, title: Any, meta: dict[str, Any], where: str) -> Document:
    if not isinstance(doc_id, str) or not doc_id.strip():
        raise ValueError(f"{where}: field 'id' must be a non-empty string")
    if "#" in doc_id:
        raise ValueError(f"{where}: document id {doc_id!r} contains '#', which chunk ids reserve")
    if not isinstance(text, str):
        raise ValueError(f"{where}: field 'text' must be a string")
    meta = {k: (str(v) if k == "effective_date" else v) for k, v in meta.items()}
    return Document(nfc(doc_id), nfc(text), nfc(str(title or "")), MappingProxyType(meta))


def load_folder(folder: str | Path) -> Corpus:
    """Load every ``*.md`` / ``*.txt`` file under ``folder`` (sorted by path).

    Optional YAML front matter sets id, title, version, effective_date, status, acl, ...;
    without an id the file stem is used; without a title, the first ``# heading``.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a folder of .md/.txt documents")
    docs = []
    for path in sorted(p for p in folder.rglob("*") if p.suffix in (".md", ".txt")):
        raw = path.read_text(encoding="utf-8").replace("\r\n", "\n")
        meta, body = _parse_front_matter(raw, path)
        doc_id = meta.pop("id", path.stem)
        title = meta.pop("title", "")
        if not title:
            heading = re.search(r"^#\s+(.+)$", body, re.MULTILINE)
            title = heading.group(1).strip() if heading else path.stem
        docs.append(_document(str(doc_id), body, title, meta, str(path)))
    if not docs:
        raise ValueError(f"{folder}: no .md or .txt files found")
    return Corpus(docs, source=str(folder))


def iter_jsonl(path: str | Path) -> Iterator[tuple[str, Any]]:
    """Decoded rows of a JSONL file as ``("file:line", row)``, blank lines skipped; a
    malformed line raises ValueError naming its file, line and column."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"{path}: file not found")
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                yield where, json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: malformed JSON ({exc.msg}, column {exc.colno}); "
                                 "fix or delete the line") from None


def load_jsonl(path: str | Path) -> Corpus:
    """Load documents from JSONL: one ``{"id", "text", "title"?, "metadata"?}`` per line."""
    docs = []
    for where, row in iter_jsonl(path):
        if not isinstance(row, dict):
            raise ValueError(f"{where}: each line must be a JSON object")
        meta = row.get("metadata") or {}
        if not isinstance(meta, dict):
            raise ValueError(f"{where}: field 'metadata' must be an object")
        doc_id = row.get("id", row.get("_id"))
        docs.append(_document(doc_id, row.get("text"), row.get("title", ""), dict(meta), where))
    return Corpus(docs, source=str(path))


def load_corpus(path: str | Path) -> Corpus:
    """Load a folder of .md/.txt files, a documents JSONL, or a BEIR folder (corpus.jsonl)."""
    path = Path(path)
    if path.is_dir() and (path / "corpus.jsonl").exists():
        return load_jsonl(path / "corpus.jsonl")
    if path.is_dir():
        return load_folder(path)
    if path.suffix == ".jsonl":
        return load_jsonl(path)
    raise ValueError(f"{path}: expected a folder of .md/.txt files or a .jsonl of documents")
