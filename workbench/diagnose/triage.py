"""The 2x2 triage: retrieval ok x answer ok, and which half of the pipeline to fix first."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.generation.evaluation import GenerationResult

QUADRANTS = ("OK", "GEN_FAIL", "LUCKY", "RET_FAIL")


def quadrant(retrieved_ok: bool, answer_ok: bool) -> str:
    """OK (gold retrieved, answer right), GEN_FAIL (retrieved, wrong), LUCKY (not retrieved,
    right), RET_FAIL (not retrieved, wrong)."""
    return {(True, True): "OK", (True, False): "GEN_FAIL", (False, True): "LUCKY",
            (False, False): "RET_FAIL"}[(bool(retrieved_ok), bool(answer_ok))]


@dataclass(frozen=True)
class Triage:
    """Per-question quadrants, counts with shares, and which half to fix first."""

    rows: pd.DataFrame
    counts: pd.DataFrame
    verdict: str
    excluded: tuple[str, ...] = ()

    def __repr__(self) -> str:
        parts = ", ".join(f"{q}={n}" for q, n in zip(self.counts["quadrant"], self.counts["n"],
                                                     strict=True))
        return f"Triage(n={len(self.rows)}: {parts}; fix first: {self.verdict})"

    def _repr_html_(self) -> str:
        import html

        table = self.counts.to_html(index=False, float_format=lambda v: f"{v:.1%}")
        note = f"; {len(self.excluded)} excluded (unanswerable or undecided)" if self.excluded \
            else ""
        return (f"<div>{table}<p>Fix first: <b>{html.escape(self.verdict)}</b> "
                f"(n={len(self.rows)}{html.escape(note)})</p></div>")


def _verdict(counts: Counter[str]) -> str:
    if counts["RET_FAIL"] == counts["GEN_FAIL"]:
        return "read traces"
    return "retrieval" if counts["RET_FAIL"] > counts["GEN_FAIL"] else "generation"


def _triage(records: list[dict[str, Any]], excluded: Sequence[str] = ()) -> Triage:
    rows = pd.DataFrame(records, columns=["qid", "retrieved_ok", "answer_ok", "quadrant"])
    counts = Counter(rows["quadrant"])
    n = len(rows)
    table = pd.DataFrame({"quadrant": list(QUADRANTS),
                          "n": [counts[q] for q in QUADRANTS],
                          "share": [counts[q] / n if n else float("nan") for q in QUADRANTS]})
    return Triage(rows, table, _verdict(counts), tuple(excluded))


def triage_rows(rows: Sequence[Mapping[str, Any]], k: int = 5) -> Triage:
    """Triage plain rows ``{"gold": [...], "retrieved": [...], "answer_pass": bool}``
    (optional ``qid``): retrieved ok = any gold id in the top ``k`` retrieved."""
    records = []
    for n, row in enumerate(rows):
        ok = any(g in list(row["retrieved"])[:k] for g in row["gold"])
        records.append({"qid": row.get("qid", str(n)), "retrieved_ok": ok,
                        "answer_ok": bool(row["answer_pass"]),
                        "quadrant": quadrant(ok, bool(row["answer_pass"]))})
    return _triage(records)


def triage(result: GenerationResult, k: int | None = None) -> Triage:
    """The 2x2 over answerable questions with a decided live grade: retrieved ok = any gold
    chunk in the live top ``k`` (default the run's k; ranks as the retriever gave them),
    answer ok = the live grade. The verdict compares RET_FAIL with GEN_FAIL; a tie says
    "read traces"."""
    k = k or result.k
    live = result.frame[result.frame["mode"] == "live"]
    records, excluded = [], []
    for row in live.to_dict("records"):
        qid, passed = str(row["qid"]), row["passed"]
        if not row["answerable"] or passed is None or pd.isna(passed):
            excluded.append(qid)
            continue
        ret = result.retrieved.get(qid, [])
        ranks = result.ranks.get(qid) or range(1, len(ret) + 1)
        top = {cid for cid, rank in zip(ret, ranks, strict=True) if rank <= k}
        ok = bool(set(result.gold.get(qid, [])) & top)
        records.append({"qid": qid, "retrieved_ok": ok, "answer_ok": bool(passed),
                        "quadrant": quadrant(ok, bool(passed))})
    return _triage(records, excluded)
