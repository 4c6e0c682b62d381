"""How long the chunk preview takes to paint a large document (target: a 500 KB document
must not freeze the notebook). Times the static HTML and each interactive re-chunk.

    python benchmarks/bench_chunk_preview.py [--kb 500]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from workbench.corpus import UNRESTRICTED, Document, Span, load_folder
from workbench.widgets.chunk_preview import ChunkPreview

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kb", type=int, default=500, help="document size in KB of text")
    args = parser.parse_args()
    corpus = load_folder(ROOT / "data" / "handbook" / "docs")
    base = "\n\n".join(d.text for d in corpus.documents)
    text = (base * (args.kb * 1000 // len(base) + 1))[: args.kb * 1000]
    doc = Document("big", text)
    spans = [Span("big", s, s + 60) for s in range(1000, len(text) - 100, 5000)]
    rows = []
    started = time.perf_counter()
    preview = ChunkPreview(doc, spans, size=800, overlap=100, user_groups=UNRESTRICTED)
    rows.append(("open (fixed 800/100 chars)", time.perf_counter() - started, len(preview.chunks)))
    for label, control, value in [("size -> 400", preview.size, 400),
                                  ("overlap -> 0", preview.overlap, 0),
                                  ("unit -> tokens", preview.unit, "tokens"),
                                  ("chunker -> markdown", preview.kind, "markdown")]:
        started = time.perf_counter()
        control.value = value
        rows.append((label, time.perf_counter() - started, len(preview.chunks)))
    html_kb = len(preview.view.value.encode("utf-8")) / 1000
    print(f"document: {len(text):,} characters, {len(spans)} answer spans; "
          f"last HTML {html_kb:,.0f} KB")
    print(f"{'step':<28}{'seconds':>9}{'chunks':>9}")
    for label, seconds, n in rows:
        print(f"{label:<28}{seconds:>9.2f}{n:>9}")


if __name__ == "__main__":
    main()
