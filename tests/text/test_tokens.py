"""Token counters: real MiniLM WordPiece and cl100k BPE, offsets back into the original text."""

from __future__ import annotations

import os
import unicodedata

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import itertools

from workbench.text.tokens import (
    CharCounter,
    Cl100kCounter,
    HFTokenizerCounter,
    get_counter,
    minilm_tokenizer_path,
)

# Text written for these tests (not taken from any source): about office policies.
ENGLISH = (
    "Our office opens at eight in the morning and closes at six in the evening. "
    "Staff who need to work late should tell the building manager before five, so that "
    "the doors stay unlocked and the heating stays on. Visitors sign the book at the front "
    "desk and wear a badge while they are inside. Parking is free for the first two hours; "
    "after that the normal city rate applies. If you lose your badge, report it the same "
    "day so the old one can be switched off. Meeting rooms can be booked up to four weeks "
    "ahead, and a booking that nobody uses for fifteen minutes is released automatically. "
    "Coffee and tea are free in the kitchen on every floor, but please wash your own cup. "
    "Fire drills happen twice a year without warning, and everyone must leave by the "
    "nearest stairs rather than the lift. The first aid kit is next to the printer. "
)
VIETNAMESE = (
    "Văn phòng mở cửa lúc tám giờ sáng và đóng cửa lúc sáu giờ chiều. Nhân viên cần làm "
    "muộn phải báo cho quản lý tòa nhà trước năm giờ để cửa không bị khóa và máy sưởi vẫn "
    "chạy. Khách đến thăm ký sổ ở quầy lễ tân và đeo thẻ trong suốt thời gian ở bên trong. "
    "Gửi xe miễn phí trong hai giờ đầu; sau đó áp dụng giá thông thường của thành phố. Nếu "
    "bạn làm mất thẻ, hãy báo ngay trong ngày để thẻ cũ bị vô hiệu hóa. Phòng họp có thể "
    "đặt trước tối đa bốn tuần, và lượt đặt không ai dùng trong mười lăm phút sẽ tự động bị "
    "hủy. Cà phê và trà miễn phí ở bếp của mọi tầng, nhưng hãy tự rửa cốc của mình. Diễn tập "
    "phòng cháy diễn ra hai lần mỗi năm mà không báo trước, và mọi người phải rời đi bằng "
    "cầu thang gần nhất thay vì thang máy. Hộp sơ cứu nằm cạnh máy in. "
)


def _first_1000(text: str) -> str:
    out = text
    while len(out) < 1000:
        out += text
    return out[:1000]


def _check_offsets(text: str, offsets: list[tuple[int, int]]) -> None:
    last = (0, 0)
    for start, end in offsets:
        assert 0 <= start <= end <= len(text)
        assert start >= last[0] and end >= last[1], "offsets must be non-decreasing"
        last = (start, end)


@pytest.fixture(scope="module")
def minilm() -> HFTokenizerCounter:
    counter = get_counter("minilm")
    assert isinstance(counter, HFTokenizerCounter)
    return counter


@pytest.fixture(scope="module")
def cl100k() -> Cl100kCounter:
    counter = get_counter("cl100k")
    assert isinstance(counter, Cl100kCounter)
    return counter


def test_get_counter_is_cached_and_named(minilm: HFTokenizerCounter) -> None:
    assert get_counter("minilm") is minilm
    assert get_counter() is minilm
    assert minilm.name == "minilm"
    assert get_counter("chars").name == "chars"
    assert get_counter("cl100k").name == "cl100k"


def test_get_counter_unknown_name_says_what_is_valid() -> None:
    with pytest.raises(ValueError, match="minilm, cl100k, chars"):
        get_counter("no-such-tokenizer")


def test_get_counter_accepts_a_tokenizer_path() -> None:
    path = minilm_tokenizer_path()
    assert path.name == "tokenizer.json"
    by_file = get_counter(str(path))
    by_dir = get_counter(str(path.parent))
    text = "Nhân viên được nghỉ phép"
    assert by_file.count(text) == by_dir.count(text) == get_counter("minilm").count(text)


def test_minilm_counts_content_tokens_only(minilm: HFTokenizerCounter) -> None:
    # no [CLS]/[SEP], no padding to 128
    assert minilm.count("hello world") == 2
    assert minilm.count("a") == 1
    assert minilm.count("") == 0
    assert minilm.count("   \n ") == 0


def test_minilm_does_not_truncate(minilm: HFTokenizerCounter) -> None:
    text = "policy " * 1000
    assert minilm.count(text) == 1000
    assert len(minilm.offsets(text)) == 1000


def test_minilm_offsets_map_to_original_vietnamese(minilm: HFTokenizerCounter) -> None:
    # the normaliser lowercases and strips accents; offsets must still index the NFC text
    text = unicodedata.normalize("NFC", "Nhân viên được nghỉ phép. Thời hạn?")
    offsets = minilm.offsets(text)
    _check_offsets(text, offsets)
    assert len(offsets) == minilm.count(text)
    pieces = [text[s:e] for s, e in offsets]
    assert pieces[:2] == ["Nh", "ân"]
    assert "được" in "".join(pieces)
    # every letter lies in some token and tokens never cover spaces
    covered = {i for s, e in offsets for i in range(s, e)}
    assert all(i in covered for i, ch in enumerate(text) if ch.isalnum())
    assert all(not text[i].isspace() for i in covered)
    # stripping accents from each slice gives the token's letters
    enc = minilm._encode(text)
    for token, (s, e) in zip(enc.tokens, offsets, strict=True):
        folded = "".join(
            ch
            for ch in unicodedata.normalize("NFD", text[s:e].lower())
            if not unicodedata.combining(ch)
        )
        assert folded == token.removeprefix("##")


def test_minilm_offsets_chinese_and_unknown(minilm: HFTokenizerCounter) -> None:
    text = "公司年假有几天。☃"
    offsets = minilm.offsets(text)
    _check_offsets(text, offsets)
    assert [text[s:e] for s, e in offsets] == list(text)  # one token per CJK char / [UNK]


def test_cl100k_counts_and_offsets(cl100k: Cl100kCounter) -> None:
    assert cl100k.count("hello world") == 2
    assert cl100k.count("") == 0
    text = "The refund window is thirty days."
    offsets = cl100k.offsets(text)
    assert len(offsets) == cl100k.count(text)
    assert "".join(text[s:e] for s, e in offsets) == text  # ASCII: an exact partition


@pytest.mark.parametrize(
    "text", ["Nhân viên được nghỉ phép.", "公司年假有几天。年假十二天！", "emoji 🎉 and ☃ end"]
)
def test_cl100k_offsets_on_multibyte_text(cl100k: Cl100kCounter, text: str) -> None:
    offsets = cl100k.offsets(text)
    assert len(offsets) == cl100k.count(text)
    _check_offsets(text, offsets)
    assert offsets[0][0] == 0 and offsets[-1][1] == len(text)
    # consecutive tokens touch or share one character split across their bytes
    for (_, e1), (s2, _) in itertools.pairwise(offsets):
        assert e1 - 1 <= s2 <= e1


def test_cl100k_special_token_text_is_ordinary_text(cl100k: Cl100kCounter) -> None:
    assert cl100k.count("before <|endoftext|> after") > 3


def test_cl100k_long_text_is_encoded_in_blocks(cl100k: Cl100kCounter) -> None:
    line = "The refund window is thirty days.\n"
    text = line * 40_000  # 1.36M characters: over bpe-openai's one-call limit
    n = cl100k.count(text)
    assert abs(n - cl100k.count(line) * 40_000) <= 40
    offsets = cl100k.offsets(text[:250_000])
    _check_offsets(text[:250_000], offsets)
    assert offsets[-1][1] == 250_000


def test_char_counter() -> None:
    counter = CharCounter()
    assert counter.count("Nhân") == 4
    assert counter.offsets("ab") == [(0, 1), (1, 2)]


def test_vietnamese_costs_more_tokens_than_english_per_character(
    minilm: HFTokenizerCounter, cl100k: Cl100kCounter
) -> None:
    english = _first_1000(ENGLISH)
    vietnamese = unicodedata.normalize("NFC", _first_1000(VIETNAMESE))
    assert len(english) == len(vietnamese) == 1000
    en, vi = minilm.count(english), minilm.count(vietnamese)
    assert en < 260  # roughly 4 characters per token in English
    assert vi > 1.5 * en  # 1,000 characters of Vietnamese are far more MiniLM tokens
    assert cl100k.count(vietnamese) > 1.5 * cl100k.count(english)
