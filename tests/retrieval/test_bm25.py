import re
import unicodedata

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.corpus import Chunk
from workbench.retrieval import BM25Retriever, CallableRetriever, Hit, Retriever, tokenize
from workbench.text import CJK, HANGUL


def chunks(texts):
    return [Chunk(f"d#{i}", "d", 0, len(t), text=t) for i, t in enumerate(texts)]


def test_tokenize_english_vietnamese_chinese_codes():
    tokens = tokenize("Lỗi ERR-4031 khi đăng nhập? 公司年假 The refund")
    assert "err-4031" in tokens and "err" in tokens and "4031" in tokens
    assert "lỗi" in tokens and "đăng" in tokens  # diacritics kept
    assert {"公", "司", "年", "假", "公司", "司年", "年假"} <= set(tokens)
    assert "the" not in tokens and "refund" in tokens


HAN_RUN = "的退款政策在上海适用"


@pytest.mark.parametrize("text, words, han_run", [
    ("2024年的退款政策在上海适用", ["2024"], "年" + HAN_RUN),  # digits, then Han
    ("API的速率限制是多少", ["api"], "的速率限制是多少"),  # Latin, then Han
    ("ＡＰＩ的速率限制是多少", ["api"], "的速率限制是多少"),  # full-width Latin (NFKC)
    ("２０２４年的退款政策在上海适用", ["2024"], "年" + HAN_RUN),  # full-width digits
    ("退款政策v2版", ["v2"], None),  # Han, Latin, Han
    ("ERR-4031错误", ["err-4031", "err", "4031"], "错误"),  # a code, then Han
])
def test_a_word_never_runs_into_han(text, words, han_run):
    tokens = tokenize(text)
    for word in words:
        assert word in tokens
    cjk = re.compile(rf"[{CJK}]{{1,2}}")  # Han gives unigrams and bigrams, never longer or mixed
    assert all(cjk.fullmatch(t) for t in tokens if re.search(f"[{CJK}]", t)), tokens
    if han_run:
        assert {*han_run, *(han_run[i:i + 2] for i in range(len(han_run) - 1))} <= set(tokens)


def test_japanese_kana_and_kanji_become_character_ngrams():
    tokens = tokenize("東京タワーは333メートル")
    assert "333" in tokens
    assert {"東京", "タワ", "ワー", "メー", "トル", "は"} <= set(tokens)
    assert tokenize("ｶﾀｶﾅ") == tokenize("カタカナ")  # half-width katakana (NFKC)
    assert "・" not in "".join(tokenize("ジョン・スミス"))  # the middle dot is punctuation


def test_korean_words_stay_whole_and_match_with_particles():
    tokens = tokenize("서울에서 API를 호출")
    assert {"서울에서", "서울", "에서", "api", "를", "호출"} <= set(tokens)
    r = BM25Retriever(chunks(["서울에서 회의가 열립니다", "부산에서 회의가 열립니다"]))
    assert r.search("서울 회의", 1)[0].chunk_id == "d#0"


SCRIPTS = st.sampled_from(["abc", "ERR-4031", "2024", "年", "退款", "タワー", "かな", "서울",
                           "에서", "ＡＰＩ", "２０", "lỗi", "đăng", " ", "。", ",", "-", "_"])


@given(st.lists(SCRIPTS, max_size=12))
def test_every_token_is_one_script(parts):
    """No token mixes CJK with anything else, or Hangul with anything else."""
    cjk, hangul = re.compile(rf"[{CJK}]"), re.compile(rf"[{HANGUL}]")
    for token in tokenize("".join(parts)):
        for cls in (cjk, hangul):
            assert not cls.search(token) or all(cls.fullmatch(c) for c in token), token


@given(st.lists(SCRIPTS, max_size=12))
def test_full_width_forms_tokenise_as_their_ascii(parts):
    text = "".join(parts)
    assert tokenize(text) == tokenize(unicodedata.normalize("NFKC", text))


def test_bm25_finds_han_after_a_digit_or_latin_word():
    """The issue's failure: '2024年的...' was one token, so a query on '退款政策' missed it."""
    r = BM25Retriever(chunks(["2024年的退款政策在上海适用", "员工手册的其他内容",
                              "API的速率限制是多少"]))
    assert r.search("退款政策", 1)[0].chunk_id == "d#0"
    assert r.search("速率限制", 1)[0].chunk_id == "d#2"


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


def test_callable_retriever_wraps_ids_pairs_and_keeps_duplicates():
    """A repeated id stays a rank (base module doc: duplicates are kept, so junk repeated
    ahead of gold pushes gold out of the top k), and the cut at k comes after them."""
    wrapped = CallableRetriever(lambda q: ["a#1", "b#0", "a#1", "c#2"], name="prod")
    assert [(h.chunk_id, h.rank, h.source) for h in wrapped.search("q", 4)] == [
        ("a#1", 1, "prod"), ("b#0", 2, "prod"), ("a#1", 3, "prod"), ("c#2", 4, "prod")]
    junk = CallableRetriever(lambda q: ["junk#0"] * 10 + ["gold#0"])
    assert [h.chunk_id for h in junk.search("q", 2)] == ["junk#0", "junk#0"]
    scored = CallableRetriever(lambda q: [("x#0", 0.9), ("y#0", 0.5)]).search("q", 5)
    assert scored[1] == Hit("y#0", 0.5, 2, "callable")
    with pytest.raises(ValueError, match="return chunk ids"):
        CallableRetriever(lambda q: [3.5]).search("q", 1)


@given(st.text(alphabet=st.sampled_from("refund wo4-é退款\u200b\u2060\ufeff\u00ad"), max_size=40))
def test_a_query_tokenises_as_its_loaded_form(text):
    """Invisible characters pasted into a live query never split a word: the query reads as
    the same text loaded from a file (normalize_text) does."""
    from workbench.text import normalize_text

    assert tokenize(text) == tokenize(normalize_text(text))


def test_a_zero_width_space_in_a_live_query_finds_the_same_chunks():
    bm25 = BM25Retriever(chunks(["Refunds are paid within 30 days.",
                                 "Reset your password: the links expire in an hour."]))
    typed = [h.chunk_id for h in bm25.search("password expire", k=2)]
    pasted = [h.chunk_id for h in bm25.search("pass\u200bword ex\u00adpire", k=2)]
    assert pasted == typed and typed[0] == "d#1"
    alone = bm25.search("password", k=1)[0]
    assert alone.chunk_id == "d#1" and alone.score > 0
    assert bm25.search("pass\u200bword", k=1)[0].score == alone.score


WORDS = st.sampled_from(["refund", "policy", "ERR-4031", "v2.1", "the", "年假", "서울에서",
                         "lỗi", "a_b", "x", "ＡＰＩ", "refund"])


@given(st.lists(st.lists(WORDS, max_size=12).map(" ".join), min_size=1, max_size=30),
       st.integers(1, 7), st.lists(WORDS, min_size=1, max_size=4).map(" ".join))
def test_the_index_built_in_blocks_is_bm25s_own(texts, block, query):
    """Built from token ids a block of chunks at a time (never a token list per chunk), the
    index is the one bm25s builds from the same ids: the same scores for every query, bit
    for bit, whatever the block size."""
    import bm25s

    import workbench.retrieval.bm25 as bm25

    old, bm25.BLOCK = bm25.BLOCK, block
    try:
        ours = BM25Retriever(chunks(texts))
    finally:
        bm25.BLOCK = old
    vocab: dict[str, int] = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in tokenize(text)] for text in texts]
    assert ours.vocab == vocab
    if not vocab:  # no chunk holds a token (bm25s refuses to index that): nothing scores
        assert not ours.scores(query).any()
        return
    theirs = bm25s.BM25(k1=1.5, b=0.75, backend="numpy")
    theirs.index(bm25s.tokenization.Tokenized(ids=ids, vocab=dict(vocab)), show_progress=False)
    asked = [vocab[t] for t in tokenize(query) if t in vocab]
    expected = theirs.get_scores(asked) if asked else np.zeros(len(texts), np.float32)
    assert ours.scores(query).tobytes() == np.asarray(expected, np.float32).tobytes()


@given(st.text(alphabet=st.sampled_from(list("aZé-_.,1２ＡＰＩ\u200b\u0301ßİǅﬁⅷ¹٣ 什么서울カー")),
               max_size=30),
       st.sampled_from([frozenset(), frozenset({"a", "1", "the"})]))
def test_text_without_cjk_or_hangul_tokenises_by_the_same_rules(text, stopwords):
    """The fast path for alphabetic text gives what the general rules give (each match of
    the token pattern taken by its script)."""
    from workbench.retrieval.bm25 import _TOKEN, _bigrams
    from workbench.text import fold, normalize_text

    out: list[str] = []
    for match in _TOKEN.finditer(fold(normalize_text(text))):
        token = match.group(0)
        if match.group("cjk"):
            out.extend(c for c in token if c not in stopwords)
            out.extend(_bigrams(token))
        elif match.group("hangul"):
            out.append(token)
            if len(token) > 2:
                out.extend(_bigrams(token))
        elif token not in stopwords:
            out.append(token)
            parts = re.split(r"[-_.]", token)
            if len(parts) > 1:
                out.extend(p for p in parts if p not in stopwords)
    assert tokenize(text, stopwords) == out


def test_bm25_for_builds_once_per_chunking_and_anew_when_a_text_changes():
    """A second labeller over the same chunks gets the same index; a changed text or id is
    another chunking, and its index scores what a fresh build scores."""
    from dataclasses import replace

    from workbench.retrieval import bm25_for

    built = chunks([f"refund window {i} days" for i in range(5)])
    first = bm25_for(built)
    assert bm25_for(list(built)) is first
    changed = [*built[:4], replace(built[4], text="parental leave", embed_text="parental leave")]
    renamed = [*built[:4], replace(built[4], id="d#9")]
    for other in (changed, renamed):
        got = bm25_for(other)
        assert got is not first and got.chunk_ids == [c.id for c in other]
        for q in ("refund", "leave", "4 days"):
            assert got.scores(q).tobytes() == BM25Retriever(other).scores(q).tobytes()
