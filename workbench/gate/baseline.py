"""The baseline file of the CI gate: the :class:`Baseline` record with its JSON format,
written atomically.

The file records the pipeline config, the golden set's ``content_hash``, per-metric mean / n /
interval / relevance (the judgments the numbers use, e.g. ``evidence>=0.75``) and every
question's value per metric, one question per line so that its diff reads as a history.
:mod:`workbench.gate` checks evaluations against it and ratchets it upward.

Loading validates every field and names the file and line of the first that is wrong: the
config (the pipeline as a mapping, :func:`workbench.evaluation.pipeline.gate_config`) must
be a mapping whose pipeline options have values of the right type
(:func:`~workbench.evaluation.pipeline.check_config`: ``k`` a positive integer, ``level``
chunk | document, ...), and every recorded value must be a number in [0, 1] (all gated
metrics are fractions). A config the gate re-runs
(:func:`~workbench.evaluation.pipeline.pipeline_config`, ``workbench gate``) may hold
nothing else. Saving
is atomic and holds the file's lock, and a save over the file as it was loaded never
overwrites a newer one (:func:`workbench.io.write_unless_changed`: a concurrent writer's
baseline is kept and the save refused with :class:`~workbench.io.StaleFileError`); the
ratchet (:func:`workbench.gate.update_baseline`) holds the lock across its read and its write
and saves under the same rule.
"""

from __future__ import annotations

import difflib
import json
import math
import os
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from workbench.evaluation import INTERVAL_NOTE, Evaluation
from workbench.evaluation.pipeline import PATH_KEYS, check_config
from workbench.golden import GoldenSet
from workbench.io import (
    FileStamp,
    InputError,
    WorkbenchError,
    atomic_write_bytes,
    decode_json_file,
    encode_text,
    is_int,
    read_text_stamped,
    write_unless_changed,
)

#: 2: metrics carry their relevance (evidence-based since the "one ruler" change).
SCHEMA_VERSION = 2



def question_outcomes(ev: Evaluation) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """The per-question values of a one-configuration Evaluation, ``qid -> metric -> value``,
    and each question's category (what a baseline records and the gate compares)."""
    if len(ev.configs()) != 1:
        raise WorkbenchError(f"the gate scores one configuration, this Evaluation holds "
                         f"{len(ev.configs())}: {ev.configs()}; select one first")
    values: dict[str, dict[str, float]] = {}
    cats: dict[str, str] = {}
    for q, m, v, c in zip(ev.frame["qid"], ev.frame["metric"], ev.frame["value"],
                          ev.frame["category"], strict=True):
        values.setdefault(str(q), {})[str(m)] = float(v)
        cats[str(q)] = str(c)
    return values, cats


def metric_relevance(ev: Evaluation) -> dict[str, str]:
    """metric -> the relevance label its values were judged with (the ``relevance`` column),
    read from every row; a metric that mixes kinds (evidence for some questions, chunk ids
    for others) raises ValueError, since neither the baseline nor the gate can compare it."""
    out: dict[str, str] = {}
    for metric, labels in ev.frame.groupby("metric")["relevance"].unique().items():
        if len(labels) > 1:
            raise WorkbenchError(
                f"metric {metric!r} mixes relevance kinds in this evaluation "
                f"({', '.join(sorted(str(x) for x in labels))}); gate a golden set labelled "
                "one way")
        out[str(metric)] = str(labels[0])
    return out


@dataclass(frozen=True)
class Baseline:
    """A recorded evaluation: ``outcomes`` maps qid -> metric -> value; ``summary`` maps
    metric -> {mean, n, ci_low, ci_high, relevance} (the 95% interval of
    :meth:`Evaluation.summary`)."""

    config: Mapping[str, Any]
    golden_hash: str
    golden_items: int
    summary: Mapping[str, Mapping[str, Any]]
    _: KW_ONLY
    outcomes: Mapping[str, Mapping[str, float]]
    categories: Mapping[str, str] = field(default_factory=dict)
    created: str = ""
    path: Path | None = None
    #: what ``path`` held when this baseline was loaded from it (see :meth:`save`)
    stamp: FileStamp | None = field(default=None, compare=False, repr=False)

    @property
    def n(self) -> int:
        return len(self.outcomes)

    @property
    def metrics(self) -> list[str]:
        return list(self.summary)

    @classmethod
    def from_evaluation(cls, ev: Evaluation, config: Mapping[str, Any],
                        golden: GoldenSet | None) -> Baseline:
        values, cats = question_outcomes(ev)
        metric_relevance(ev)  # one relevance label per metric, or refuse
        summary: dict[str, dict[str, Any]] = {}
        for r in ev.summary().to_dict("records"):
            summary[str(r["metric"])] = {"mean": float(r["mean"]), "n": int(r["n"]),
                                         "ci_low": float(r["ci_low"]),
                                         "ci_high": float(r["ci_high"]),
                                         "relevance": str(r["relevance"])}
        return cls(dict(config), golden.content_hash if golden is not None else "",
                   len(golden) if golden is not None else len(values), summary, outcomes=values,
                   categories=cats,
                   created=datetime.now(timezone.utc).isoformat(timespec="seconds"))

    def to_json(self, path: str | Path | None = None) -> str:
        """JSON text; config paths are written relative to ``path``'s folder (absolute when
        that climbs more than two folders), and each question sits on one line so the
        file's diff reads as a history."""
        base = Path(path).parent if path else None
        config = dict(self.config)
        for key in PATH_KEYS:
            if config.get(key) and base is not None:
                try:  # relative when near (in the same repository), else absolute
                    rel = Path(os.path.relpath(config[key], base)).as_posix()
                except ValueError:  # another drive (Windows)
                    rel = "../../../"
                config[key] = rel if rel.split("/").count("..") <= 2 else str(
                    Path(config[key]).resolve())
        head = {"schema_version": SCHEMA_VERSION, "kind": _KIND,
                "created": self.created, "config": config,
                "golden": {"content_hash": self.golden_hash, "items": self.golden_items},
                "n": self.n, "interval": INTERVAL_NOTE, "metrics": dict(self.summary)}
        lines = json.dumps(head, indent=2, ensure_ascii=False)[:-2].splitlines()
        for name, block in (("categories", self.categories), ("questions", self.outcomes)):
            rows = [f"    {json.dumps(q, ensure_ascii=False)}: "
                    f"{json.dumps(block[q], sort_keys=True, ensure_ascii=False)}"
                    for q in sorted(block)]
            lines[-1] += ","
            lines += [f'  "{name}": {{', ",\n".join(rows), "  }"]
        return "\n".join(line for line in lines if line) + "\n}\n"

    def save(self, path: str | Path | None = None, *, replacing: FileStamp | None = None
             ) -> Path:
        """Write the baseline atomically, under its lock (missing folders are created);
        ``path`` defaults to the file it was loaded from. A save over a file read earlier
        (the one this baseline was loaded from, with its :attr:`stamp`, or any file whose
        bytes were read as ``replacing``) never overwrites a newer file: when the file no
        longer holds those bytes, :class:`~workbench.io.StaleFileError` and nothing is
        written (:func:`~workbench.io.write_unless_changed`). A save to the file the
        baseline was loaded from updates its :attr:`stamp` (it holds what it wrote)."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise InputError("baseline", "was not loaded from a file: give the path to save to")
        since = replacing
        if since is None and self.stamp is not None and self.path is not None and (
                target.resolve() == self.path.resolve()):
            since = self.stamp
        data = encode_text(self.to_json(target), target)
        if since is None:
            atomic_write_bytes(target, data, make_parents=True)
        else:
            write_unless_changed(target, data, since, what="baseline")
        if self.path is not None and target.resolve() == self.path.resolve():
            object.__setattr__(self, "stamp", FileStamp.of(data))  # not compared, not hashed
        return target

    @classmethod
    def load(cls, path: str | Path, pipeline: bool = False) -> Baseline:
        """Read and validate a baseline file (see the module docstring); ``pipeline=True``
        (the gate command) also refuses config keys that are no pipeline option."""
        path = Path(path)
        if not path.exists():
            raise InputError(str(path), "baseline not found; create it with "
                             "`workbench gate --baseline PATH --update-baseline`")
        text, stamp = read_text_stamped(path, "baseline")
        return replace(_from_json(decode_json_file(text, path), text, path, pipeline),
                       stamp=stamp)


def _line_of(text: str, key: str) -> int | None:
    """The line of ``text`` where the JSON key ``key`` first appears."""
    at = text.find(json.dumps(key, ensure_ascii=False) + ":")
    return None if at < 0 else text.count("\n", 0, at) + 1


_KIND = "workbench.gate.baseline"
#: The keys of a baseline file (:meth:`Baseline.to_json`); any other is refused.
_TOP_KEYS = ("schema_version", "kind", "created", "config", "golden", "n", "interval",
             "metrics", "categories", "questions")


def _fraction(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and 0 <= value <= 1)


def _from_json(data: Any, text: str, path: Path, pipeline: bool) -> Baseline:
    def where(key: str) -> str:
        line = _line_of(text, key)
        return f"{path}:{line}" if line else str(path)

    redo = "re-create the baseline with --update-baseline --force"
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise InputError(str(path), f"must be {SCHEMA_VERSION}; {redo}", field="schema_version")
    for key, kind in (("config", dict), ("golden", dict), ("metrics", dict),
                      ("questions", dict)):
        if key not in data:
            raise InputError(str(path), f"is missing; {redo}", field=key)
        if not isinstance(data[key], kind):
            raise InputError(where(key), f"must be an object, not {data[key]!r:.60}", field=key)
    unknown = sorted(set(data) - set(_TOP_KEYS), key=str)
    if unknown:
        close = difflib.get_close_matches(str(unknown[0]), _TOP_KEYS, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise InputError(where(unknown[0]), f"unknown key; {hint}a baseline holds "
                         f"{', '.join(_TOP_KEYS)}", field=str(unknown[0]))
    if data.get("kind", _KIND) != _KIND:
        raise InputError(where("kind"), f"must be {_KIND!r}, not {data['kind']!r:.60}; {redo}",
                         field="kind")
    if "n" in data and (not is_int(data["n"]) or data["n"] != len(data["questions"])):
        raise InputError(where("n"), f"is {data['n']!r:.40} but the file records "
                         f"{len(data['questions'])} questions; {redo}", field="n")
    check_config(data["config"], where("config"), pipeline, locate=where)
    golden = data["golden"]
    if not isinstance(golden.get("content_hash"), str) or not is_int(golden.get("items")) \
            or golden["items"] < 0:
        raise InputError(where("golden"), "must be {content_hash: text, items: integer}; "
                         f"{redo}", field="golden")
    outcomes: dict[str, dict[str, float]] = {}
    for qid, per in data["questions"].items():
        if not isinstance(per, dict):
            raise InputError(where(qid), f"must be an object metric -> value, not {per!r:.60}",
                             field=f"questions.{qid}")
        for metric, value in per.items():
            if not _fraction(value):
                raise InputError(where(qid), f"{value!r:.40} is not a number between 0 and 1 "
                                 f"(every gated metric is a fraction); {redo}",
                                 field=f"questions.{qid}.{metric}")
        outcomes[str(qid)] = {str(m): float(v) for m, v in per.items()}
    summary: dict[str, dict[str, float]] = {}
    for metric, stats in data["metrics"].items():
        ok = isinstance(stats, dict) and all(_fraction(stats.get(s)) for s in ("mean", "ci_low",
                                                                             "ci_high"))
        ok = ok and not set(stats) - {"mean", "n", "ci_low", "ci_high", "relevance"}
        if not ok or not is_int(stats.get("n")) or not 0 <= stats["n"] <= len(outcomes):
            raise InputError(where(metric), "must be {mean, n, ci_low, ci_high, relevance} with "
                             "fractions and a count of at most the questions recorded; "
                             f"{redo}", field=f"metrics.{metric}")
        summary[str(metric)] = dict(stats)
    categories = data.get("categories", {})
    if not isinstance(categories, dict) or not all(isinstance(c, str)
                                                   for c in categories.values()):
        raise InputError(where("categories"), "must be an object qid -> category",
                         field="categories")
    config = dict(data["config"])
    for key in PATH_KEYS:
        if config.get(key) and not Path(config[key]).is_absolute():
            config[key] = os.path.normpath(path.parent / config[key])
    return Baseline(config, golden["content_hash"], golden["items"], summary, outcomes=outcomes,
                    categories=dict(categories), created=str(data.get("created", "")), path=path)
