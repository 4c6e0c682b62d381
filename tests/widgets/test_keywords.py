"""Every view refuses a keyword it does not take, by name, with the ones it takes: the views
are found by walking workbench.widgets, so a new one cannot skip the rule."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import workbench.widgets
from workbench.corpus import UNRESTRICTED, Corpus, Document
from workbench.io import WorkbenchError
from workbench.widgets.keywords import UnknownKeyword

PACKAGE = Path(workbench.__file__).parent


def _views() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(workbench.widgets.__path__, "workbench.widgets."):
        module = importlib.import_module(info.name)
        found += [obj for _, obj in inspect.getmembers(module, inspect.isclass)
                  if obj.__module__ == info.name and not issubclass(obj, BaseException)]
    return sorted(found, key=lambda c: c.__name__)


VIEWS = _views()


def _takes(cls: type) -> list[str]:
    by_name = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return [p.name for p in params if p.kind in by_name]


def test_the_walk_finds_every_view():
    assert {"ChunkPreview", "ChunkPreviewPair", "Labeller", "MetricTable", "PositionPlot",
            "RealismScorer", "SweepExplorer", "TraceViewer"} <= {c.__name__ for c in VIEWS}


def test_widget_libraries_are_imported_only_by_views():
    """A widget class anywhere else would escape the walk: ipywidgets and anywidget are
    imported only under workbench/widgets."""
    outside = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(PACKAGE / "widgets"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            outside += [f"{path}: {n}" for n in names
                        if n.split(".")[0] in ("ipywidgets", "anywidget")]
    assert not outside


@pytest.mark.parametrize("cls", VIEWS, ids=lambda c: c.__name__)
def test_a_typo_is_refused_by_name_with_the_keywords_it_takes(cls):
    takes = _takes(cls)
    meant = max(takes, key=len)
    typo = meant[:-1] + ("z" if meant[-1] != "z" else "y")  # dense -> densz
    with pytest.raises(UnknownKeyword) as refused:
        cls(**{typo: False})
    assert isinstance(refused.value, WorkbenchError) and isinstance(refused.value, TypeError)
    assert str(refused.value) == (f"{cls.__name__} takes no keyword {typo!r} (did you mean "
                                  f"{meant!r}?); it takes {', '.join(takes)}")


def test_the_labeller_refuses_dence_before_it_builds_or_writes(tmp_path):
    from workbench.widgets import ChunkPreviewPair, Labeller

    corpus = Corpus([Document("d", "Refunds take thirty days. Passwords need 14 characters.")])
    path = tmp_path / "golden.jsonl"
    with pytest.raises(UnknownKeyword, match=r"'dence' \(did you mean 'dense'\?\)"):
        Labeller(corpus, ["how long do refunds take"], path, dence=False,
                 user_groups=UNRESTRICTED)
    assert not path.exists()
    with pytest.raises(UnknownKeyword, match=re.escape("'nope', 'sise' (did you mean 'size'?)")):
        ChunkPreviewPair(corpus.documents, left={"nope": 1, "sise": 300},
                         user_groups=UNRESTRICTED)
