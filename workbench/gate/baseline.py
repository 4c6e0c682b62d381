"""The baseline file of the CI gate: the pipeline config it records (:func:`gate_config`,
``DEFAULTS``) and the :class:`Baseline` record with its JSON format, written atomically.

The file records the pipeline config, the golden set's ``content_hash``, per-metric mean / n /
interval / relevance (the judgments the numbers use, e.g. ``evidence>=0.75``) and every
question's value per metric, one question per line so that its diff reads as a history.
:mod:`workbench.gate` checks evaluations against it and ratchets it upward.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from workbench.evaluation import INTERVAL_NOTE, Evaluation, default_metrics
from workbench.golden import GoldenSet
from workbench.io import atomic_write_text
from workbench.metrics import DEFAULT_EVIDENCE_THRESHOLD

#: 2: metrics carry their relevance (evidence-based since the "one ruler" change).
SCHEMA_VERSION = 2
DEFAULTS: dict[str, Any] = {"golden": None, "chunker": "fixed:size=800,overlap=100",
                            "retriever": "bm25", "encoder": None, "k": 5, "metrics": None,
                            "level": "chunk", "threshold": 1,
                            "evidence_threshold": DEFAULT_EVIDENCE_THRESHOLD}
#: Config keys that hold file paths (written relative to the baseline file's folder).
PATH_KEYS = ("corpus", "golden")


def gate_config(corpus: str | Path, golden: str | Path | None = None, **options: Any
                ) -> dict[str, Any]:
    """The pipeline a baseline records: corpus, golden, chunker, retriever, encoder, k,
    metrics, level, threshold, evidence_threshold (defaults: BM25 over
    fixed:size=800,overlap=100, k=5, relevance as in :func:`workbench.evaluate`)."""
    unknown = set(options) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown config option(s) {sorted(unknown)}; use {sorted(DEFAULTS)}")
    config = {"corpus": str(corpus), **DEFAULTS, **{k: v for k, v in options.items()
                                                    if v is not None}}
    config["golden"] = None if golden is None else str(golden)
    config["k"] = int(config["k"])
    config["metrics"] = list(config["metrics"] or default_metrics(config["k"]))
    return config


def question_outcomes(ev: Evaluation) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """The per-question values of a one-configuration Evaluation, ``qid -> metric -> value``,
    and each question's category (what a baseline records and the gate compares)."""
    if len(ev.configs()) != 1:
        raise ValueError(f"the gate scores one configuration, this Evaluation holds "
                         f"{len(ev.configs())}: {ev.configs()}; select one first")
    values: dict[str, dict[str, float]] = {}
    cats: dict[str, str] = {}
    for q, m, v, c in zip(ev.frame["qid"], ev.frame["metric"], ev.frame["value"],
                          ev.frame["category"], strict=True):
        values.setdefault(str(q), {})[str(m)] = float(v)
        cats[str(q)] = str(c)
    return values, cats


@dataclass(frozen=True)
class Baseline:
    """A recorded evaluation: ``outcomes`` maps qid -> metric -> value; ``summary`` maps
    metric -> {mean, n, ci_low, ci_high, relevance} (the 95% interval of
    :meth:`Evaluation.summary`)."""

    config: Mapping[str, Any]
    golden_hash: str
    golden_items: int
    summary: Mapping[str, Mapping[str, Any]]
    outcomes: Mapping[str, Mapping[str, float]]
    categories: Mapping[str, str] = field(default_factory=dict)
    created: str = ""
    path: Path | None = None

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
        summary: dict[str, dict[str, Any]] = {}
        for r in ev.summary().to_dict("records"):
            if str(r["metric"]) in summary:
                raise ValueError(f"metric {r['metric']!r} mixes relevance kinds in this "
                                 "evaluation; gate a golden set labelled one way")
            summary[str(r["metric"])] = {"mean": float(r["mean"]), "n": int(r["n"]),
                                         "ci_low": float(r["ci_low"]),
                                         "ci_high": float(r["ci_high"]),
                                         "relevance": str(r["relevance"])}
        return cls(dict(config), golden.content_hash if golden is not None else "",
                   len(golden) if golden is not None else len(values), summary, values, cats,
                   datetime.now(timezone.utc).isoformat(timespec="seconds"))

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
        head = {"schema_version": SCHEMA_VERSION, "kind": "workbench.gate.baseline",
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

    def save(self, path: str | Path) -> Path:
        target = Path(path)
        atomic_write_text(target, self.to_json(target))
        return target

    @classmethod
    def load(cls, path: str | Path) -> Baseline:
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"{path}: baseline not found; create it with "
                                    "`workbench gate --baseline PATH --update-baseline`")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{exc.lineno}: malformed baseline JSON ({exc.msg})"
                             ) from None
        if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
            raise ValueError(f"{path}: field 'schema_version' must be {SCHEMA_VERSION}; "
                             "re-create the baseline with --update-baseline --force")
        try:
            config = dict(data["config"])
            for key in PATH_KEYS:
                if config.get(key) and not Path(config[key]).is_absolute():
                    config[key] = os.path.normpath(path.parent / config[key])
            outcomes = {str(q): {str(m): float(v) for m, v in per.items()}
                        for q, per in data["questions"].items()}
            return cls(config, str(data["golden"]["content_hash"]), int(data["golden"]["items"]),
                       {str(m): dict(s) for m, s in data["metrics"].items()}, outcomes,
                       dict(data.get("categories", {})), str(data.get("created", "")), path)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{path}: baseline lacks or mangles field {exc}; re-create it with "
                             "--update-baseline --force") from None
