"""Every guided notebook tells a story its outputs bear out: it asserts its claims and ends with
the link to the next one (checked here on the committed file); once run, the numbers its prose
marks as quoted appear in its outputs and it prints no raw reprs (:func:`check_outputs`, which
tests/test_notebooks_in_browser.py applies to each notebook it runs in JupyterLab)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: A number the prose quotes from an output: ``<span title="quoted">0.642</span>``.
QUOTED = re.compile(r'<span title="quoted">([^<]+)</span>')
#: What a person should never have to read: a dataclass repr, a float with all its digits.
RAW_REPR = re.compile(r"\b[A-Z][A-Za-z]+\((?:[a-z_]+=|')|\d\.\d{7,}")
#: A table cell showing a newline as the two characters backslash and n (pandas escapes them).
ESCAPED_NEWLINE = re.compile(r"<td>[^<]*\\n")
NEXT = re.compile(r"^\*\*Next:\*\* `(\d\d_[a-z0-9_]+\.ipynb)`")


def _markdown(nb: nbformat.NotebookNode) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _shown_text(output: nbformat.NotebookNode) -> str:
    """The text a person reads of one output: streams, and the plain form of a result that
    has no richer one (an HTML table or a widget is read as rendered, not as its repr)."""
    if output.output_type == "stream":
        return str(output.text)
    data = output.get("data", {})
    if any(kind != "text/plain" for kind in data):
        return ""
    return str(data.get("text/plain", ""))


def _all_output_text(nb: nbformat.NotebookNode) -> str:
    parts = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            parts.append(str(output.get("text", "")))
            parts += [str(v) for v in output.get("data", {}).values()]
    return "\n".join(parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_asserts_its_story_and_links_the_next_one(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert re.search(r"^\s*assert ", code, re.M), f"{path.name} asserts none of its claims"
    last = nb.cells[-1]
    following = NOTEBOOKS[NOTEBOOKS.index(path) + 1:]
    if following:
        link = NEXT.match(last.source) if last.cell_type == "markdown" else None
        assert link, f"{path.name} does not end with '**Next:** `NN_....ipynb`'"
        assert link.group(1) == following[0].name, (path.name, link.group(1))
    else:
        assert last.cell_type == "markdown" and "Next" in last.source and "README" in last.source


def check_outputs(nb: nbformat.NotebookNode, name: str) -> None:
    """The checks on a notebook that has run (tests/test_notebooks_in_browser.py runs each in
    JupyterLab and passes the saved notebook here): no cell erred, the numbers the prose
    marks as quoted appear in the outputs, no raw repr or unrounded number is printed, and
    no table shows a newline as ``\\n``."""
    errors = [(i, f"{o.ename}: {o.evalue}") for i, c in enumerate(nb.cells)
              if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{name}: cells raised (cell, error): {errors}"
    shown = _all_output_text(nb)
    stale = [q for q in QUOTED.findall(_markdown(nb)) if q not in shown]
    assert not stale, f"{name}: prose quotes {stale}, which no output shows"
    raw = [(i, m.group()) for i, c in enumerate(nb.cells) if c.cell_type == "code"
           for o in c.outputs for m in RAW_REPR.finditer(_shown_text(o))]
    assert not raw, f"{name}: raw reprs or unrounded numbers printed (cell, text): {raw}"
    escaped = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" for o in c.outputs
               if ESCAPED_NEWLINE.search(str(o.get("data", {}).get("text/html", "")))]
    assert not escaped, f"{name}: tables show literal \\n in cells {escaped}"
