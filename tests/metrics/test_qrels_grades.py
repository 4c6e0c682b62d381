"""Qrels as trec_eval reads them: graded BEIR qrels reach nDCG in ``eval`` (the binary
metrics count grades >= ``--relevance-threshold``, trec_eval's ``-l``), relevant documents
missing from the corpus count in the ideal ranking and recall's denominator, and ids compare
in one normal form (NFC). Checked on Cranfield's graded judgments against ``workbench trec``
and pytrec_eval on the same exported run."""

from __future__ import annotations

import itertools
import json
import re
import tempfile
import unicodedata
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.chunking import chunk_corpus, parse_chunker
from workbench.cli import main
from workbench.evaluation import evaluate
from workbench.golden import load_beir
from workbench.metrics import read_trec_qrels, read_trec_run
from workbench.retrieval import BM25Retriever

pytrec_eval = pytest.importorskip("pytrec_eval")


def smart_records(text: str) -> list[dict[str, str]]:
    """SMART records (``.I id`` then ``.T`` / ``.A`` / ``.B`` / ``.W`` fields)."""
    out = []
    for block in re.split(r"^\.I ", text.replace("\r\n", "\n"), flags=re.M)[1:]:
        head, _, rest = block.partition("\n")
        fields = dict(re.findall(r"^\.([TABW])\n(.*?)(?=^\.[TABW]\n|\Z)", rest, re.M | re.S))
        out.append({"id": head.strip(), **{k: " ".join(v.split()) for k, v in fields.items()}})
    return out


def cranfield_beir(datasets: Path, folder: Path, keep=lambda doc_id: True) -> Path:
    """Cranfield as a BEIR folder: queries numbered 1..225 by position (as its qrels number
    them), the graded qrels of QRelsCorrectedforTRECeval (5 = the question's source)."""
    src = datasets / "cranfield"
    (folder / "qrels").mkdir(parents=True)
    docs = smart_records((src / "cran.all.1400").read_text(encoding="utf-8"))
    with open(folder / "corpus.jsonl", "w", encoding="utf-8") as f:
        for d in docs:
            if keep(d["id"]):
                f.write(json.dumps({"_id": d["id"], "title": d.get("T", ""),
                                    "text": d.get("W", "")}) + "\n")
    queries = smart_records((src / "cran.qry").read_text(encoding="utf-8"))
    with open(folder / "queries.jsonl", "w", encoding="utf-8") as f:
        for n, q in enumerate(queries, start=1):
            f.write(json.dumps({"_id": str(n), "text": q["W"]}) + "\n")
    qrels = read_trec_qrels(src / "QRelsCorrectedforTRECeval")
    with open(folder / "qrels" / "test.tsv", "w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for qid, judged in qrels.items():
            for doc, grade in judged.items():
                f.write(f"{qid}\t{doc}\t{grade}\n")
    return folder


def eval_and_export(capsys, beir: Path, run: Path, *extra: str) -> tuple[dict, str]:
    assert main(["eval", "--corpus", str(beir), "--level", "document", "-k", "10", "-m",
                 "ndcg@10", "-m", "recall@10", "--json", "--export-run", str(run), *extra]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def trec_all(capsys, qrels: Path, run: Path, *args: str) -> dict[str, float]:
    assert main(["trec", str(qrels), str(run), *args]) == 0
    rows = [ln.split() for ln in capsys.readouterr().out.splitlines()]
    return {r[0]: float(r[2]) for r in rows}


def pytrec_means(qrels: Path, run: Path, measures: set[str], level: int = 1,
                 only: set[str] | None = None) -> dict[str, float]:
    judged = read_trec_qrels(qrels)
    scored = pytrec_eval.RelevanceEvaluator(judged, measures, relevance_level=level).evaluate(
        read_trec_run(run))
    qids = [q for q in scored if only is None or q in only]
    return {m: sum(scored[q][m] for q in qids) / len(qids) for m in measures}


@pytest.fixture(scope="module")
def cranfield(datasets, tmp_path_factory):
    return cranfield_beir(datasets, tmp_path_factory.mktemp("cranfield") / "beir")


def test_graded_ndcg_of_eval_is_trecs_and_pytrec_evals_on_the_same_run(cranfield, capsys,
                                                                        tmp_path):
    out, _ = eval_and_export(capsys, cranfield, tmp_path / "run.trec")
    qrels = cranfield / "qrels" / "test.tsv"
    trec = trec_all(capsys, qrels, tmp_path / "run.trec", "-m", "ndcg_cut_10")
    ref = pytrec_means(qrels, tmp_path / "run.trec", {"ndcg_cut_10"})
    print(f"Cranfield graded nDCG@10: eval {out['metrics']['ndcg@10']:.4f}, trec "
          f"{trec['ndcg_cut_10']:.4f}, pytrec_eval {ref['ndcg_cut_10']:.4f} (n={out['n']})")
    assert out["n"] == trec["num_q"] == 225
    assert out["metrics"]["ndcg@10"] == pytest.approx(trec["ndcg_cut_10"], abs=1e-4)
    assert out["metrics"]["ndcg@10"] == pytest.approx(ref["ndcg_cut_10"], abs=1e-4)
    # the grades are what differs from binary judgments: the same run judged 0/1 scores apart
    binary = tmp_path / "binary.tsv"
    binary.write_text("".join(f"{q}\t{d}\t1\n" for q, j in read_trec_qrels(qrels).items()
                              for d in j), encoding="utf-8")
    flat = pytrec_means(binary, tmp_path / "run.trec", {"ndcg_cut_10"})
    assert abs(flat["ndcg_cut_10"] - out["metrics"]["ndcg@10"]) > 1e-3


def test_the_relevance_threshold_is_trec_evals_l(cranfield, capsys, tmp_path):
    out, _ = eval_and_export(capsys, cranfield, tmp_path / "run.trec",
                             "--relevance-threshold", "4")
    qrels = cranfield / "qrels" / "test.tsv"
    high = {q for q, j in read_trec_qrels(qrels).items() if max(j.values()) >= 4}
    ref = pytrec_means(qrels, tmp_path / "run.trec", {"recall_10", "ndcg_cut_10"}, level=4,
                       only=high)
    assert out["n"] == len(high)
    at_one = pytrec_means(qrels, tmp_path / "run.trec", {"recall_10"})
    assert abs(at_one["recall_10"] - ref["recall_10"]) > 1e-3  # the threshold is applied
    assert out["metrics"]["recall@10"] == pytest.approx(ref["recall_10"], abs=1e-4)
    assert out["metrics"]["ndcg@10"] == pytest.approx(ref["ndcg_cut_10"], abs=1e-4)


def test_relevant_documents_missing_from_the_corpus_count_as_trec_eval_counts_them(
        datasets, capsys, tmp_path):
    beir = cranfield_beir(datasets, tmp_path / "beir", keep=lambda d: int(d) % 7)
    qrels = beir / "qrels" / "test.tsv"
    absent = sum(1 for j in read_trec_qrels(qrels).values() for d in j if int(d) % 7 == 0)
    with pytest.warns(UserWarning, match=f"{absent} relevant judgment.s. name documents not "
                      "in .*recall's denominator"):
        out, _ = eval_and_export(capsys, beir, tmp_path / "run.trec")
    trec = trec_all(capsys, qrels, tmp_path / "run.trec", "-m", "ndcg_cut_10", "-m",
                    "recall_10")
    ref = pytrec_means(qrels, tmp_path / "run.trec", {"ndcg_cut_10", "recall_10"})
    for ours, theirs in (("ndcg@10", "ndcg_cut_10"), ("recall@10", "recall_10")):
        assert out["metrics"][ours] == pytest.approx(trec[theirs], abs=1e-4)
        assert out["metrics"][ours] == pytest.approx(ref[theirs], abs=1e-4)


DOCS = {"Nguyễn": "quy định nghỉ phép năm của nhân viên", "Trần": "chính sách hoàn tiền",
        "Lê-Đức": "giờ làm việc và làm thêm giờ", "Phạm": "bảo hiểm y tế cho nhân viên",
        "Hồ": "quy trình tuyển dụng nhân sự", "Đặng": "nghỉ phép ốm và thai sản"}
QUERIES = {"câu1": "nghỉ phép", "câu2": "nhân viên", "câu3": "giờ làm"}
QRELS = {"câu1": {"Nguyễn": 2, "Đặng": 1}, "câu2": {"Phạm": 1, "Nguyễn": 1, "Hồ": 3},
         "câu3": {"Lê-Đức": 2}}


def scores_with(decompose: list[bool]) -> list[float]:
    """evaluate on a tiny Vietnamese BEIR folder whose qrels spell the ids decomposed
    (NFD) where ``decompose`` says so."""
    flags = itertools.cycle(decompose)

    def spell(s: str) -> str:
        return unicodedata.normalize("NFD", s) if next(flags) else s

    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        (folder / "qrels").mkdir()
        (folder / "corpus.jsonl").write_text("".join(
            json.dumps({"_id": i, "text": t}, ensure_ascii=False) + "\n" for i, t in DOCS.items()),
            encoding="utf-8")
        (folder / "queries.jsonl").write_text("".join(
            json.dumps({"_id": spell(q), "text": t}, ensure_ascii=False) + "\n"
            for q, t in QUERIES.items()), encoding="utf-8")
        (folder / "qrels" / "test.tsv").write_text("".join(
            f"{spell(q)}\t{spell(doc)}\t{g}\n" for q, j in QRELS.items() for doc, g in j.items()),
            encoding="utf-8")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no document may go missing
            corpus, golden = load_beir(folder)
        chunks = chunk_corpus(parse_chunker("document:title=true"), corpus.documents)
        ev = evaluate(BM25Retriever(chunks), golden, chunks, metrics=["ndcg@5", "recall@3",
                                                                     "mrr@5"], k=5,
                      level="document")
        return ev.to_frame().sort_values(["metric", "qid"])["value"].tolist()


@settings(max_examples=25, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=12))
def test_decomposed_ids_in_the_qrels_give_the_numbers_of_composed_ones(decompose):
    assert scores_with(decompose) == scores_with([False])


@pytest.mark.parametrize("source", [True, False])
def test_eval_and_trec_give_the_same_n_and_means_at_every_threshold(cranfield, capsys,
                                                                    tmp_path, source):
    """Cranfield's graded qrels at every threshold, with the grade-5 judgments (each
    question's source document: every topic has one) and without them (grades 1-4: topics
    without a relevant document from threshold 2 on): eval's n and means equal what trec
    states for the topics with a relevant document (its stdout when every topic has one,
    else its note), and trec's num_q (trec_eval's) adds the topics eval excluded."""
    import shutil

    if not source:
        folder = tmp_path / "beir"
        shutil.copytree(cranfield, folder)
        lines = (cranfield / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
        (folder / "qrels" / "test.tsv").write_text("\n".join(
            ln for ln in lines if not ln.endswith("\t5")) + "\n", encoding="utf-8")
        cranfield = folder
    qrels = cranfield / "qrels" / "test.tsv"
    noted = 0
    for threshold in range(1, 6 if source else 5):
        out, _ = eval_and_export(capsys, cranfield, tmp_path / "run.trec",
                                 "--relevance-threshold", str(threshold))
        assert main(["trec", str(qrels), str(tmp_path / "run.trec"), "--threshold",
                     str(threshold), "-m", "ndcg_cut_10", "-m", "recall_10"]) == 0
        std, err = capsys.readouterr()
        rows = {r[0]: r[2] for r in map(str.split, std.splitlines())}
        excluded = out["excluded"]["no_relevant_at_threshold"]
        assert int(rows["num_q"]) == out["n"] + excluded
        stated = rows
        if excluded:
            noted += 1
            note = re.search(r"(\d+) of \d+ topics .* excludes them: n=(\d+): (.*)", err)
            assert note is not None and [int(note[1]), int(note[2])] == [excluded, out["n"]]
            stated = dict(part.split() for part in note[3].split(", "))
        assert float(stated["ndcg_cut_10"]) == pytest.approx(out["metrics"]["ndcg@10"], abs=1e-4)
        assert float(stated["recall_10"]) == pytest.approx(out["metrics"]["recall@10"],
                                                           abs=1e-4)
    assert noted == (0 if source else 3)  # without the sources: thresholds 2-4
