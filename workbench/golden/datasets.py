"""Public datasets that carry their own questions, as a corpus plus a golden set: BEIR
folders (:func:`load_beir`), SQuAD-style JSON (:func:`load_squad`: SQuAD, XQuAD, CMRC 2018)
and :func:`load_dataset`, which also takes a corpus path with a golden JSONL (what the CLI's
``--corpus`` / ``--golden`` accept)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from workbench.corpus import Corpus, Document, load_corpus, load_jsonl
from workbench.golden.golden_set import GoldenSet
from workbench.golden.items import Evidence, GoldenItem
from workbench.io import iter_jsonl
from workbench.text import nfc

__all__ = ["load_beir", "load_dataset", "load_squad"]


def load_beir(folder: str | Path, split: str = "test") -> tuple[Corpus, GoldenSet]:
    """A BEIR folder (corpus.jsonl, queries.jsonl, qrels/{split}.tsv) as a corpus and a
    golden set. BEIR judges whole documents: each item lists its relevant documents
    (``relevant_doc_ids``), so it is scored at document level (``evaluate`` switches to it)."""
    folder = Path(folder)
    corpus = load_jsonl(folder / "corpus.jsonl")
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        raise ValueError(f"{qrels_path}: BEIR qrels file not found (choose split=...)")
    judged: dict[str, dict[str, int]] = {}
    with qrels_path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            parts = line.rstrip("\n").split("\t")
            if lineno == 1 and not parts[-1].lstrip("-").isdigit():
                continue  # header row
            if len(parts) != 3 or not parts[2].lstrip("-").isdigit():
                raise ValueError(f"{qrels_path}:{lineno}: expected 'query-id<TAB>corpus-id"
                                 "<TAB>score'")
            judged.setdefault(parts[0], {})[parts[1]] = int(parts[2])
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


def load_dataset(corpus: str | Path,
                 golden: str | Path | None = None) -> tuple[Corpus, GoldenSet]:
    """Corpus plus golden set from: a corpus path and a golden JSONL; a BEIR folder; or a
    SQuAD-style JSON file (both carry their own questions)."""
    path = Path(corpus)
    if path.suffix == ".json":
        return load_squad(path)
    if path.is_dir() and (path / "queries.jsonl").exists() and golden is None:
        return load_beir(path)
    if golden is None:
        raise ValueError(f"{path}: give --golden GOLDEN.jsonl (only BEIR folders and SQuAD "
                         "JSON files carry their own questions)")
    return load_corpus(path), GoldenSet.load(golden)
