"""One real-browser test: JupyterLab in headless Chromium drives the chunk preview.

It moves the size slider, checks the chunk boundaries changed (in the page and in Python),
and that no script carried by the document ran.
"""

from __future__ import annotations

import re

import pytest

from tests.browser import notebook_page, run_cell

CELLS = [
    "from workbench.corpus import Document, Span\n"
    "from workbench.widgets.chunk_preview import ChunkPreview\n"
    "text = ('Intro sentence here. ' * 30 + '<script>window.__pwned = 1</script> '\n"
    "        '<img src=x onerror=\"window.__pwned = 2\"> ' + 'Refunds take 30 days. ' * 30)\n"
    "doc = Document('hostile', text)\n"
    "preview = ChunkPreview(doc, [Span('hostile', 640, 661)], size=400, overlap=0)\n"
    "preview",
    "print('SPEC', preview.spec, 'CHUNKS', len(preview.chunks))",
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
        page.screenshot(path=str(tmp_path / "preview.png"))
