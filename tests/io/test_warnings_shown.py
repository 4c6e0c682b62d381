"""The package's own warnings read as the person needs them: ``NameWarning: message``, once,
with no interpreter path (a notebook cell's temporary file); other warnings are untouched."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import ROOT


def _stderr_of(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True)
    return done.stderr


def test_a_workbench_warning_is_shown_once_without_a_path() -> None:
    err = _stderr_of("""
        import warnings
        from workbench.io import WorkbenchWarning
        class LanguageWarning(WorkbenchWarning):
            pass
        for _ in range(3):
            warnings.warn("the texts are Vietnamese", LanguageWarning)
        warnings.warn("another message", LanguageWarning)
        """)
    assert err.splitlines() == ["LanguageWarning: the texts are Vietnamese",
                                "LanguageWarning: another message"]


def test_other_warnings_keep_their_form_and_user_filters_come_first() -> None:
    err = _stderr_of("""
        import warnings
        import workbench.io
        warnings.warn("not ours", UserWarning)
        warnings.filterwarnings("ignore", category=workbench.io.WorkbenchWarning)
        warnings.warn("silenced by the user", workbench.io.WorkbenchWarning)
        """)
    assert "<string>:4: UserWarning: not ours" in err and "silenced" not in err
