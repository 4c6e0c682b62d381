"""The test run's own rules (tests/conftest.py), run on a planted test in a child pytest."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

from tests.conftest import ROOT


def _pytest(tmp_path, body: str, **env: str) -> subprocess.CompletedProcess[str]:
    test = tmp_path / "test_planted.py"
    test.write_text(body, encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "tests.conftest", str(test)], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=300)


def test_a_test_that_leaves_a_file_in_the_checkout_fails_the_run_naming_it(tmp_path):
    name = f"left-by-a-test-{uuid.uuid4().hex}.txt"
    try:
        out = _pytest(tmp_path, "from tests.conftest import ROOT\n"
                      f"def test_leaves():\n    (ROOT / {name!r}).write_text('x')\n")
    finally:
        (ROOT / name).unlink(missing_ok=True)
    assert out.returncode == 1 and "1 passed" in out.stdout
    assert f"the tests left 1 file(s) in the checkout: {name!r}" in out.stderr
    clean = _pytest(tmp_path, "def test_writes_in_its_own_folder(tmp_path):\n"
                    "    (tmp_path / 'x.txt').write_text('x')\n")
    assert clean.returncode == 0, clean.stdout + clean.stderr


def test_a_skipped_test_fails_the_run_when_skips_are_refused(tmp_path):
    body = "import pytest\ndef test_skips():\n    pytest.skip('no dataset')\n"
    assert _pytest(tmp_path, body, WORKBENCH_NO_SKIPS="0").returncode == 0
    refused = _pytest(tmp_path, body, WORKBENCH_NO_SKIPS="1")
    assert refused.returncode == 1 and "1 tests skipped (WORKBENCH_NO_SKIPS=1)" in refused.stderr
