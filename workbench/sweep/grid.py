"""Sweep grids: the parameters and what is valid for each, :func:`load_grid` (YAML files,
problems reported as ``file:line``), chunker specs from parameters and :func:`expand_grid`.
The conventions the runner and the result share are here too: :func:`as_list`,
:func:`param_label` and :data:`PERCENT` (metric names and ``@k`` templates are the metrics
registry's: :func:`~workbench.metrics.canonical_name`, :func:`~workbench.metrics.at_k`)."""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from workbench.io import InputError, WorkbenchError, is_int, read_text
from workbench.metrics import canonical_name
from workbench.retrieval.base import MAX_K

if TYPE_CHECKING:
    from workbench.retrieval import Encoder

GRID_KEYS = ("chunker", "size", "overlap", "unit", "header", "retriever", "encoder", "k")
SWEEP_RETRIEVERS = ("bm25", "dense", "hybrid")
#: An overlap given as a percentage of size, such as ``"25%"`` (group 1: the number).
PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")
_HEADER_WORDS = {"true": True, "yes": True, "on": True, "1": True,
                 "false": False, "no": False, "off": False, "0": False}
VALID = {
    "chunker": "a chunker kind or a full chunker spec (kind:key=value,...) that parse_chunker "
               "accepts",
    "size": "a positive integer",
    "overlap": "an integer >= 0 or a percentage of size such as '25%'",
    "unit": "chars or tokens",
    "header": "true, false, or fields joined by '+' from title, section, date",
    "retriever": f"one of {', '.join(SWEEP_RETRIEVERS)}",
    "encoder": "minilm, e5 or a sentence-transformers model name or path",
    "k": f"a positive integer of at most {MAX_K:,}",
    "metrics": "metric names such as recall@5, mrr@5, hit_rate@k (k = each config's k)",
}



def check_value(key: str, value: Any) -> str | None:
    """Why ``value`` is not valid for grid parameter ``key`` (None when it is)."""
    ok = True
    if key == "chunker":
        ok = isinstance(value, str)
        if ok:  # the grid accepts what the spec parser accepts, a bare kind with its defaults
            from workbench.chunking import parse_chunker

            try:
                parse_chunker(value)
            except ValueError as exc:
                return str(exc)
    elif key in ("size", "k"):
        ok = is_int(value) and value >= 1 and (
            key == "size" or value <= MAX_K)
    elif key == "overlap":
        ok = (is_int(value) and value >= 0) or (
            isinstance(value, str) and bool(PERCENT.match(value)))
    elif key == "unit":
        ok = value in ("chars", "tokens")
    elif key == "header":
        ok = isinstance(value, bool) or (isinstance(value, str) and (
            value.lower() in _HEADER_WORDS
            or all(f in ("title", "section", "date") for f in value.split("+"))))
    elif key == "retriever":
        ok = value in SWEEP_RETRIEVERS
    elif key == "encoder":
        ok = (isinstance(value, str) and bool(value.strip())) or hasattr(value, "model_id")
    elif key == "metrics":
        try:
            canonical_name(str(value))
        except ValueError as exc:
            return str(exc)
        ok = isinstance(value, str)
    else:
        return f"unknown parameter {key!r}; valid parameters: {', '.join(GRID_KEYS)}, metrics"
    return None if ok else f"{value!r} is not valid for {key}: give {VALID[key]}"


_TOO_DEEP = ("grid file nested too deeply to read; a grid is a flat mapping of "
             "parameter: [values]")


def as_list(value: Any) -> list[Any]:
    """A grid value as a list of values (a scalar means a one-value list)."""
    return list(value) if isinstance(value, list | tuple) else [value]


def load_grid(path: str | Path) -> tuple[dict[str, list[Any]], list[str] | None]:
    """Read a YAML grid file: ``(grid, metrics)``. Raises ValueError naming
    ``file:line`` and what is valid for every problem found."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise WorkbenchError(f"{path}: grid file not found")
    text = read_text(path, "grid")
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise WorkbenchError(f"{where}: not valid YAML ({getattr(exc, 'problem', exc)})") from None
    except RecursionError:
        raise InputError(str(path), _TOO_DEEP) from None
    if not isinstance(node, yaml.MappingNode):
        line = node.start_mark.line + 1 if node is not None else 1
        raise WorkbenchError(f"{path}:{line}: a grid file is a mapping of parameter: [values]; "
                         f"valid parameters: {', '.join(GRID_KEYS)}, metrics")
    problems: list[str] = []
    grid: dict[str, list[Any]] = {}
    metrics: list[str] | None = None
    loader = yaml.SafeLoader("")
    for key_node, value_node in node.value:
        key = str(key_node.value)
        where = f"{path}:{key_node.start_mark.line + 1}"
        if key not in (*GRID_KEYS, "metrics"):
            problems.append(f"{where}: unknown parameter {key!r}; valid parameters: "
                            f"{', '.join(GRID_KEYS)}, metrics")
            continue
        if key in grid or (key == "metrics" and metrics is not None):
            problems.append(f"{where}: {key!r} given twice; give it once with a list of values")
            continue
        items = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        if isinstance(value_node, yaml.MappingNode) or not items:
            problems.append(f"{where}: {key}: give a value or a list of values ({VALID[key]})")
            continue
        values = []
        for item in items:
            try:
                value = loader.construct_object(item, deep=True)
            except RecursionError:
                raise InputError(f"{path}:{item.start_mark.line + 1}", _TOO_DEEP) from None
            why = check_value(key, value)
            if why:
                problems.append(f"{path}:{item.start_mark.line + 1}: {key}: {why}")
            values.append(value)
        if key == "metrics":
            metrics = [str(v) for v in values]
        else:
            grid[key] = values
    if problems:
        raise WorkbenchError(f"{len(problems)} problem(s) in grid file {path}:\n  "
                         + "\n  ".join(problems))
    return grid, metrics


@dataclasses.dataclass(frozen=True)
class SweepConfig:
    """One configuration: its readable ``name`` (the Evaluation's system), the grid values
    (``params``), the chunker spec, and what is searched with it."""

    name: str
    params: Mapping[str, Any]
    spec: str
    retriever: str
    _: dataclasses.KW_ONLY
    encoder: str | Encoder | None
    k: int

    @property
    def encoder_id(self) -> str | None:
        if self.encoder is None or isinstance(self.encoder, str):
            return self.encoder
        return self.encoder.model_id


def _chunker_spec(p: dict[str, Any]) -> str:
    """The chunker spec for one combination of chunking parameters (ValueError if invalid)."""
    from workbench.chunking import parse_chunker

    kind = p["chunker"]
    if ":" in kind:
        return parse_chunker(kind).label
    parts = []
    size = p.get("size")
    if size is not None:
        parts.append(f"size={size}")
    overlap = p.get("overlap")
    if isinstance(overlap, str):
        if kind in ("sentence", "markdown"):
            raise WorkbenchError(f"{kind} overlap cannot be a percentage")
        pct = float(PERCENT.match(overlap).group(1))  # type: ignore[union-attr]
        overlap = round((size or 800) * pct / 100)
    if overlap is not None:
        if kind == "markdown" and overlap:
            raise WorkbenchError("the markdown chunker takes no overlap")
        if kind == "sentence":
            parts.append(f"overlap_sentences={overlap}")
        elif kind != "markdown":
            if size is not None and overlap >= size:
                raise WorkbenchError(f"overlap {overlap} >= size {size}")
            parts.append(f"overlap={overlap}")
    if p.get("unit") is not None:
        parts.append(f"unit={p['unit']}")
    header = p.get("header")
    if header is not None:
        word = header if isinstance(header, bool) else _HEADER_WORDS.get(str(header).lower())
        parts.append("header=" + (str(word).lower() if word is not None else str(header)))
    return parse_chunker(f"{kind}:{','.join(parts)}").label


def param_label(value: Any) -> str:
    """How a parameter value is written in configuration names and tables (booleans in lower
    case, encoders by ``model_id``)."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(getattr(value, "model_id", value))


def expand_grid(grid: Mapping[str, Any], k: int = 5
                ) -> tuple[list[SweepConfig], list[dict[str, Any]]]:
    """Every valid configuration of ``grid`` (in grid order) and the skipped combinations
    (``{"params": ..., "reason": ...}``). Parameters that do not apply (an encoder for BM25,
    size for a full chunker spec) become None and duplicates are dropped."""
    problems = [why for key, values in grid.items() for v in as_list(values)
                if (why := check_value(key, v))]
    if problems:
        raise WorkbenchError("invalid grid: " + "; ".join(problems))
    keys = [key for key in GRID_KEYS if key in grid]
    lists = [as_list(grid[key]) for key in keys]
    seen: set[tuple[Any, ...]] = set()
    rows: list[tuple[dict[str, Any], str, str, Any, int]] = []
    skipped: list[dict[str, Any]] = []
    for combo in itertools.product(*lists):
        params = dict(zip(keys, combo, strict=True))
        full = {"chunker": "fixed", "retriever": "bm25", **params}
        if ":" in full["chunker"]:
            for key in ("size", "overlap", "unit", "header"):
                if key in params:
                    params[key] = None
        retriever = full["retriever"]
        encoder = full.get("encoder", "minilm") if retriever != "bm25" else None
        if retriever == "bm25" and "encoder" in params:
            params["encoder"] = None
        try:
            spec = _chunker_spec(full)
        except ValueError as exc:
            skipped.append({"params": params, "reason": str(exc)})
            continue
        kk = int(full.get("k", k))
        dedupe = (spec, retriever, param_label(encoder) if encoder is not None else None, kk)
        if dedupe in seen:
            continue
        seen.add(dedupe)
        rows.append((params, spec, retriever, encoder, kk))
    varying = [key for key in keys
               if len({param_label(r[0][key]) for r in rows if r[0][key] is not None}) > 1]
    configs: list[SweepConfig] = []
    names: set[str] = set()
    for params, spec, retriever, encoder, kk in rows:
        parts = [(param_label(params[key]) if key in ("chunker", "retriever", "encoder")
                  else f"{key}={param_label(params[key])}")
                 for key in varying if params[key] is not None]
        name = " ".join(parts) or f"{spec} {retriever}"
        base, n = name, 1
        while name in names:
            n += 1
            name = f"{base} #{n}"
        names.add(name)
        configs.append(SweepConfig(name, MappingProxyType(params), spec, retriever, encoder=encoder,
                                   k=kk))
    return configs, skipped
