from workbench.corpus import Chunk
from workbench.retrieval import BM25Retriever, CallableRetriever, Hit, Retriever, tokenize


def chunks(texts):
    return [Chunk(f"d#{i}", "d", 0, len(t), t) for i, t in enumerate(texts)]


def test_tokenize_english_vietnamese_chinese_codes():
    tokens = tokenize("Lỗi ERR-4031 khi đăng nhập? 公司年假 The refund")
    assert "err-4031" in tokens and "err" in tokens and "4031" in tokens
    assert "lỗi" in tokens and "đăng" in tokens  # diacritics kept
    assert {"公", "司", "年", "假", "公司", "司年", "年假"} <= set(tokens)
    assert "the" not in tokens and "refund" in tokens


def test_bm25_ranks_exact_code_first_and_breaks_ties_by_id():
    r = BM25Retriever(chunks(["refund window is 30 days", "ERR-4031 means the token expired",
                              "shipping takes 5 days", "nothing here", "nothing here"]))
    assert isinstance(r, Retriever)
    hits = r.search("what is err 4031", 3)
    assert hits[0].chunk_id == "d#1" and [h.rank for h in hits] == [1, 2, 3]
    tied = r.search("unrelated words", 5)
    # the one tie rule (trec_eval's): equal scores by chunk id, descending
    assert [h.chunk_id for h in tied] == ["d#4", "d#3", "d#2", "d#1", "d#0"]
    assert len(r.search("refund", 50)) == 5


def test_bm25_vietnamese_and_chinese():
    r = BM25Retriever(chunks(["Nhân viên được nghỉ phép năm 15 ngày.", "公司年假有十五天。",
                              "Employees get 15 days of annual leave."]))
    assert r.search("nghỉ phép bao nhiêu ngày", 1)[0].chunk_id == "d#0"
    assert r.search("年假几天", 1)[0].chunk_id == "d#1"


def test_callable_retriever_wraps_ids_pairs_and_dedups():
    wrapped = CallableRetriever(lambda q: ["a#1", "b#0", "a#1", "c#2"], name="prod")
    hits = wrapped.search("q", 2)
    assert [(h.chunk_id, h.rank, h.source) for h in hits] == [("a#1", 1, "prod"),
                                                              ("b#0", 2, "prod")]
    scored = CallableRetriever(lambda q: [("x#0", 0.9), ("y#0", 0.5)]).search("q", 5)
    assert scored[1] == Hit("y#0", 0.5, 2, "callable")
    bad = CallableRetriever(lambda q: [3.5])
    try:
        bad.search("q", 1)
    except ValueError as exc:
        assert "return chunk ids" in str(exc)
    else:
        raise AssertionError("expected ValueError")
