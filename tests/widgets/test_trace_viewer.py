"""The failure-trace viewer: static HTML (escaping, anchors, budget cut, ACL), the widget's
filters / prev / next / selected_qid, and one real JupyterLab check in headless Chromium."""

from __future__ import annotations

import re

import ipywidgets as widgets
import pytest

from tests.browser import notebook_page, run_cell
from workbench.corpus import UNRESTRICTED, Chunk, Corpus, Document, admit
from workbench.diagnose import case_from_bug_report, make_trace
from workbench.generation import Answer
from workbench.generation.context import assemble_context
from workbench.generation.grading import grade_answer
from workbench.widgets.trace_viewer import TraceViewer, trace_viewer_html

HOSTILE = ('Refunds take 30 days. <script>window.__pwned = 1</script> '
           '<img src=x onerror="window.__pwned = 2"> Business customers get 60 days.')
FILLER = "Shipping is free on orders over $50 and takes three to five working days. " * 3
DOCS = Corpus([
    Document("refunds", HOSTILE, "Refunds <b>policy</b>", {"version": 2}),
    Document("shipping", FILLER, "Shipping", {}),
    admit("secret", "SECRET-PLAN-9 for the board only.", "Board", {"acl": ["board"]}),
])
CHUNKS = [Chunk(f"{d.id}#0", d.id, 0, len(d.text), text=d.text) for d in DOCS.values()]


def item(qid="q1", question="how long for a refund <script>alert(1)</script>",
         category="lookup"):
    return case_from_bug_report(question, [("refunds", "Refunds take 30 days.")], ["30 days"],
                                corpus=DOCS, qid=qid, category=category)


def trace(it, hits, answer, **kw):
    kw.setdefault("user_groups", UNRESTRICTED)
    ctx = assemble_context(hits, CHUNKS, DOCS, **kw)
    ans = Answer(answer, model_id="m<1>", prompt_version="p1")
    return make_trace(it.qid, it.question, hits, ctx, answer=ans, grade=grade_answer(it, ans, ctx),
                      chunks=CHUNKS, corpus=DOCS, category=it.category)


def test_static_form_escapes_hostile_documents_and_answers():
    it = item()
    t = trace(it, ["refunds#0", "shipping#0"],
              'Refunds take 30 days [P1] <img src=y onerror="window.__pwned = 3"> [P7]')
    page = trace_viewer_html(t, it, CHUNKS, DOCS, user_groups=UNRESTRICTED)
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert "&lt;img src=x onerror=&quot;window.__pwned = 2&quot;&gt;" in page
    assert "alert(1)" in page and "m&lt;1&gt;" in page
    # the citation links to its passage; the unknown label is marked, not linked
    anchor = re.search(r'<a href="#(wb-[^"]+-P1)"', page)
    assert anchor and f'id="{anchor.group(1)}"' in page
    assert 'class="wb-unknown"' in page and "P7</span>" in page
    # golden evidence quoted, and highlighted inside the passage
    assert '<mark title="golden evidence">Refunds take 30 days.</mark>' in page
    assert "unknown_citation" in page and "v2" in page


def test_budget_cut_and_gold_marks():
    it = item()
    t = trace(it, ["shipping#0", "refunds#0"], "Shipping is free [P1]", budget_tokens=75)
    assert t.drop_reason("refunds#0") == "budget"
    page = trace_viewer_html(t, it, CHUNKS, DOCS, user_groups=UNRESTRICTED)
    assert page.count('class="wb-cut"') == 1 and "context budget cut here" in page
    rows = page.split('class="wb-cut"')
    assert "refunds#0" in rows[1] and "wb-gold-row" in rows[1]  # gold chunk after the cut
    assert "context_loss" in page and "not_in_context" in page


def test_only_recorded_chunks_are_shown_and_restricted_evidence_is_withheld():
    it = item()
    t = trace(it, ["secret#0", "refunds#0"], "30 days [P1]", user_groups=["staff"])
    page = trace_viewer_html(t, it, CHUNKS, DOCS)
    assert "SECRET-PLAN" not in page and "secret#0" not in page
    assert "1 chunk(s) withheld by access control" in page
    board = case_from_bug_report("plan?", [("secret", "SECRET-PLAN-9")], corpus=DOCS,
                                 qid="q9")
    t9 = trace(board, ["secret#0"], "I don't know", user_groups=["staff"])
    page9 = trace_viewer_html(t9, board, CHUNKS, DOCS)
    assert "SECRET-PLAN" not in page9 and "evidence withheld" in page9


def test_chunk_level_acl_is_honoured_and_the_item_facts_withheld():
    """A public document with one chunk restricted to hr: even a trace that (wrongly)
    recorded that chunk shows no text of it, and the item whose evidence lies in it shows no
    quote, no must-mention string and no document id."""
    text = "Holiday rules for all staff. Salary bands: HR-BAND-77 for grade 7."
    doc = admit("pay", text, "Pay", {"acl": ["all"]})
    public = Chunk("pay#0", "pay", 0, 28, text=text[:28])
    private = Chunk("pay#1", "pay", 29, len(text), text=text[29:], metadata={"acl": ["HR"]})
    corpus, chunks = Corpus([doc]), [public, private]
    it = case_from_bug_report("what is the band for grade 7", [("pay", "HR-BAND-77")],
                              ["HR-BAND-77"], corpus=corpus, qid="p1")
    ctx = assemble_context(["pay#0", "pay#1"], chunks, corpus, user_groups=["staff"])
    assert ctx.chunk_ids == ("pay#0",)
    honest = make_trace("p1", it.question, ["pay#0", "pay#1"], ctx, answer=Answer("no idea"),
                        chunks=chunks, corpus=corpus, item=it)
    forged = make_trace("p1", it.question, ["pay#0", "pay#1"],
                        assemble_context(["pay#0", "pay#1"], chunks, corpus,
                                         user_groups=UNRESTRICTED), answer=Answer("no idea"),
                        chunks=chunks, corpus=corpus)
    forged = type(forged)(**{**forged.__dict__, "user_groups": ("staff",)})
    for t in (honest, forged):
        page = trace_viewer_html(t, it, chunks, corpus)  # read as the user recorded
        assert "HR-BAND-77" not in page and "Salary" not in page, page
        assert "evidence withheld" in page
    hr = assemble_context(["pay#1"], chunks, corpus, user_groups=[" hr"])
    seen = make_trace("p1", it.question, ["pay#1"], hr, answer=Answer("HR-BAND-77 [P1]"),
                      chunks=chunks, corpus=corpus, item=it)
    assert "HR-BAND-77" in trace_viewer_html(seen, it, chunks, corpus)


def test_citations_read_one_way_everywhere_and_bidi_controls_are_shown():
    from workbench.generation import resolve_citations
    from workbench.generation.grading import split_claims

    it = item()
    t = trace(it, ["refunds#0", "shipping#0"], "Refunds take 30 days (P1). Free [see P2].")
    ctx = assemble_context(["refunds#0", "shipping#0"], CHUNKS, DOCS, user_groups=UNRESTRICTED)
    assert resolve_citations(t.answer, ctx).labels == ("P1", "P2") == tuple(t.citations)
    assert split_claims(t.answer) == ["Refunds take 30 days.", "Free."]
    page = trace_viewer_html(t, it, CHUNKS, DOCS, user_groups=UNRESTRICTED)
    answer = page.split('class="wb-answer">', 1)[1].split("</div>", 1)[0]
    assert answer.count('<a href="#wb-') == 2  # (P1) links like [P2]
    evil = Document("evil", "Pay \u202eyad 03\u202c within 30 days. \u2066x\u2069", "E")
    chunk = Chunk("evil#0", "evil", 0, len(evil.text), text=evil.text)
    t2 = make_trace("e", "q", ["evil#0"], assemble_context(["evil#0"], [chunk], [evil],
                                                           user_groups=UNRESTRICTED),
                    answer="ok", chunks=[chunk])
    page2 = trace_viewer_html(t2, None, [chunk], Corpus([evil]), user_groups=UNRESTRICTED)
    assert not re.search("[\u202a-\u202e\u2066-\u2069]", page2)
    assert "[U+202E]yad 03[U+202C]" in page2 and "[U+2066]x[U+2069]" in page2


def make_traces():
    a, b, c = item("q1"), item("q2", "refund window?", "lookup"), item("q3", "ship?", "other")
    return [a, b, c], [
        trace(a, ["refunds#0"], "Refunds take 30 days [P1]"),          # OK
        trace(b, ["shipping#0"], "Shipping is free [P1]"),             # RET_FAIL
        trace(c, ["refunds#0", "shipping#0"], "60 days [P1][P9]"),     # GEN_FAIL, unknown
    ]


def test_viewer_filters_prev_next_and_selected_qid():
    golden, traces = make_traces()
    viewer = TraceViewer(traces, golden, CHUNKS, DOCS, user_groups=UNRESTRICTED)
    assert viewer.selected_qid == "q1" and viewer.qids == ["q1", "q2", "q3"]
    assert viewer.quadrants == ["OK", "RET_FAIL", "GEN_FAIL"]
    viewer.next()
    assert viewer.selected_qid == "q2" and "refund window?" in viewer.view.value
    viewer.next_button.click()
    assert viewer.selected_qid == "q3" and "3 of 3" in viewer.position.value
    viewer.next()
    assert viewer.selected_qid == "q1"  # wraps around
    viewer.prev_button.click()
    assert viewer.selected_qid == "q3"
    viewer.label.value = "retrieval_miss"
    assert viewer.qids == ["q2"] and viewer.selected_qid == "q2"
    viewer.label.value = "all"
    viewer.quadrant.value = "GEN_FAIL"
    assert viewer.qids == ["q3"]
    viewer.quadrant.value = "all"
    viewer.category.value = "lookup"
    assert viewer.qids == ["q1", "q2"]
    viewer.failing.value = True
    assert viewer.qids == ["q2"]
    viewer.select("q3")  # clears the filters that hide it
    assert viewer.selected_qid == "q3" and viewer.category.value == "all"
    assert viewer.label.options == ("all", "retrieval_miss", "unknown_citation", "(no label)")
    viewer.label.value = "(no label)"
    assert viewer.qids == ["q1"]
    with pytest.raises(KeyError):
        viewer.select("nope")


def test_viewer_judges_the_chunking_once_with_the_same_diagnoses(monkeypatch):
    from workbench.diagnose import diagnose_trace
    from workbench.diagnose import diagnosis as diagnosis_module
    from workbench.metrics import Relevance

    golden, traces = make_traces()
    items = {i.qid: i for i in golden}
    alone = [diagnose_trace(t, items[t.qid], CHUNKS, DOCS) for t in traces]
    built = []

    class Counting(Relevance):
        def __init__(self, *args, **kwargs):
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(diagnosis_module, "Relevance", Counting)
    viewer = TraceViewer(traces, golden, CHUNKS, DOCS, user_groups=UNRESTRICTED)
    assert len(traces) > 1 and len(built) == 1
    assert viewer.diagnoses == alone


def test_viewer_takes_a_triage_and_shows_nothing_when_filtered_empty():
    golden, traces = make_traces()
    viewer = TraceViewer(traces, golden, CHUNKS, DOCS,
                         triage={"q1": "LUCKY", "q2": "RET_FAIL", "q3": "GEN_FAIL"},
                         user_groups=UNRESTRICTED)
    assert tuple(v for _, v in viewer.quadrant.options) == ("all", "GEN_FAIL", "LUCKY",
                                                            "RET_FAIL")
    viewer.quadrant.value = "LUCKY"
    assert viewer.selected_qid == "q1" and "triage <b>LUCKY</b>" in viewer.view.value
    viewer.category.value = "other"
    assert viewer.selected_qid is None and "no trace matches" in viewer.view.value
    viewer.next()
    assert viewer.selected_qid is None


def test_passages_fold_and_prev_next_repeat_below_the_trace():
    """Each passage is a closed <details> whose summary names it (label, chunk, a preview);
    the citation anchor is on it; the position is shown above and below the trace, and
    the viewer opens at the first trace."""
    golden, traces = make_traces()
    viewer = TraceViewer(traces, golden, CHUNKS, DOCS, user_groups=UNRESTRICTED)
    assert viewer.selected_qid == "q1"
    page = viewer.view.value
    assert re.search(r'<details id="wb-[^"]+-P1"><summary><b>\[P1\]</b> refunds#0', page)
    assert "<details open" not in page and "click it to read it" in page
    below = viewer.children[-2]
    assert [b.description for b in below.children[:2]] == ["◀ prev", "next ▶"]
    below.children[1].click()
    assert viewer.selected_qid == "q2"
    assert viewer.position_below.value == viewer.position.value == "2 of 3 · <b>q2</b>"
    below.children[0].click()
    assert viewer.selected_qid == "q1"


def test_na_in_the_triage_filter_is_said_in_words():
    """A trace with no verdict (here: not in the golden set) is filed under n/a, and the
    filter's label and a note say what n/a means; without one, no note."""
    golden, traces = make_traces()
    viewer = TraceViewer(traces, golden[:2], CHUNKS, DOCS, user_groups=UNRESTRICTED)
    assert viewer.quadrants[2] == "n/a"
    assert ("n/a (no verdict)", "n/a") in viewer.quadrant.options
    viewer.quadrant.value = "n/a"
    assert viewer.qids == ["q3"]
    notes = [w.value for box in viewer.children[:2] for w in box.children
             if isinstance(w, widgets.HTML) and "n/a" in w.value]
    assert notes and "not in the golden set" in notes[0] and "not graded" in notes[0]
    plain = TraceViewer(traces, golden, CHUNKS, DOCS, user_groups=UNRESTRICTED)
    assert "n/a" not in plain.quadrants
    assert not [w for box in plain.children[:2] for w in box.children
                if isinstance(w, widgets.HTML) and "n/a" in w.value]


def test_worst_failures_first_each_with_its_trace():
    """The viewer's "worst first" order is worst_failures over the traced retrieval: q2
    (its evidence never retrieved) is the only failure; each shown trace carries its failure
    (evidence, chunk boundaries, what was retrieved instead) above it."""
    from workbench.evaluation import Run
    from workbench.evaluation.failures import worst_failures
    from workbench.widgets.trace_viewer import worst_traces_html
    from workbench.widgets.trace_viewer_worst import traced_run, worst_traces

    golden, traces = make_traces()
    run = traced_run(traces)
    assert run.ranked() == {"q1": ["refunds#0"], "q2": ["shipping#0"],
                            "q3": ["refunds#0", "shipping#0"]}
    direct = worst_failures(Run.from_ranked(run.ranked()), golden, CHUNKS, n=10, k=5,
                            user_groups=UNRESTRICTED)
    assert [f.qid for f in worst_traces(traces, golden, CHUNKS,
                                        user_groups=UNRESTRICTED)] == [f.qid for f in direct] \
        == ["q2"]
    viewer = TraceViewer(traces, golden, CHUNKS, DOCS, worst=10, k=5, user_groups=UNRESTRICTED)
    assert viewer.qids == ["q1", "q2", "q3"]
    viewer.order.value = "worst"
    assert viewer.qids == ["q2"] and viewer.selected_qid == "q2"
    page = viewer.view.value
    assert page.index("class='wb-failure'") < page.index('class="wb-trace"')
    assert "recall@5 0.00" in page and "shipping#0" in page
    viewer.category.value = "other"  # filters still apply: q3 is not a failure
    assert viewer.qids == [] and "no trace matches" in viewer.view.value
    viewer.category.value = "all"
    viewer.order.value = "recorded"
    assert viewer.qids == ["q1", "q2", "q3"]
    static = worst_traces_html(traces, golden, CHUNKS, DOCS, n=3, k=5, user_groups=UNRESTRICTED)
    assert "The 1 worst of 3 traced questions at k=5" in static
    assert static.count('class="wb-trace"') == 1 and 'data-qid="q2"' in static
    assert "no traced question fails" in worst_traces_html(traces[:1], golden, CHUNKS, DOCS,
                                                           user_groups=UNRESTRICTED)


CELLS = [
    "from workbench.corpus import UNRESTRICTED, Chunk, Corpus, Document\n"
    "from workbench.generation.context import assemble_context\n"
    "from workbench.diagnose import case_from_bug_report, make_trace\n"
    "from workbench.widgets.trace_viewer import TraceViewer\n"
    "text = ('Refunds take 30 days. <script>window.__pwned = 1</script> '\n"
    "        '<img src=x onerror=\"window.__pwned = 2\"> Business customers get 60 days.')\n"
    "docs = Corpus([Document('refunds', text, 'Refunds')])\n"
    "chunks = [Chunk('refunds#0', 'refunds', 0, len(text), text=text)]\n"
    "golden, traces = [], []\n"
    "for qid in ('q1', 'q2'):\n"
    "    it = case_from_bug_report(f'refund {qid}?', [('refunds', 'Refunds take 30 days.')],\n"
    "                              ['30 days'], corpus=docs, qid=qid)\n"
    "    ctx = assemble_context(['refunds#0'], chunks, docs, user_groups=UNRESTRICTED)\n"
    "    golden.append(it)\n"
    "    traces.append(make_trace(qid, it.question, ['refunds#0'], ctx,\n"
    "                             answer='<img src=z onerror=\"window.__pwned = 3\"> '\n"
    "                                    '30 days [P1]',\n"
    "                             chunks=chunks, corpus=docs))\n"
    "viewer = TraceViewer(traces, golden, chunks, docs, user_groups=UNRESTRICTED)\n"
    "viewer",
    "print('SELECTED', viewer.selected_qid)",
]


@pytest.mark.browser
@pytest.mark.slow
def test_trace_viewer_in_jupyterlab(tmp_path):
    with notebook_page(tmp_path, "viewer.ipynb", CELLS) as page:
        view = page.locator(".wb-trace").first
        view.wait_for(timeout=120_000)
        assert view.get_attribute("data-qid") == "q1"
        shown = view.inner_text()
        assert "<script>window.__pwned = 1</script>" in shown  # shown as text
        assert "onerror=" in shown

        # passages are folded (the trace stays short); a click opens one
        passage = view.locator("details").first
        assert passage.get_attribute("open") is None
        passage.locator("summary").click()
        assert passage.get_attribute("open") is not None
        # prev/next above and again below the trace
        nexts = page.get_by_role("button", name="next ▶")
        assert nexts.count() == 2
        nexts.first.click()
        page.wait_for_function(
            "() => document.querySelector('.wb-trace').dataset.qid === 'q2'",
            timeout=60_000)
        assert "SELECTED q2" in run_cell(page, 1, "SELECTED")
        nexts.last.click()  # the one below the trace (wraps to q1)
        page.wait_for_function(
            "() => document.querySelector('.wb-trace').dataset.qid === 'q1'",
            timeout=60_000)
        nexts.first.click()
        page.wait_for_function(
            "() => document.querySelector('.wb-trace').dataset.qid === 'q2'",
            timeout=60_000)

        # the citation is a working link to the passage
        link = page.locator(".wb-answer a").first
        assert link.inner_text() == "P1"
        assert page.locator(link.get_attribute("href") or "#none").count() == 1
        # no script from the documents or the answer ran
        assert page.evaluate("() => window.__pwned") is None
        assert page.locator(".wb-trace script, .wb-trace img").count() == 0
        page.screenshot(path=str(tmp_path / "viewer.png"))


def test_a_new_filter_opens_at_its_first_failure():
    golden, traces = make_traces()
    viewer = TraceViewer(traces, golden, CHUNKS, DOCS, user_groups=UNRESTRICTED)
    viewer.select("q3")
    viewer.category.value = "lookup"            # q1 passed, q2 failed: the filter opens at q2
    assert viewer.qids == ["q1", "q2"] and viewer.selected_qid == "q2"
    assert viewer.position.value.startswith("2 of 2")
    viewer.category.value = "all"               # the first failure of all three
    assert viewer.selected_qid == "q2"


def test_grade_details_read_as_words_and_are_cut_at_a_word():
    from workbench.widgets.trace_viewer import grade_details

    shown = grade_details({"missing": ["14 days"], "required": ["14 days", "receipts"]})
    assert shown == "missing “14 days” (1 of 2 required)"
    assert grade_details({"missing": [], "required": ["a"]}) == "all 1 required mentioned"
    assert grade_details({"faithfulness": 0.6666666, "expected": "refusal"}) == (
        "faithfulness: 0.667; expected: refusal")
    long = grade_details({"missing": ["word"] * 200, "required": ["word"] * 200}, width=80)
    assert len(long) <= 80 and long.endswith(" …") and "{" not in long
    assert all(part in ("missing", "“word”,", "…", "“word”") for part in long.split()[:-1])
