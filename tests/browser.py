"""Helpers for tests that drive a real JupyterLab in headless Debian Chromium (Playwright).

Recipe (verified on these machines): chromium from apt, Playwright with
``executable_path=/usr/bin/chromium``, JupyterLab started by the test on a private port.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-quic", "--disable-dev-shm-usage"]


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.skip("Debian chromium is not installed (make test installs it with apt-get as "
                    "root); the browser test needs it")
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def jupyter_lab(root: Path, settings: Path | None = None) -> Iterator[tuple[str, str]]:
    """Start JupyterLab on a free port serving ``root``; yield (base_url, token).

    With ``settings`` (an empty folder) it runs as the notebook test needs it: the app is
    reachable from the page as ``window.jupyterapp``, and the user settings live in that
    folder (nobody's own settings apply) with cell timing recorded in the saved notebook and
    every cell laid out (no windowing: an element screenshot shows what it names);
    the server's log goes to ``lab.log`` there."""
    port, token = free_port(), "wbtest"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    options, log = [], None
    if settings is not None:
        tracker = settings / "@jupyterlab" / "notebook-extension"
        tracker.mkdir(parents=True, exist_ok=True)
        (tracker / "tracker.jupyterlab-settings").write_text(
            '{"recordTiming": true, "windowingMode": "none"}\n')
        options = ["--LabApp.expose_app_in_browser=True", f"--LabApp.user_settings_dir={settings}",
                   f"--LabApp.workspaces_dir={settings}"]
        log = (settings / "lab.log").open("ab")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
         f"--ServerApp.token={token}", "--ServerApp.ip=127.0.0.1", "--allow-root",
         f"--ServerApp.root_dir={root}", "--LabApp.news_url=", "--LabServerApp.open_browser=False",
         *options],
        stdout=log or subprocess.DEVNULL, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                urllib.request.urlopen(f"{base}/api?token={token}", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("JupyterLab did not start within 90 s") from None
                time.sleep(0.5)
        yield base, token
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        if log is not None:
            log.close()


@contextlib.contextmanager
def notebook_page(folder: Path, name: str, cells: list[str]) -> Iterator[Any]:
    """Write ``cells`` as notebook ``name`` in ``folder``, open it in JupyterLab in headless
    Chromium and run its first cell; yield the Playwright page."""
    browser_path = chromium_path()
    import nbformat
    from playwright.sync_api import sync_playwright

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, folder / name)
    with jupyter_lab(folder) as (base, token), sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"{base}/lab/tree/{name}?token={token}")
            page.wait_for_selector(".jp-Notebook", timeout=90_000)
            time.sleep(3)
            page.locator(".jp-Cell .jp-InputArea-editor").first.click()
            page.keyboard.press("Shift+Enter")
            _first_cell_ran(page)
            yield page
        finally:
            browser.close()


def _first_cell_ran(page: Any) -> None:
    """Wait until the first cell has run (its prompt numbered); a traceback in its output
    fails here, with the traceback, instead of as a widget that never appears."""
    page.wait_for_function(
        "() => /\\[\\d+\\]/.test(document.querySelector('.jp-Cell .jp-InputPrompt')"
        "?.textContent || '')", timeout=300_000)
    failed = page.locator(".jp-Cell").first.locator(".jp-OutputArea-output",
                                                     has_text="Traceback")
    if failed.count():
        raise AssertionError("the first cell failed:\n" + failed.first.inner_text())


def run_cell(page: Any, index: int, marker: str) -> str:
    """Run code cell ``index`` and return the text of its output containing ``marker``."""
    page.locator(".jp-Cell .jp-InputArea-editor").nth(index).click()
    page.keyboard.press("Shift+Enter")
    page.wait_for_selector(f"text={marker}", timeout=60_000)
    return str(page.locator(".jp-OutputArea-output", has_text=marker).first.inner_text())


#: Where browser tests leave screenshots of the key visuals for a reviewer (ignored by git).
SCREENSHOTS = ROOT / "outputs" / "screenshots"


def screenshot(page: Any, name: str, **options: Any) -> Path:
    """Save what the page shows as ``outputs/screenshots/NAME.png`` and return the path."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), **options)
    return path
