"""Sweeps: grid expansion, memoised embedding, resume, executors (Dask), grid files, CLI."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import workbench.sweep.worker as sweep_worker
from workbench.chunking import chunk_corpus, parse_chunker
from workbench.corpus import Document
from workbench.evaluation import Evaluation, Run
from workbench.golden import Evidence, GoldenItem, GoldenSet
from workbench.sweep import (
    expand_grid,
    first_relevant_rank_table,
    load_grid,
    refine,
    run_sweep,
)

DOCS = ("expenses-travel", "remote-work", "policy-warranty")


class HashingEncoder:
    """Deterministic fake encoder (hashed bag of words, 64 dims); counts what it embeds.
    Module-level so process pools and Dask workers can unpickle it."""

    def __init__(self, model_id: str = "fake/hashing"):
        self.model_id = model_id
        self.documents: list[str] = []
        self.queries: list[str] = []

    @staticmethod
    def _vec(text: str) -> np.ndarray:
        v = np.zeros(64, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            v[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "little") % 64] += 1
        n = np.linalg.norm(v)
        return v / n if n else v

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.documents.extend(texts)
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, 64), "f4")

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        self.queries.extend(texts)
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, 64), "f4")


@pytest.fixture(scope="module")
def tiny(handbook):
    """Three handbook documents and the golden questions answered in them."""
    corpus, golden = handbook
    docs = [corpus[d] for d in DOCS]
    items = [i for i in golden if i.evidence and all(e.doc_id in DOCS for e in i.evidence)]
    return docs, GoldenSet(items)


def test_expand_grid_skips_invalid_and_dedupes():
    configs, skipped = expand_grid({"chunker": ["fixed", "markdown"], "size": [100, 200],
                                    "overlap": [0, 150, "25%"], "retriever": ["bm25"],
                                    "encoder": ["minilm", "e5"]})
    reasons = {s["reason"] for s in skipped}
    assert "overlap 150 >= size 100" in reasons
    assert "the markdown chunker takes no overlap" in reasons
    specs = [c.spec for c in configs]
    assert len(specs) == len(set(specs)), "bm25 ignores the encoder: no duplicate configs"
    assert "fixed:size=200,overlap=50,unit=chars" in specs  # 25% of 200
    assert all(c.encoder is None and c.params["encoder"] is None for c in configs)
    names = [c.name for c in configs]
    assert len(set(names)) == len(names)
    assert "fixed size=200 overlap=25%" in names
    with pytest.raises(ValueError, match="unknown parameter 'sise'"):
        expand_grid({"sise": [1]})


def test_memoised_embedding_counts_unique_texts(tiny, tmp_path):
    docs, golden = tiny
    enc = HashingEncoder()
    grid = {"chunker": "fixed", "size": [300, 600], "overlap": [0, 100], "header": [False, True],
            "retriever": ["dense", "hybrid", "bm25"], "encoder": [enc], "k": [3, 5]}
    result = run_sweep(grid, golden, docs, cache=tmp_path / "cache", progress=False)
    unique = set()
    for c in result.config_table["spec"].unique():
        unique.update(ch.embed_text for ch in chunk_corpus(parse_chunker(c), docs))
    assert len(result.config_table) == 8 * 3 * 2
    assert len(enc.documents) == len(set(enc.documents)) == len(unique)
    assert result.embedded == len(unique)
    dense = result.config_table[result.config_table["retriever"] != "bm25"]
    assert result.reused == int(dense["chunks"].sum()) - len(unique)
    assert len(enc.queries) == len(golden)  # questions embedded once for the whole sweep
    table = result.config_table
    assert (table.loc[table["retriever"] == "bm25", "embedded"] == 0).all()
    # a second sweep over the same cache embeds nothing
    again = run_sweep(grid, golden, docs, cache=tmp_path / "cache", progress=False)
    assert again.embedded == 0 and len(enc.documents) == len(unique)
    pd.testing.assert_frame_equal(again.frame, result.frame)


def test_sweep_result_views(tiny, tmp_path):
    docs, golden = tiny
    result = run_sweep({"size": [200, 800], "overlap": [0, 100], "retriever": "bm25",
                        "k": [1, 5]}, golden, docs, progress=False)
    assert result.metrics == ["recall@k", "precision@k", "hit_rate@k", "mrr@k", "ndcg@k"]
    assert set(result.frame.columns) >= {"size", "overlap", "retriever", "k"}
    assert result.frame["size"].dtype.kind == "i"
    board = result.leaderboard("hit_rate@k")
    assert board["mean"].is_monotonic_decreasing and (board["n"] == len(golden)).all()
    cost = result.config_table
    assert (cost["prompt_tokens_at_k"] > 0).all()
    k1 = cost[cost["k"] == 1].set_index("spec")["prompt_tokens_at_k"]
    k5 = cost[cost["k"] == 5].set_index("spec")["prompt_tokens_at_k"]
    assert (k5 > k1).all()
    assert cost.loc[result.label(size=200, overlap=100, k=5), "cost_multiplier"] > 1.0
    base = result.label(size=800, overlap=100, k=5)
    compared = result.compare(base, metrics=["hit_rate@k"])
    assert len(compared) == len(cost) - 1
    by_cat = result.best_by_category("hit_rate@k")
    assert set(by_cat.index) == {i.category for i in golden}
    with pytest.raises(ValueError, match="configurations match"):
        result.label(size=200)
    # read-only: the tables are copies, the rest cannot be set or changed
    cost["chunks"] = 0
    assert (result.config_table["chunks"] > 0).all()
    with pytest.raises(AttributeError):
        result.found_rank = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        result.found_rank[base] = {}  # type: ignore[index]
    assert isinstance(result.skipped, tuple)


def test_refine_proposes_a_finer_grid(tiny):
    docs, golden = tiny
    result = run_sweep({"size": [200, 400, 800], "overlap": [0, 100], "retriever": "bm25"},
                       golden, docs, metrics=["recall@5"], progress=False)
    fine = refine(result, "recall@5", around="size=400 overlap=100")
    assert fine == {"size": [300, 400, 600], "overlap": [50, 100, 150], "retriever": ["bm25"]}
    edge = refine(result, "recall@5", around={"size": 800, "overlap": 0}, points=2)
    assert edge["size"] == [533, 667, 800, 933, 1067]
    assert edge["overlap"] == [0, 33, 67]
    best = refine(result, "recall@5")
    assert best["size"] and all(isinstance(v, int) for v in best["size"])


def test_resume_skips_finished_configs(tiny, tmp_path, monkeypatch):
    docs, golden = tiny
    grid = {"size": [200, 300, 400, 600], "overlap": [0], "retriever": ["bm25"], "k": [3, 5]}
    state = tmp_path / "state.jsonl"
    real = sweep_worker.run_group
    calls: list[str] = []

    def flaky(task):
        calls.append(task["spec"])
        if len(calls) == 3:
            raise RuntimeError("worker lost")
        return real(task)

    monkeypatch.setattr(sweep_worker, "run_group", flaky)
    with pytest.raises(RuntimeError, match="worker lost"):
        run_sweep(grid, golden, docs, state_path=state, progress=False)
    lines = state.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4  # two chunkings x two k values
    finished = set(calls[:2])
    calls.clear()
    monkeypatch.setattr(sweep_worker, "run_group",
                        lambda task: calls.append(task["spec"]) or real(task))
    resumed = run_sweep(grid, golden, docs, state_path=state, progress=False)
    assert resumed.resumed == 4 and len(calls) == 2 and not finished & set(calls)
    assert len(state.read_text(encoding="utf-8").splitlines()) == 8
    fresh = run_sweep(grid, golden, docs, progress=False)
    pd.testing.assert_frame_equal(resumed.frame, fresh.frame)
    pd.testing.assert_frame_equal(resumed.config_table, fresh.config_table)
    assert {q: [h.chunk_id for h in hs] for q, hs in resumed.runs[fresh.best()].hits.items()} \
        == {q: [h.chunk_id for h in hs] for q, hs in fresh.runs[fresh.best()].hits.items()}
    # a different golden set does not reuse the state
    calls.clear()
    run_sweep(grid, GoldenSet(list(golden)[:-1]), docs, state_path=state, progress=False)
    assert len(calls) == 4


def test_first_relevant_rank_buckets_hand_case():
    hits = {"q1": ["a", "x"], "q2": ["x", "y", "b"], "q3": [*"uvwxyz", "c"],
            "q4": ["x"], "q5": ["d"], "q6": [*"uvwxyzstrq", "e"]}
    run = Run.from_ranked(hits, system="s")
    cats = {"q1": "lookup", "q2": "lookup", "q3": "table", "q4": "table", "q5": "table",
            "q6": "table"}
    frame = pd.DataFrame({"system": "s", "qid": list(cats), "category": list(cats.values()),
                          "source": "owner", "relevance": "chunk_id>=1",
                          "metric": "hit_rate@5", "value": 0.0})
    ev = Evaluation(frame, runs={"s": run})
    labels = {"q1": {"a": 2}, "q2": {"b": 1, "z": 1}, "q3": {"c": 1}, "q4": {"c": 2},
              "q5": {"d": 0}, "q6": {"e": 1}}
    golden = GoldenSet([GoldenItem(q, q, relevant_chunk_ids=tuple(g for g in grades if
                                                                  grades[g] > 0) or ("d",),
                                   relevance=grades, category=cats[q])
                        for q, grades in labels.items()])
    table = first_relevant_rank_table(ev, "s", golden=golden).set_index(["category", "bucket"])
    assert table.loc[("all", "1"), "count"] == 1
    assert table.loc[("lookup", "2-3"), "count"] == 1
    assert table.loc[("table", "6-10"), "count"] == 1
    assert table.loc[("table", "missing"), "count"] == 2  # q4 not retrieved, q6 at rank 11
    assert table.loc[("all", "missing"), "n"] == 5  # q5 has no relevant chunk: not counted
    assert table.loc[("table", "6-10"), "share"] == pytest.approx(1 / 3)
    assert list(table.loc["all"].index) == ["1", "2-3", "4-5", "6-10", "missing"]


def test_first_relevant_rank_from_golden_and_sweep(tiny):
    docs, golden = tiny
    chunks = chunk_corpus(parse_chunker("fixed:size=400,overlap=0"), docs)
    from workbench.evaluation import evaluate
    from workbench.retrieval import BM25Retriever

    ev = evaluate(BM25Retriever(chunks), golden, chunks, k=10)
    direct = first_relevant_rank_table(ev, golden=golden, chunks=chunks)
    result = run_sweep({"size": 400, "overlap": 0}, golden, docs, progress=False)
    via_sweep = first_relevant_rank_table(result)
    assert direct["count"].tolist() == via_sweep["count"].tolist()


GRID = """\
chunker: [fixed, recursive]
size: [200, 400]
overlap: [0, 50]
unit: chars
retriever: [bm25]
k: [5]
metrics: [recall@5, mrr@5]
"""


def test_load_grid_reads_the_documented_format(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text(GRID, encoding="utf-8")
    grid, metrics = load_grid(path)
    assert grid == {"chunker": ["fixed", "recursive"], "size": [200, 400], "overlap": [0, 50],
                    "unit": ["chars"], "retriever": ["bm25"], "k": [5]}
    assert metrics == ["recall@5", "mrr@5"]


def test_grid_file_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("chunker: [fixed]\nsize:\n  - 200\n  - -5\noverlapp: [0]\n"
                    "retriever: [bm25, colbert]\nheader: [maybe]\nmetrics: [recall@x]\n"
                    "size: [3]\n", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_grid(path)
    msg = str(info.value)
    assert f"{path}:4: size: -5 is not valid for size: give a positive integer" in msg
    assert f"{path}:5: unknown parameter 'overlapp'; valid parameters: chunker, size" in msg
    assert f"{path}:6: retriever: 'colbert' is not valid" in msg and "bm25, dense, hybrid" in msg
    assert f"{path}:7: header" in msg
    assert f"{path}:8: metrics: unknown metric 'recall@x'" in msg
    assert f"{path}:9: 'size' given twice" in msg
    broken = tmp_path / "broken.yaml"
    broken.write_text("size: [200\nk: 5\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{broken}:")):
        load_grid(broken)
    scalar = tmp_path / "scalar.yaml"
    scalar.write_text("- fixed\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{scalar}:1: a grid file is a mapping")):
        load_grid(scalar)


def test_cli_sweep_json_shape(tmp_path, capsys):
    from tests.conftest import HANDBOOK
    from workbench.cli import main

    grid = tmp_path / "grid.yaml"
    grid.write_text("size: [400, 800]\noverlap: [0, 600]\nretriever: bm25\nk: 5\n"
                    "metrics: [recall@5, mrr@5]\n", encoding="utf-8")
    args = ["sweep", "--corpus", str(HANDBOOK / "docs"), "--golden",
            str(HANDBOOK / "golden.jsonl"), "--grid", str(grid), "--state",
            str(tmp_path / "state.jsonl"), "--cache", str(tmp_path / "cache"), "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 67 and out["metric_order"] == ["recall@5", "mrr@5"]
    assert len(out["configs"]) == 3 and len(out["skipped"]) == 1
    assert "overlap 600 >= size 400" in out["skipped"][0]["reason"]
    row = out["configs"][0]
    assert set(row) == {"config", "params", "spec", "questions", "metrics", "heldout", "cost",
                        "embedded", "reused"}
    assert row["questions"] == "all" and row["heldout"] is None
    assert out["questions"] == {"all": 67}
    assert row["params"] == {"size": 400, "overlap": 0, "retriever": "bm25", "k": 5}
    assert set(row["metrics"]["recall@5"]) == {"mean", "ci_low", "ci_high", "n"}
    assert row["metrics"]["recall@5"]["n"] == 67
    assert set(row["cost"]) == {"chunks", "index_tokens", "cost_multiplier", "split_rate",
                                "prompt_tokens_at_k"}
    assert out["best"]["recall@5"] in {r["config"] for r in out["configs"]}
    assert main(args) == 0  # rerun: everything comes from the state file
    assert json.loads(capsys.readouterr().out)["resumed"] == 3
    bad = tmp_path / "bad.yaml"
    bad.write_text("size: [400]\nunit: [bytes]\n", encoding="utf-8")
    assert main([*args[:5], "--grid", str(bad)]) == 2
    assert f"{bad}:2: unit: 'bytes' is not valid for unit: give chars or tokens" \
        in capsys.readouterr().err
    assert main([*args, "--executor", "threads:4"]) == 2
    assert "give dask://HOST:PORT or processes:N" in capsys.readouterr().err


def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.frame, b.frame)
    cols = [c for c in a.config_table.columns if c not in ("embedded", "reused")]
    pd.testing.assert_frame_equal(a.config_table[cols], b.config_table[cols])
    for name in a.config_table.index:
        assert a.runs[name].hits == b.runs[name].hits


EXEC_GRID = {"size": [300, 600], "overlap": [0, 100], "retriever": ["bm25", "dense"],
             "encoder": [HashingEncoder()], "k": [3, 5]}


@pytest.mark.slow
def test_dask_local_cluster_equals_in_process(tiny, tmp_path):
    distributed = pytest.importorskip("distributed")
    docs, golden = tiny
    local = run_sweep(EXEC_GRID, golden, docs, cache=tmp_path / "local", progress=False)
    shared = tmp_path / "shared"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = run_sweep(EXEC_GRID, golden, docs, executor=client.get_executor(), cache=shared,
                       progress=False)
    _same(local, remote)
    assert remote.embedded >= local.embedded > 0
    from workbench.retrieval.cache import model_slug

    assert list((shared / model_slug("fake/hashing") / "document").glob("*.npz"))
    # the workers' embeddings landed in the shared on-disk cache: nothing left to embed here
    enc = HashingEncoder()
    grid = {**EXEC_GRID, "encoder": [enc]}
    again = run_sweep(grid, golden, docs, cache=shared, progress=False)
    assert again.embedded == 0 and enc.documents == []
    _same(local, again)


@pytest.mark.slow
def test_process_pool_equals_in_process(tiny, tmp_path):
    import concurrent.futures as cf
    import multiprocessing

    docs, golden = tiny
    grid = {**EXEC_GRID, "retriever": ["hybrid"]}
    local = run_sweep(grid, golden, docs, cache=tmp_path / "a", progress=False)
    with cf.ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        pooled = run_sweep(grid, golden, docs, executor=pool, cache=tmp_path / "b", progress=False,
                       state_path=tmp_path / "state.jsonl")
    _same(local, pooled)
    assert len((tmp_path / "state.jsonl").read_text().splitlines()) == len(local.config_table)


def test_golden_items_survive_the_round_trip():
    item = GoldenItem("q1", "where?", evidence=(Evidence("d", 0, 4, "abcd"),),
                      category="lookup", relevance={"d#0": 2})
    doc = Document("d", "abcd efgh", "D", {"effective_date": "2024-01-01"})
    docs = sweep_worker.decode_docs([(doc.id, doc.text, doc.title, dict(doc.metadata))])
    golden = sweep_worker.decode_golden([item.to_json()])
    assert docs[0] == doc and docs[0].metadata["effective_date"] == "2024-01-01"
    assert golden[0] == item


def test_cli_sweep_runs_a_grid_of_at_k_metrics(tmp_path, capsys):
    """The README's grid (`metrics: [recall@k, mrr@k]`) runs: templates are expanded at each
    configuration's k before the cutoffs are checked."""
    from tests.conftest import HANDBOOK
    from workbench.cli import main

    grid = tmp_path / "grid.yaml"
    grid.write_text("size: 800\nretriever: bm25\nk: [3, 5]\nmetrics: [recall@k, mrr@k]\n",
                    encoding="utf-8")
    assert main(["sweep", "--corpus", str(HANDBOOK / "docs"), "--golden",
                 str(HANDBOOK / "golden.jsonl"), "--grid", str(grid), "--cache",
                 str(tmp_path / "cache"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metric_order"] == ["recall@k", "mrr@k"]
    assert len(out["configs"]) == 2


@pytest.mark.parametrize("depth", [300, 1500])
def test_a_deeply_nested_grid_file_is_refused_naming_the_file(tmp_path, capsys, depth):
    from workbench.cli import main
    from workbench.io import InputError

    deep = tmp_path / "deep.yaml"
    deep.write_text("size: [" + "[" * depth + "]" * depth + "]\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(f"{deep}") + r"(:1)?: grid file nested too "
                       r"deeply to read; a grid is a flat mapping"):
        load_grid(deep)
    assert main(["sweep", "--corpus", "c", "--grid", str(deep)]) == 2
    err = capsys.readouterr().err
    assert str(deep) in err and "nested too deeply" in err


def test_a_chunking_is_judged_once_for_all_its_configurations(tiny, monkeypatch):
    """The worker's Relevance is the one evaluate uses: one per chunking, not per config."""
    from workbench.metrics import Relevance

    docs, golden = tiny
    built = []
    init = Relevance.__init__

    def counting(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        built.append(1)
        init(self, *args, **kwargs)

    monkeypatch.setattr(Relevance, "__init__", counting)
    result = run_sweep({"size": 400, "overlap": 0, "retriever": "bm25", "k": [1, 3, 5]},
                       golden, docs, progress=False)
    assert len(result.config_table) == 3 and len(built) == 1


def test_evaluate_reuses_a_relevance_only_when_it_matches(tiny):
    from workbench.evaluation import evaluate
    from workbench.metrics import Relevance
    from workbench.retrieval import BM25Retriever

    docs, golden = tiny
    chunks = chunk_corpus(parse_chunker("fixed:size=400,overlap=0"), docs)
    run = Run.from_retriever(BM25Retriever(chunks), list(golden), 5)
    judged = Relevance(golden, chunks)
    fresh = evaluate(run, golden, chunks)
    reused = evaluate(run, golden, chunks, relevance=judged)
    pd.testing.assert_frame_equal(fresh.frame, reused.frame)
    with pytest.raises(ValueError, match=r"evidence_threshold=0\.75.*evidence_threshold=0\.5"):
        evaluate(run, golden, chunks, evidence_threshold=0.5, relevance=judged)
    other = chunk_corpus(parse_chunker("fixed:size=200,overlap=0"), docs)
    with pytest.raises(ValueError, match="another chunking"):
        evaluate(Run.from_retriever(BM25Retriever(other), list(golden), 5), golden, other,
                 relevance=judged)
    with pytest.raises(ValueError, match="other golden items"):
        evaluate(run, GoldenSet(list(golden)[:-1]), chunks, relevance=judged)
    with pytest.raises(ValueError, match="level='document'"):
        evaluate(run, golden, chunks, level="document", relevance=judged)


def test_state_lines_of_an_older_format_are_skipped_with_one_warning(tiny, tmp_path):
    """Old lines can never match (the key holds the format): they are counted and skipped,
    and only a malformed line of the current format is refused."""
    from workbench.io import InputError
    from workbench.sweep.runner import RESULT_FORMAT

    docs, golden = tiny
    grid = {"size": [400], "overlap": [0], "retriever": ["bm25"], "k": [3]}
    state = tmp_path / "state.jsonl"
    old = [{"key": "k1", "result": {"rows": [], "cost": {}}},  # before the format was written
           {"key": "k2", "format": RESULT_FORMAT - 1, "result": {"metrics": {}}}]
    state.write_text("".join(json.dumps(r) + "\n" for r in old), encoding="utf-8")
    with pytest.warns(UserWarning, match=r"2 line\(s\) hold results of an older sweep format"):
        first = run_sweep(grid, golden, docs, state_path=state, progress=False)
    assert first.resumed == 0
    with pytest.warns(UserWarning, match="2 line"):  # the old lines stay until deleted
        again = run_sweep(grid, golden, docs, state_path=state, progress=False)
    assert again.resumed == 1
    bad = {"key": "k3", "format": RESULT_FORMAT, "result": {"rows": []}}
    state.write_text(json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"state\.jsonl:1.*delete the line"):
        run_sweep(grid, golden, docs, state_path=state, progress=False)
    state.write_text(json.dumps({**bad, "format": RESULT_FORMAT + 1}) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="'format'"):
        run_sweep(grid, golden, docs, state_path=state, progress=False)


def test_a_grid_accepts_every_chunker_the_spec_parser_accepts():
    from workbench.chunking import CHUNKER_KINDS, parse_chunker
    from workbench.sweep.grid import expand_grid

    for kind in CHUNKER_KINDS:
        configs, skipped = expand_grid({"chunker": kind, "retriever": "bm25", "k": 5})
        assert not skipped and [c.spec for c in configs] == [parse_chunker(kind).label], kind


@given(st.sampled_from(["fixed", "sentence", "recursive", "markdown", "semantic", "parent",
                        "conversation", "glossary", "code", "document", "fixd", "", "x:y"]),
       st.lists(st.sampled_from(["size=300", "overlap=20", "unit=tokens", "header=true",
                                 "title=true", "child=100", "rule=stdev", "size=0",
                                 "overlap_sentences=1", "bogus=1"]), max_size=3))
def test_the_grid_asks_the_parser(kind, params):
    """The oracle is the parser itself: a grid's chunker value is valid exactly when
    parse_chunker accepts it."""
    from workbench.chunking import parse_chunker
    from workbench.sweep.grid import check_value

    spec = f"{kind}:{','.join(params)}" if params else kind
    try:
        parse_chunker(spec)
        accepted = True
    except ValueError:
        accepted = False
    assert (check_value("chunker", spec) is None) == accepted, spec
