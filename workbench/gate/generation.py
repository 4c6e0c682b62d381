"""The generation gate: answer accuracy of the whole pipeline, gated like retrieval.

:func:`evaluate_generation` runs the recorded retrieval pipeline
(:func:`workbench.evaluation.pipeline.run_pipeline`), answers each golden question from the
live top-k (:func:`workbench.generation.run_generation_eval`, mode ``live``) through the
generation cache (:class:`~workbench.generation.answer_cache.CachedGenerator`: a rerun on
an unchanged pipeline generates nothing) and grades it (must-mention first, the judge where
strings cannot decide; undecided answers are left out). The per-question 0/1
``answer_accuracy`` is then gated by :func:`workbench.gate.check_gate` (the same paired,
one-sided test) and ratcheted upward only by :func:`workbench.gate.update_baseline`, against
a baseline file of its own.

The baseline's config records the retrieval pipeline plus ``generation``: the pins
(:func:`generation_pins`: the model id, its generation parameters, the prompt version and
the judge with its prompt version and calibration when one is known) and the ``qids`` gated
(None: every question). A pin that differs from the baseline's is reported and the
comparison refused (:class:`~workbench.gate.BaselineRefused`, reason ``"pins"``): a new model
or prompt is re-pinned deliberately (``force=True``, ``--update-baseline --force``), never
compared silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from workbench.corpus import UNRESTRICTED
from workbench.evaluation import Evaluation, evaluation_from_scores
from workbench.evaluation.pipeline import Pipeline, pipeline_config, run_pipeline
from workbench.gate.baseline import Baseline
from workbench.gate.check import BaselineRefused, check_gate
from workbench.gate.ratchet import update_baseline
from workbench.gate.result import GateResult
from workbench.generation.answer_cache import CachedGenerator, GenerationCache
from workbench.generation.grading import Judge
from workbench.generation.oracle import run_generation_eval
from workbench.generation.prompt import Generator
from workbench.golden import GoldenSet
from workbench.io import WorkbenchError

METRIC = "answer_accuracy"
RELEVANCE = "answer-grade"
#: Config keys of a generation baseline that are not retrieval pipeline options.
GENERATION_KEYS = ("generation", "qids")


def generation_pins(generator: Generator, judge: Judge | None = None) -> dict[str, Any]:
    """What a generation number depends on beyond retrieval: ``model`` (the generator's
    ``model_id``), ``params`` (its ``cache_params``, e.g. max_new_tokens), ``prompt_version``
    and ``judge`` (``model_id`` / prompt version, its ``calibration`` when it carries one;
    None without a judge)."""
    inner = generator.generator if isinstance(generator, CachedGenerator) else generator
    judged = None
    if judge is not None:
        judged = {"model": judge.model_id, "prompt_version": judge.prompt_version,
                  "calibration": getattr(judge, "calibration", None)}
    return {"model": inner.model_id, "params": dict(getattr(inner, "cache_params", {}) or {}),
            "prompt_version": inner.prompt_version, "judge": judged}


def evaluate_generation(generator: Generator, config: Mapping[str, Any], *,
                        judge: Judge | None = None,
                        cache: GenerationCache | str | Path | None = None,
                        qids: Iterable[str] | None = None, progress: bool = False
                        ) -> tuple[Evaluation, GoldenSet, dict[str, Any]]:
    """Answer accuracy of ``generator`` on the pipeline ``config`` describes (a gate config;
    ``generation`` / ``qids`` keys are read as pins and questions). Returns the Evaluation
    (one 0/1 ``answer_accuracy`` per decided question), the golden set and the full config
    to record (pipeline + ``generation`` pins + ``qids``)."""
    cfg = pipeline_config({k: v for k, v in config.items() if k not in GENERATION_KEYS})
    from workbench.golden import load_dataset

    corpus, golden = load_dataset(cfg["corpus"], cfg["golden"])
    pipeline = Pipeline.from_config(cfg).for_dataset(cfg["corpus"], cfg["golden"])
    built = run_pipeline(pipeline, corpus, golden, progress=progress,
                         source=cfg["golden"] or cfg["corpus"])
    chosen = list(qids) if qids is not None else config.get("qids")
    cached = generator if isinstance(generator, CachedGenerator) else \
        CachedGenerator(generator, cache)
    result = run_generation_eval(cached, built.retriever, golden, built.chunks,
                                 documents=corpus.documents, k=pipeline.k, modes=("live",),
                                 judge=judge, qids=chosen, progress=progress,
                                 # the gate keeps numbers only: it evaluates every document
                                 user_groups=UNRESTRICTED)
    frame = result.frame
    decided = frame[frame["passed"].notna()]
    scores = {str(q): {METRIC: float(bool(p))} for q, p in zip(decided["qid"],
                                                               decided["passed"], strict=True)}
    if not scores:
        raise WorkbenchError("no answer could be graded: give the questions answer_must_mention "
                         "strings, or a judge")
    cats = {str(q): str(c) for q, c in zip(frame["qid"], frame["category"], strict=True)}
    ev = evaluation_from_scores(scores, system=cfg["retriever"], categories=cats,
                                relevance=RELEVANCE)
    recorded = {**cfg, "generation": generation_pins(cached, judge),
                "qids": sorted(chosen) if chosen is not None else None}
    return ev, golden, recorded


def pin_changes(baseline: Baseline, config: Mapping[str, Any]) -> list[str]:
    """``key: before -> after`` for each generation pin that differs from the baseline's."""
    old = baseline.config.get("generation") or {}
    new = config.get("generation") or {}
    return [f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in sorted(set(old) | set(new))
            if old.get(k) != new.get(k)]


def _refuse_pins(path: str | Path, baseline: Baseline, config: Mapping[str, Any]) -> None:
    changes = pin_changes(baseline, config)
    if changes:
        raise BaselineRefused(
            f"{path}: the generation baseline was pinned to another setup ({'; '.join(changes)})"
            ": its numbers are not comparable. Re-pin deliberately with --update-baseline "
            "--force (force=True) and say why in the commit.", "pins")


def check_generation_gate(current: Evaluation, baseline: str | Path, config: Mapping[str, Any],
                          golden: GoldenSet | None = None, *, alpha: float = 0.05,
                          allow_golden_change: bool = False) -> GateResult:
    """Gate answer accuracy against a generation baseline: refused when a pin changed (see
    the module docstring), else :func:`workbench.gate.check_gate`."""
    base = Baseline.load(baseline)
    _refuse_pins(baseline, base, config)
    return check_gate(current, base, alpha, [METRIC], golden=golden,
                      allow_golden_change=allow_golden_change,
                      config={k: v for k, v in config.items() if k not in GENERATION_KEYS})


def update_generation_baseline(path: str | Path, current: Evaluation, config: Mapping[str, Any],
                               golden: GoldenSet | None, *, force: bool = False,
                               golden_changed: bool = False) -> Baseline:
    """Ratchet the generation baseline upward (:func:`workbench.gate.update_baseline`);
    refused when a pin changed, unless ``force`` (a deliberate re-pin)."""
    if Path(path).exists() and not force:
        _refuse_pins(path, Baseline.load(path), config)
    return update_baseline(path, current, config, golden, force=force,
                           golden_changed=golden_changed)
