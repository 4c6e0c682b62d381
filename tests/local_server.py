"""The real local OpenAI-compatible server (``python -m workbench.generation.server``) with the
offline SmolLM2, for the tests whose behaviour depends on a real model behind a real endpoint."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from tests.conftest import ROOT

#: The server's environment: offline, and the checkout's package on the path.
SERVER_ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
              "PYTHONPATH": str(ROOT)}


@contextlib.contextmanager
def local_server(max_new_tokens: int) -> Iterator[str]:
    """Start the server on a free port; yield its base URL once it says it is listening.
    Skips when transformers or the model package is missing."""
    pytest.importorskip("transformers")
    from workbench.generation import smollm2_gguf_path

    try:
        smollm2_gguf_path()
    except ModuleNotFoundError as exc:
        pytest.skip(str(exc))
    proc = subprocess.Popen([sys.executable, "-m", "workbench.generation.server", "--port", "0",
                             "--max-new-tokens", str(max_new_tokens)], cwd=ROOT, env=SERVER_ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline, line = time.monotonic() + 240, ""
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                pytest.fail(f"the local server exited with {proc.returncode}")
            if "listening on" in line:
                break
        assert "listening on" in line, f"the local server did not start in 240 s: {line!r}"
        yield line.split("listening on ", 1)[1].split()[0]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
