"""Silent acceptances closed as a class: per input surface a generator of bad values, each
refused in one line naming the file (line, field) and what to do, never accepted.

Surfaces: a golden row's qid / question of another JSON type; score_queries' run and grades;
a baseline file's n, keys and config.k; a sweep grid's k; the CLI's --chunker; the
FixedChunker default overlap; a run log whose hit lists are all empty; a folder whose only
documents have no text."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import HANDBOOK
from workbench.chunking import FixedChunker
from workbench.cli import main
from workbench.gate import Baseline
from workbench.golden import GoldenSet, GoldenSetError
from workbench.io import InputError, WorkbenchError
from workbench.metrics.trec import score_queries
from workbench.retrieval.base import MAX_K
from workbench.sweep.grid import load_grid

FAST = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
NOT_TEXT = st.one_of(st.booleans(), st.floats(allow_nan=True), st.lists(st.text(max_size=3),
                     max_size=2), st.dictionaries(st.text(max_size=3), st.integers(),
                                                 max_size=2))


@FAST
@given(field=st.sampled_from(["qid", "question"]), value=NOT_TEXT)
def test_a_golden_field_of_another_type_names_file_line_field_and_type(field, value,
                                                                       tmp_path_factory):
    if field == "qid" and isinstance(value, float) and value.is_integer():
        value = value + 0.5  # 3.0 is a number the type message also names; keep it fractional
    path = tmp_path_factory.mktemp("g") / "golden.jsonl"
    row = {"qid": "q1", "question": "what?", "relevant_chunk_ids": ["a#0"], field: value}
    path.write_text(json.dumps({"qid": "q0", "question": "ok?", "relevant_chunk_ids": ["a#0"]})
                    + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(GoldenSetError) as info:
        GoldenSet.load(path)
    message = str(info.value)
    kind = {bool: "boolean", float: "number", list: "list", dict: "object"}[type(value)]
    assert f"{path}:2: field '{field}': is a {kind}" in message, message


RUNS = st.one_of(st.text(min_size=1, max_size=5), st.binary(min_size=1, max_size=3),
                 st.integers(), st.none(),
                 st.dictionaries(st.just("q"), st.one_of(
                     st.text(min_size=1, max_size=4),
                     st.dictionaries(st.sampled_from(["a", "b"]),
                                     st.sampled_from([None, math.nan, "1", True]),
                                     min_size=1)), min_size=1))
GRADES = st.sampled_from([math.nan, None, 0.5, "1", math.inf, [1]])


@FAST
@given(run=RUNS)
def test_score_queries_refuses_a_run_it_would_score_silently_wrong(run):
    with pytest.raises(WorkbenchError, match=r"run"):
        score_queries({"q": {"a": 1}}, run, ["recall@5"])


@FAST
@given(data=st.data(), bad=st.sampled_from([None, math.nan, "1", True, False, [1]]))
def test_one_bad_score_among_many_good_ones_is_refused_naming_its_query_and_id(data, bad):
    """The run is checked vectorised: one bad score anywhere among valid ones (0.0 and 1.0,
    which a bool reads as, included) is refused, naming its query and id."""
    run = data.draw(st.dictionaries(
        st.sampled_from([f"q{i}" for i in range(8)]),
        st.dictionaries(st.sampled_from("abcdefgh"), st.sampled_from([0.0, 1.0, 0.5, 2, -1.0]),
                        min_size=1), min_size=1))
    q = data.draw(st.sampled_from(sorted(run)))
    d = data.draw(st.sampled_from(sorted(run[q])))
    run[q][d] = bad
    with pytest.raises(WorkbenchError, match=rf"run\['{q}'\]\['{d}'\]: score must be a number"):
        score_queries({"q0": {"a": 1}}, run, ["recall@5"])


#: Scores of every kind a user's code may hold, each with whether it is a real number.
SCORE_KINDS = [(0.5, True), (-2, True), (np.float32(0.25), True), (np.int64(7), True),
               (math.inf, True), (-math.inf, True), (Decimal("0.5"), True),
               (Fraction(1, 3), True), (np.array(0.75), True), (None, False),
               (math.nan, False), (np.float64("nan"), False), ("0.5", False), ("x", False),
               (b"1", False), (True, False), (False, False), (np.bool_(True), False),
               ([1], False), (1 + 0j, False), (np.complex128(1), False), (object(), False)]


@FAST
@given(picks=st.lists(st.sampled_from(range(len(SCORE_KINDS))), min_size=1, max_size=6))
def test_a_run_is_scored_exactly_when_every_score_is_a_real_number(picks):
    """The run is read at C speed and named in Python: both follow one rule. A run of real
    numbers (any numeric type) scores as its floats; any other value is refused, naming the
    first one."""
    run = {"q": {f"d{i}": SCORE_KINDS[j][0] for i, j in enumerate(picks)}}
    qrels = {"q": {"d0": 1, "d2": 2}}
    bad = [i for i, j in enumerate(picks) if not SCORE_KINDS[j][1]]
    if bad:
        with pytest.raises(WorkbenchError, match=rf"run\['q'\]\['d{bad[0]}'\]: score must"):
            score_queries(qrels, run, ["ndcg", "mrr"])
        return
    as_floats = {"q": {d: float(v) for d, v in run["q"].items()}}
    got = score_queries(qrels, run, ["ndcg", "mrr"]).values
    want = score_queries(qrels, as_floats, ["ndcg", "mrr"]).values
    assert {m: v.tolist() for m, v in got.items()} == {m: v.tolist() for m, v in want.items()}


@FAST
@given(grade=GRADES)
def test_score_queries_refuses_a_grade_that_is_no_integer(grade):
    with pytest.raises(WorkbenchError, match=r"qrels\['q'\]\['a'\]: grade must be an integer"):
        score_queries({"q": {"a": grade, "b": 1}}, {"q": ["a", "b"]}, ["recall@5"])
    assert score_queries({"q": {"a": 1}}, {"q": {"a": -math.inf}}, ["recall@5"]).qids == ["q"]


BASELINE_SPOILS = st.one_of(
    st.builds(lambda n: ("n", lambda d: d.update(n=n)),
              st.one_of(st.integers(-10**6, 10**6), st.floats(), st.text(max_size=3))),
    st.builds(lambda key: (key, lambda d: d.update({key: 1})),
              st.text(min_size=1, max_size=8).filter(lambda k: k not in (
                  "schema_version", "kind", "created", "config", "golden", "n", "interval",
                  "metrics", "categories", "questions"))),
    st.builds(lambda k: ("config.k", lambda d: d["config"].update(k=k)),
              st.one_of(st.integers(MAX_K + 1, 10**12), st.integers(-10, 0), st.floats(),
                        st.booleans())))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> dict:
    path = tmp_path_factory.mktemp("b") / "baseline.json"
    assert main(["gate", "--baseline", str(path), "--corpus", str(HANDBOOK / "docs"),
                 "--golden", str(HANDBOOK / "golden.jsonl"), "--update-baseline"]) == 0
    return json.loads(path.read_text(encoding="utf-8"))


@FAST
@given(spoil=BASELINE_SPOILS)
def test_a_spoiled_baseline_is_refused_naming_file_line_and_field(spoil, recorded,
                                                                  tmp_path_factory):
    field, change = spoil
    data = json.loads(json.dumps(recorded))
    change(data)
    if field == "n" and data["n"] == len(data["questions"]):
        return  # the true count is no spoil
    path = tmp_path_factory.mktemp("b") / "baseline.json"
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    with pytest.raises(InputError) as info:
        Baseline.load(path, pipeline=True)
    message = str(info.value)
    assert message.startswith(f"{path}:") and "field '" in message, message
    assert f"field {field!r}" in message, message


@FAST
@given(k=st.one_of(st.integers(MAX_K + 1, 10**15), st.integers(-10**6, 0)))
def test_a_grid_k_out_of_the_cutoff_bounds_is_refused(k, tmp_path_factory):
    path = tmp_path_factory.mktemp("grid") / "grid.yaml"
    path.write_text(f"chunker: [fixed]\nsize: [400]\nk: [5, {k}]\n", encoding="utf-8")
    with pytest.raises(WorkbenchError, match=rf"grid\.yaml:3: k: .*at most {MAX_K:,}"):
        load_grid(path)


@pytest.mark.parametrize("spec", ["", " ", "\t", "  \n"])
@pytest.mark.parametrize("command", ["eval", "chunks", "validate"])
def test_a_blank_chunker_is_refused_not_read_as_the_default(spec, command, capsys):
    corpus = str(HANDBOOK / "docs")
    golden = str(HANDBOOK / "golden.jsonl")
    argv = {"eval": ["eval", "--corpus", corpus, "--golden", golden, "--chunker", spec],
            "chunks": ["chunks", "--corpus", corpus, "--golden", golden, "--chunker", spec],
            "validate": ["validate", golden, "--corpus", corpus, "--chunker", spec]}[command]
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "--chunker: is empty; give a chunker spec" in capsys.readouterr().err


@pytest.mark.parametrize("size", [1, 2, 50, 99, 100])
def test_fixed_chunker_names_its_default_overlap_and_the_fix(size):
    with pytest.raises(WorkbenchError, match=rf"size={size} is not above the default overlap "
                       rf"of 100.*overlap={size // 4}"):
        FixedChunker(size=size)
    FixedChunker(size=size, overlap=size // 4)  # the fix it names works
    with pytest.raises(WorkbenchError, match="overlap must satisfy"):
        FixedChunker(size=size, overlap=size + 2)  # set by the user (not 100): the plain rule


@FAST
@given(n=st.integers(1, 30), hits_key=st.sampled_from(["hits", "results", "retrieved"]))
def test_a_run_log_whose_hit_lists_are_all_empty_names_the_file(n, hits_key,
                                                                tmp_path_factory):
    from workbench.corpus import load_folder
    from workbench.evaluation.run_files import read_run

    path = tmp_path_factory.mktemp("run") / "run.jsonl"
    path.write_text("".join(json.dumps({"qid": f"q{i}", hits_key: []}) + "\n"
                            for i in range(n)), encoding="utf-8")
    try:
        read_run(path, load_folder(HANDBOOK / "docs"))
    except WorkbenchError as exc:
        assert str(exc).startswith(str(path)), exc
        assert "empty hit list" in str(exc) or hits_key != "hits", exc
    else:
        pytest.fail(f"a run of {n} empty hit lists ({hits_key!r}) was accepted")


@pytest.mark.parametrize("pages", [["<html></html>"], ["<script>x</script>"],
                                   ["<style>p{}</style>", "<html><body> </body></html>"]])
def test_a_folder_of_documents_without_text_names_the_file(pages, tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    for i, page in enumerate(pages):
        (folder / f"page{i}.html").write_text(page, encoding="utf-8")
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({"qid": "a", "question": "q?",
                                  "relevant_doc_ids": ["page0"]}) + "\n", encoding="utf-8")
    assert main(["eval", "--corpus", str(folder), "--golden", str(golden)]) == 2
    err = capsys.readouterr().err
    assert f"{folder / 'page0.html'}: field 'text': no chunk to index" in err, err
    assert len(err.strip().splitlines()) == 1 and "add documents with text" in err
