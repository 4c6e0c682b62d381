"""Reading (workbench.io.reading): text and JSON with file:line errors."""

from __future__ import annotations

import json

import pytest

from workbench.io import (
    InputError,
    atomic_write_text,
    decode_json_file,
    decode_json_line,
    iter_jsonl,
    read_text,
)


def test_read_text_names_the_file_and_the_line_of_bytes_that_are_not_utf8(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_bytes(b'{"qid": "a"}\n{"qid": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"g\.jsonl:2: byte 0xe9 at column 13 is not UTF-8"):
        read_text(path)
    with pytest.raises(InputError, match="is a folder, not a golden set file"):
        read_text(tmp_path, "golden set")
    with pytest.raises(InputError, match="baseline file not found"):
        read_text(tmp_path / "none.json", "baseline")
    path.write_bytes("\ufeff{}".encode())
    assert read_text(path) == "{}"  # a byte-order mark is dropped


def test_decode_refuses_what_json_would_accept_silently(tmp_path):
    with pytest.raises(InputError, match=r"f:3: field 'qid': given twice"):
        decode_json_line('{"qid": "a", "qid": "b"}', "f:3")
    with pytest.raises(InputError, match=r"f:1: field 'evidence\[0\]\.text': holds a lone"):
        decode_json_line('{"evidence": [{"text": "\\ud800"}]}', "f:1")
    with pytest.raises(InputError, match="nested too deeply"):
        decode_json_line("[" * 100_000 + "]" * 100_000, "f:1")
    with pytest.raises(InputError, match=r"f:1: malformed JSON"):
        decode_json_line("{oops", "f:1")
    with pytest.raises(InputError, match=r"b\.json:3: malformed JSON"):
        decode_json_file('{\n  "a": 1,\n  oops\n}', "b.json")
    assert decode_json_line('{"a": "\\ud83d\\ude00"}', "f:1") == {"a": "😀"}  # a pair is fine
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n\n{"a": "x\u2028y"}\n', encoding="utf-8")
    assert [w for w, _ in iter_jsonl(path)] == [f"{path}:1", f"{path}:3"]  # U+2028 is no line


def test_json_rows_round_trip(tmp_path):
    path = tmp_path / "x.jsonl"
    atomic_write_text(path, "".join(json.dumps({"i": i}) + "\n" for i in range(3)))
    assert [row for _, row in iter_jsonl(path)] == [{"i": 0}, {"i": 1}, {"i": 2}]


def test_is_int_is_an_int_that_is_not_a_bool():
    from fractions import Fraction

    from workbench.io import is_int

    assert [is_int(v) for v in (0, -3, 10**30)] == [True, True, True]
    assert not any(is_int(v) for v in (True, False, 1.0, "1", None, Fraction(1), [1]))
