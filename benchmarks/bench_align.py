"""Aligning drifted chunks (:func:`~workbench.corpus.align.align`) in a 50k-character document.

The document is Chroma's ``state_of_the_union.md`` (``../shared/datasets``), whitespace runs
folded as the locator's normal form does. Each case is a passage of 300-1000 characters cut at
word boundaries, then changed as another extraction or an edit changes it:

* ``inside``: one word inserted and one deleted inside (the passage keeps its ends);
* ``scattered``: every 15th word loses its last letter (another extractor's spelling);
* ``shrunk``: the needle has two words the document lacks at its start and end;
* ``absent``: a passage of another document (``wikitexts.md``): nothing aligns; the cost of
  a miss (the locator aligns every chunk that exact and normalised search did not find).

Prints, per kind, the mean and largest time of one :func:`align` (and of the rapidfuzz
partial alignment it starts from, timed apart) and the mean score.

    python benchmarks/bench_align.py [--cases 20] [--seed 0] [--datasets ../shared/datasets]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

from rapidfuzz import fuzz

from workbench.corpus.align import align

DATASETS = Path(__file__).resolve().parents[2] / "shared" / "datasets"
KINDS = ("inside", "scattered", "shrunk", "absent")


def passage(words: list[str], rng: random.Random) -> tuple[int, int]:
    """Word indices [i, j) of a passage of 300-1000 characters."""
    size = rng.randint(300, 1000)
    i = rng.randrange(len(words) - 400)
    j, chars = i, 0
    while chars < size:
        chars += len(words[j]) + 1
        j += 1
    return i, j


def needle(kind: str, words: list[str], other: list[str], rng: random.Random) -> str:
    if kind == "absent":
        i, j = passage(other, rng)
        return " ".join(other[i:j])
    i, j = passage(words, rng)
    cut = list(words[i:j])
    if kind == "inside":
        del cut[len(cut) // 3]
        cut.insert(2 * len(cut) // 3, "meanwhile")
    elif kind == "scattered":
        cut = [w[:-1] if k % 15 == 7 and len(w) > 1 else w for k, w in enumerate(cut)]
    elif kind == "shrunk":
        cut = ["Moreover,", "indeed", *cut, "as", "noted."]
    return " ".join(cut)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20, help="cases per kind")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--datasets", type=Path, default=DATASETS)
    args = parser.parse_args()
    corpora = args.datasets / "chroma_chunking_evaluation" / "corpora"
    words = (corpora / "state_of_the_union.md").read_text(encoding="utf-8").split()
    other = (corpora / "wikitexts.md").read_text(encoding="utf-8").split()
    text = " ".join(words)
    rng = random.Random(args.seed)
    print(f"document: {len(text):,} characters; {args.cases} cases per kind")
    for kind in KINDS:
        times, partial, scores = [], [], []
        for _ in range(args.cases):
            quote = needle(kind, words, other, rng)
            t = time.perf_counter()
            found = align(quote, text)
            times.append(time.perf_counter() - t)
            t = time.perf_counter()
            fuzz.partial_ratio_alignment(quote, text)
            partial.append(time.perf_counter() - t)
            scores.append(found.score)
        print(f"{kind:>9}: mean {statistics.mean(times) * 1e3:6.1f} ms, "
              f"max {max(times) * 1e3:6.1f} ms (of which rapidfuzz's partial alignment: "
              f"mean {statistics.mean(partial) * 1e3:5.1f} ms), "
              f"mean score {statistics.mean(scores):5.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
