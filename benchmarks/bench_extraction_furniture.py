"""Extraction on real-world-like files, before and after the furniture and dehyphenation
rules: running header/footer lines left, characters recovered in reading order, words
joined wrong, Sphinx sidebar/navigation/permalink text left, crashes.

The files are built by tools other than ours (reportlab PDFs: a browser-style print with a
header and footer on every page, two columns under a running header with a crossing heading
and justified lines, a narrow column broken at hyphens with compounds, Korean jamo at a
line-end hyphen) plus a real Sphinx page when the machine has one
(/usr/share/doc/python3/python-policy.html, with its plain-text source). "Before" runs the
same measurement with another checkout's code (``--before /work/main``).

    PYTHONPATH=$PWD python benchmarks/bench_extraction_furniture.py --before /work/main
"""

from __future__ import annotations

import argparse
import difflib
import gzip
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPHINX = Path("/usr/share/doc/python3/python-policy.html")
FURNITURE = ("Navigation", "Quick search", "Table of Contents", "Show Source",
             "Created using Sphinx", "documentation »")


def build(folder: Path) -> dict[str, dict[str, object]]:
    sys.path.insert(0, str(ROOT))
    from tests import documents as drawn
    from tests import test_extraction_furniture as t

    files: dict[str, dict[str, object]] = {}
    printed = t.printed_pdf(folder / "printed.pdf", pages=16)  # as the issue's 16 pages
    files["printed.pdf"] = {"truth": printed.text, "furniture": ["file:///", "02/12/2026"]}
    cols = t.two_columns_with_furniture(folder / "columns.pdf")
    files["columns.pdf"] = {"truth": cols.text, "furniture": ["every page carries"]}
    hyph = drawn.hyphenated_pdf(folder / "hyphenated.pdf")
    files["hyphenated.pdf"] = {"truth": hyph.text, "words": hyph.notes["broken"]}
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen.canvas import Canvas

    pdfmetrics.registerFont(TTFont("JamoBoxes", str(t.jamo_font(folder / "jamo.ttf"))))
    canvas = Canvas(str(folder / "korean.pdf"))
    canvas.setFont("JamoBoxes", 12)
    for i, line in enumerate(["\u1112\u1161\u11ab \u1112\u1161-", "\u11ab\u1100\u116e\u11a8"]):
        canvas.drawString(72, 700 - 16 * i, line)
    canvas.save()
    files["korean.pdf"] = {}
    (folder / "sphinx.html").write_text(t.SPHINX.format(title="Refunds", body="Body text.",
                                                        more="More text."), encoding="utf-8")
    files["sphinx.html"] = {"furniture": [*FURNITURE, "¶", "Copyright"]}
    if SPHINX.exists():
        (folder / "python-policy.html").write_bytes(SPHINX.read_bytes())
        source = SPHINX.with_name("python-policy.txt.gz")
        files["python-policy.html"] = {"furniture": [*FURNITURE, "¶"]}
        if source.exists():
            files["python-policy.html"]["truth"] = gzip.decompress(source.read_bytes()).decode()
    return files


def measure(folder: Path, files: dict[str, dict[str, object]]) -> dict[str, dict[str, object]]:
    from workbench.corpus import extraction_warnings, load_document  # the tree measured

    sys.path.append(str(ROOT))  # the builders' helpers; workbench stays the tree's
    from tests import documents as drawn

    out: dict[str, dict[str, object]] = {}
    for name, spec in files.items():
        try:
            doc = load_document(folder / name)
        except Exception as exc:  # the crash is what is measured
            out[name] = {"error": f"{type(exc).__name__}: {str(exc)[:80]}"}
            continue
        text = doc.text
        row: dict[str, object] = {"chars": len(text)}
        if "truth" in spec:
            truth = str(spec["truth"])
            if name.endswith(".html"):  # the reST source: words in order, markup dropped
                truth = re.sub(r"[=\-~^*`#:_|]{2,}|\.\. [^\n]*", " ", truth)
                a, b = re.findall(r"\w+", truth), re.findall(r"\w+", text)
                matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
                row["words_recovered_in_order"] = round(
                    sum(m.size for m in matcher.get_matching_blocks()) / len(a), 4)
                row["word_similarity"] = round(matcher.ratio(), 4)
            else:
                row["recovered_in_order"] = round(drawn.recovered(truth, text), 4)
                row["similarity"] = round(drawn.similarity(truth, text), 4)
        if "furniture" in spec:
            row["furniture_left"] = sum(text.count(str(f)) for f in spec["furniture"])
        if name == "printed.pdf":
            row["page_number_lines_left"] = sum(
                1 for ln in text.splitlines() if re.fullmatch(r"\d+/\d+", ln.strip()))
        if "words" in spec:
            flat = set(drawn.flat(text).replace(",", " ").replace(".", " ").split())
            row["broken_words_wrong"] = sum(w not in flat for w in spec["words"])
        row["warnings"] = [w.kind for w in extraction_warnings(doc)]
        out[name] = row
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", help="another checkout to measure the same files with")
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        folder, spec = Path(args.measure[0]), json.loads(Path(args.measure[1]).read_text())
        print(json.dumps(measure(folder, spec)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = build(folder)
        (folder / "spec.json").write_text(json.dumps(files))
        trees = [("after", ROOT)] + ([("before", Path(args.before))] if args.before else [])
        results = {}
        for label, tree in trees:
            code = (f"import sys; sys.path.insert(0, {str(tree)!r}); import runpy; "
                    " sys.argv = ['x', '--measure', "
                    f"{str(folder)!r}, {str(folder / 'spec.json')!r}]; "
                    f"runpy.run_path({str(Path(__file__).resolve())!r}, run_name='__main__')")
            got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 env={"PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1",
                                      "PATH": "/usr/bin:/bin"}, check=True)
            results[label] = json.loads(got.stdout.strip().splitlines()[-1])
    for name in files:
        print(name)
        for label in ("before", "after"):
            if label in results:
                print(f"  {label:6s} {json.dumps(results[label][name], ensure_ascii=False)}")


if __name__ == "__main__":
    main()
