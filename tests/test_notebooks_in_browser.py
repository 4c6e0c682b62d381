"""Every guided notebook run as a newcomer runs it: opened in JupyterLab in headless Chromium,
Run All Cells, saved, read back.

It passes when no cell raised (a story ``assert`` that no longer holds is an error output, so
this runs each notebook's own story checks), no widget failed to display, the browser console
stayed free of errors, and the saved outputs pass :func:`tests.test_notebooks.check_outputs`
(quoted numbers shown, no raw reprs, no ``\\n`` in tables). This is the test that executes the
notebooks (nothing else does, so CI runs each once). The key visuals (widgets, plots, styled
tables) are saved as ``outputs/screenshots/NN_cellMM_what.png`` (``what``: the name the
cell's last line starts with); the cells that ran longer than 20 s, and whether each showed
a progress bar, go to ``outputs/notebook_times/NN.txt``, and a slow cell without a bar fails
the test (a person waiting with nothing on screen thinks the notebook hung).

The notebooks run where their relative paths expect them, in a mirror of the checkout under
tmp: ``repo/notebooks/NN.ipynb`` (a copy, so the committed file never gets outputs),
``repo/data`` and ``repo/outputs`` linked to the checkout's, ``shared/datasets`` linked to the
shared datasets (``../../shared/datasets`` from the notebook's folder).
"""

from __future__ import annotations

import json
import re
import shutil
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.browser import CHROMIUM_ARGS, chromium_path, jupyter_lab, screenshot
from tests.conftest import ROOT, SHARED_DATASETS
from tests.test_notebooks import NOTEBOOKS, check_outputs

#: Per notebook; the longest (05, a local model generating) takes about 5 minutes on 2 cores.
TIMEOUT_S = 15 * 60
#: A cell that runs longer than this should show a progress bar (issue 26, part 6).
SLOW_CELL_S = 20
#: Browser console errors that are JupyterLab's own and not the notebooks': each pattern as
#: narrow as it can be, with the reason it is benign.
BENIGN_CONSOLE: list[re.Pattern[str]] = []
#: tqdm's bar as text (the plain form of its notebook widget, or a stream): "| 3/64 [".
PROGRESS = re.compile(r"\|[^|\n]*\|\s*\d+/(?:\d+|\?) \[")
#: The outputs that are key visuals, by what they carry: a widget (ipywidgets or anywidget)
#: that is not a progress bar, a plot (plotly, or an image), a styled pandas table.
WIDGET, PLOTLY = "application/vnd.jupyter.widget-view+json", "application/vnd.plotly.v1+json"
#: Each code cell's outputs as the page holds them (marked for a locator): index, output,
#: mime types, plain text and whether the HTML is a pandas Styler's table.
OUTPUTS = """() => {
  const found = [];
  jupyterapp.shell.currentWidget.content.widgets.forEach((cell, i) => {
    if (cell.model.type !== 'code') return;
    cell.outputArea.widgets.forEach((child, j) => {
      const output = cell.model.outputs.get(j);
      if (!output) return;
      const data = output.toJSON().data || {};
      child.node.setAttribute('data-wb-output', `${i}-${j}`);
      found.push({cell: i, output: j, mimes: Object.keys(data),
                  plain: String(data['text/plain'] || ''),
                  styled: String(data['text/html'] || '').includes('<table id="T_')});
    });
  });
  return found;
}"""

STATE = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session
                 && panel.sessionContext.session.kernel;
  if (!kernel) return false;
  const cells = panel.content.widgets.map(c => c.model);
  const errors = [];
  cells.forEach((m, i) => {
    if (m.type !== 'code') return;
    for (let j = 0; j < m.outputs.length; j++) {
      const o = m.outputs.get(j).toJSON();
      if (o.output_type === 'error') errors.push(`cell ${i}: ${o.ename}: ${o.evalue}`);
    }
  });
  const ran = cells.every(m => m.type !== 'code' || m.executionCount !== null);
  if (errors.length || (ran && kernel.status === 'idle')) return {errors, status: kernel.status};
  return false;
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, str, Any]]:
    """One JupyterLab over the mirror and one Chromium for all notebooks:
    (repo, base url, token, browser)."""
    browser_path = chromium_path()
    from playwright.sync_api import sync_playwright

    top = tmp_path_factory.mktemp("lab")
    repo = top / "repo"
    (repo / "notebooks").mkdir(parents=True)
    (repo / "data").symlink_to(ROOT / "data")
    (ROOT / "outputs").mkdir(exist_ok=True)
    (repo / "outputs").symlink_to(ROOT / "outputs")
    (top / "shared").mkdir()
    (top / "shared" / "datasets").symlink_to(SHARED_DATASETS)
    with jupyter_lab(repo, settings=top / "settings") as (base, token), \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=CHROMIUM_ARGS)
        try:
            yield repo, base, token, browser
        finally:
            browser.close()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_jupyterlab(lab: tuple[Path, str, str, Any], path: Path) -> None:
    repo, base, token, browser = lab
    if "shared/datasets" in path.read_text(encoding="utf-8") and not SHARED_DATASETS.is_dir():
        pytest.skip(f"{path.name} runs sections on the shared datasets, not found at "
                    f"{SHARED_DATASETS} (clone beside ../shared, or set WORKBENCH_DATASETS)")
    committed = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in committed.cells if c.cell_type == "code"), (
        f"{path.name} is committed with outputs; clear them")
    saved = repo / "notebooks" / path.name
    shutil.copyfile(path, saved)
    console: list[str] = []
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: console.append(f"uncaught: {e}"))
    try:
        # reset: the workspace saved by the last notebook's page (its tab) is not restored
        page.goto(f"{base}/lab/tree/notebooks/{path.name}?reset&token={token}")
        page.wait_for_function("() => window.jupyterapp && jupyterapp.shell.currentWidget"
                               " && jupyterapp.shell.currentWidget.sessionContext.session"
                               " && jupyterapp.shell.currentWidget.sessionContext.session"
                               ".kernel.status === 'idle'", timeout=120_000, polling=500)
        started = time.monotonic()
        page.evaluate("() => { jupyterapp.commands.execute('notebook:run-all-cells'); }")
        state = page.wait_for_function(STATE, timeout=TIMEOUT_S * 1000,
                                       polling=1000).json_value()
        elapsed = time.monotonic() - started
        time.sleep(3)  # widgets and plots finish rendering
        problems = [*state["errors"]]
        if page.evaluate("() => document.body.textContent.includes('Error displaying widget')"):
            problems.append("a widget shows 'Error displaying widget'")
        shots = _screenshot_visuals(page, path.stem[:2], committed)
        page.evaluate("async () => { await jupyterapp.commands.execute('docmanager:save'); }")
        page.wait_for_function("() => !jupyterapp.shell.currentWidget.context.model.dirty",
                               timeout=60_000)
    finally:
        page.close()
        _shut_down_kernels(base, token)
    problems += [f"browser console: {m}" for m in console
                 if not any(p.search(m) for p in BENIGN_CONSOLE)]
    assert not problems, f"{path.name}: {problems}"
    ran = nbformat.read(saved, as_version=4)
    check_outputs(ran, path.name)
    slow, barless = _slow_cells(ran, path.stem[:2], elapsed)
    print(f"{path.name}: {elapsed:.0f} s; {len(shots)} screenshots; {slow}")
    assert not barless, (f"{path.name}: cells over {SLOW_CELL_S} s without a progress bar: "
                         f"{barless}")


def _shut_down_kernels(base: str, token: str) -> None:
    """End every session's kernel (the next notebook starts with the machine's memory back)."""
    with urllib.request.urlopen(f"{base}/api/sessions?token={token}", timeout=30) as answer:
        sessions = json.load(answer)
    for session in sessions:
        request = urllib.request.Request(f"{base}/api/sessions/{session['id']}?token={token}",
                                         method="DELETE")
        urllib.request.urlopen(request, timeout=60).close()


def _screenshot_visuals(page: Any, prefix: str, nb: nbformat.NotebookNode) -> list[Path]:
    """Screenshot every output that is a key visual (a widget other than a progress bar, a
    plot, a styled table), named after its cell's index and the name the cell's last line
    starts with."""
    shots = []
    for out in page.evaluate(OUTPUTS):
        widget = WIDGET in out["mimes"] and not PROGRESS.search(out["plain"])
        plot = PLOTLY in out["mimes"] or any(m.startswith("image/") for m in out["mimes"])
        if not (widget or plot or out["styled"]):
            continue
        i, j = out["cell"], out["output"]
        last = [line for line in nb.cells[i].source.splitlines() if line.strip()
                and not line.lstrip().startswith("#")][-1]
        what = re.match(r"\s*(\w*)", last).group(1) or "output"  # type: ignore[union-attr]
        element = page.locator(f"[data-wb-output='{i}-{j}']")
        shots.append(screenshot(element, f"{prefix}_cell{i:02d}_{what}" + (f"_{j}" if j else "")))
    return shots


def _slow_cells(nb: nbformat.NotebookNode, prefix: str,
                elapsed: float) -> tuple[str, list[int]]:
    """Write the cells that ran over SLOW_CELL_S (from JupyterLab's recorded timing) with
    whether each showed a progress bar to ``outputs/notebook_times/NN.txt``; return it, and
    the slow cells that showed none."""
    rows = [f"notebook {prefix}: {elapsed:.0f} s in all"]
    barless = []
    for i, cell in enumerate(nb.cells):
        timing = cell.get("metadata", {}).get("execution", {})
        if cell.cell_type != "code" or "iopub.execute_input" not in timing:
            continue
        took = (datetime.fromisoformat(timing["shell.execute_reply"])
                - datetime.fromisoformat(timing["iopub.execute_input"])).total_seconds()
        if took > SLOW_CELL_S:
            bar = any(PROGRESS.search(str(o.get("text", "")) + str(
                o.get("data", {}).get("text/plain", ""))) for o in cell.outputs)
            rows.append(f"cell {i}: {took:.0f} s, {'a progress bar' if bar else 'NO progress bar'}")
            if not bar:
                barless.append(i)
    folder = ROOT / "outputs" / "notebook_times"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{prefix}.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return "; ".join(rows[1:]) or f"no cell over {SLOW_CELL_S} s", barless
