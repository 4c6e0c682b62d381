"""One real-browser test: JupyterLab in headless Chromium drives the chunk preview.

It moves the size slider, checks the chunk boundaries changed (in the page and in Python),
and that no script carried by the document ran. Then a support ticket in a pair of previews
at half width: the conversation chunks name their turns and speakers, the sliders keep a
usable width, the chars/tokens buttons and the chunk dropdown are not clipped, and the
overlap sliders of chunkers without overlap are disabled and say so.
"""

from __future__ import annotations

import re

import pytest

from tests.browser import notebook_page, run_cell, screenshot
from tests.conftest import ROOT

TICKETS = ROOT / "data" / "content_types" / "tickets" / "tickets.jsonl"

CELLS = [
    "from workbench.corpus import Document, Span\n"
    "from workbench.widgets.chunk_preview import ChunkPreview\n"
    "text = ('Intro sentence here. ' * 30 + '<script>window.__pwned = 1</script> '\n"
    "        '<img src=x onerror=\"window.__pwned = 2\"> ' + 'Refunds take 30 days. ' * 30)\n"
    "doc = Document('hostile', text)\n"
    "preview = ChunkPreview(doc, [Span('hostile', 640, 661)], size=400, overlap=0)\n"
    "preview",
    "print('SPEC', preview.spec, 'CHUNKS', len(preview.chunks))",
    "from workbench.corpus.conversations import load_conversations\n"
    "from workbench.widgets import ChunkPreviewPair\n"
    f"tickets = load_conversations({str(TICKETS)!r})\n"
    "pair = ChunkPreviewPair(tickets.documents, left={'kind': 'conversation', 'size': 300},\n"
    "                        right={'kind': 'markdown', 'size': 300})\n"
    "pair",
]


@pytest.mark.browser
@pytest.mark.slow
def test_chunk_preview_in_jupyterlab(tmp_path):
    with notebook_page(tmp_path, "preview.ipynb", CELLS) as page:
        summary = page.locator(".wb-summary").first
        summary.wait_for(timeout=120_000)
        before = summary.inner_text()
        marks_before = page.locator(".wb-mark").count()
        assert "size=400" in before and marks_before >= 2

        handle = page.locator(".widget-slider .noUi-handle").first
        handle.click()
        for _ in range(4):  # size 400 -> 200 in steps of 50
            page.keyboard.press("ArrowLeft")
        page.wait_for_function(
            "() => document.querySelector('.wb-summary').innerText.includes('size=200')",
            timeout=60_000)
        after = page.locator(".wb-summary").first.inner_text()
        assert page.locator(".wb-mark").count() > marks_before
        assert after != before

        # the Python side saw the same change
        printed = run_cell(page, 1, "SPEC")
        assert re.search(r"size=200.*CHUNKS \d+", printed)

        # the document's script and onerror handler never ran; they show as text
        assert page.evaluate("() => window.__pwned") is None
        assert "<script>window.__pwned" in page.locator(".wb-preview").first.inner_text()
        screenshot(page, "chunk-preview")

        # a conversation at half width (ChunkPreviewPair)
        page.locator(".jp-Cell .jp-InputArea-editor").nth(2).click()
        page.keyboard.press("Shift+Enter")
        page.wait_for_selector("text=turns: Customer", timeout=120_000)
        marks = page.locator(".wb-mark", has_text="turn").all_inner_texts()
        assert marks and all(re.search(r"\d+ turns?: ", m) for m in marks)
        assert any("Customer" in m and "Agent" in m for m in marks)
        pair = page.locator(".widget-hbox").filter(has=page.locator(".wb-preview")).last
        sliders = pair.locator(".widget-slider .noUi-target, .widget-slider .slider-container")
        widths = [box["width"] for box in (s.bounding_box() for s in sliders.all()) if box]
        assert len(widths) >= 4 and min(widths) > 120, widths  # never a dot
        for button in pair.locator(".widget-toggle-button").all():  # chars / tokens whole
            assert button.evaluate("b => b.scrollWidth <= b.clientWidth + 1"), button.inner_text()
        selects = pair.locator(".widget-dropdown select").all()
        assert selects and all(el.evaluate("s => s.clientWidth >= 120") for el in selects)
        overlap = pair.locator(".widget-slider", has_text="overlap (n/a)")
        assert overlap.count() == 2  # conversation and markdown take none: each slider says so
        assert all("disabled" in (el.get_attribute("class") or "") or el.locator(
            "[disabled]").count() for el in overlap.all())
        screenshot(page, "chunk-preview-conversation")


@pytest.mark.browser
@pytest.mark.slow
def test_a_first_cell_that_fails_is_reported_with_its_traceback(tmp_path):
    """A browser test whose set-up cell raises fails at once with the error, not after a
    two-minute wait for a widget that never appears."""
    cells = ["from workbench.corpus import Chunk\nChunk('c', 'd', 0, 1, 'x')"]
    with pytest.raises(AssertionError, match=r"(?s)the first cell failed.*TypeError"), \
            notebook_page(tmp_path, "fails.ipynb", cells):
        pass
