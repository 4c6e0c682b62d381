"""The labeller in real JupyterLab + headless Chromium: search, select with the mouse (English
and Chinese, and in documents loaded from PDF, HTML with emoji, and Vietnamese DOCX), mark a
must-mention, save, and read the JSONL line; hostile text stays text. Then 12 questions of a
corpus and log written for the test (tests/widgets/labeller_plan.py), English and Chinese,
labelled with real keys and mouse drags: the saved lines exact, at most 4 actions for the
median answerable question."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.browser import notebook_page, run_cell, screenshot
from tests.conftest import HANDBOOK

DOCS = HANDBOOK / "docs"

#: (file name, the sentence to select) of the documents made in other formats; the HTML one
#: puts emoji (two UTF-16 units each) before its sentence, so UTF-16 and code-point offsets differ.
FORMATS = [("laptops.pdf", "Laptops are replaced every 36 months by the IT desk."),
           ("party.html", "The team party budget is capped at 40 dollars per person."),
           ("allowance.docx", "Phụ cấp đi lại là 200.000 đồng mỗi ngày công tác.")]


def _formats(folder: Path) -> Path:
    """A PDF (reportlab), an HTML page and a DOCX (python-docx) holding FORMATS' sentences."""
    import docx
    from reportlab.pdfgen.canvas import Canvas

    folder.mkdir()
    pdf = Canvas(str(folder / "laptops.pdf"))
    pdf.setFont("Helvetica", 11)
    pdf.drawString(72, 760, "Laptop policy")
    pdf.drawString(72, 740, FORMATS[0][1])
    pdf.save()
    (folder / "party.html").write_text(
        "<html><head><title>Party FAQ</title></head><body><h1>Party FAQ 😀🎉</h1>"
        f"<p>Cheers 🎉🎉 to all. {FORMATS[1][1]}</p></body></html>", encoding="utf-8")
    word = docx.Document()
    word.add_heading("Phụ cấp công tác", level=1)
    word.add_paragraph(FORMATS[2][1])
    word.save(str(folder / "allowance.docx"))
    return folder


def _cells(formats: Path) -> list[str]:
    return [
        "from workbench.corpus import UNRESTRICTED, Corpus, Document, load_folder\n"
        "from workbench.widgets.labeller import Labeller\n"
        f"docs = load_folder({str(DOCS)!r})\n"
        f"formats = load_folder({str(formats)!r})\n"
        "evil = Document('evil', 'Pwned check <script>window.__pwned = 1</script> '\n"
        "                '<img src=x onerror=\"window.__pwned = 2\"> end')\n"
        "corpus = Corpus([*docs.values(), *formats.values(), evil])\n"
        "qs = ['how many days to submit travel receipts', '上海年假结转到什么时候',\n"
        "      'pwned check', 'laptops replaced every months', 'party budget capped dollars',\n"
        "      'phụ cấp đi lại mỗi ngày']\n"
        "lab = Labeller(corpus, qs, 'golden.jsonl', dense=False, user_groups=UNRESTRICTED)\n"
        "lab",
        "print('NOWAT', lab.current_qid, 'SEL', lab.selection)",
    ]

# Drag the mouse from the first character of `needle` to its last, inside the document view.
DRAG_POINTS = """([needle]) => {
  const doc = document.querySelector('.wb-doc');
  const full = doc.textContent;
  const at = full.indexOf(needle);
  if (at < 0) return null;
  const walker = document.createTreeWalker(doc, NodeFilter.SHOW_TEXT);
  const pos = (u) => { let n, seen = 0;
    while ((n = walker.nextNode())) {
      if (u < seen + n.length) return [n, u - seen];
      seen += n.length;
    }
    return null; };
  const rect = (u) => { walker.currentNode = doc; const [n, o] = pos(u);
    const r = document.createRange(); r.setStart(n, o); r.setEnd(n, o + 1);
    return r.getBoundingClientRect(); };
  const a = rect(at), b = rect(at + needle.length - 1);
  return [a.left + 1, a.top + a.height / 2, b.right - 1, b.top + b.height / 2];
}"""


def _select(page, needle: str) -> None:
    page.wait_for_function("(n) => document.querySelector('.wb-doc').textContent.includes(n)",
                           arg=needle, timeout=60_000)
    page.locator(".wb-doc").first.evaluate(
        "(d, n) => { const i = d.textContent.indexOf(n); const s = d.querySelector('.wb-hl');"
        " (s || d).scrollIntoView(); }", needle)
    x0, y0, x1, y1 = page.evaluate(DRAG_POINTS, [needle])
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move(x1, y1, steps=8)
    page.mouse.up()


def _answer(page, needle: str) -> None:
    """Drag over ``needle`` and make it the answer: a drag inside the proposed answer only
    marks, and ``x`` makes the marked text the answer."""
    _select(page, needle)
    page.wait_for_function("(n) => { const m = document.querySelector('.wb-doc .wb-mark');"
                           " const s = document.querySelector('.wb-doc .wb-sel');"
                           " return (m && m.textContent === n) || (s && s.textContent === n); }",
                           arg=needle, timeout=30_000)
    if page.locator(".wb-doc .wb-mark").count():
        page.locator(".wb-lab").first.focus()
        page.keyboard.press("x")
        page.wait_for_function("(n) => { const s = document.querySelector('.wb-doc .wb-sel');"
                               " return s && s.textContent === n; }", arg=needle,
                               timeout=30_000)


def _search(page, query: str) -> None:
    box = page.locator(".wb-search").first
    box.fill(query)
    box.press("Enter")
    page.wait_for_selector(".wb-bm25 .wb-hit", timeout=60_000)


def _lines(folder: Path) -> list[dict]:
    path = folder / "golden.jsonl"
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


@pytest.mark.browser
@pytest.mark.slow
def test_labeller_in_jupyterlab(tmp_path):
    from workbench.corpus import Corpus, load_folder

    formats = _formats(tmp_path / "formats")
    corpus = Corpus([*load_folder(DOCS).values(), *load_folder(formats).values()])
    with notebook_page(tmp_path, "label.ipynb", _cells(formats)) as page:
        page.wait_for_selector(".wb-lab", timeout=120_000)
        assert "0 of 6 labelled" in page.locator(".wb-progress").first.inner_text()

        # English: search, select a sentence with the mouse, mark a must-mention, save
        _search(page, "travel receipts submitted within days")
        shown = page.locator(".wb-doc").first.text_content()
        days = "14" if "submitted within 14 days" in shown else "30"
        _answer(page, f"Travel receipts must be submitted within {days} days")
        page.wait_for_selector(".wb-chip", timeout=30_000)
        page.locator(".wb-chip", has_text=f"{days} days").first.click()
        page.wait_for_selector(".wb-chip.on", timeout=30_000)
        page.locator(".wb-category").first.fill("expenses")
        page.locator(".wb-category").first.press("Enter")
        page.locator(".wb-btn-save").first.click()
        page.wait_for_function("() => document.querySelector('.wb-progress').innerText"
                               ".startsWith('1 of 6')", timeout=60_000)
        row = _lines(tmp_path)[0]
        ev = row["evidence"][0]
        text = corpus[ev["doc_id"]].text
        assert text[ev["start"]:ev["end"]] == ev["text"]
        assert ev["text"] == f"Travel receipts must be submitted within {days} days"
        assert row["category"] == "expenses" and row["qid"] == "q001"
        assert row["answer_must_mention"] == [f"{days} days"]

        # Chinese: select with the mouse, save with the keyboard
        _search(page, "年假 结转")
        needle = "法定年假当年未休完的，可以结转至次年6月30日前休完"
        _answer(page, needle)
        page.wait_for_function("() => document.querySelector('.wb-suggestions')"
                               ".innerText.includes('30')", timeout=30_000)
        page.locator(".wb-lab").first.focus()
        page.keyboard.press("s")
        page.wait_for_function("() => document.querySelector('.wb-progress').innerText"
                               ".startsWith('2 of 6')", timeout=60_000)
        zh = _lines(tmp_path)[1]["evidence"][0]
        assert zh["doc_id"] == "zh-leave-shanghai" and zh["text"] == needle
        assert corpus["zh-leave-shanghai"].text[zh["start"]:zh["end"]] == needle

        # hostile document text shows as text and never runs
        _search(page, "pwned check")
        page.wait_for_function("() => document.querySelector('.wb-doc').textContent"
                               ".includes('<script>')", timeout=60_000)
        assert "<img src=x onerror" in page.locator(".wb-doc").first.inner_text()
        assert page.evaluate("() => window.__pwned") is None
        assert page.locator(".wb-doc script, .wb-doc img").count() == 0
        assert "NOWAT q003" in run_cell(page, 1, "NOWAT")
        page.locator(".wb-lab").first.focus()
        page.keyboard.press("k")  # skip the hostile one

        # documents another extractor made: PDF, HTML (emoji before the sentence), DOCX
        for n, ((name, sentence), query) in enumerate(zip(FORMATS, (
                "laptops replaced months", "party budget capped", "phụ cấp đi lại"),
                strict=True)):
            _search(page, query)
            _answer(page, sentence)
            page.locator(".wb-lab").first.focus()
            page.keyboard.press("s")
            page.wait_for_function("(n) => document.querySelector('.wb-progress').innerText"
                                   ".startsWith(`${n} of 6`)", arg=3 + n, timeout=60_000)
            ev = _lines(tmp_path)[-1]["evidence"][0]
            doc = corpus[ev["doc_id"]]
            assert ev["text"] == sentence, (name, ev)
            assert doc.text[ev["start"]:ev["end"]] == sentence and doc.id == Path(name).stem
        assert screenshot(page, "labeller").stat().st_size > 0


def _actions(page) -> int:
    text = page.locator(".wb-status").first.inner_text()
    return int(text.rsplit("actions ", 1)[1])


def _on_question(page, qid: str) -> None:
    """Wait until ``qid`` is open and settled (its search run, nothing done yet)."""
    page.wait_for_function(
        "(q) => { const e = document.querySelector('.wb-q');"
        " const st = document.querySelector('.wb-status').innerText;"
        " return e && e.innerText.startsWith(q + ':') && st.endsWith('actions 0'); }",
        arg=qid, timeout=60_000)


@pytest.mark.browser
@pytest.mark.slow
def test_twelve_questions_by_keyboard_and_mouse(tmp_path):
    from statistics import median

    from tests.widgets.labeller_plan import PLAN, expected_rows, saved_as_expected, write
    from workbench.corpus import Corpus, load_folder
    from workbench.golden import import_questions
    from workbench.golden.labelling import LabellingSession

    docs, log = write(tmp_path / "plan")
    corpus = Corpus(load_folder(docs).values())
    cells = ["from workbench.corpus import Corpus, load_folder\n"
             "from workbench.golden import import_questions\n"
             "from workbench.widgets.labeller import Labeller\n"
             f"corpus = Corpus(load_folder({str(docs)!r}).values())\n"
             f"lab = Labeller(corpus, import_questions({str(log)!r}), 'golden.jsonl',"
             " dense=False)\n"
             "lab"]
    with notebook_page(tmp_path, "plan.ipynb", cells) as page:
        page.wait_for_selector(".wb-lab", timeout=240_000)
        box = page.locator(".wb-lab").first
        for n, (qid, question, _, steps, _) in enumerate(PLAN):
            _on_question(page, qid)
            assert page.locator(".wb-search").first.input_value() == question
            after = PLAN[n + 1][0] if n + 1 < len(PLAN) else None
            for kind, what in steps:
                before = _actions(page)
                if kind == "mouse":
                    _select(page, what)
                elif kind == "category":
                    box.focus()
                    page.keyboard.press("c")
                    page.keyboard.type(what)
                    page.keyboard.press("Enter")
                else:
                    box.focus()
                    page.keyboard.press(what)
                if kind == "key" and what in ("s", "Enter", "u"):
                    if after is None:
                        page.wait_for_function("() => document.querySelector('.wb-status')"
                                               ".innerText.includes('all questions')",
                                               timeout=60_000)
                    else:
                        _on_question(page, after)
                elif kind == "key" and what == "k":
                    _on_question(page, after or "")
                elif kind == "key" and what == "r":
                    _on_question(page, qid)
                else:
                    page.wait_for_function(
                        "(n) => document.querySelector('.wb-status').innerText"
                        ".endsWith('actions ' + n)", arg=before + 1, timeout=60_000)
                if kind == "category":              # the answer stays painted, focus elsewhere
                    page.locator(".wb-category").first.focus()
                    assert page.locator(".wb-doc .wb-sel").count() == 1
                    box.focus()
        assert "12 of 12 labelled, 0 skipped" in page.locator(".wb-progress").first.inner_text()
        assert screenshot(page, "labeller-keyboard").stat().st_size > 0
    lines = _lines(tmp_path)
    got = sorted((saved_as_expected(x) for x in lines), key=lambda r: r["qid"])
    assert got == expected_rows(corpus, log)
    answerable = [x["labelling"]["actions"] for x in lines if x["answerable"]]
    assert median(answerable) <= 4, answerable
    session = LabellingSession(tmp_path / "golden.jsonl", corpus, import_questions(log))
    print("scripted protocol:", session.throughput().summary(), "| answerable actions",
          sorted(answerable))
    assert session.throughput().acceptance_rate == 0.9
