"""Reports: one standalone HTML file (escaped, plotly.js inlined once, scripts pinned by a
Content-Security-Policy) that opens in headless Chromium; source slices; the CLI."""

from __future__ import annotations

import re

import pandas as pd
import plotly.graph_objects as go
import pytest

from tests.browser import CHROMIUM_ARGS, chromium_path, screenshot
from tests.conftest import HANDBOOK
from workbench.chunking import FixedChunker, chunk_corpus
from workbench.cli import main
from workbench.corpus import Corpus, Document
from workbench.diagnose import traces_from_result
from workbench.evaluation import Evaluation, evaluate
from workbench.generation import ExtractiveReader, run_generation_eval
from workbench.golden import Evidence, GoldenItem, GoldenSet
from workbench.report import generation_evaluation, render_report, source_slices, write_report
from workbench.retrieval.bm25 import BM25Retriever

PWN = ('<script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2"> '
       '<svg onload="window.__pwned = 4"></svg>')
DOCS = Corpus([
    Document("refunds", f"# Refunds\n\nRefunds are paid within 30 days of the return. {PWN}\n\n"
             "Business accounts have 60 days to return goods.\n", "Refunds"),
    Document("shipping", "# Shipping\n\nStandard shipping takes five working days. Express "
             "shipping arrives the next day and costs $12.\n", "Shipping"),
    Document("refunds-old", "# Refunds (old)\n\nRefunds are paid within 45 days of the "
             "return.\n", "Refunds old", {"status": "superseded", "superseded_by": "refunds"}),
])


def item(qid, question, quote, doc, must, source, category="lookup"):
    start = DOCS[doc].text.index(quote)
    return GoldenItem(qid, question, evidence=(Evidence(doc, start, start + len(quote), quote),),
                      answer_must_mention=(must,), category=category, source=source)


GOLDEN = GoldenSet([
    item("q1", "when are refunds paid", "Refunds are paid within 30 days", "refunds", "30 days",
         "real"),
    item("q2", "how long do business accounts have to return", "Business accounts have 60 days",
         "refunds", "60 days", "owner", "<b>exception</b>"),
    item("q3", "how much is express shipping", "costs $12", "shipping", "$12", "synthetic"),
    item("q4", "how fast is standard shipping", "five working days", "shipping", "5 days",
         "real"),
])


@pytest.fixture(scope="module")
def pipeline():
    chunks = chunk_corpus(FixedChunker(size=300, overlap=0), DOCS.documents)
    bm25 = BM25Retriever(chunks)
    ev = evaluate(bm25, GOLDEN, chunks, k=3, system="bm25 <i>x</i>")
    gen = run_generation_eval(ExtractiveReader(), bm25, GOLDEN, chunks, documents=DOCS, k=3)
    traces = traces_from_result(gen, golden=GOLDEN, corpus=DOCS, chunks=chunks,
                                run=ev.runs["bm25 <i>x</i>"])
    return chunks, ev, gen, traces


def figures():
    a = go.Figure(go.Bar(x=["a", "b"], y=[0.4, 0.7]), layout={"title": {"text": "recall"}})
    b = go.Figure(go.Scatter(x=[1, 2, 3], y=[0.2, 0.5, 0.6], name=PWN))
    return [a, b]


def test_source_slices_side_by_side(pipeline):
    _, ev, gen, _ = pipeline
    table = source_slices(ev, metrics=["recall@3", "mrr@3"])
    assert list(table.index) == ["recall@3", "mrr@3"]
    assert list(dict.fromkeys(table.columns.get_level_values(0))) == ["real", "owner",
                                                                      "synthetic"]
    frame = ev.frame[ev.frame["metric"] == "recall@3"]
    real = frame[frame["source"] == "real"]["value"].mean()
    assert table.loc["recall@3", ("real", "mean")] == pytest.approx(real)
    assert table.loc["recall@3", ("real", "n")] == 2 and str(table[("real", "n")].dtype) == "Int64"
    answers = source_slices(gen, GOLDEN)
    assert list(answers.index) == ["answer_pass"]
    as_ev = generation_evaluation(gen, GOLDEN)
    assert set(as_ev.frame["source"]) == {"real", "owner", "synthetic"}
    assert as_ev.frame["value"].isin([0.0, 1.0]).all()
    # the golden set's source overrides what an Evaluation recorded
    relabelled = source_slices(Evaluation(ev.frame.assign(source="n/a")), GOLDEN)
    assert "real" in relabelled.columns.get_level_values(0)
    with pytest.raises(ValueError, match="nothing to slice"):
        source_slices(ev, metrics=["nope@1"])


def test_report_of_an_evaluation_with_params_has_one_table_per_configuration(pipeline):
    """A configuration is a system plus its parameters (Evaluation.configs()): the report
    draws one table per configuration, never looks a bare system name up."""
    chunks, _, _, _ = pipeline
    bm25 = BM25Retriever(chunks)
    ev = evaluate(bm25, GOLDEN, chunks, k=3, system="bm25", params={"size": 300})
    both = Evaluation(pd.concat([ev.frame, evaluate(bm25, GOLDEN, chunks, k=3, system="bm25",
                                                    params={"size": 800}).frame]))
    page = render_report(both)
    retrieval = page.split('<section id="retrieval">', 1)[1].split("</section>", 1)[0]
    assert retrieval.count("<h3>bm25 size=") == 2
    assert "<h3>bm25 size=300</h3>" in retrieval and "<h3>bm25 size=800</h3>" in retrieval


def test_report_of_a_sweep_draws_its_leaderboard_and_plots(tmp_path):
    from workbench.sweep import run_sweep

    result = run_sweep({"chunker": ["fixed"], "size": [120, 300], "overlap": [0],
                        "retriever": ["bm25"], "k": [3]}, GOLDEN, DOCS, cache=tmp_path / "cache",
                       progress=False)
    page = render_report(sweep=result, title="sweep")
    assert page.count("plotly.js v") == 1 and page.count('class="plotly-graph-div"') == 2
    assert '<section id="sweep">' in page and "index_tokens" in page


def test_report_is_escaped_and_inlines_plotly_once(pipeline, tmp_path):
    chunks, ev, gen, traces = pipeline
    page = render_report(ev, figures(), gen, traces, golden=GOLDEN, corpus=DOCS, chunks=chunks,
                         title="Report <script>window.__pwned = 9</script>")
    assert page.count("plotly.js v") == 1  # the library once, two figures
    assert page.count('class="plotly-graph-div"') == 2
    # every <script> in the page is ours (plotly), and each is pinned by the CSP hash
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", page, re.DOTALL)
    assert len(scripts) == 4
    assert all("__pwned" not in s.replace("\\u003c", "<") or "\\u003cscript" in s
               for s in scripts)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert csp and csp.group(1).count("'sha256-") == 4 and "default-src 'none'" in csp.group(1)
    assert "<img" not in page and "<svg onload" not in page
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert "&lt;b&gt;exception&lt;/b&gt;" in page and "bm25 &lt;i&gt;x&lt;/i&gt;" in page
    for section in ("retrieval", "sweep", "generation", "triage", "traces"):
        assert f'<section id="{section}">' in page
    no_plots = render_report(generation=gen, golden=GOLDEN, corpus=DOCS, chunks=chunks)
    assert "script-src 'none'" in no_plots and "<script" not in no_plots
    # retrieval alone is tables only by default (no plotly.js: the page stays small) ...
    assert "<script" not in render_report(ev) and len(render_report(ev)) < 100_000
    # ... and with plots=True draws its per-category heatmap, every script pinned by its hash
    alone = render_report(ev, plots=True)
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", alone, re.DOTALL)
    assert alone.count('class="plotly-graph-div"') == 1 and alone.count("plotly.js v") == 1
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', alone)
    assert csp and csp.group(1).count("'sha256-") == len(scripts) > 0
    with pytest.raises(ValueError, match="golden=, corpus= and chunks="):
        render_report(ev, traces=traces)
    with pytest.raises(ValueError, match="nothing to report"):
        render_report()


def _unescaped(monkeypatch):
    """Simulate an escape that failed: the trace viewer writes document text raw."""
    import workbench.widgets.trace_viewer as viewer

    monkeypatch.setattr(viewer, "_esc", str)


def _csp_hashes(page):
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    return set(re.findall(r"'sha256-([^']+)'", csp))


def test_csp_allows_only_the_scripts_the_report_generates(pipeline, monkeypatch):
    import base64
    import hashlib

    chunks, ev, gen, traces = pipeline
    _unescaped(monkeypatch)
    page = render_report(ev, figures(), gen, traces, golden=GOLDEN, corpus=DOCS, chunks=chunks)
    injected = "window.__pwned = 1"
    assert f"<script>{injected}</script>" in page  # the failed escape let it into the page
    digest = base64.b64encode(hashlib.sha256(injected.encode()).digest()).decode()
    allowed = _csp_hashes(page)
    assert digest not in allowed and len(allowed) == 4  # plotly's own scripts only
    own = page.split('<section id="sweep">', 1)[1].split("</section>", 1)[0]
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", own, re.DOTALL)
    assert allowed == {base64.b64encode(hashlib.sha256(x.encode()).digest()).decode()
                       for x in scripts}
    no_plots = render_report(None, None, gen, traces, golden=GOLDEN, corpus=DOCS, chunks=chunks)
    assert injected in no_plots and "script-src 'none'" in no_plots


def test_bidi_controls_in_document_text_are_shown_not_obeyed(pipeline):
    chunks, ev, gen, traces = pipeline
    docs = Corpus([Document(d.id, d.text.replace("30 days", "\u202e30 days\u202c"), d.title,
                            d.metadata) for d in DOCS.values()])
    page = render_report(ev, None, gen, traces, golden=GOLDEN, corpus=docs,
                         chunks=[type(c)(c.id, c.doc_id, c.start, c.end,
                                         text=docs[c.doc_id].text[c.start:c.end + 2])
                                 for c in chunks], title="\u2067title")
    assert not re.search("[\u202a-\u202e\u2066-\u2069]", page)
    assert "[U+202E]30 days[U+202C]" in page and "[U+2067]title" in page


@pytest.mark.browser
def test_an_injected_script_does_not_run_in_chromium(pipeline, tmp_path, monkeypatch):
    browser_path = chromium_path()
    from playwright.sync_api import sync_playwright

    chunks, ev, gen, traces = pipeline
    _unescaped(monkeypatch)
    path = write_report(tmp_path / "report.html", ev, sweep=figures(), generation=gen,
                        traces=traces, golden=GOLDEN,
                        corpus=DOCS, chunks=chunks)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            blocked: list[str] = []
            page.on("console", lambda m: blocked.append(m.text))
            page.goto(path.as_uri())
            page.wait_for_selector(".plotly .main-svg", timeout=30_000)  # ours run
            assert page.evaluate("() => window.__pwned") is None  # the injected one does not
            assert any("Content Security Policy" in m for m in blocked), blocked
        finally:
            browser.close()


@pytest.mark.browser
def test_report_opens_in_headless_chromium(pipeline, tmp_path):
    browser_path = chromium_path()
    from playwright.sync_api import sync_playwright

    chunks, ev, gen, traces = pipeline
    path = write_report(tmp_path / "out" / "report.html", ev, sweep=figures(), generation=gen,
                        traces=traces,
                        golden=GOLDEN, corpus=DOCS, chunks=chunks, title="Hostile report")
    assert path.exists() and not list(path.parent.glob(".*.tmp"))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1300, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(path.as_uri())
            page.wait_for_selector(".plotly .main-svg", timeout=30_000)
            for section in ("retrieval", "sweep", "generation", "triage", "traces"):
                assert page.locator(f"section#{section} h2").count() == 1
            assert page.locator(".plotly-graph-div .main-svg").count() >= 2  # plots drawn
            assert page.locator("table.wb-metric-table").count() == 1
            assert page.locator(".wb-trace").count() >= 1
            text = page.locator("section#traces").inner_text()
            assert "<script>window.__pwned = 1</script>" in text  # shown as text
            assert page.evaluate("() => window.__pwned") is None
            assert page.locator("img").count() == 0
            assert page.locator("script").count() == 4  # plotly's own, in the sweep section
            assert page.locator("section:not(#sweep) script").count() == 0
            assert not [e for e in errors if "Content Security Policy" in e], errors
            assert not [e for e in errors if "pageerror" in e or "Error" in e], errors
            # citation links jump to their passage inside the same file
            link = page.locator(".wb-answer a").first
            assert page.locator(link.get_attribute("href") or "#none").count() == 1
            screenshot(page, "report", full_page=False)
        finally:
            browser.close()


def test_cli_report_on_the_handbook(tmp_path, capsys):
    out = tmp_path / "report.html"
    code = main(["report", "--corpus", str(HANDBOOK / "docs"), "--golden",
                 str(HANDBOOK / "golden.jsonl"), "-k", "5", "--budget-tokens", "400",
                 "--out", str(out), "--traces", str(tmp_path / "traces.jsonl"),
                 "--unrestricted", "--plots"])
    assert code == 0
    printed = capsys.readouterr().out
    assert f"wrote {out}: n=67 questions, live answer accuracy" in printed
    page = out.read_text(encoding="utf-8")
    for section in ("retrieval", "generation", "triage", "traces"):
        assert f'<section id="{section}">' in page
    # one plot (hit rate by category), its scripts the only ones the CSP allows
    assert page.count('class="plotly-graph-div"') == 1
    assert len(_csp_hashes(page)) == len(re.findall(r"<script[^>]*>", page)) > 0
    # people read a sentence, not a repr; each failing trace is one line until opened
    assert "GenerationResult(" not in page and "74 questions answered by extractive" in page
    assert page.count("<details open><summary>") == 1
    assert (tmp_path / "traces.jsonl").read_text().count("\n") == 74
    for cell in ("OK", "GEN_FAIL", "RET_FAIL"):
        assert f"<td>{cell}</td>" in page
    # without --plots: the same report, tables only, under 1 MB (plotly.js alone is 4.6 MB)
    small = tmp_path / "small.html"
    assert main(["report", "--corpus", str(HANDBOOK / "docs"), "--golden",
                 str(HANDBOOK / "golden.jsonl"), "-k", "5", "--budget-tokens", "400",
                 "--out", str(small), "--unrestricted"]) == 0
    assert small.stat().st_size < 1_000_000 and "<script" not in small.read_text("utf-8")


def test_cli_report_user_errors_and_access(tmp_path, capsys):
    code = main(["report", "--corpus", str(tmp_path / "missing"), "--out",
                 str(tmp_path / "r.html")])
    assert code == 2 and "workbench report: error" in capsys.readouterr().err
    out = tmp_path / "restricted.html"
    assert main(["report", "--corpus", str(HANDBOOK / "docs"), "--golden",
                 str(HANDBOOK / "golden.jsonl"), "--user-group", "staff", "--out",
                 str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    procurement = (HANDBOOK / "docs" / "procurement.md").read_text(encoding="utf-8")
    body = procurement.split("---", 2)[2]
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", body) if len(s) > 50]
    assert sentences and not any(s in page for s in sentences)
    assert "procurement#" not in page
