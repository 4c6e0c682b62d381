"""Public datasets that carry their own questions, as a corpus plus a golden set: BEIR
folders (:func:`load_beir`), SQuAD-style JSON (:func:`load_squad`: SQuAD, XQuAD, CMRC 2018)
and :func:`load_dataset`, which also takes a corpus path with a golden JSONL (what the CLI's
``--corpus`` / ``--golden`` accept)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from workbench.corpus import Corpus, Document, load_corpus, load_jsonl
from workbench.golden.golden_set import GoldenSet
from workbench.golden.items import Evidence, GoldenItem
from workbench.io import iter_jsonl
from workbench.text import nfc

__all__ = ["BEIR_CHUNKER", "dataset_kind", "is_qrels_header", "load_beir", "load_dataset",
           "load_squad", "parse_relevance"]

#: The chunking BEIR numbers are meant for: whole documents, title indexed with the text
#: (the BEIR convention). The CLI uses it for BEIR folders when no ``--chunker`` is given.
BEIR_CHUNKER = "document:title=true"


def is_qrels_header(columns: list[str]) -> bool:
    """True for the header row of a BEIR qrels TSV (``query-id corpus-id score``): three
    columns whose last is not a number."""
    if len(columns) != 3:
        return False
    try:
        float(columns[2])
    except ValueError:
        return True
    return False


def parse_relevance(raw: str, where: str) -> int:
    """A relevance grade as qrels files write it: an integer (``2``, ``-1``) or an integral
    decimal (``1.000000``, as BEIR's TSV files do). Anything else is a ``ValueError``
    naming ``where`` (``file:line``)."""
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value != int(value):
        raise ValueError(f"{where}: relevance {raw!r} is not an integer; qrels grades must be "
                         "integers such as 0, 1, 2 (1.000000 is read as 1)")
    return int(value)


def load_beir(folder: str | Path, split: str = "test") -> tuple[Corpus, GoldenSet]:
    """A BEIR folder (corpus.jsonl, queries.jsonl, qrels/{split}.tsv) as a corpus and a
    golden set. BEIR judges whole documents: each item lists its relevant documents
    (``relevant_doc_ids``), so it is scored at document level (``evaluate`` switches to it).
    Chunk them with :data:`BEIR_CHUNKER` (``document:title=true``) to index title + text, as
    BEIR does; the CLI does so by default. Grades may be written ``1`` or ``1.000000``."""
    folder = Path(folder)
    corpus = load_jsonl(folder / "corpus.jsonl")
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        raise ValueError(f"{qrels_path}: BEIR qrels file not found (choose split=...)")
    judged: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.rstrip("\r\n").split("\t")
            if lineno == 1 and is_qrels_header(parts):
                continue
            if len(parts) != 3:
                raise ValueError(f"{qrels_path}:{lineno}: expected 'query-id<TAB>corpus-id"
                                 "<TAB>score'")
            grade = parse_relevance(parts[2], f"{qrels_path}:{lineno}")
            judged.setdefault(parts[0], {})[parts[1]] = grade
    items = []
    for where, row in iter_jsonl(folder / "queries.jsonl"):
        if not isinstance(row, dict):
            raise ValueError(f"{where}: each line must be a JSON object {{\"_id\", \"text\"}}")
        qid = str(row.get("_id", ""))
        docs = [d for d, g in judged.get(qid, {}).items() if g > 0 and d in corpus]
        if not docs:
            continue
        items.append(GoldenItem(qid, nfc(str(row.get("text", ""))),
                                relevant_doc_ids=tuple(docs), category="beir", source="real"))
    return corpus, GoldenSet(items, qrels_path)


def _nfc_offset(raw: str, index: int) -> int:
    """Offset in NFC(raw) of code point ``index`` of ``raw``."""
    return len(nfc(raw[:index]))


def load_squad(path: str | Path) -> tuple[Corpus, GoldenSet]:
    """SQuAD-style JSON (SQuAD, XQuAD, CMRC 2018): each paragraph becomes a document
    ``{title-slug}-{article}-{paragraph}``, each answer span becomes evidence (offsets
    re-computed after NFC), its text a must-mention string; ``is_impossible`` questions
    become unanswerable items. The article title is the category."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))["data"]
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not SQuAD-style JSON with a top-level 'data' list ({exc})")\
            from None
    docs, items, skipped = [], [], 0
    for ai, article in enumerate(data):
        title = nfc(str(article.get("title", f"article-{ai}")))
        slug = re.sub(r"[^\w]+", "-", title.lower()).strip("-")[:40] or "article"
        for pi, para in enumerate(article.get("paragraphs", [])):
            raw = para["context"]
            doc = Document(f"{slug}-{ai}-{pi}", nfc(raw), title)
            docs.append(doc)
            for qa in para.get("qas", []):
                spans: list[Evidence] = []
                for ans in qa.get("answers", [])[:1]:
                    text, start = str(ans["text"]), int(ans["answer_start"])
                    if raw[start:start + len(text)] != text:
                        found = raw.find(text)
                        if found < 0:
                            continue
                        start = found
                    a, b = _nfc_offset(raw, start), _nfc_offset(raw, start + len(text))
                    spans.append(Evidence(doc.id, a, b, doc.text[a:b]))
                impossible = bool(qa.get("is_impossible")) or not qa.get("answers")
                if not spans and not impossible:
                    skipped += 1
                    continue
                items.append(GoldenItem(
                    str(qa["id"]), nfc(qa["question"]), evidence=tuple(spans),
                    answer_must_mention=tuple(s.text for s in spans), category=title,
                    source="real", answerable=not impossible))
    golden = GoldenSet(items, path)
    golden.skipped = skipped  # type: ignore[attr-defined]
    return Corpus(docs, source=str(path)), golden


def dataset_kind(corpus: str | Path, golden: str | Path | None = None) -> str:
    """What :func:`load_dataset` reads at these paths: ``"squad"`` (a ``.json`` file),
    ``"beir"`` (a folder with ``queries.jsonl``, no golden set given) or ``"corpus"``."""
    path = Path(corpus)
    if path.suffix == ".json":
        return "squad"
    if path.is_dir() and (path / "queries.jsonl").exists() and golden is None:
        return "beir"
    return "corpus"


def load_dataset(corpus: str | Path,
                 golden: str | Path | None = None) -> tuple[Corpus, GoldenSet]:
    """Corpus plus golden set from: a corpus path and a golden JSONL; a BEIR folder; or a
    SQuAD-style JSON file (both carry their own questions)."""
    path = Path(corpus)
    kind = dataset_kind(path, golden)
    if kind == "squad":
        return load_squad(path)
    if kind == "beir":
        return load_beir(path)
    if golden is None:
        raise ValueError(f"{path}: give --golden GOLDEN.jsonl (only BEIR folders and SQuAD "
                         "JSON files carry their own questions)")
    return load_corpus(path), GoldenSet.load(golden)
