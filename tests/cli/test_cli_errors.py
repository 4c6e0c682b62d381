"""The command's error handling: it catches the package's own error type
(:class:`workbench.io.WorkbenchError`) and nothing else, so a bug shows its traceback while
every bad input is one line and exit 2. Both sides: planted bugs surface; generated bad
inputs (chunker specs, metric names, golden rows, grid files) never escape as another
exception."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import HANDBOOK, ROOT
from workbench.cli import build_parser, main
from workbench.io import InputError, WorkbenchError

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
    from workbench.retrieval.production_hits import UnreadableHit
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


# ----------------------------------------------------------------------------- every command

#: What the walk below tried: argument lists run, and how each ended.
CLI_TALLY = {"inputs": 0, "succeeded": 0, "refused": 0, "tracebacks": 0}
BAD_STRINGS = ["", " ", "nosuch", "-1", "0", "1", "0.999", "1e309", "nan", "inf", "a,b", ",",
               "x" * 300, "ǅ٣", "../..", "--"]


class _OfflineGenerator:
    """Stands in for the local model (a test of arguments, not of the model): the same
    interface, an answer in no time."""

    model_id = "fake/offline"

    def __init__(self, *args, **kwargs):
        from workbench.generation.prompt import PROMPT_VERSION

        self.prompt_version = PROMPT_VERSION
        self.cache_params: dict = {}

    def chat(self, messages, max_tokens=None, temperature=None):
        from workbench.generation.prompt import ChatReply

        return ChatReply("I do not know.")

    def generate(self, question, context):
        from workbench.generation.prompt import make_answer

        return make_answer(self.chat([]), context, self.model_id)

    def generate_many(self, requests, progress=False):
        return [self.generate(q, c) for q, c in requests]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, list[str]]:
    """Values for each kind of argument: valid ones (cheap to run) and bad ones (missing,
    a folder, empty, malformed, a quote never closed)."""
    folder = tmp_path_factory.mktemp("cli-inputs")
    files = {"empty.jsonl": "", "garbage.jsonl": "{not json\n", "unterminated.csv":
             'question\nfine?\n"never closed\nnext?\n', "grid.yaml":
             "size: [200, 400]\noverlap: [0]\nretriever: [bm25]\n", "bad-grid.yaml": "size: [\n",
             "models.json": '{"costs": {"a": 1}}', "scores.jsonl": '{"qid": "q001", "score": 9}\n'}
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    baseline = folder / "baseline.json"
    assert main(["gate", "--baseline", str(baseline), "--update-baseline", "--corpus", DOCS,
                 "--golden", GOLDEN, "--cache", str(folder / "cache")]) == 0
    bad_paths = [str(folder / "missing" / "x.jsonl"), str(folder), str(folder / "empty.jsonl"),
                 str(folder / "garbage.jsonl")]
    out = [str(folder / "out" / "o.jsonl"), str(folder / "o.html"), str(folder),
           str(folder / "no" / "such" / "dir" / "o.jsonl")]
    return {
        "corpus": [DOCS, *bad_paths], "golden": [GOLDEN, *bad_paths],
        "baseline": [str(baseline), *bad_paths, str(folder / "typo.json")],
        "grid": [str(folder / "grid.yaml"), str(folder / "bad-grid.yaml"), *bad_paths],
        "files": [str(HANDBOOK / "question_log.csv"), str(folder / "unterminated.csv"),
                  *bad_paths],
        "routing": [str(p) for p in sorted((ROOT / "data" / "routing").glob("*"))] + bad_paths,
        "models": [str(folder / "models.json"), *bad_paths],
        "scores": [str(folder / "scores.jsonl"), *bad_paths],
        "out": out, "cache": [str(folder / "cache"), str(folder / "empty.jsonl")],
        "retriever": ["bm25", "nosuch", "", "dense+x"], "encoder": ["nosuch-model-xyz", ""],
        "distractors": ["bm25", "nosuch", "", "bm25,bm25"],
        "executor": ["processes:0", "processes:x", "nosuch", ""],
        "llm_url": ["http://127.0.0.1:9/v1", "not a url", ""],
        "chunker": ["fixed:size=300", "nosuch", "fixed:size=-1", ""],
        "metric": ["recall@5", "mrr", "nosuch@3", "recall@0"],
        "questions": ["q001", "nosuch", ",", "q001,q002"],
    }


#: Which pool an argument draws from, by its destination (default: the bad strings).
POOL = {"corpus": "corpus", "golden": "golden", "baseline": "baseline", "grid": "grid",
        "files": "files", "requests": "routing", "routes": "routing", "compare": "routing",
        "models": "models", "judge_with": "scores", "qrels": "golden", "run": "golden",
        "chunks": "golden", "out": "out", "export_run": "out", "traces": "out", "state": "out",
        "cache": "cache", "retriever": "retriever", "encoder": "encoder",
        "distractors": "distractors", "executor": "executor", "llm_url": "llm_url",
        "chunker": "chunker", "metric": "metric", "measure": "metric", "questions": "questions"}


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    return dict(next(a for a in parser._actions
                     if isinstance(a, argparse._SubParsersAction)).choices)


def _good(action: argparse.Action) -> str:
    """A valid value for an argument with no pool: its default, else one of its type."""
    if action.default not in (None, False):
        return str(action.default)
    return {"float": "0.3", "int": "3", "cutoff": "3", "non_negative_int": "3",
            "probability": "0.1", "share": "0.5"}.get(getattr(action.type, "__name__", ""), "x")


@st.composite
def argv_for(draw: st.DrawFn, command: str, inputs: dict[str, list[str]]) -> list[str]:
    """An argument list for ``command``: each of its arguments given or left out (a required
    one usually given), with a valid value (two times in three), else a bad one from its pool,
    a bad string or a choice that is not one."""
    argv = [command]
    for action in _commands()[command]._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if not draw(st.booleans()) and not (action.required and draw(st.integers(0, 9))):
            continue
        times = draw(st.integers(1, 2)) if isinstance(action, argparse._AppendAction) else 1
        for _ in range(times):
            flag = [draw(st.sampled_from(action.option_strings))] if action.option_strings else []
            if action.nargs == 0:
                argv += flag
                continue
            choices = [str(c) for c in action.choices or ()]
            pool = choices or inputs.get(POOL.get(action.dest, ""), []) or [_good(action)]
            bad = (["nosuch"] if choices else []) + pool[1:] + BAD_STRINGS
            values = [pool[0] if draw(st.integers(0, 2)) else draw(st.sampled_from(bad))
                      for _ in range(draw(st.integers(1, 2)) if action.nargs == "+" else 1)]
            argv += flag + values
    return argv


@pytest.mark.parametrize("command", sorted(_commands()))
def test_every_command_takes_any_input_to_a_result_or_one_line(command, inputs, tmp_path_factory,
                                                              capsys, monkeypatch):
    """Walk the parser: every command, generated arguments (bad values, missing and malformed
    files, folders, contradictory flags, options left out): exit 0 (or the command's
    documented 1), or exit 2 with one error line, the last on stderr (a report of the work
    done before it, such as the re-anchoring summary, may precede it); never a traceback."""
    import workbench.generation.local

    monkeypatch.setattr(workbench.generation.local, "LocalGenerator", _OfflineGenerator)
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.setenv("WORKBENCH_CACHE", inputs["cache"][0])
    # a generated output path ("0", " ") is relative: written in a folder of the test's own,
    # never in the checkout
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))

    @settings(max_examples=40, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(argv=argv_for(command, inputs))
    def check(argv: list[str]) -> None:
        CLI_TALLY["inputs"] += 1
        try:
            code, err = run_cli(argv, capsys)
        except Exception:
            CLI_TALLY["tracebacks"] += 1
            raise
        assert "Traceback" not in err, (argv, err)
        if code == 2:  # one error line, the last (reports of work done before it may precede)
            errors = [line for line in err.strip().splitlines() if ": error:" in line]
            assert len(errors) == 1 and errors[0].startswith("workbench"), (argv, err)
            said = [line for line in err.strip().splitlines() if not line.startswith(" ")]
            assert said[-1] == errors[0], (argv, err)  # indented: a golden set's problems
            CLI_TALLY["refused"] += 1
        else:
            assert code in (0, 1), (argv, code, err)
            CLI_TALLY["succeeded"] += 1

    check()


@pytest.fixture(scope="module", autouse=True)
def _report_cli_tally():
    yield
    if CLI_TALLY["inputs"]:
        print(f"\nCLI inputs tried: {CLI_TALLY['inputs']} ({CLI_TALLY['succeeded']} ran, "
              f"{CLI_TALLY['refused']} refused in one line), tracebacks: "
              f"{CLI_TALLY['tracebacks']}")


# ----------------------------------------------------------------------------- combinations

def _value(action: argparse.Action, avoid: object = None) -> list[str]:
    """Tokens that give ``action`` a valid value (none for a flag), not ``avoid``."""
    if action.nargs == 0:
        return []
    choices = [str(c) for c in action.choices or ()]
    return [next(c for c in choices if c != avoid)] if choices else [_good(action)]


def _violations() -> list[tuple[str, str, str, object]]:
    from workbench.cli.args import NEEDS

    return [(command, *rule) for command, rules in NEEDS.items() for rule in rules]


@pytest.mark.parametrize(("command", "option", "other", "wanted"), _violations())
def test_an_option_that_would_be_ignored_is_one_line(command, option, other, wanted, capsys):
    """Every rule of the table, broken: the option is given where it would be ignored (the
    option it needs left out, the one it cannot go with given, or another value): exit 2, one
    line naming both options, before any work; met, the rule does not speak."""
    actions = {a.dest: a for a in _commands()[command]._actions}

    def argv(broken: bool) -> list[str]:
        given: dict[str, list[str]] = {}
        for dest, action in actions.items():
            if dest == other and isinstance(wanted, bool):
                include, value = broken != wanted, _value(action)
            elif dest == other:
                include, value = True, _value(action, wanted) if broken else [str(wanted)]
            else:
                include, value = dest == option or action.required, _value(action)
            if include:
                given[dest] = [*action.option_strings[:1], *value]
        for group in _commands()[command]._mutually_exclusive_groups:
            if group.required and not {a.dest for a in group._group_actions} & set(given):
                first = next(a for a in group._group_actions if a.dest != other)
                given[first.dest] = [first.option_strings[0], *_value(first)]
        return [command, *(token for dest in actions if dest in given for token in given[dest])]

    code, err = run_cli(argv(broken=True), capsys)
    one_line(code, err)
    flags = {dest: (a.option_strings or [dest])[-1] for dest, a in actions.items()}
    assert code == 2 and flags[option] in err and flags[other] in err, (argv(True), err)
    from workbench.cli import given_options
    from workbench.cli.args import check_combinations

    kept = argv(broken=False)  # this rule is met (another rule of the table may still speak)
    try:
        check_combinations(build_parser().parse_args(kept), *given_options(kept))
    except WorkbenchError as exc:
        assert not (flags[option] in str(exc) and flags[other] in str(exc)), (kept, exc)


@pytest.mark.parametrize("argv", [
    ["gate", "--history", "--baseline", "typo.json"],
    ["gate", "--history", "--baseline", "typo.json", "--update-baseline"],
    ["questions", "{csv}", "-o", "{out}"],
    ["sweep", "--corpus", DOCS, "--golden", GOLDEN, "--grid", "{grid}", "--holdout", "0.999"],
    ["gate", "--generation", "--questions", "nosuch", "--baseline", "{out}",
     "--update-baseline", "--corpus", DOCS, "--golden", GOLDEN],
])
def test_the_reported_inputs_are_one_line(argv, tmp_path, capsys, monkeypatch):
    import workbench.generation.local

    monkeypatch.setattr(workbench.generation.local, "LocalGenerator", _OfflineGenerator)
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    (tmp_path / "q.csv").write_text('question\nfine?\n"never closed\nnext?\nlast?\n',
                                    encoding="utf-8")
    (tmp_path / "grid.yaml").write_text("size: [200, 400]\noverlap: [0]\nretriever: [bm25]\n",
                                        encoding="utf-8")
    names = {"{csv}": str(tmp_path / "q.csv"), "{out}": str(tmp_path / "out.json"),
             "{grid}": str(tmp_path / "grid.yaml")}
    code, err = run_cli([names.get(a, a) for a in argv], capsys)
    one_line(code, err)
    assert code == 2, err
    assert not (tmp_path / "out.json").exists()
