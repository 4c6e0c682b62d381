"""A corpus and a question log written for the labeller's keyboard tests (not the handbook):
English and Chinese documents, a CSV log with user/time/session columns, and for each of 12
questions the keys and mouse selections a person makes and the line that must be saved.

Steps: ``("key", k)`` presses a key of the view; ``("category", text)`` types a category
(``c``, the text, Enter); ``("mouse", text)`` drags the mouse over the first occurrence of
``text`` in the shown document (inside the answer it marks, elsewhere it selects).
:func:`run_in_python` drives the same steps through the widget's Python API, the way the view
calls it.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

DOCS = {
    "bike-share.md": "# City bike share\n\nA day pass costs $8 and covers unlimited 30 minute "
                     "rides. Bikes must be returned to a dock within 24 hours. Lost bikes are "
                     "charged at $450.\n",
    "library.md": "# Library rules\n\nBooks can be borrowed for 21 days and renewed twice. "
                  "Late returns cost 25 cents per day. The reading room closes at 9 pm on "
                  "weekdays.\n",
    "python-packaging.md": "# Python packaging notes\n\nThe Python 3 module directory is "
                           "/usr/lib/python3/dist-packages. Packages for Python 2 were removed "
                           "in Debian 11.\n",
    "metro.md": "# 城市地铁\n\n地铁一号线全长364.6公里，于2005年6月开通。末班车在晚上11点发车。"
                "学生月票每月60元。\n",
    "gym.md": "# Gym membership\n\nMembers may freeze their membership for up to 3 months per "
              "year. Guest passes cost $15 each.\n",
    "recycling.md": "# 垃圾分类\n\n厨余垃圾每天早上7点前投放。大件垃圾需提前2天预约。\n",
}

#: (qid, question, user, steps, expected: (doc, evidence sentence, must-mention, category,
#: span origin) or None for unanswerable)
PLAN: list[tuple[str, str, str, list[tuple[str, str]], tuple[str, str, list[str], str, str]
                 | None]] = [
    ("t01", "how much does a day pass cost", "ana",
     [("key", "1"), ("category", "transport"), ("key", "s")],
     ("bike-share", "A day pass costs $8 and covers unlimited 30 minute rides.", ["$8"],
      "transport", "suggested")),
    ("t02", "how many days can books be borrowed", "ana",
     [("key", "1"), ("category", "library"), ("key", "Enter")],
     ("library", "Books can be borrowed for 21 days and renewed twice.", ["21 days"], "library",
      "suggested")),
    ("t03", "where is the Python 3 module directory", "bao",
     [("mouse", "/usr/lib/python3/dist-packages"), ("key", "m"), ("key", "s")],
     ("python-packaging", "The Python 3 module directory is /usr/lib/python3/dist-packages.",
      ["/usr/lib/python3/dist-packages"], "", "suggested")),
    ("t04", "地铁一号线全长多少公里", "chen",
     [("key", "1"), ("key", "s")],
     ("metro", "地铁一号线全长364.6公里，于2005年6月开通。", ["364.6公里"], "", "suggested")),
    ("t05", "what will the weather be tomorrow", "chen", [("key", "u")], None),
    ("t06", "how much do I pay for a lost bike", "ana",
     [("key", "k"), ("key", "r"), ("key", "1"), ("category", "transport"), ("key", "s")],
     ("bike-share", "Lost bikes are charged at $450.", ["$450"], "transport", "suggested")),
    ("t07", "地铁一号线什么时候开通", "chen",
     [("key", "2"), ("key", "s")],
     ("metro", "地铁一号线全长364.6公里，于2005年6月开通。", ["2005年6月"], "", "suggested")),
    ("t08", "how much do late returns cost", "bao",
     [("key", "1"), ("key", "="), ("key", "s")],
     ("library", "Late returns cost 25 cents per day.", ["25 cents"], "transport",
      "suggested")),
    ("t09", "who won the football match yesterday", "bao", [("key", "u")], None),
    ("t10", "how much do guest passes cost", "ana",
     [("key", "1"), ("category", "sport"), ("key", "s")],
     ("gym", "Guest passes cost $15 each.", ["$15"], "sport", "suggested")),
    ("t11", "大件垃圾需要提前几天预约", "chen",
     [("key", "1"), ("key", "s")],
     ("recycling", "大件垃圾需提前2天预约。", ["2天"], "", "suggested")),
    ("t12", "how long do I have to return a bike to a dock", "ana",
     [("key", "]"), ("key", "["), ("key", "}"), ("key", "1"), ("key", "z"), ("key", "z"),
      ("key", "1"), ("key", "s")],
     ("bike-share", "Bikes must be returned to a dock within 24 hours.", ["24 hours"], "",
      "edited")),
]


def write(folder: Path) -> tuple[Path, Path]:
    """The documents (``folder/docs``) and the log (``folder/log.csv``)."""
    docs = folder / "docs"
    docs.mkdir(parents=True)
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["qid", "question", "user", "time", "session"])
    for n, (qid, question, user, _, _) in enumerate(PLAN):
        w.writerow([qid, question, user, f"2026-05-0{1 + n // 6}T10:{n:02d}:00Z", f"s{n // 4}"])
    log = folder / "log.csv"
    log.write_text(out.getvalue(), encoding="utf-8")
    return docs, log


def expected_rows(corpus: Any, log: Path) -> list[dict[str, Any]]:
    """The lines the plan must save, in plan order (the seconds left out)."""
    rows = []
    for n, (qid, question, user, _, want) in enumerate(PLAN):
        row: dict[str, Any] = {"qid": qid, "question": question, "source": "real",
                               "source_file": str(log), "source_line": n + 2,
                               "source_user": user,
                               "source_time": f"2026-05-0{1 + n // 6}T10:{n:02d}:00Z",
                               "source_session": f"s{n // 4}"}
        if want is None:
            row.update(evidence=[], answer_must_mention=[], category="uncategorised",
                       answerable=False, span=None)
        else:
            doc, sentence, must, category, origin = want
            start = corpus[doc].text.index(sentence)
            row.update(evidence=[{"doc_id": doc, "start": start, "end": start + len(sentence),
                                  "text": sentence}], answer_must_mention=must,
                       category=category or "uncategorised", answerable=True, span=origin)
        rows.append(row)
    return rows


def saved_as_expected(line: dict[str, Any]) -> dict[str, Any]:
    """A saved line in the shape of :func:`expected_rows`."""
    keys = ("qid", "question", "source", "source_file", "source_line", "source_user",
            "source_time", "source_session", "evidence", "answer_must_mention", "category",
            "answerable")
    return {**{k: line.get(k) for k in keys}, "evidence": line.get("evidence", []),
            "span": line["labelling"].get("span")}


def run_in_python(lab: Any) -> None:
    """The plan's steps through the widget's Python API (what each key and drag sends)."""
    keys = {"s": lab.save, "Enter": lab.save, "u": lab.unanswerable, "k": lab.skip,
            "r": lab.open_skipped, "z": lab.undo, "m": lab.mention_marked, "=": lab.same_as_last,
            "]": lambda: lab.grow("word", 1), "[": lambda: lab.grow("word", -1),
            "}": lambda: lab.grow("sentence", 1), "{": lambda: lab.grow("sentence", -1)}
    for _, _, _, steps, _ in PLAN:
        for kind, what in steps:
            if kind == "category":
                lab.set_category(what)
            elif kind == "mouse":
                at = lab.doc_text.index(what)
                lab.mark(at, at + len(what))
            elif what.isdigit():
                chips = list(dict.fromkeys([*lab.must_mention, *lab.suggestions]))
                lab.toggle_must_mention(chips[int(what) - 1])
            else:
                keys[what]()
