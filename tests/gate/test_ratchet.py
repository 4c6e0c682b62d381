"""The ratchet (workbench.gate.ratchet): a baseline moves up only, and never takes numbers
judged another way."""

import pytest

from tests.gate.test_gate import BASE_HITS, CONFIG, GOLDEN, QIDS, ev_of, judged, with_changes
from workbench.evaluation import evaluation_from_scores
from workbench.gate import BaselineRefused, check_gate, update_baseline


def test_ratchet_refuses_to_lower_and_allows_higher(tmp_path):
    path = tmp_path / "evals" / "baseline.json"
    update_baseline(path, ev_of(BASE_HITS), CONFIG, GOLDEN)
    before = path.read_text()
    lower = ev_of(with_changes(BASE_HITS, q00=0))
    with pytest.raises(BaselineRefused, match="only moves up") as exc:
        update_baseline(path, lower, CONFIG, GOLDEN)
    assert exc.value.reason == "lower" and path.read_text() == before
    forced = update_baseline(path, lower, CONFIG, GOLDEN, force=True)
    assert forced.summary["hit_rate@5"]["mean"] == pytest.approx(44 / 60)
    higher = update_baseline(path, ev_of(BASE_HITS), CONFIG, GOLDEN)
    assert higher.summary["hit_rate@5"]["mean"] == pytest.approx(45 / 60)
    with pytest.raises(BaselineRefused, match="not in the new evaluation"):
        update_baseline(path, evaluation_from_scores({q: {"hit_rate@5": v}
                                                      for q, v in BASE_HITS.items()}),
                        CONFIG, GOLDEN)


def test_ratchet_refuses_numbers_judged_another_way(tmp_path):
    """Loosening the evidence threshold raises every number; the ratchet must not take
    that as an improvement (check_gate already refused it)."""
    path = tmp_path / "baseline.json"
    update_baseline(path, judged(BASE_HITS, "evidence>=0.75"), CONFIG, GOLDEN)
    before = path.read_text()
    looser = judged(dict.fromkeys(QIDS, 1.0), "evidence>=0.5")
    for gate in (lambda: check_gate(looser, path, golden=GOLDEN),
                 lambda: update_baseline(path, looser, CONFIG, GOLDEN)):
        with pytest.raises(BaselineRefused, match=r"relevance evidence>=0\.75") as exc:
            gate()
        assert exc.value.reason == "relevance" and path.read_text() == before
    forced = update_baseline(path, looser, CONFIG, GOLDEN, force=True)
    assert forced.summary["hit_rate@5"]["relevance"] == "evidence>=0.5"
