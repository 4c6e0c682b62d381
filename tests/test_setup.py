"""The set-up a newcomer runs: `make lab` / `make test`, the package metadata, the notebooks' git
filter. Read from the files themselves, so a broken step fails here before it fails a user."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import tomllib

from tests.conftest import ROOT

MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")


def _make_dry_run(target: str) -> list[str]:
    out = subprocess.run(["make", "-n", "-B", "-C", str(ROOT), target], check=True,
                         capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.strip()]


def test_every_pip_install_pins_torch_or_installs_nothing_else() -> None:
    """Anything that lets pip choose torch pulls a multi-GB CUDA build: every install step
    names ``torch==2.13.0``, except the pip upgrade and ``--no-deps`` installs."""
    installs = [line for line in _make_dry_run("install") if "pip install" in line]
    assert len(installs) >= 3
    for line in installs:
        args = shlex.split(line.lstrip("@"))
        if "--upgrade" in args or "--no-deps" in args:
            assert not any(a.startswith(("torch", "-e", ".")) for a in args[4:]), line
            continue
        assert "torch==2.13.0" in args, f"unpinned install step: {line}"


def test_install_says_what_it_is_doing_step_by_step() -> None:
    """``make lab`` on a fresh machine runs for minutes: one line per step, with the seconds
    since make started, before each slow command."""
    lines = _make_dry_run("install")
    said = [line for line in lines if line.startswith("echo ")]
    assert any("torch" in line for line in said) and any("workbench[all]" in line for line in said)
    for i, line in enumerate(lines):
        if "pip install" in line and "--upgrade" not in line:
            assert lines[i - 1].startswith("echo "), f"a silent step: {line}"
    assert all(re.search(r"\[\$\(\( \$\(date \+%s\) - \d+ \)\)s\]", line) for line in said)


def test_lab_opens_the_first_notebook_of_the_readme_table_at_the_repository_root() -> None:
    lines = _make_dry_run("lab")
    start = next(i for i, line in enumerate(lines) if "jupyter lab" in line)
    command = " ".join(line.rstrip("\\") for line in lines[start:start + 2])
    url = re.search(r"--LabApp\.default_url=/lab/tree/(\S+)", command)
    first_row = re.search(r"^\| `(\d\d_\w+)` \|", (ROOT / "README.md").read_text("utf-8"), re.M)
    assert url and (ROOT / url.group(1)).is_file() and first_row
    assert url.group(1) == f"notebooks/{first_row.group(1)}.ipynb"  # the course starts there
    assert "--ServerApp.root_dir=." in command


def test_the_licence_is_an_spdx_expression_with_its_text_shipped() -> None:
    """The table form (``{text = ...}``) prints a setuptools deprecation warning on every
    install; PEP 639 wants an SPDX expression and the licence file."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "Apache-2.0"
    for name in project["license-files"]:
        text = (ROOT / name).read_text(encoding="utf-8")
        assert "Apache License" in text and "Version 2.0, January 2004" in text


def test_notebooks_go_through_the_output_stripping_filter_and_are_already_stripped() -> None:
    """After a run, ``git status`` shows no notebook change unless a cell's source changed:
    ``.gitattributes`` sends ``*.ipynb`` through nbstripout, ``make`` configures it, and every
    committed notebook is already in the filter's output form (no phantom diff)."""
    attributes = (ROOT / ".gitattributes").read_text(encoding="utf-8")
    assert re.search(r"^\*\.ipynb\s+filter=nbstripout\b", attributes, re.M)
    hooks = [line for line in _make_dry_run("hooks") if "nbstripout" in line]
    assert any("filter.nbstripout.clean" in line and "--keep-id" in line for line in hooks)
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        committed = path.read_text(encoding="utf-8")
        stripped = subprocess.run([sys.executable, "-m", "nbstripout", "-t", "--keep-id"],
                                  input=committed, capture_output=True, text=True,
                                  check=True).stdout
        assert stripped == committed, f"{path.name}: run it through nbstripout --keep-id"
