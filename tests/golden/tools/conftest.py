"""The real-tool tier: Label Studio, Phoenix and Argilla's SDK, installed by ``make tools`` into
``.venv-tools/<tool>`` (pinned in this folder's ``labelstudio.txt`` and ``phoenix.txt``; their
pins clash with ours and each other's). Servers run on loopback ports in a temporary folder
and are stopped by their fixture. Without the venvs the tier skips, saying so (``make test``
installs them and fails on any skip)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import ROOT

TOOLS = ROOT / ".venv-tools"
HERE = Path(__file__).parent


def tool_bin(venv: str, name: str) -> Path:
    path = TOOLS / venv / "bin" / name
    if not path.exists():
        pytest.skip(f"{path} not installed: `make tools` installs the real-tool tier's venvs")
    return path


def pinned(venv: str, package: str) -> str:
    """The version of ``package`` pinned in ``<venv>.txt``."""
    for line in (HERE / f"{venv}.txt").read_text(encoding="utf-8").splitlines():
        if line.startswith(f"{package}=="):
            return line.split("==")[1].strip()
    raise AssertionError(f"{package} is not pinned in {venv}.txt")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server(command: list[str], env: dict[str, str], ready: str, cwd: Path, log: Path,
           timeout: float = 240) -> Iterator[None]:
    """``command`` running until the block ends (its process group stopped), once ``ready``
    answers 200."""
    with log.open("wb") as out:
        proc = subprocess.Popen(command, env={**os.environ, **env}, cwd=cwd, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"{command[0]} exited: {log.read_text()[-2000:]}")
            try:
                with urllib.request.urlopen(ready, timeout=5) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"{ready} not up in {timeout} s: {log.read_text()[-2000:]}")
            time.sleep(1)
        yield
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
