"""Chunker spec strings: :func:`parse_chunker` turns ``kind:key=value,...`` (a chunker's
``label``) back into the chunker."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from workbench.chunking.base import DEFAULT_COUNTER, UNITS, Chunker
from workbench.chunking.chunkers import (
    DocumentChunker,
    FixedChunker,
    RecursiveChunker,
    SentenceChunker,
)
from workbench.chunking.conversation import ConversationChunker
from workbench.chunking.glossary import GlossaryChunker
from workbench.chunking.semantic import Embedder, SemanticChunker
from workbench.chunking.source_code import CodeChunker
from workbench.chunking.structured import (
    HEADER_FIELDS,
    ContextualHeader,
    MarkdownChunker,
    ParentChildChunker,
)
from workbench.io import WorkbenchError

#: the content-type chunkers, which take only a budget: kind -> class(size, unit, counter)
CONTENT_KINDS: dict[str, Callable[[int, str, str], Chunker]] = {
    "conversation": ConversationChunker,
    "glossary": GlossaryChunker,
    "code": CodeChunker,
}
#: Every kind a spec may name: the one list (sweep grids, the CLI and the help ask here).
CHUNKER_KINDS = ("document", "fixed", "sentence", "recursive", "markdown", "parent",
                 "semantic", *CONTENT_KINDS)

SPEC_HELP = (
    "valid chunker specs: "
    "'document' (one chunk per document; 'document:title=true' also indexes the title) | "
    "'fixed:size=800,overlap=100,unit=chars' | "
    "'sentence:size=300,overlap_sentences=0,unit=chars' | "
    "'recursive:size=300,overlap=0,unit=tokens' | "
    "'markdown:size=400,unit=chars' | "
    "'conversation:size=800' (turns) | 'glossary:size=800' (one entry per chunk) | "
    "'code:size=800' (functions and classes: Python; JS/TS, Go, Rust with workbench[code]) | "
    "'semantic:size=800,rule=percentile|stdev|gradient,amount=95,window=1,encoder=minilm' "
    "(cuts where neighbouring sentences' embeddings drift) | "
    "'parent:child=200,child_overlap=0,size=1000' (parent=recursive|sentence|markdown|fixed "
    "or parent=(full spec)); any spec may add counter=minilm|cl100k|chars (for unit=tokens) "
    "and header=true (contextual header; or header=title+section+date)"
)


def _split_params(spec: str, body: str) -> dict[str, str]:
    parts: list[str] = []
    depth = 0
    cur = ""
    for ch in body:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise WorkbenchError(f"chunker spec {spec!r}: unbalanced ')'; {SPEC_HELP}")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if depth:
        raise WorkbenchError(f"chunker spec {spec!r}: unbalanced '('; {SPEC_HELP}")
    parts.append(cur)
    params: dict[str, str] = {}
    if len(parts) > 1 or parts[0].strip():
        empty = [n for n, part in enumerate(parts, start=1) if not part.strip()]
        if empty:
            raise WorkbenchError(f"chunker spec {spec!r}: parameter {empty[0]} is empty (a stray "
                             f"','); {SPEC_HELP}")
    for part in parts:
        if not part.strip():
            continue
        key, eq, value = part.partition("=")
        key = key.strip().lower()
        if not eq or not key or not value.strip():
            raise WorkbenchError(
                f"chunker spec {spec!r}: {part.strip()!r} is not key=value; {SPEC_HELP}"
            )
        if key in params:
            raise WorkbenchError(f"chunker spec {spec!r}: {key!r} given twice")
        params[key] = value.strip()
    return params


class _Params:
    def __init__(self, spec: str, kind: str, params: dict[str, str]):
        self.spec = spec
        self.kind = kind
        self.params = params

    def integer(self, key: str, default: int, *aliases: str) -> int:
        for name in (key, *aliases):
            if name in self.params:
                raw = self.params.pop(name)
                try:
                    return int(raw)
                except ValueError:
                    raise WorkbenchError(
                        f"chunker spec {self.spec!r}: {name} must be an integer, got {raw!r}"
                    ) from None
        return default

    def text(self, key: str, default: str) -> str:
        return self.params.pop(key, default)

    def done(self, allowed: str) -> None:
        if self.params:
            raise WorkbenchError(
                f"chunker spec {self.spec!r}: unknown parameter(s) "
                f"{', '.join(sorted(self.params))} for '{self.kind}' (it takes {allowed}); "
                f"{SPEC_HELP}"
            )


_BOOLEANS = {"true": True, "yes": True, "1": True, "on": True,
             "false": False, "no": False, "0": False, "off": False}


def _build(kind: str, p: _Params) -> Chunker:
    if kind == "document":  # no budget: no unit or counter
        title = p.text("title", "false").lower()
        p.done("title, header")
        if title not in _BOOLEANS:
            raise WorkbenchError(
                f"chunker spec {p.spec!r}: title must be true or false, got {title!r}")
        return DocumentChunker(_BOOLEANS[title])
    unit = p.text("unit", "chars").lower()
    counter = p.text("counter", DEFAULT_COUNTER)
    if unit not in UNITS:
        raise WorkbenchError(f"chunker spec {p.spec!r}: unit must be chars or tokens, got {unit!r}")
    chunker: Chunker
    if kind == "fixed":
        size = p.integer("size", 800)
        default_overlap = 100 if size > 100 else size // 8
        overlap = p.integer("overlap", default_overlap)
        p.done("size, overlap, unit, counter, header")
        chunker = FixedChunker(size, overlap, unit, counter)
    elif kind == "sentence":
        size = p.integer("size", 800)
        overlap = p.integer("overlap_sentences", 0, "overlap")
        p.done("size, overlap_sentences, unit, counter, header")
        chunker = SentenceChunker(size, overlap, unit, counter)
    elif kind == "recursive":
        size = p.integer("size", 800)
        overlap = p.integer("overlap", 0)
        p.done("size, overlap, unit, counter, header")
        chunker = RecursiveChunker(size, overlap, unit, counter)
    elif kind == "markdown":
        size = p.integer("size", 800)
        p.done("size, unit, counter, header")
        chunker = MarkdownChunker(size, unit, counter)
    elif kind == "parent":
        child = p.integer("child", 200, "child_size")
        child_overlap = p.integer("child_overlap", 0)
        size = p.integer("size", 1000)
        parent_spec = p.text("parent", "recursive")
        p.done("child, child_overlap, size, parent, unit, counter, header")
        parent: Chunker
        if parent_spec.startswith("(") and parent_spec.endswith(")"):
            parent = parse_chunker(parent_spec[1:-1])
        elif parent_spec == "recursive":
            parent = RecursiveChunker(size, 0, unit, counter)
        elif parent_spec == "sentence":
            parent = SentenceChunker(size, 0, unit, counter)
        elif parent_spec == "markdown":
            parent = MarkdownChunker(size, unit, counter)
        elif parent_spec == "fixed":
            parent = FixedChunker(size, 0, unit, counter)
        else:
            raise WorkbenchError(
                f"chunker spec {p.spec!r}: parent must be recursive, sentence, markdown, fixed "
                f"or a parenthesised spec, got {parent_spec!r}"
            )
        chunker = ParentChildChunker(parent, child, child_overlap, unit, counter=counter)
    elif kind == "semantic":
        size = p.integer("size", 800)
        rule = p.text("rule", "percentile").lower()
        raw = p.text("amount", "0")
        window = p.integer("window", 1)
        encoder = p.text("encoder", "minilm")
        p.done("size, rule, amount, window, encoder, unit, counter, header")
        try:
            amount = float(raw)
        except ValueError:
            raise WorkbenchError(f"chunker spec {p.spec!r}: amount must be a number, got {raw!r}") \
                from None
        chunker = SemanticChunker(size, rule, amount, window, unit=unit, counter=counter,
                                  encoder=encoder)
    elif kind in CONTENT_KINDS:
        size = p.integer("size", 800)
        p.done("size, unit, counter, header")
        chunker = CONTENT_KINDS[kind](size, unit, counter)
    else:
        raise WorkbenchError(f"chunker spec {p.spec!r}: unknown kind {kind!r} (one of "
                             f"{', '.join(CHUNKER_KINDS)}); {SPEC_HELP}")
    return chunker


def attach_embedders(chunker: Chunker, embedder_for: Callable[[str], Embedder]) -> Chunker:
    """``chunker`` with every semantic chunker in it (itself, a contextual header's base, a
    parent/child chunker's parent) given ``embedder_for(its encoder name)`` where it has no
    embedder yet; other chunkers are returned as they are."""
    if isinstance(chunker, SemanticChunker):
        return chunker if chunker.embedder is not None else chunker.using(
            embedder_for(chunker.encoder))
    if isinstance(chunker, ContextualHeader):
        base = attach_embedders(chunker.base, embedder_for)
        return chunker if base is chunker.base else dataclasses.replace(chunker, base=base)
    if isinstance(chunker, ParentChildChunker):
        parent = attach_embedders(chunker.parent, embedder_for)
        return chunker if parent is chunker.parent else dataclasses.replace(chunker,
                                                                             parent=parent)
    return chunker


def parse_chunker(spec: str | Chunker) -> Chunker:
    """A chunker from its spec string (the inverse of ``chunker.label``); see ``SPEC_HELP``.

    ``document``, ``document:title=true``, ``fixed:size=800,overlap=100``,
    ``fixed:size=200,unit=tokens``, ``sentence:size=300``,
    ``recursive:size=300,unit=tokens,overlap=0,header=true``, ``markdown:size=400``,
    ``parent:child=200,size=1000``. Defaults: size 800 (parent: 1000), unit chars,
    counter minilm; fixed overlap 100 (size // 8 when size <= 100), other overlaps 0.
    """
    if not isinstance(spec, str):
        if isinstance(spec, Chunker):
            return spec
        raise WorkbenchError(
            f"expected a chunker spec string, got {type(spec).__name__}; {SPEC_HELP}")
    text = spec.strip()
    kind, _, body = text.partition(":")
    kind = kind.strip().lower()
    if not kind:
        raise WorkbenchError(f"chunker spec {spec!r} is empty; {SPEC_HELP}")
    params = _Params(spec, kind, _split_params(spec, body))
    header = params.params.pop("header", "false").lower()
    try:
        chunker = _build(kind, params)
    except ValueError as exc:
        msg = str(exc)
        if not msg.startswith("chunker spec"):
            msg = f"chunker spec {spec!r}: {msg}"
        raise WorkbenchError(msg) from None
    if header in ("false", "no", "0", "off"):
        return chunker
    if header in ("true", "yes", "1", "on"):
        return ContextualHeader(chunker)
    fields = tuple(f.strip() for f in header.split("+"))
    if any(f not in HEADER_FIELDS for f in fields):
        raise WorkbenchError(
            f"chunker spec {spec!r}: header must be true, false or fields joined by '+' from "
            f"{', '.join(HEADER_FIELDS)}, got {header!r}"
        )
    return ContextualHeader(chunker, fields)
