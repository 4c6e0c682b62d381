"""Every surface reads documents through a reader view (workbench/corpus/reader.py).

One canary corpus: a public document and a document restricted to ``finance`` whose text
holds a canary string; a golden item quotes the restricted document and its question holds a
second canary. Each surface of :data:`SURFACES` runs for a reader in ``engineering`` (not a
member) and everything it outputs (return values, HTML, files written, every model call a
scripted model records) is searched for the canaries; the same surface without a reader
refuses in one line naming ``user_groups=``. A walk over the package fails on a public
callable that takes a corpus, documents or chunks and is in neither inventory.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import workbench
from workbench.chunking import RecursiveChunker, chunk_corpus
from workbench.corpus import UNRESTRICTED, Chunk, Corpus, Document, ReaderRequired, admit
from workbench.corpus.reader import NOT_SURFACES, SURFACES, reaches_readers_of
from workbench.generation.prompt import Answer, ChatReply
from workbench.golden import Evidence, GoldenItem, GoldenSet
from workbench.io import WorkbenchError
from workbench.retrieval import BM25Retriever

CANARY = "ZQX-CANARY-7Q2X"     # in the restricted document's text only
QCANARY = "QCANARYQ-5510"      # in the restricted item's question only
OPEN_TEXT = ("# Refunds\n\nRefunds are issued within 30 days of the return. Keep the receipt "
             "and the order number for every refund you ask for.\n")
VAULT_TEXT = (f"# Refunds for the board\n\nRefunds are issued within 88513 days of the return. "
              f"The approval code is {CANARY} for every board refund you ask for.\n")
DOCS = Corpus([admit("open", OPEN_TEXT, "Refunds", {"acl": ["all"]}),
               admit("vault", VAULT_TEXT, "Board refunds", {"acl": ["finance"]})])
CHUNKS = chunk_corpus(RecursiveChunker(size=400, overlap=0), DOCS)
OUTSIDER = ["engineering"]


def _ev(doc_id: str, quote: str) -> Evidence:
    text = DOCS[doc_id].text
    at = text.index(quote)
    return Evidence(doc_id, at, at + len(quote), quote)


OPEN_ITEM = GoldenItem(qid="o1", question="how long do refunds take",
                       evidence=(_ev("open", "within 30 days"),),
                       answer_must_mention=("30 days",), category="refunds")
VAULT_ITEM = GoldenItem(qid="v1", question=f"what is the approval code {QCANARY}",
                        evidence=(_ev("vault", f"approval code is {CANARY}"),),
                        answer_must_mention=(CANARY,), category="board")
GOLDEN = GoldenSet([OPEN_ITEM, VAULT_ITEM])
SYNTHETIC = tuple(GoldenItem(qid=f"syn-{i.qid}", question=i.question, evidence=i.evidence,
                             answer_must_mention=i.answer_must_mention, category="synthetic-easy",
                             source="synthetic", extra={"kind": "easy"})
                  for i in (OPEN_ITEM, VAULT_ITEM))


class Recorder:
    """A scripted generator and chat model: answers by copying its context (so a leaked
    passage shows in the answer) and records every call."""

    model_id, prompt_version = "recorder", "p1"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def generate(self, question: str, context: Any) -> Answer:
        self.calls.append(question + "\n" + context.render())
        return Answer(" ".join(p.text for p in context.passages) or "I don't know",
                      model_id=self.model_id, prompt_version=self.prompt_version)

    def chat(self, messages: Any, max_tokens: int | None = None) -> ChatReply:
        prompt = messages[-1]["content"]
        self.calls.append(prompt)
        if "PASSAGE:" in prompt:
            return ChatReply("FACT: Refunds are issued within 30 days of the return.\n"
                             "ANSWER: 30 days\nQUESTION: how long until my refund?")
        return ChatReply("QUESTION: how long do I wait for the money back?")


def _unrestricted_traces() -> list[Any]:
    from workbench.diagnose import traces_from_result
    from workbench.generation import run_generation_eval

    bm25 = BM25Retriever(CHUNKS)
    result = run_generation_eval(Recorder(), bm25, GOLDEN, CHUNKS, documents=DOCS, k=3,
                                 user_groups=UNRESTRICTED)
    return [*traces_from_result(result, golden=GOLDEN, corpus=DOCS, chunks=CHUNKS), result]


def _text(*parts: Any) -> str:
    return "\n".join(p if isinstance(p, str) else json.dumps(p, default=repr) if isinstance(
        p, dict | list | tuple) else repr(p) for p in parts)


# Each runner runs its surface as the reader given in ``who`` (``{}``: no reader named) and
# returns everything the surface output, as text.
def _assemble(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.generation.context import assemble_context

    ctx = assemble_context([c.id for c in CHUNKS], CHUNKS, DOCS, **who)
    return _text(ctx.render(), ctx.to_record())


def _passthrough(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.generation.context import passthrough_context

    ctx = passthrough_context([c.id for c in CHUNKS], CHUNKS, DOCS, **who)
    return _text(ctx.render(), ctx.to_record())


def _generation(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.generation import run_generation_eval

    rec = Recorder()
    result = run_generation_eval(rec, BM25Retriever(CHUNKS), [OPEN_ITEM], CHUNKS,
                                 documents=DOCS, k=3, **who)
    return _text(rec.calls, result.frame.to_json(), result.contexts, result.answers,
                 result.grades, result.retrieved, result.gold)


def _swap(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.generation.oracle import context_swap

    rec = Recorder()
    frame = context_swap(rec, [OPEN_ITEM, VAULT_ITEM], CHUNKS, DOCS, **who)
    return _text(rec.calls, frame.to_json())


def _oracle(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.generation.oracle import oracle_context

    return _text(*(oracle_context(i, CHUNKS, DOCS, **who).render() for i in GOLDEN))


def _position(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.generation.position import handbook_position_items

    items = handbook_position_items(BM25Retriever(CHUNKS), [OPEN_ITEM], CHUNKS, DOCS, **who)
    return _text([vars(i) for i in items])


def _synthetic(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.synthetic.questions import generate_synthetic

    rec = Recorder()
    run = generate_synthetic(rec, CHUNKS, DOCS, chunks=CHUNKS,
                             distractors=[("bm25", BM25Retriever(CHUNKS))], **who)
    return _text(rec.calls, [i.to_json() for i in run.items], [vars(r) for r in run.rejected])


def _sample(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.synthetic.questions import sample_chunks

    return _text([c.text for c in sample_chunks(CHUNKS, 10, DOCS, min_chars=10, **who)])


def _distractors(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.synthetic.questions import find_distractors

    by_id = {c.id: c for c in CHUNKS}
    target = next(c for c in CHUNKS if c.doc_id == "open")
    found = find_distractors(target, "nothing", [("bm25", BM25Retriever(CHUNKS))], by_id,
                             documents=DOCS, **who)
    return _text([by_id[d["chunk_id"]].text for d in found])


def _worst_failures(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.evaluation import Run
    from workbench.evaluation.failures import worst_failures

    run = Run.from_retriever(BM25Retriever(CHUNKS), GOLDEN, k=1)
    failures = worst_failures(run, GOLDEN, CHUNKS, k=1, documents=DOCS, **who)
    return _text(failures.text(), failures._repr_html_())


def _evaluation_worst(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.evaluation import evaluate

    ev = evaluate(BM25Retriever(CHUNKS), GOLDEN, CHUNKS, k=1)
    failures = ev.worst(golden=GOLDEN, chunks=CHUNKS, k=1, documents=DOCS, **who)
    return _text(failures.text(), failures._repr_html_())


def _worst_traces(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.widgets.trace_viewer_worst import worst_traces

    traces = _unrestricted_traces()[:-1]
    failures = worst_traces(traces, GOLDEN, CHUNKS, k=1, documents=DOCS, **who)
    return _text(failures.text(), failures._repr_html_())


def _trace_question(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.diagnose import trace_question

    rec = Recorder()  # the question is the caller's own words, the item what it is graded on
    out = [trace_question(rec, BM25Retriever(CHUNKS), "what is the approval code", CHUNKS,
                          documents=DOCS, k=3, item=item, **who).to_json() for item in GOLDEN]
    return _text(rec.calls, out)


def _trace_viewer(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.widgets.trace_viewer import trace_viewer_html

    traces = _unrestricted_traces()[:-1]
    return _text(*(trace_viewer_html(t, GOLDEN.by_qid.get(t.qid) if hasattr(GOLDEN, "by_qid")
                                     else {i.qid: i for i in GOLDEN}.get(t.qid), CHUNKS, DOCS,
                                     **who) for t in traces))


def _trace_viewer_widget(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.widgets.trace_viewer import WORST, TraceViewer

    viewer = TraceViewer(_unrestricted_traces()[:-1], GOLDEN, CHUNKS, DOCS, k=1, **who)
    pages = []
    for _ in viewer.qids:
        pages.append(viewer.to_html())
        viewer.next()
    viewer.order.value = WORST
    pages.append(viewer.to_html())
    return _text(*pages, viewer.failures.text(), viewer.view.value)


def _worst_traces_html(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.widgets.trace_viewer import worst_traces_html

    return worst_traces_html(_unrestricted_traces()[:-1], GOLDEN, CHUNKS, DOCS, k=1, **who)


def _report_args() -> dict[str, Any]:
    from workbench.evaluation import evaluate

    *traces, result = _unrestricted_traces()
    ev = evaluate(BM25Retriever(CHUNKS), GOLDEN, CHUNKS, k=3)
    return {"evaluation": ev, "generation": result, "traces": traces, "golden": GOLDEN,
            "corpus": DOCS, "chunks": CHUNKS}


def _render_report(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.report import render_report

    return render_report(**_report_args(), **who)


def _write_report(who: dict[str, Any], tmp: Path) -> str:
    from workbench.report import write_report

    return write_report(tmp / "report.html", **_report_args(), **who).read_text("utf-8")


def _chunk_preview_html(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.widgets.chunk_preview import chunk_preview_html

    return _text(*(chunk_preview_html(d, CHUNKS, **who) for d in DOCS.values()))


def _chunk_preview(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.widgets.chunk_preview import ChunkPreview

    preview = ChunkPreview(DOCS.documents, **who)
    pages = []
    for doc_id in preview.doc_select.options:
        preview.doc_select.value = doc_id
        pages.append(preview.to_html())
    return _text(*pages, list(preview.documents))


def _chunk_preview_pair(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.widgets.chunk_preview import ChunkPreviewPair

    pair = ChunkPreviewPair(DOCS.documents, **who)
    pages = []
    for doc_id in pair.left.doc_select.options:
        pair.left.doc_select.value = doc_id
        pages += [pair.left.to_html(), pair.right.to_html()]
    return _text(*pages)


def _golden_file(tmp: Path) -> Path:
    path = tmp / "golden.jsonl"
    path.write_text("".join(json.dumps(i.to_json()) + "\n" for i in GOLDEN), "utf-8")
    return path


def _labeller(who: dict[str, Any], tmp: Path) -> str:
    from workbench.widgets.labeller import Labeller

    path = _golden_file(tmp)
    questions = ["how long do refunds take", "approval code for board refunds"]
    lab = Labeller(DOCS, questions, path, chunks=CHUNKS, dense=False, **who)
    out: list[Any] = [lab._repr_html_()]
    for query in ("refunds approval code board", "88513 days", CANARY):
        lab.search(query)
        out += [lab.bm25_hits, lab.doc_text]
    for opened in ("vault", "open"):
        lab._on_msg(None, {"cmd": "open", "doc_id": opened}, None)
        out += [lab.doc_text, lab.status]
    lab.selection = []
    lab.spans = [["vault", 0, 40]]
    lab.save()
    out += [lab.status, lab.warnings, path.read_text("utf-8").replace(
        json.dumps(VAULT_ITEM.to_json()), ""), lab._repr_html_()]
    return _text(*out)


def _labeller_review(who: dict[str, Any], tmp: Path) -> str:
    from workbench.golden.reanchor import reanchor
    from workbench.widgets.labeller import Labeller

    drifted = GoldenItem(qid="v2", question=VAULT_ITEM.question,
                         evidence=(Evidence("vault", 2, 30, f"code {CANARY} was approved"),),
                         category="board")
    report = reanchor(GoldenSet([drifted]), DOCS)
    lab = Labeller.for_review(report, DOCS, tmp / "review.jsonl", chunks=CHUNKS, dense=False,
                              **who)
    return _text(lab.status, lab.doc_text, lab.question, lab.selection, lab._repr_html_())


def _session(who: dict[str, Any], tmp: Path) -> str:
    from workbench.golden.labelling import LabellingSession

    path = _golden_file(tmp)
    session = LabellingSession(path, DOCS, ["approval code"], **who)
    out: list[Any] = [session.warnings([("open", 0, len(OPEN_TEXT))])]
    try:
        session.save("q001", [("vault", 0, 40)])
    except WorkbenchError as exc:
        out.append(str(exc))
    out.append(path.read_text("utf-8").replace(json.dumps(VAULT_ITEM.to_json()), ""))
    return _text(*out)


def _make_item(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.golden.labelling import make_item

    try:
        return _text(make_item(DOCS, "q", "code?", [("vault", 0, 60)], **who).to_json())
    except ReaderRequired:
        raise
    except WorkbenchError as exc:
        return str(exc)


def _span_warnings(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.golden.labelling import span_warnings

    return _text(span_warnings(DOCS, [("open", 0, len(OPEN_TEXT))], **who))


def _agreement(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.golden.agreement import agreement

    other = GoldenSet([OPEN_ITEM, GoldenItem(qid="v1", question=VAULT_ITEM.question,
                                             evidence=(_ev("vault", CANARY),),
                                             category="codes")])
    result = agreement(GOLDEN, other, documents=DOCS, **who)
    return _text(result.to_html(), result.per_question.to_json(),
                 result.disagreements().to_json(), [vars(x) for p in result.pairs for x in p])


def _label_studio(who: dict[str, Any], tmp: Path) -> str:
    from workbench.golden.exchange import to_label_studio, write_tasks

    tasks = to_label_studio(list(GOLDEN), lambda _q: CHUNKS, DOCS, **who)
    return write_tasks(tmp / "ls.json", tasks).read_text("utf-8")


def _argilla(who: dict[str, Any], tmp: Path) -> str:
    from workbench.golden.exchange import to_argilla, write_tasks

    records = to_argilla(list(GOLDEN), lambda _q: CHUNKS, DOCS, **who)
    return write_tasks(tmp / "argilla.json", records).read_text("utf-8")


def _realism(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.widgets.realism_scorer import RealismScorer

    scorer = RealismScorer(SYNTHETIC, documents=DOCS, **who)
    return _text(scorer.to_html(), list(scorer.buttons))


def _realism_html(who: dict[str, Any], _tmp: Path) -> str:
    from workbench.widgets.realism_scorer import realism_scorer_html

    return realism_scorer_html(SYNTHETIC, {}, documents=DOCS, **who)


RUNNERS: dict[str, Callable[[dict[str, Any], Path], str]] = {
    "workbench.generation.context:assemble_context": _assemble,
    "workbench.generation.context:passthrough_context": _passthrough,
    "workbench.generation.oracle:run_generation_eval": _generation,
    "workbench.generation.oracle:context_swap": _swap,
    "workbench.generation.oracle:oracle_context": _oracle,
    "workbench.generation.position:handbook_position_items": _position,
    "workbench.synthetic.questions:generate_synthetic": _synthetic,
    "workbench.synthetic.questions:sample_chunks": _sample,
    "workbench.synthetic.questions:find_distractors": _distractors,
    "workbench.evaluation.failures:worst_failures": _worst_failures,
    "workbench.evaluation.evaluation:Evaluation.worst": _evaluation_worst,
    "workbench.widgets.trace_viewer_worst:worst_traces": _worst_traces,
    "workbench.diagnose.traces:trace_question": _trace_question,
    "workbench.widgets.trace_viewer:trace_viewer_html": _trace_viewer,
    "workbench.widgets.trace_viewer:TraceViewer": _trace_viewer_widget,
    "workbench.widgets.trace_viewer:worst_traces_html": _worst_traces_html,
    "workbench.report.html:render_report": _render_report,
    "workbench.report.html:write_report": _write_report,
    "workbench.widgets.chunk_preview:chunk_preview_html": _chunk_preview_html,
    "workbench.widgets.chunk_preview:ChunkPreview": _chunk_preview,
    "workbench.widgets.chunk_preview:ChunkPreviewPair": _chunk_preview_pair,
    "workbench.widgets.labeller:Labeller": _labeller,
    "workbench.widgets.labeller:Labeller.for_review": _labeller_review,
    "workbench.golden.labelling:LabellingSession": _session,
    "workbench.golden.labelling:make_item": _make_item,
    "workbench.golden.labelling:span_warnings": _span_warnings,
    "workbench.golden.agreement:agreement": _agreement,
    "workbench.golden.exchange:to_label_studio": _label_studio,
    "workbench.golden.exchange:to_argilla": _argilla,
    "workbench.widgets.realism_scorer:RealismScorer": _realism,
    "workbench.widgets.realism_scorer:realism_scorer_html": _realism_html,
}


def test_every_surface_in_the_inventory_has_a_canary_run():
    assert set(RUNNERS) == set(SURFACES)


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_a_non_member_sees_no_canary(surface, tmp_path):
    out = RUNNERS[surface]({"user_groups": OUTSIDER}, tmp_path)
    assert CANARY not in out and "88513" not in out, f"{surface} leaks restricted text"
    assert QCANARY not in out, f"{surface} shows a restricted item's question"


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_a_member_and_the_unrestricted_view_are_not_starved(surface, tmp_path):
    """The check above is not vacuous: as a reader of everything the canary does reach the
    surfaces that show document text (those that only refuse or filter say so below)."""
    quiet = {"workbench.synthetic.questions:find_distractors",  # ids of public chunks
             "workbench.generation.position:handbook_position_items",  # public item only
             "workbench.golden.labelling:span_warnings",  # numbers, not the canary
             "workbench.golden.labelling:LabellingSession",
             "workbench.golden.labelling:make_item",
             "workbench.widgets.labeller:Labeller.for_review",
             "workbench.evaluation.failures:worst_failures",  # only failing items shown
             "workbench.evaluation.evaluation:Evaluation.worst",
             "workbench.widgets.trace_viewer_worst:worst_traces",
             "workbench.widgets.trace_viewer:worst_traces_html",
             "workbench.generation.context:assemble_context",
             "workbench.generation.context:passthrough_context",
             "workbench.generation.oracle:run_generation_eval",  # the public item only
             "workbench.synthetic.questions:sample_chunks"}
    out = RUNNERS[surface]({"user_groups": UNRESTRICTED}, tmp_path)
    if surface not in quiet:
        assert CANARY in out or "88513" in out, f"{surface} showed nothing restricted"
    member = RUNNERS[surface]({"user_groups": ["Finance"]}, tmp_path)
    assert isinstance(member, str)


@pytest.mark.parametrize("surface", sorted(SURFACES))
def test_without_a_reader_a_surface_refuses_in_one_line(surface, tmp_path):
    with pytest.raises(WorkbenchError) as caught:
        RUNNERS[surface]({}, tmp_path)
    message = str(caught.value)
    assert "\n" not in message and "user_groups" in message and CANARY not in message


def test_a_borrowed_chunk_reaches_every_reader_of_its_target():
    """Distractors: allowed exactly when every reader of the target may read them."""
    def chunk(acl: tuple[str, ...] | None) -> tuple[Chunk, Document]:
        meta = {"acl": list(acl)} if acl is not None else {}
        return Chunk("c", "d", 0, 1, text="x"), admit("d", "x", "", meta)

    cases = {(None, None): True, (None, ("hr",)): True, (("hr",), None): False,
             (("hr",), ("hr",)): True, (("hr",), ("hr", "it")): False,
             (("hr", "it"), ("hr",)): True, (("it",), ("hr",)): False,
             (("all",), ("hr",)): True}
    for (borrowed, target), allowed in cases.items():
        assert reaches_readers_of(*chunk(borrowed), *chunk(target)) is allowed, (borrowed,
                                                                                target)


_TAKES = {"corpus", "documents", "chunks", "docs", "chunks_by_id", "documents_by_id"}


def _public_callables() -> list[str]:
    """``module:qualname`` of each public function, class and method of the package that
    takes a corpus, documents or chunks."""
    out = []
    for info in pkgutil.walk_packages(workbench.__path__, "workbench."):
        if info.name.endswith("__main__") or info.name == "workbench.generation.server":
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != info.name:
                continue
            found: list[tuple[str, Any]] = []
            if inspect.isclass(obj):
                found.append((name, obj))
                for attr, member in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    fn = member.__func__ if isinstance(member, classmethod | staticmethod) \
                        else member
                    if inspect.isfunction(fn):
                        found.append((f"{name}.{attr}", fn))
            elif inspect.isfunction(obj):
                found.append((name, obj))
            for qualname, fn in found:
                try:
                    params = inspect.signature(fn).parameters
                except (TypeError, ValueError):
                    continue
                if _TAKES & set(params):
                    out.append(f"{info.name}:{qualname}")
    return out


def test_every_public_callable_taking_a_corpus_is_a_surface_or_says_why_not():
    found = _public_callables()
    unlisted = [n for n in found if n not in SURFACES and n not in NOT_SURFACES]
    assert not unlisted, ("add these to SURFACES (and a canary run here) or to NOT_SURFACES "
                          f"with the reason, in workbench/corpus/reader.py: {unlisted}")
    stale = [n for n in [*SURFACES, *NOT_SURFACES] if n not in found
             and not n.endswith("Labeller.for_review")]
    assert not stale, f"the inventory names what no longer takes a corpus: {stale}"
