"""The command's error handling: it catches the package's own error type
(:class:`workbench.io.WorkbenchError`) and nothing else, so a bug shows its traceback while
every bad input is one line and exit 2. Both sides: planted bugs surface; generated bad
inputs (chunker specs, metric names, golden rows, grid files) never escape as another
exception."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from workbench.cli import main
from workbench.io import InputError, WorkbenchError

HANDBOOK = ROOT / "data" / "handbook"
DOCS = str(HANDBOOK / "docs")
GOLDEN = str(HANDBOOK / "golden.jsonl")
SLOW = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """Exit code and stderr of one command; any exception but SystemExit propagates (the
    property under test: only the package's errors are caught, and they are caught)."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: exit 2 and its usage line
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def one_line(code: int, err: str) -> None:
    assert "Traceback" not in err
    if code == 2:
        lines = [line for line in err.strip().splitlines() if not line.startswith("usage:")
                 and not line.startswith(" ")]
        assert len(lines) == 1 and lines[0].startswith("workbench"), err
    else:
        assert code == 0, err


# ----------------------------------------------------------------------------- bugs surface

@pytest.mark.parametrize("bug", [TypeError("planted"), KeyError("planted"),
                                 OSError("planted"), ValueError("planted"),
                                 RecursionError("planted")])
def test_a_planted_bug_keeps_its_traceback(bug, monkeypatch, capsys):
    import workbench.chunking

    def broken(*args, **kwargs):
        raise bug

    monkeypatch.setattr(workbench.chunking, "diagnose_chunking", broken)
    with pytest.raises(type(bug), match="planted"):
        main(["chunks", "--corpus", DOCS, "--golden", GOLDEN, "--chunker", "fixed:size=400"])


def test_a_planted_bug_prints_a_traceback_from_the_real_command(tmp_path):
    script = ("import sys, workbench.chunking as s\n"
              "def broken(*a, **k): return {}['missing']  # a real bug: KeyError\n"
              "s.diagnose_chunking = broken\n"
              "from workbench.cli import main\n"
              f"sys.exit(main(['chunks', '--corpus', {DOCS!r}, '--golden', {GOLDEN!r}, "
              "'--chunker', 'fixed']))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert out.returncode == 1 and "Traceback" in out.stderr and "KeyError" in out.stderr


def test_the_package_errors_share_one_base():
    from workbench.corpus.offsets import LocateError
    from workbench.gate import BaselineRefused
    from workbench.golden import GoldenSetError
    from workbench.io import StaleFileError
    from workbench.retrieval.base import UnreadableHit
    from workbench.retrieval.shards import ShardError

    for cls in (InputError, StaleFileError, LocateError, BaselineRefused, GoldenSetError,
                UnreadableHit, ShardError):
        assert issubclass(cls, WorkbenchError) and issubclass(cls, ValueError)


def test_no_module_raises_a_bare_value_error():
    """Every deliberate refusal raises the package's type (a bare ValueError would now be a
    traceback in the command)."""
    offenders = [f"{p.relative_to(ROOT)}:{n}" for p in sorted((ROOT / "workbench").rglob("*.py"))
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if "raise ValueError(" in line]
    allowed = ("workbench/widgets/", "workbench/corpus/pdf_text.py")  # no command reads them
    assert [o for o in offenders if not o.startswith(allowed)] == []


# ----------------------------------------------------------------------------- bad inputs

SPEC_CHARS = st.sampled_from(list("fixedsntcrculvmakdopgh:=,.-_ 0123456789ÿ\t\"'"))
SPECS = st.one_of(
    st.text(SPEC_CHARS, max_size=30),
    st.builds(lambda name, key, value: f"{name}:{key}={value}",
              st.sampled_from(["fixed", "sentence", "recursive", "markdown", "document",
                               "parent", "semantic", "code", "glossary", "conversation", "x"]),
              st.sampled_from(["size", "overlap", "unit", "header", "title", "bogus", ""]),
              st.one_of(st.integers(-10**12, 10**12).map(str),
                        st.sampled_from(["", "1e9", "nan", "inf", "-0", "true", "tokens",
                                         "0x10", "１００", "½"]))))


@SLOW
@given(spec=SPECS)
def test_any_chunker_spec_is_a_result_or_one_line(spec, capsys):
    one_line(*run_cli(["chunks", "--corpus", DOCS, "--golden", GOLDEN, "--chunker", spec],
                      capsys))


METRICS = st.one_of(st.text(st.sampled_from(list("recalmpisonhtdg@_0123456789>=.-k ")),
                            max_size=20),
                    st.builds(lambda m, k: f"{m}@{k}",
                              st.sampled_from(["recall", "mrr", "ndcg", "precision", "map",
                                               "hit_rate", "evidence_recall", "x"]),
                              st.one_of(st.integers(-5, 10**7).map(str),
                                        st.sampled_from(["", "k", "1.5", "nan", "٣"]))))


@SLOW
@given(metric=METRICS, k=st.sampled_from(["5", "0", "-1", "1000000", "x", "1e3"]))
def test_any_metric_and_cutoff_is_a_result_or_one_line(metric, k, capsys):
    one_line(*run_cli(["eval", "--corpus", DOCS, "--golden", GOLDEN, "-m", metric, "-k", k],
                      capsys))


JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**400, 10**400),
              st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=6)
ROW_KEYS = ["qid", "question", "relevant_chunk_ids", "evidence", "answer_must_mention",
            "category", "answerable", "grades"]


@SLOW
@given(row=st.dictionaries(st.sampled_from(ROW_KEYS), JSON_VALUES, max_size=5))
def test_any_golden_row_is_a_result_or_one_clear_refusal(row, tmp_path_factory, capsys):
    path = tmp_path_factory.mktemp("golden") / "golden.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    code = main(["validate", str(path), "--corpus", DOCS])  # 1: problems listed on stdout
    captured = capsys.readouterr()
    said = captured.err + captured.out
    assert "Traceback" not in said and code in (0, 1, 2), said
    if code != 0:
        assert str(path) in said, said  # the file is named


GRID_VALUES = st.one_of(st.integers(-10**9, 10**9), st.floats(allow_nan=True),
                        st.text(max_size=6), st.booleans(), st.none(),
                        st.lists(st.one_of(st.integers(-10**7, 10**7), st.text(max_size=4)),
                                 max_size=3))


@SLOW
@given(grid=st.dictionaries(st.sampled_from(["chunker", "size", "overlap", "retriever", "k",
                                             "metrics", "encoder", "unit", "bogus"]),
                            GRID_VALUES, min_size=1, max_size=4))
def test_any_grid_file_is_refused_in_one_line_or_runs(grid, tmp_path_factory, capsys):
    folder: Path = tmp_path_factory.mktemp("grid")
    path = folder / "grid.json"
    path.write_text(json.dumps(grid), encoding="utf-8")
    grid_of = {k: v for k, v in grid.items() if k != "encoder"}  # no model in this test
    path.write_text(json.dumps(grid_of or {"k": [0]}), encoding="utf-8")
    code, err = run_cli(["sweep", "--corpus", DOCS, "--golden", GOLDEN, "--grid", str(path),
                         "--cache", str(folder / "cache"), "--json"], capsys)
    one_line(code, err)
