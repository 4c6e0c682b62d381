"""One standalone HTML report: retrieval metrics, sweep plots, answers, triage, failing traces.

:func:`write_report` writes a single ``.html`` file that opens in any browser without
Jupyter or a network: the metric table (:func:`~workbench.widgets.metric_table.metric_table_html`),
sweep plots (plotly, with plotly.js inlined once), answer accuracy and the retrieval tax,
the 2x2 triage and the failing traces (:func:`~workbench.widgets.trace_viewer.trace_viewer_html`).

Defences. All text is HTML-escaped and its bidirectional controls are shown as ``[U+202E]``
(:func:`~workbench.text.neutralise_bidi`). The Content-Security-Policy allows exactly the
scripts the report itself generates: their hashes are taken from the plot fragments when
they are made, before any text is placed in the page, so a script smuggled in by a document
(through an escape that failed) is not among them and does not run. Access: answers, traces
and their text show what the user they were produced for may read. A view that was not
restricted to a user (``user_groups=None``) over a corpus with restricted documents is
refused unless ``unrestricted=True`` says that everything may be shown; without the corpus
the report cannot tell, and refuses too.

Also here: :func:`generation_evaluation` (answers as an Evaluation, so ``compare`` and the
gate apply to them) and :func:`source_slices` (metrics per golden ``source`` side by side).
``workbench report`` (:mod:`workbench.cli.report`) builds the whole report from a corpus and
a golden set with the instant, deterministic extractive reader.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import pandas as pd

from workbench.corpus import EVERYONE, Chunk, Document, acl_of
from workbench.corpus.reader import UNRESTRICTED, Reader
from workbench.diagnose import LABELS, Trace, Triage, diagnose_trace
from workbench.evaluation import Evaluation
from workbench.generation import GenerationResult
from workbench.golden import GoldenItem, GoldenSet, can_read_item
from workbench.io import WorkbenchError, atomic_write_text, target_path
from workbench.sweep import SweepResult
from workbench.text import escape_html as _esc
from workbench.text import frame_html, neutralise_bidi

if TYPE_CHECKING:
    from plotly.graph_objects import Figure

#: The sweep section of a report: a SweepResult (leaderboard and plots) or ready figures.
SweepFigures: TypeAlias = "SweepResult | Figure | Sequence[Figure] | None"

__all__ = ["generation_evaluation", "render_report", "restricted_ids", "source_slices",
           "write_report"]


def generation_evaluation(result: GenerationResult,
                          golden: GoldenSet | Sequence[GoldenItem] | None = None,
                          system: str | None = None, mode: str = "live") -> Evaluation:
    """A GenerationResult as an Evaluation with one 0/1 metric ``answer_pass`` per decided
    question (undecided answers are left out), so ``compare``, ``by("source")`` and the gate
    apply to answers as they do to retrieval; its relevance label is ``answer_grade`` (judged
    by grading, not by retrieval). ``golden`` supplies each question's source."""
    items = {i.qid: i for i in golden} if golden is not None else {}
    frame = result.frame
    rows = [{"system": system or result.model_id, "qid": r["qid"], "category": r["category"],
             "source": items[r["qid"]].source if r["qid"] in items else "n/a",
             "relevance": "answer_grade", "metric": "answer_pass",
             "value": float(bool(r["passed"]))}
            for r in frame[frame["mode"] == mode].to_dict("records")
            if r["passed"] is not None and not pd.isna(r["passed"])]
    return Evaluation(pd.DataFrame(rows, columns=list(Evaluation.COLUMNS)))


def source_slices(result: Evaluation | GenerationResult,
                  golden: GoldenSet | Sequence[GoldenItem] | None = None,
                  metrics: Sequence[str] | None = None,
                  confidence: float = 0.95) -> pd.DataFrame:
    """Metrics per golden ``source`` (real / owner / synthetic) side by side: rows are
    metrics, columns ``(source, mean|ci_low|ci_high|n)``. Takes an Evaluation or a
    GenerationResult (``golden`` then gives each question's source). Synthetic questions
    borrow the documents' words and usually score higher than real ones: read ``real``."""
    ev = result if isinstance(result, Evaluation) else generation_evaluation(result, golden)
    if golden is not None and isinstance(result, Evaluation):
        sources = {i.qid: i.source for i in golden}
        ev = Evaluation(ev.frame.assign(source=[sources.get(q, s) for q, s in zip(
            ev.frame["qid"], ev.frame["source"], strict=True)]), ev.excluded)
    table = ev.by("source", confidence)
    if metrics:
        table = table[table["metric"].isin(list(metrics))]
    if table.empty:
        raise WorkbenchError("nothing to slice: no scored questions (or none of those metrics)")
    wide = table.pivot_table(index="metric", columns="source",
                             values=["mean", "ci_low", "ci_high", "n"], sort=False)
    wide = wide.swaplevel(0, 1, axis=1)
    present = list(dict.fromkeys(wide.columns.get_level_values(0)))
    order = [s for s in ("real", "owner", "synthetic") if s in present]
    order += [s for s in present if s not in order]
    cols = [(s, v) for s in order for v in ("mean", "ci_low", "ci_high", "n")]
    out = wide[cols].reindex(list(dict.fromkeys(table["metric"])))
    for s in order:
        out[(s, "n")] = out[(s, "n")].astype("Int64")
    return out


# ----------------------------------------------------------------------------- HTML

PAGE_STYLE = """
body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1180px;color:#202124}
h1{font-size:22px}h3{font-size:15px}
h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:3px;margin-top:28px}
table.wb-frame,table.wb-metric-table{border-collapse:collapse;font-size:12px;margin:6px 0}
table.wb-frame td,table.wb-frame th,table.wb-metric-table td,table.wb-metric-table th{
  border:1px solid #e0e0e0;padding:3px 6px;text-align:left;vertical-align:top}
.wb-note{color:#5f6368;font-size:12px}nav a{margin-right:12px}
"""


def _frame(frame: pd.DataFrame, index: bool = False) -> str:
    return frame_html(frame, index=index, classes="wb-frame", border=0,
                      float_format=lambda v: f"{v:.3f}", na_rep="")


def _figures(sweep: SweepFigures) -> list[Figure]:
    """Plot figures for the sweep section: a SweepResult, a figure, or a list of figures."""
    if sweep is None:
        return []
    if isinstance(sweep, Sequence):
        return list(sweep)
    if not isinstance(sweep, SweepResult):
        return [sweep]
    from workbench.widgets.plots import category_heatmap, cost_quality

    metric = sweep.metrics[0]
    return [cost_quality(sweep, metric), category_heatmap(sweep, metric)]


#: Sections that may hold figures: their text is neutralised as it is built, not afterwards.
_WITH_FIGURES = frozenset({"retrieval", "sweep"})

_SCRIPT = re.compile(r"<script[^>]*>(.*?)</script>", re.DOTALL)


def _script_hashes(fragment: str) -> list[str]:
    """CSP hashes of the scripts in a fragment the report generates (a plotly figure)."""
    return [base64.b64encode(hashlib.sha256(m.group(1).encode("utf-8")).digest()).decode()
            for m in _SCRIPT.finditer(fragment)]


def _figures_html(figures: Sequence[Figure], hashes: list[str]) -> str:
    """Figures as HTML, plotly.js inlined with the page's first figure; the hashes of their
    scripts, taken as plotly renders them (figure data is JSON in which plotly escapes ``<``),
    are added to ``hashes``."""
    parts = []
    for fig in figures:
        fragment = fig.to_html(full_html=False, include_plotlyjs=not hashes,
                               default_height="460px")
        hashes += _script_hashes(fragment)
        parts.append(fragment)
    return "".join(parts)


def _sweep_html(sweep: SweepFigures, hashes: list[str]) -> str:
    """The sweep section: the leaderboard of a SweepResult, then its figures."""
    parts = []
    if isinstance(sweep, SweepResult):
        parts.append(_frame(sweep.leaderboard().drop(columns=["metric"]), index=True))
    return "".join(parts) + _figures_html(_figures(sweep), hashes)


def _generation_html(generation: GenerationResult, golden: Sequence[GoldenItem] | None) -> str:
    parts = [f"<p>{_esc(generation.summary())}.</p>", _frame(generation.accuracy())]
    if set(generation.frame["mode"]) >= {"oracle", "live"}:
        parts += ["<h3>Retrieval tax (oracle − live, paired bootstrap)</h3>",
                  _frame(generation.retrieval_tax())]
    parts += ["<h3>By category</h3>", _frame(generation.accuracy(by="category"))]
    if golden is not None:
        slices = source_slices(generation, golden)
        parts += ["<h3>By source (real / owner / synthetic)</h3>", _frame(slices, index=True)]
    return "".join(parts)


def _triage_html(tri: Triage, generation: GenerationResult | None,
                 shown: Callable[[str], bool], answers: bool) -> str:
    """The 2x2 and, per question its reader may see (``shown``), its quadrant and (with
    ``answers``) its live answer."""
    counts = tri.counts
    counts = counts.assign(share=counts["share"].map(lambda v: f"{v:.1%}"))
    rows = tri.rows
    n = len(rows)
    rows = rows[[shown(q) for q in rows["qid"]]]
    if generation is not None and answers:
        frame = generation.frame
        live = frame[frame["mode"] == "live"]
        rows = rows.merge(live[["qid", "category", "answer"]], on="qid", how="left")
    return (f"{_frame(counts)}<p>Fix first: <b>{_esc(tri.verdict)}</b> ({_esc(tri.reason)}; "
            f"n={n})</p>"
            f"<details><summary>per question</summary>{_frame(rows)}</details>")


def _traces_html(traces: Sequence[Trace], golden: Sequence[GoldenItem],
                 corpus: Mapping[str, Document], chunks: Sequence[Chunk],
                 quadrants: Mapping[str, str], limit: int,
                 reader: Reader | None) -> tuple[str, int]:
    from workbench.widgets.trace_viewer import trace_viewer_html

    items = {i.qid: i for i in golden}
    by_id = {c.id: c for c in chunks}
    failing = []
    for t in traces:
        item = items.get(t.qid)
        d = diagnose_trace(t, item, chunks, corpus) if item is not None else None
        if d is not None and (d.passed is False or d.labels):
            failing.append((t, item, d))
    counts = pd.Series([lab for _, _, d in failing for lab in d.labels], dtype=object)
    summary = pd.DataFrame({"label": list(LABELS), "meaning": list(LABELS.values()),
                            "traces": [int((counts == lab).sum()) for lab in LABELS]})
    shown = sorted(failing, key=lambda f: (-len(f[2].labels), f[0].category, f[0].qid))[:limit]
    more = len(failing) - len(shown)
    body = [f"<p>{len(failing)} of {len(traces)} traces failed or carry a diagnosis label"
            + (f"; the first {len(shown)} are shown" if more else "") + ".</p>",
            _frame(summary)]
    # one line per trace, the first one open: the page stays short enough to scan
    body += [f"<details{' open' if n == 0 else ''}><summary>{_esc(t.qid)} · "
             f"{_esc(t.category)} · {_esc(', '.join(d.labels) or 'wrong answer')}</summary>"
             + trace_viewer_html(t, item, by_id, corpus, diagnosis=d, quadrant=quadrants.get(t.qid),
                                 user_groups=reader) + "</details>"
             for n, (t, item, d) in enumerate(shown)]
    return "".join(body), len(failing)


def _csp(hashes: Sequence[str]) -> str:
    """A Content-Security-Policy allowing exactly the scripts with these hashes."""
    scripts = " ".join(f"'sha256-{h}'" for h in dict.fromkeys(hashes)) or "'none'"
    return (f"default-src 'none'; script-src {scripts}; style-src 'unsafe-inline'; "
            "img-src data:; font-src data:")


def _views(generation: GenerationResult | None,
           traces: Sequence[Trace] | None) -> list[tuple[str, ...] | None]:
    """The user groups each answer and trace was produced for (None: unrestricted)."""
    views: list[tuple[str, ...] | None] = []
    if generation is not None:
        for ctx in generation.contexts.values():
            groups = ctx.params.get("user_groups")
            views.append(None if groups is None else tuple(groups))
    views += [t.user_groups for t in traces or ()]
    return views


def _reader_of(views: Sequence[tuple[str, ...] | None]) -> Reader:
    """The reader answers and traces were produced for: one view is its reader; several
    readers are read as a user in no group (nothing restricted shown)."""
    distinct = set(views)
    if not distinct or distinct == {None}:
        return UNRESTRICTED
    if len(distinct) == 1:
        (groups,) = distinct
        return Reader(frozenset(groups or ()))
    return Reader(frozenset())


def restricted_ids(chunks: Sequence[Chunk] | None, corpus: Mapping[str, Document]) -> list[str]:
    """Ids of the documents (and chunks) that not everyone may read."""
    ids = [d.id for d in corpus.values() if d.acl and EVERYONE not in d.acl]
    return ids + [c.id for c in chunks or () if "acl" in c.metadata
                  and EVERYONE not in acl_of(c.metadata, f"chunk {c.id!r}")]


def _access_note(generation: GenerationResult | None, traces: Sequence[Trace] | None,
                 corpus: Mapping[str, Document] | None,
                 chunks: Sequence[Chunk] | None, unrestricted: bool) -> str:
    """What the report may show, or ValueError when an unrestricted view would show
    restricted documents without ``unrestricted=True``."""
    views = set(_views(generation, traces))
    if not views:
        return ""
    if None in views and not unrestricted:
        if corpus is None:
            raise WorkbenchError("answers or traces were produced without user_groups (the "
                             "unrestricted view) and no corpus= was given to check that no "
                             "document is restricted: pass corpus=, or unrestricted=True")
        if restricted_ids(chunks, corpus):
            raise WorkbenchError("the corpus has restricted documents or chunks, and answers or "
                             "traces were produced without user_groups, so the report would "
                             "show them to every reader: produce them as a user "
                             "(user_groups=...), or pass unrestricted=True to show everything")
    shown = sorted({", ".join(v) or "no group" for v in views if v is not None})
    parts = (["unrestricted (every document)"] if None in views else []) + [
        f"as a user in [{g}]" for g in shown]
    return "Access: " + "; ".join(parts)


def render_report(evaluation: Evaluation | None = None, sweep: SweepFigures = None,
                  generation: GenerationResult | None = None,
                  traces: Sequence[Trace] | None = None, *, title: str = "RAG Workbench report",
                  golden: GoldenSet | Sequence[GoldenItem] | None = None,
                  corpus: Mapping[str, Document] | None = None,
                  chunks: Sequence[Chunk] | None = None, triage: Triage | None = None,
                  max_traces: int = 25, notes: str = "", unrestricted: bool = False,
                  user_groups: Reader | Iterable[str] | str | None = None,
                  plots: bool = False) -> str:
    """The report as one HTML string (see :func:`write_report`)."""
    from workbench.widgets.metric_table import metric_table_html

    if traces is not None and (golden is None or corpus is None or chunks is None):
        raise WorkbenchError("traces need golden=, corpus= and chunks= (traces hold ids only; "
                         "the text is re-read from the corpus)")
    named = (Reader.of(user_groups) if user_groups is not None
             else UNRESTRICTED if unrestricted else None)
    access = _access_note(generation, traces, corpus, chunks, named is not None)
    reader = named if named is not None else _reader_of(_views(generation, traces))
    items = {i.qid: i for i in golden or ()}

    def shown(qid: str) -> bool:  # a question's row only for readers of its evidence
        if reader.groups is None:
            return True
        item = items.get(qid)
        return item is not None and can_read_item(reader.groups, item, chunks, corpus)
    answers = reader.groups is None or all(  # answers made for another reader are not shown
        v is not None and frozenset(v) == reader.groups for v in _views(generation, traces))
    sections: list[tuple[str, str, str]] = []
    hashes: list[str] = []
    if evaluation is not None:
        tables, figure = [], ""
        for config in evaluation.configs():
            tables.append(f"<h3>{_esc(config)}</h3>"
                          + metric_table_html(evaluation, system=config))
        if evaluation.frame["source"].nunique() > 1:
            tables.append("<h3>By source (real / owner / synthetic)</h3>"
                          + _frame(source_slices(evaluation, golden), index=True))
        if plots and sweep is None and evaluation.frame["category"].nunique() > 1:
            from workbench.widgets.plots import category_heatmap

            metric = evaluation.metrics[0]
            tables.append(f"<h3>{_esc(metric)} by category</h3>")
            figure = _figures_html([category_heatmap(evaluation, metric)], hashes)
        # text neutralised here; a figure's script stays exactly as hashed
        sections.append(("retrieval", "Retrieval", neutralise_bidi("".join(tables)) + figure))
    if sweep is not None:
        sections.append(("sweep", "Sweep", _sweep_html(sweep, hashes)))
    if generation is not None:
        sections.append(("generation", "Answers", _generation_html(generation, golden)))
        if triage is None:
            from workbench.diagnose import triage as make_triage

            triage = make_triage(generation)
    quadrants: dict[str, str] = {}
    if triage is not None:
        sections.append(("triage", "Triage: retrieval or generation?",
                         _triage_html(triage, generation, shown, answers)))
        quadrants = dict(zip(triage.rows["qid"], triage.rows["quadrant"], strict=True))
    if traces is not None and golden is not None and corpus is not None and chunks is not None:
        body, _ = _traces_html(traces, list(golden), corpus, chunks, quadrants, max_traces,
                               named)
        sections.append(("traces", "Failing traces", body))
    if not sections:
        raise WorkbenchError("nothing to report: give an evaluation, sweep, generation or traces")
    nav = " ".join(f'<a href="#{key}">{_esc(name)}</a>' for key, name, _ in sections)
    # bidi controls in any text are shown, not obeyed; figure scripts stay as hashed
    main = "".join(f'<section id="{key}"><h2>{_esc(name)}</h2>'
                   f"{body if key in _WITH_FIGURES else neutralise_bidi(body)}</section>"
                   for key, name, body in sections)
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    head_note = "".join(f"<p>{_esc(n)}</p>" for n in (notes, access) if n)
    body = (f"<h1>{_esc(title)}</h1><p class=\"wb-note\">generated {stamp} by RAG Workbench"
            f"</p>{head_note}<nav>{nav}</nav>{main}")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{_csp(hashes)}">'
            f"<title>{_esc(title)}</title><style>{PAGE_STYLE}</style></head>"
            f"<body>{body}</body></html>\n")


def write_report(path: str | Path, evaluation: Evaluation | None = None, *,
                 sweep: SweepFigures = None,
                 generation: GenerationResult | None = None,
                 traces: Sequence[Trace] | None = None, title: str = "RAG Workbench report",
                 golden: GoldenSet | Sequence[GoldenItem] | None = None,
                 corpus: Mapping[str, Document] | None = None,
                 chunks: Sequence[Chunk] | None = None, triage: Triage | None = None,
                 max_traces: int = 25, notes: str = "", unrestricted: bool = False,
                 user_groups: Reader | Iterable[str] | str | None = None,
                 plots: bool = False) -> Path:
    """Write one standalone HTML report (atomically; missing folders are made) and return its
    path. ``sweep`` is a SweepResult (leaderboard, cost/quality and category plots) or
    plotly figure(s); ``traces`` need ``golden``, ``corpus`` and ``chunks`` to show evidence
    and text, each folded under its summary line. ``user_groups`` names the report's reader:
    traces, questions and answers are shown as they may see them
    (:func:`~workbench.widgets.trace_viewer.viewed_as`; :func:`~workbench.golden.can_read_item`
    for a question's row); ``unrestricted=True`` is ``user_groups=UNRESTRICTED``. Without
    either, the report's reader is the user the answers and traces were produced for, and an
    unrestricted production over a corpus with restricted documents is refused (see the
    module docstring). ``plots=True`` adds the evaluation's per-category heatmap: a plot
    inlines plotly.js (about 4.6 MB), so a report without a sweep stays well under 1 MB by
    default; a sweep's figures are drawn whenever a sweep is given."""
    path = target_path(path, "write_report")
    text = render_report(evaluation, sweep, generation, traces, title=title, golden=golden,
                         corpus=corpus, chunks=chunks, triage=triage, max_traces=max_traces,
                         notes=notes, unrestricted=unrestricted, user_groups=user_groups,
                         plots=plots)
    atomic_write_text(path, text, make_parents=True)
    return path
