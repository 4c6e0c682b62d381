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

import pytest

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
def jupyter_lab(root: Path) -> Iterator[tuple[str, str]]:
    """Start JupyterLab on a free port serving ``root``; yield (base_url, token)."""
    port, token = free_port(), "wbtest"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(Path(__file__).parents[1])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={port}",
         f"--ServerApp.token={token}", "--ServerApp.ip=127.0.0.1", "--allow-root",
         f"--ServerApp.root_dir={root}", "--LabApp.news_url=", "--LabServerApp.open_browser=False"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
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


def run_all_cells(page, cell_count: int) -> None:
    """Run each code cell in turn with Shift+Enter from the first one."""
    page.locator(".jp-Cell .jp-InputArea-editor").first.click()
    for _ in range(cell_count):
        page.keyboard.press("Shift+Enter")
        time.sleep(0.4)
