"""Every guided notebook tells a story its outputs bear out: each sentence of its prose that states
an outcome is marked as a claim and checked by an assert beside it, and it ends with the link to
the next one (checked here on the committed file); once run, the numbers its prose marks as
quoted appear in its outputs, it prints no raw reprs, no unrounded numbers in tables, nothing on
stderr but the workbench's own warnings (:func:`check_outputs`, which
tests/test_notebooks_in_browser.py applies to each notebook it runs in JupyterLab).

A claim is marked in the markdown as ``<span title="claim:NAME">the sentence</span>`` (it renders
as plain text, the name shows on hover) and checked by an ``assert ...  # claim:NAME`` in a code
cell next to that markdown cell: the cell just before it (the output it reads) or the next code
cell (the output it announces)."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from tests.conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
#: A number the prose quotes from an output: ``<span title="quoted">0.642</span>``.
QUOTED = re.compile(r'<span title="quoted">([^<]+)</span>')
#: What a person should never have to read: a dataclass repr, a float with all its digits.
RAW_REPR = re.compile(r"\b[A-Z][A-Za-z]+\((?:[a-z_]+=|')|\d\.\d{7,}")
#: A table cell showing a newline as the two characters backslash and n (pandas escapes them).
ESCAPED_NEWLINE = re.compile(r"<td>[^<]*\\n")
NEXT = re.compile(r"^\*\*Next:\*\* `(\d\d_[a-z0-9_]+\.ipynb)`")
#: A claim in the prose, and the assert that checks it.
CLAIM = re.compile(r'<span\s+title="claim:([a-z0-9-]+)">')
CLAIM_ASSERT = re.compile(r"^\s*assert\b.*#\s*claim:([a-z0-9-]+)\s*$", re.M)
#: A number in a table cell with more digits than a person reads (pandas' default six
#: decimals, on a rate or on a count: ``0.478176``, ``9.000000``).
UNROUNDED_CELL = re.compile(r"<td[^>]*>\s*-?\d+\.\d{5,}\s*</td>")
#: A message cut at a fixed length in a notebook (``str(exc)[:120]``): cut mid-word.
SLICED_MESSAGE = re.compile(r"(?:str\([^()]*\)|\.std(?:out|err)|\bexc|\bmessage)\[:\s*\d+\s*\]")


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


def _code_cells_beside(nb: nbformat.NotebookNode, index: int) -> list[str]:
    """The code cells next to markdown cell ``index``: the last one before it and the first
    one after it (markdown cells in between are skipped)."""
    before = [c.source for c in nb.cells[:index] if c.cell_type == "code"][-1:]
    after = [c.source for c in nb.cells[index + 1:] if c.cell_type == "code"][:1]
    return before + after


def claim_problems(nb: nbformat.NotebookNode) -> list[str]:
    """Claims in the prose without an assert beside them, and claim asserts whose claim the
    prose does not make (a marker renamed on one side only)."""
    problems = []
    marked: set[str] = set()
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "markdown":
            continue
        for name in CLAIM.findall(cell.source):
            marked.add(name)
            checked = {n for src in _code_cells_beside(nb, i) for n in CLAIM_ASSERT.findall(src)}
            if name not in checked:
                problems.append(f"claim {name!r} (cell {i}) has no 'assert ...  # claim:{name}' "
                                "in the code cell before or after it")
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    problems += [f"'# claim:{name}' asserts a claim the prose does not mark"
                 for name in sorted(set(CLAIM_ASSERT.findall(code)) - marked)]
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_claim_is_asserted_beside_it(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    assert CLAIM.search(_markdown(nb)), f"{path.name} marks none of its outcome claims"
    problems = claim_problems(nb)
    assert not problems, f"{path.name}: {problems}"
    sliced = [i for i, c in enumerate(nb.cells)
              if c.cell_type == "code" and SLICED_MESSAGE.search(c.source)]
    assert not sliced, f"{path.name}: cells {sliced} cut a message at a fixed length (mid-word)"


def test_the_claim_check_can_fail() -> None:
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1\nassert x == 1  # claim:one"),
        nbformat.v4.new_markdown_cell('<span title="claim:one">x is one</span>, '
                                      '<span title="claim:two">y is two</span>'),
        nbformat.v4.new_markdown_cell("more prose"),
        nbformat.v4.new_code_cell("assert True  # claim:three"),
    ])
    problems = claim_problems(nb)
    assert len(problems) == 2 and "'two'" in problems[0] and "claim:three" in problems[1]


def stderr_problems(nb: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """Lines a notebook wrote on stderr that are neither a progress bar nor one of the
    workbench's own warnings (``SomethingWarning: message``, with no interpreter path)."""
    ours = workbench_warnings()
    found = []
    for i, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.output_type != "stream" or output.name != "stderr":
                continue
            for line in str(output.text).splitlines():
                head = line.split(":", 1)[0]
                if line.strip() and head not in ours and not PROGRESS_TEXT.search(line) \
                        and not line.startswith("  "):
                    found.append((i, line[:200]))
    return found


#: tqdm's bar as text: "| 3/64 [".
PROGRESS_TEXT = re.compile(r"\|[^|\n]*\|\s*\d+/(?:\d+|\?) \[")


def workbench_warnings() -> set[str]:
    """The names of the package's warning classes (WorkbenchWarning and every class defined
    on it, read from the source: importing every module to list them would be slow)."""
    names = {"WorkbenchWarning"}
    bases: dict[str, set[str]] = {}
    for path in (ROOT / "workbench").rglob("*.py"):
        for m in re.finditer(r"^class (\w+)\(([^)]*)\)", path.read_text("utf-8"), re.M):
            bases[m.group(1)] = {b.strip().split(".")[-1] for b in m.group(2).split(",")}
    while grown := {name for name, of in bases.items() if of & names} - names:
        names |= grown
    return names


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
    unrounded = [(i, m.group()) for i, c in enumerate(nb.cells) if c.cell_type == "code"
                 for o in c.outputs
                 for m in UNROUNDED_CELL.finditer(str(o.get("data", {}).get("text/html", "")))]
    assert not unrounded, f"{name}: tables show unrounded numbers (cell, cell html): {unrounded}"
    stderr = stderr_problems(nb)
    assert not stderr, (f"{name}: stderr shows what is not an error nor a workbench warning "
                        f"(cell, line): {stderr}")
