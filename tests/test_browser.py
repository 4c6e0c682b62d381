"""One real-browser test: JupyterLab in headless Chromium drives the chunk preview.

It moves the size slider, checks the chunk boundaries changed (in the page and in Python),
and that no script carried by the document ran.
"""

from __future__ import annotations

import re
import time

import nbformat
import pytest

from tests.browser import CHROMIUM_ARGS, chromium_path, jupyter_lab, run_all_cells

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
    browser_path = chromium_path()
    from playwright.sync_api import sync_playwright

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, tmp_path / "preview.ipynb")
    with jupyter_lab(tmp_path) as (base, token), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/lab/tree/preview.ipynb?token={token}")
            page.wait_for_selector(".jp-Notebook", timeout=90_000)
            time.sleep(3)
            run_all_cells(page, 1)
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
            page.locator(".jp-Cell .jp-InputArea-editor").nth(1).click()
            page.keyboard.press("Shift+Enter")
            page.wait_for_selector("text=SPEC", timeout=60_000)
            printed = page.locator(".jp-OutputArea-output", has_text="SPEC").first.inner_text()
            assert re.search(r"size=200.*CHUNKS \d+", printed)

            # the document's script and onerror handler never ran; they show as text
            assert page.evaluate("() => window.__pwned") is None
            assert "<script>window.__pwned" in page.locator(".wb-preview").first.inner_text()
            page.screenshot(path=str(tmp_path / "preview.png"))
        finally:
            browser.close()
