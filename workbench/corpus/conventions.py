"""Offset conventions of logged hits, and finding which one a log uses from its texts.

A production log may give a hit's offsets in characters (code points), UTF-8 bytes or
UTF-16 code units (JavaScript, Java, .NET), 0- or 1-based, with the end exclusive or
inclusive, into the document text we loaded or into the raw file (front matter counted; with
or without its BOM; with its CRLF line ends or after they became LF, as Python's text mode
reads). A :class:`Convention` names one of these; :meth:`Convention.to_body` maps its offsets
to the half-open code-point range of ``Document.text`` that every span of the workbench uses.

:func:`detect_convention` reads the convention off the hits that carry their text: it keeps
only the conventions under which *every* such hit's offsets slice that text out of its
document (exactly, or equal after :func:`~workbench.corpus.offsets.matching_form`). Conventions
that place every hit of the log (with text or not) at the same spans are one answer; two
that place some hit differently are *ambiguous*; none left is a refusal naming the hit
(file:line, field). Nothing is guessed: without texts, the documented default (code points,
0-based, end exclusive) is used only where the document text and the raw file agree.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY, dataclass, field

import numpy as np

from workbench.corpus.offsets import LocateError, RawOffsets, find_spans, matching_form
from workbench.corpus.types import Document
from workbench.io import WorkbenchError

__all__ = ["BODY", "CONVENTIONS", "RAW", "REFERENCES", "UNITS", "Convention", "Detection",
           "OffsetSample", "detect_convention", "parse_convention"]

UNITS = ("chars", "utf8", "utf16")
#: ``text`` is ``Document.text``; ``file`` the raw file as decoded (BOM and CRLF counted);
#: ``-nobom`` without a leading BOM; ``-lf`` with CRLF read as LF.
REFERENCES = ("text", "file", "file-nobom", "file-lf", "file-nobom-lf")
_UNIT_WORDS = {"chars": "characters", "utf8": "UTF-8 bytes", "utf16": "UTF-16 code units"}
_REF_WORDS = {"text": "into the document text", "file": "into the raw file (front matter, BOM "
              "and CRLF counted)", "file-nobom": "into the raw file without its BOM",
              "file-lf": "into the raw file with CRLF read as LF",
              "file-nobom-lf": "into the raw file without its BOM, CRLF read as LF"}


@dataclass(frozen=True)
class Convention:
    """How a log counts offsets: ``unit`` (one of :data:`UNITS`), ``base`` (0 or 1),
    ``inclusive`` (the end names the last unit) and ``reference`` (one of
    :data:`REFERENCES`). ``spec`` is the form :func:`parse_convention` reads."""

    unit: str = "chars"
    base: int = 0
    inclusive: bool = False
    reference: str = "text"

    @property
    def spec(self) -> str:
        return (f"{self.unit},{self.base}-based,{'inclusive' if self.inclusive else 'exclusive'}"
                f",{self.reference}")

    def __str__(self) -> str:
        return (f"{_UNIT_WORDS[self.unit]}, {self.base}-based, end "
                f"{'inclusive' if self.inclusive else 'exclusive'}, {_REF_WORDS[self.reference]}"
                f" ({self.spec})")

    def to_body(self, doc: Document, raw: str | None, start: int, end: int | None
                ) -> tuple[int, int | None]:
        """``[start, end)`` of ``doc.text`` (``end`` None stays None) for offsets given in this
        convention into ``doc`` (``raw``: its raw file, None when it has none: the file is
        then the text). Raises :class:`LocateError` (``bad_offsets``) when they do not fall
        on character boundaries inside the text."""
        return _Mapper(doc, raw).to_body(self, start, end)


BODY = Convention()
RAW = Convention(reference="file")
CONVENTIONS = tuple(Convention(u, b, i, r) for r, u, b, i in itertools.product(
    REFERENCES, UNITS, (0, 1), (False, True)))


def parse_convention(spec: str | Convention) -> Convention:
    """A convention from ``body`` / ``raw`` or comma-separated words in any order: a unit
    (``chars``, ``utf8``, ``utf16``), ``0-based`` / ``1-based``, ``exclusive`` /
    ``inclusive`` and a reference (:data:`REFERENCES`); a word left out takes
    :data:`BODY`'s."""
    if isinstance(spec, Convention):
        return spec
    if spec in ("body", "raw"):
        return BODY if spec == "body" else RAW
    out: dict[str, object] = {}
    for word in (w.strip().lower() for w in spec.split(",") if w.strip()):
        if word in UNITS:
            out["unit"] = word
        elif word in ("0", "1", "0-based", "1-based"):
            out["base"] = int(word[0])
        elif word in ("exclusive", "inclusive"):
            out["inclusive"] = word == "inclusive"
        elif word in REFERENCES:
            out["reference"] = word
        else:
            raise WorkbenchError(f"offset convention {spec!r}: unknown word {word!r}; use body, "
                                 f"raw or words among {', '.join(UNITS)}, 0-based, 1-based, "
                                 f"exclusive, inclusive, {', '.join(REFERENCES)}")
    return Convention(**out)  # type: ignore[arg-type]


def _unit_lengths(text: str, unit: str) -> np.ndarray:
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    if unit == "utf8":
        return 1 + (codes >= 0x80) + (codes >= 0x800) + (codes >= 0x10000)
    return 1 + (codes >= 0x10000).astype(np.int64)


class _Mapper:
    """One document's reference texts and unit tables (built on first use)."""

    def __init__(self, doc: Document, raw: str | None):
        self.doc, self.raw = doc, raw
        self._refs: dict[str, tuple[str, RawOffsets | None]] = {}
        self._units: dict[tuple[str, str], np.ndarray] = {}

    def reference(self, name: str) -> tuple[str, RawOffsets | None]:
        if name not in self._refs:
            if name == "text" or self.raw is None:
                self._refs[name] = (self.doc.text, None)
            else:
                text = self.raw.removeprefix("\ufeff") if "nobom" in name else self.raw
                text = text.replace("\r\n", "\n") if name.endswith("-lf") else text
                self._refs[name] = (text, RawOffsets(text, self.doc.text, self.doc.id))
        return self._refs[name]

    def code_point(self, ref: str, unit: str, offset: int) -> int | None:
        text, _ = self.reference(ref)
        if unit == "chars":
            return offset if 0 <= offset <= len(text) else None
        key = (ref, unit)
        if key not in self._units:
            self._units[key] = np.concatenate(([0], np.cumsum(_unit_lengths(text, unit))))
        table = self._units[key]
        i = int(np.searchsorted(table, offset))
        return i if i < len(table) and table[i] == offset else None

    def to_body(self, c: Convention, start: int, end: int | None) -> tuple[int, int | None]:
        s_unit = start - c.base
        e_unit = None if end is None else end - c.base + int(c.inclusive)
        s = self.code_point(c.reference, c.unit, s_unit)
        e = None if e_unit is None else self.code_point(c.reference, c.unit, e_unit)
        if s is None or (e_unit is not None and (e is None or e < s)):
            raise LocateError("bad_offsets", f"offsets [{start}, {end}) of {self.doc.id!r} are "
                              f"not a range of whole characters inside it as {c}")
        _, mapping = self.reference(c.reference)
        if mapping is None:
            return s, e
        return mapping.to_body(s), None if e is None else mapping.to_body(e)


@dataclass(frozen=True)
class OffsetSample:
    """One logged hit with offsets: its document, text (None when the log gives none),
    ``start`` and ``end`` (None when only the start is logged), where it is (``file:line``)
    and its raw file (None: the document's own, or it has none). ``prefix`` marks a text cut
    by the logger (:mod:`~workbench.corpus.truncation`): only its start is then checked."""

    doc: Document
    text: str | None
    start: int
    end: int | None
    _: KW_ONLY
    where: str = ""
    raw: str | None = None
    prefix: bool = False


@dataclass(frozen=True)
class Detection:
    """What :func:`detect_convention` found: ``convention`` (None when it refuses),
    ``fitting`` (every convention that fits the texts), ``checked`` (hits whose text was
    checked at their offsets), ``skipped`` (hits with text not found in their document at
    all: no evidence, the locator reports them) and ``message`` (why it refused, or what it
    found)."""

    convention: Convention | None
    fitting: tuple[Convention, ...] = ()
    checked: int = 0
    skipped: int = 0
    _: KW_ONLY
    message: str = ""
    equivalent: tuple[Convention, ...] = field(default=(), repr=False)


def _slice_fits(doc: Document, s: int, e: int | None, text: str, prefix: bool) -> bool:
    if prefix or e is None:
        got = doc.text[s:s + len(text) + 2 * text.count("\n") + 8]
        want = matching_form(text)
        return got.startswith(text) or matching_form(got).startswith(want) if want else False
    got = doc.text[s:e]
    return got == text or (bool(got.strip()) and matching_form(got) == matching_form(text))


def _place(mapper: _Mapper, c: Convention, sample: OffsetSample) -> tuple[int, int | None] | None:
    try:
        s, e = mapper.to_body(c, sample.start, sample.end)
    except LocateError:
        return None
    return s, e


def detect_convention(samples: Iterable[OffsetSample], *,
                      candidates: Sequence[Convention] = CONVENTIONS) -> Detection:
    """The convention of a log's offsets, read off its texts (see the module doc). Hits are
    checked one by one and each drops the conventions its slice refutes, so a long log costs
    about one check per hit."""
    samples = list(samples)
    mappers: dict[tuple[str, int], _Mapper] = {}

    def mapper(sample: OffsetSample) -> _Mapper:
        key = (sample.doc.id, hash(sample.raw))
        if key not in mappers:
            mappers[key] = _Mapper(sample.doc, sample.raw)
        return mappers[key]

    alive = list(candidates)
    checked = skipped = 0
    for sample in samples:
        if sample.text is None or not sample.text.strip():
            continue
        m = mapper(sample)
        fit = [c for c in alive if (p := _place(m, c, sample)) is not None
               and _slice_fits(sample.doc, p[0], p[1], sample.text, sample.prefix)]
        if not fit:
            try:
                found = find_spans(sample.doc.text, sample.text)[1]
            except LocateError:
                found = []
            if not found:
                skipped += 1
                continue
            tried = f"{len(alive)} convention(s) that fit the hits before it" if checked else (
                "characters, UTF-8 bytes or UTF-16 units; 0- or 1-based; end exclusive or "
                "inclusive; into the document text or the raw file with or without its BOM "
                "and CRLF")
            return Detection(None, (), checked, skipped, message=(
                f"{sample.where}: field 'start' {sample.start} (end {sample.end}) of "
                f"{sample.doc.id!r}: the hit's text is in the document (at {found[0][0]}) but "
                f"not at these offsets under any of {tried}: declare the convention "
                "(--run-offsets / offsets=) or fix the log"))
        alive = fit
        checked += 1
    if not checked:
        alive = [c for c in candidates if c.unit == "chars" and c.base == 0 and not c.inclusive]
    groups: dict[tuple[object, ...], list[Convention]] = {}
    for c in alive:
        key = tuple(_place(mapper(s), c, s) for s in samples)
        groups.setdefault(key, []).append(c)
    if not groups:
        return Detection(BODY, (), checked, skipped, message="no offsets in the log")
    if len(groups) == 1:
        (same,) = groups.values()
        best = same[0]
        how = (f"offsets {best} fit all {checked} hit(s) with text" if checked else
               f"no hit gives its text; offsets taken as {best}, where every document's text "
               "and raw file agree")
        return Detection(best, tuple(alive), checked, skipped, message=how, equivalent=tuple(same))
    options = "; ".join(str(g[0]) for g in list(groups.values())[:4])
    if not checked:
        why = ("the log gives no hit text to tell them apart, and the raw files differ from "
               "the document texts (front matter, BOM or CRLF)")
    else:
        why = (f"{len(groups)} conventions fit all {checked} hit(s) with text but place other "
               "hits differently")
    return Detection(None, tuple(alive), checked, skipped,
                     message=f"offsets are ambiguous: {why}: {options}. Declare the convention "
                     "(--run-offsets SPEC / offsets=), e.g. --run-offsets "
                     f"{next(iter(groups.values()))[0].spec}")

