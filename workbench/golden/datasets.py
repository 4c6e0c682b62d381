"""Public datasets that carry their own questions, as a corpus plus a golden set: BEIR
folders (:func:`load_beir`), SQuAD-style JSON (:func:`load_squad`: SQuAD, XQuAD, CMRC 2018)
and :func:`load_dataset`, which also takes a corpus path with a golden JSONL (what the CLI's
``--corpus`` / ``--golden`` accept)."""

from __future__ import annotations

import math
import re
import warnings
from pathlib import Path
from types import MappingProxyType

from workbench.corpus import Corpus, admit, load_corpus, load_jsonl
from workbench.golden.golden_set import GoldenSet
from workbench.golden.items import Evidence, GoldenItem
from workbench.io import (
    InputError,
    WorkbenchError,
    WorkbenchWarning,
    decode_json_file,
    iter_jsonl,
    read_text,
)
from workbench.text import normalize_text

__all__ = ["BEIR_CHUNKER", "dataset_kind", "is_qrels_header", "load_beir", "load_dataset",
           "load_squad", "parse_relevance", "read_beir_qrels"]

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
        raise WorkbenchError(f"{where}: relevance {raw!r} is not an integer; qrels grades must be "
                         "integers such as 0, 1, 2 (1.000000 is read as 1)")
    return int(value)


def read_beir_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """A BEIR qrels TSV as ``{query-id: {corpus-id: grade}}``: lines
    ``query-id<TAB>corpus-id<TAB>score``, the first may be the header row
    (:func:`is_qrels_header`), blank lines are skipped and each cell is stripped. Raises
    :class:`~workbench.io.InputError` naming ``file:line`` for a line that is not three
    non-empty cells, a grade that is not an integer (:func:`parse_relevance`) or a document
    judged twice with different grades. Ids are read in NFC (:func:`normalize_text`), the
    corpus's normal form. The one reader of the format (the TREC tools read BEIR qrels
    through it)."""
    path = Path(path)
    judged: dict[str, dict[str, int]] = {}
    first = True
    for lineno, line in enumerate(read_text(path, "BEIR qrels").split("\n"), start=1):
        if not line.strip():
            continue
        cells = [cell.strip() for cell in line.strip().split("\t")]
        if first:
            first = False
            if is_qrels_header(cells):
                continue
        where = f"{path}:{lineno}"
        if len(cells) != 3 or not all(cells):
            raise InputError(where, "expected 3 tab-separated columns 'query-id<TAB>corpus-id"
                             f"<TAB>score' (a BEIR qrels file), got {line.strip()!r}; fix the "
                             "line or remove it")
        qid, doc_id, score = normalize_text(cells[0]), normalize_text(cells[1]), cells[2]
        grade = parse_relevance(score, where)
        grades = judged.setdefault(qid, {})
        if grades.get(doc_id, grade) != grade:
            raise InputError(where, f"{qid} {doc_id} is judged twice with different grades "
                             f"({grades[doc_id]} and {grade}); keep one judgment")
        grades[doc_id] = grade
    return judged


def load_beir(folder: str | Path, split: str = "test") -> tuple[Corpus, GoldenSet]:
    """A BEIR folder (corpus.jsonl, queries.jsonl, qrels/{split}.tsv) as a corpus and a
    golden set. BEIR judges whole documents: each item lists its relevant documents
    (``relevant_doc_ids``), so it is scored at document level (``evaluate`` switches to it).
    Chunk them with :data:`BEIR_CHUNKER` (``document:title=true``) to index title + text, as
    BEIR does; the CLI does so by default. Grades may be written ``1`` or ``1.000000``; they
    reach nDCG's gains (``relevance``), and the binary metrics count grades >= ``threshold``.
    Relevant documents missing from the corpus are kept (trec_eval counts them in the ideal
    ranking and in recall's denominator), with a warning saying how many."""
    folder = Path(folder)
    corpus = load_jsonl(folder / "corpus.jsonl")
    qrels_path = folder / "qrels" / f"{split}.tsv"
    if not qrels_path.exists():
        raise InputError(str(qrels_path), "BEIR qrels file not found (choose split=...)")
    judged = read_beir_qrels(qrels_path)
    items = []
    absent: set[tuple[str, str]] = set()
    for where, row in iter_jsonl(folder / "queries.jsonl", "BEIR queries"):
        if not isinstance(row, dict):
            raise InputError(where, "each line must be a JSON object {\"_id\", \"text\"}")
        qid = normalize_text(str(row.get("_id", "")))
        grades = {d: g for d, g in judged.get(qid, {}).items() if g > 0}
        if not grades:
            continue
        absent.update((qid, d) for d in grades if d not in corpus)
        items.append(GoldenItem(qid, normalize_text(str(row.get("text", ""))),
                                relevant_doc_ids=tuple(grades), category="beir", source="real",
                                relevance=MappingProxyType(grades)))
    if absent:
        warnings.warn(f"{qrels_path}: {len(absent)} relevant judgment(s) name documents not "
                      f"in {folder / 'corpus.jsonl'} (e.g. {min(absent)[1]!r}); they count in "
                      "nDCG's ideal ranking and in recall's denominator, as trec_eval counts "
                      "them", WorkbenchWarning, stacklevel=2)
    return corpus, GoldenSet(items, qrels_path)


def _normal_offset(raw: str, index: int) -> int:
    """Offset in the normal form of ``raw`` of code point ``index`` of ``raw``."""
    return len(normalize_text(raw[:index]))


def load_squad(path: str | Path) -> tuple[Corpus, GoldenSet]:
    """SQuAD-style JSON (SQuAD, XQuAD, CMRC 2018): each paragraph becomes a document
    ``{title-slug}-{article}-{paragraph}``, each answer span becomes evidence (offsets
    re-computed after NFC), its text a must-mention string; ``is_impossible`` questions
    become unanswerable items. The article title is the category. A question whose answer
    text is not in its paragraph is left out."""
    path = Path(path)
    data = decode_json_file(read_text(path, "SQuAD JSON"), path)
    articles = data.get("data") if isinstance(data, dict) else None
    if not isinstance(articles, list):
        raise InputError(str(path), "not SQuAD-style JSON: the top level must be an object "
                         "whose 'data' is a list of articles", field="data")
    docs, items = [], []
    for ai, article in enumerate(articles):
        at = f"data[{ai}]"
        paragraphs = article.get("paragraphs", []) if isinstance(article, dict) else None
        if not isinstance(paragraphs, list):
            raise InputError(str(path), "must be an article {title, paragraphs: [...]}",
                             field=at)
        title = normalize_text(str(article.get("title", f"article-{ai}")))
        slug = re.sub(r"[^\w]+", "-", title.lower()).strip("-")[:40] or "article"
        for pi, para in enumerate(paragraphs):
            where = f"{at}.paragraphs[{pi}]"
            if not isinstance(para, dict) or not isinstance(para.get("context"), str) \
                    or not isinstance(para.get("qas", []), list):
                raise InputError(str(path), "must be {context: text, qas: [...]}", field=where)
            raw = para["context"]
            doc = admit(f"{slug}-{ai}-{pi}", raw, title, where=f"{path}: {where}")
            docs.append(doc)
            for qi, qa in enumerate(para.get("qas", [])):
                field = f"{where}.qas[{qi}]"
                answers = qa.get("answers", []) if isinstance(qa, dict) else None
                if not isinstance(answers, list) or not isinstance(qa.get("question"), str) \
                        or "id" not in qa or not all(
                            isinstance(a, dict) and isinstance(a.get("text"), str)
                            and isinstance(a.get("answer_start"), int) for a in answers):
                    raise InputError(str(path), "must be {id, question: text, answers: [{text, "
                                     "answer_start: integer}]}", field=field)
                spans: list[Evidence] = []
                for ans in answers[:1]:
                    text, start = ans["text"], ans["answer_start"]
                    if not text.strip():
                        continue
                    if raw[start:start + len(text)] != text:
                        found = raw.find(text)
                        if found < 0:
                            continue
                        start = found
                    a, b = _normal_offset(raw, start), _normal_offset(raw, start + len(text))
                    spans.append(Evidence(doc.id, a, b, doc.text[a:b]))
                impossible = bool(qa.get("is_impossible")) or not answers
                if not spans and not impossible:
                    continue
                items.append(GoldenItem(
                    normalize_text(str(qa["id"])), normalize_text(qa["question"]),
                    evidence=tuple(spans), answer_must_mention=tuple(s.text for s in spans),
                    category=title, source="real", answerable=not impossible))
    return Corpus(docs, source=str(path)), GoldenSet(items, path)


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
        raise WorkbenchError(f"{path}: give --golden GOLDEN.jsonl (only BEIR folders and SQuAD "
                         "JSON files carry their own questions)")
    return load_corpus(path), GoldenSet.load(golden)
