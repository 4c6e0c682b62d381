"""Locating production chunks: 10,000 LangChain chunks in a 10 MB corpus (target: under 2 s).

The corpus is real text from ``../shared/datasets`` (Chroma's chunking corpora, SQuAD v2,
XQuAD en/vi, CMRC 2018 contexts), topped up to the size asked with copies under new ids.
Chunks come from LangChain's ``RecursiveCharacterTextSplitter`` (500/50, the issue's
production setting); 10% of them have their whitespace collapsed, as a pipeline that cleans
text before indexing would. Timed in the same run:

* ``workbench``: :class:`~workbench.corpus.locate.Locator` (exact, then normalised; ambiguous
  texts reported), with the document id of each chunk, as production hits carry it, with
  and without LangChain's ``start_index`` (which resolves repeated texts);
* ``str.find``: the hand-written adapter of the bug report (``doc.text.find(chunk)``, exact
  only, the first occurrence taken silently), the peer.

Also timed: 1,000 chunks located without their document id (searched in the whole corpus).

    python benchmarks/bench_locate.py [--mb 10] [--chunks 10000]
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sys
import time
from pathlib import Path

from workbench.corpus import Document, load_folder
from workbench.corpus.locate import LocateError, Locator
from workbench.golden.datasets import load_squad

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ROOT.parent / "shared" / "datasets"
SQUAD = ["squad_v2_dev_unanswerable/squad_dev_v2.0_ImpossibleAnswers.json",
         "xquad/xquad.en.json", "xquad/xquad.vi.json", "cmrc2018/cmrc2018_dev.json"]


def corpus(mb: float) -> tuple[list[Document], dict[str, list[str]]]:
    """Documents of about ``mb`` million characters, and the ids of each original's copies
    (itself included)."""
    docs = list(load_folder(DATASETS / "chroma_chunking_evaluation" / "corpora").documents)
    for name in SQUAD:  # XQuAD en and vi share ids: prefix each with its file
        prefix = Path(name).stem
        docs += [Document(f"{prefix}:{d.id}", d.text) for d in
                 load_squad(DATASETS / name)[0].documents]
    ids = {d.id: [d.id] for d in docs}
    size = sum(len(d.text) for d in docs)
    originals = list(docs)
    copy = 0
    while size < mb * 1e6:
        copy += 1
        for d in originals:
            docs.append(Document(f"{d.id}~copy{copy}", d.text))
            ids[d.id].append(docs[-1].id)
            size += len(d.text)
            if size >= mb * 1e6:
                break
    return docs, ids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=float, default=10.0, help="corpus size, millions of chars")
    parser.add_argument("--chunks", type=int, default=10_000)
    args = parser.parse_args()
    if not DATASETS.is_dir():
        print(f"skipped: shared datasets not found at {DATASETS}")
        return 0
    try:
        from langchain_text_splitters import RecursiveCharacterTextSplitter
    except ImportError:
        print("skipped: langchain-text-splitters is not installed (pip install "
              "'workbench[integrations]')")
        return 0
    docs, copies = corpus(args.mb)
    chars = sum(len(d.text) for d in docs)
    splitter = RecursiveCharacterTextSplitter(chunk_size=500, chunk_overlap=50,
                                              add_start_index=True)
    rng = random.Random(13)
    pool = [(d.id, c.page_content, c.metadata["start_index"]) for d in docs if d.id in copies
            for c in splitter.create_documents([d.text])]
    hits = []
    for n in range(args.chunks):
        doc_id, text, start = pool[rng.randrange(len(pool))]
        hits.append((rng.choice(copies[doc_id]), " ".join(text.split()) if n % 10 == 0
                     else text, start))
    print(f"corpus: {len(docs):,} documents ({len(copies):,} originals), {chars / 1e6:.1f} M "
          f"characters; {len(hits):,} chunks of LangChain 500/50 (every 10th with its "
          "whitespace collapsed)")

    rows = []
    for label, with_start in [("workbench, text + start_index", True),
                              ("workbench, text only", False)]:
        started = time.perf_counter()
        locator = Locator(docs)
        hows: dict[str, int] = {}
        for doc_id, text, start in hits:
            try:
                how = locator.locate(text, doc_id, start=start if with_start else None).how
            except LocateError as exc:
                how = exc.kind
            hows[how] = hows.get(how, 0) + 1
        rows.append((label, time.perf_counter() - started,
                     ", ".join(f"{k} {v:,}" for k, v in sorted(hows.items()))))

    by_id = {d.id: d for d in docs}
    started = time.perf_counter()
    found = sum(by_id[doc_id].text.find(text) >= 0 for doc_id, text, _ in hits)
    peer = time.perf_counter() - started
    rows.append(("str.find (the hand-written peer)", peer,
                 f"found {found:,} of {len(hits):,}; first occurrence taken silently"))

    originals = [d for d in docs if d.id in copies]
    sample = [pool[rng.randrange(len(pool))] for _ in range(1000)]
    started = time.perf_counter()
    anywhere = Locator(originals)
    wrong = 0
    for doc_id, text, _ in sample:
        with contextlib.suppress(LocateError):
            wrong += anywhere.locate(text).doc_id != doc_id
    rows.append(("workbench, no doc id (1,000)", time.perf_counter() - started,
                 f"{wrong} located in another document than drawn from"))
    print(f"{'locator':<36}{'seconds':>8}  outcome")
    for label, seconds, outcome in rows:
        print(f"{label:<36}{seconds:>8.2f}  {outcome}")
    ours = rows[0][1]
    print(f"ratio workbench (text + start_index) / str.find: {ours / peer:.1f}x; "
          f"target 10,000 chunks under 2 s: {'met' if ours < 2 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
