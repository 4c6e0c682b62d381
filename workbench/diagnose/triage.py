"""The 2x2 triage: retrieval ok x answer ok, and which half of the pipeline to fix first.

"Retrieval ok" means the gold evidence was retrieved within the live top k, by the one
definition diagnosis shares (:meth:`workbench.metrics.Relevance.retrieved_rank`): every
evidence span found at the coverage threshold (one span of a multi-chunk answer is not the
answer's evidence), or a labelled chunk retrieved. The verdict comes from a paired test,
never from raw counts: RET_FAIL and GEN_FAIL are the two ways a question fails, and an
exact sign test on their counts (:func:`workbench.stats.sign_test`) must reject
"equally common" at ``alpha`` before the triage says which half to fix first; otherwise it
says "can't tell".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from workbench.evaluation import FrameField
from workbench.generation.oracle import GenerationResult
from workbench.io import WorkbenchError
from workbench.stats import format_p, sign_test
from workbench.text import escape_html, frame_html

QUADRANTS = ("OK", "GEN_FAIL", "LUCKY", "RET_FAIL")
VERDICTS = ("retrieval", "generation", "can't tell")


def quadrant(retrieved_ok: bool, answer_ok: bool) -> str:
    """OK (gold retrieved, answer right), GEN_FAIL (retrieved, wrong), LUCKY (not retrieved,
    right), RET_FAIL (not retrieved, wrong)."""
    return {(True, True): "OK", (True, False): "GEN_FAIL", (False, True): "LUCKY",
            (False, False): "RET_FAIL"}[(bool(retrieved_ok), bool(answer_ok))]


@dataclass(frozen=True, eq=False, kw_only=True)
class Triage:
    """Per-question quadrants (``rows``), counts with shares (``counts``), and which half to
    fix first: ``verdict`` is one of :data:`VERDICTS`, ``p_value`` the sign test of RET_FAIL
    vs GEN_FAIL behind it, ``reason`` the verdict in words. Immutable: the tables are read as
    copies."""

    rows: FrameField[pd.DataFrame] = FrameField()
    counts: FrameField[pd.DataFrame] = FrameField()
    verdict: str
    p_value: float
    reason: str
    excluded: tuple[str, ...] = ()

    def __repr__(self) -> str:
        counts = self.counts
        parts = ", ".join(f"{q}={n}" for q, n in zip(counts["quadrant"], counts["n"],
                                                     strict=True))
        return f"Triage(n={len(self.rows)}: {parts}; fix first: {self.verdict}; {self.reason})"

    def _repr_html_(self) -> str:
        table = frame_html(self.counts, index=False, float_format=lambda v: f"{v:.1%}")
        note = f"; {len(self.excluded)} excluded (unanswerable or undecided)" if self.excluded \
            else ""
        return (f"<div>{table}<p>Fix first: <b>{escape_html(self.verdict)}</b> "
                f"({escape_html(self.reason)}; n={len(self.rows)}{escape_html(note)})</p></div>")


def _verdict(counts: Counter[str], alpha: float) -> tuple[str, float, str]:
    ret, gen = counts["RET_FAIL"], counts["GEN_FAIL"]
    p = sign_test(ret, gen)
    said = f"RET_FAIL {ret} vs GEN_FAIL {gen}, sign test {format_p(p)}"
    retrieval, generation, cant_tell = VERDICTS
    if p >= alpha:
        return cant_tell, p, f"{said}: not beyond noise, read the traces of both"
    return (retrieval if ret > gen else generation), p, said


def _triage(records: list[dict[str, Any]], excluded: Sequence[str] = (),
            alpha: float = 0.05) -> Triage:
    rows = pd.DataFrame(records, columns=["qid", "retrieved_ok", "answer_ok", "quadrant"])
    counts = Counter(rows["quadrant"])
    n = len(rows)
    table = pd.DataFrame({"quadrant": list(QUADRANTS),
                          "n": [counts[q] for q in QUADRANTS],
                          "share": [counts[q] / n if n else float("nan") for q in QUADRANTS]})
    verdict, p_value, reason = _verdict(counts, alpha)
    return Triage(rows=rows, counts=table, verdict=verdict, p_value=p_value, reason=reason,
                  excluded=tuple(excluded))


def triage_rows(rows: Sequence[Mapping[str, Any]], k: int = 5, alpha: float = 0.05) -> Triage:
    """Triage plain rows ``{"gold": [...], "retrieved": [...], "answer_pass": bool}``
    (optional ``qid``): retrieved ok = any gold id in the top ``k`` retrieved (chunk-id
    relevance, the seed article's form)."""
    records = []
    for n, row in enumerate(rows):
        ok = any(g in list(row["retrieved"])[:k] for g in row["gold"])
        records.append({"qid": row.get("qid", str(n)), "retrieved_ok": ok,
                        "answer_ok": bool(row["answer_pass"]),
                        "quadrant": quadrant(ok, bool(row["answer_pass"]))})
    return _triage(records, alpha=alpha)


def triage(result: GenerationResult, k: int | None = None, alpha: float = 0.05) -> Triage:
    """The 2x2 over answerable questions with a decided live grade: retrieved ok = the gold
    evidence found within the live top ``k`` (default the run's k, at most it; ranks as the
    retriever gave them), answer ok = the live grade. The verdict: see the module doc."""
    k = k or result.k
    if k > result.k:
        raise WorkbenchError(f"the generation run kept the top {result.k} hits; triage at k <= "
                         f"{result.k}, or rerun run_generation_eval with k={k}")
    frame = result.frame
    live = frame[frame["mode"] == "live"]
    records, excluded = [], []
    for row in live.to_dict("records"):
        qid, passed = str(row["qid"]), row["passed"]
        if not row["answerable"] or passed is None or pd.isna(passed):
            excluded.append(qid)
            continue
        found = result.found_rank.get(qid)
        ok = found is not None and found <= k
        records.append({"qid": qid, "retrieved_ok": ok, "answer_ok": bool(passed),
                        "quadrant": quadrant(ok, bool(passed))})
    return _triage(records, excluded, alpha)
