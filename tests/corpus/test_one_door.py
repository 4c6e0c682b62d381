"""Access by construction: a Document whose metadata names readers is built only by the one
door, ``workbench.corpus.admission.admit``. Two checks: the package's source (every module,
read with ast) constructs ``Document`` nowhere else, not through an alias, a module
attribute or a reference handed on; and at run time a construction with access anywhere
else raises, and the door's key is not handed out twice."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import ROOT
from workbench.corpus import Document, admit
from workbench.corpus.types import Admitted, admission_key

PACKAGE = ROOT / "workbench"
DOOR = PACKAGE / "corpus" / "admission.py"
HOMES = ("workbench", "workbench.corpus", "workbench.corpus.types")


def constructions(source: str, defines: bool = False) -> list[int]:
    """Lines of ``source`` that build our Document outside a type (an annotation, a type
    parameter or union, an ``isinstance`` check): a call of it (through any alias or module
    attribute), or the class handed on as a value (assigned, passed, returned, put in a
    container)."""
    tree = ast.parse(source)
    names = {"Document"} if defines else set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in HOMES:
            for alias in node.names:
                if alias.name == "Document":
                    names.add(alias.asname or alias.name)
                elif f"{node.module}.{alias.name}" in HOMES:
                    modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in HOMES:
                    modules.add(alias.asname or alias.name.split(".")[0])
    allowed: set[int] = set()  # ids of nodes inside annotations and isinstance checks
    for node in ast.walk(tree):
        notes = []
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            notes.append(node.annotation)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns:
            notes.append(node.returns)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2):
            notes.append(node.args[1])
        if isinstance(node, ast.Subscript):  # a type parameter: Mapping[str, Document]
            notes.append(node.slice)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # a type union
            notes.extend((node.left, node.right))
        for note in notes:
            allowed.update(id(n) for n in ast.walk(note))

    def ours(expr: ast.AST) -> bool:
        if isinstance(expr, ast.Name):
            return expr.id in names
        if isinstance(expr, ast.Attribute) and expr.attr == "Document":
            return ast.unparse(expr.value).split(".")[0] in modules
        return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)
                and expr.func.id == "getattr" and len(expr.args) > 1
                and isinstance(expr.args[1], ast.Constant) and expr.args[1].value == "Document")

    found = set()
    for node in ast.walk(tree):
        if id(node) in allowed or not isinstance(node, ast.expr) or not ours(node):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            continue
        found.add(node.lineno)
    return sorted(found)


def test_the_package_builds_a_document_only_through_the_door():
    built = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        lines = constructions(path.read_text(encoding="utf-8"),
                              defines=path == PACKAGE / "corpus" / "types.py")
        if lines and path != DOOR:
            built[str(path.relative_to(ROOT))] = lines
    assert not built, f"Document built outside workbench/corpus/admission.py: {built}"
    assert constructions(DOOR.read_text(encoding="utf-8"))  # the door itself does build one


@pytest.mark.parametrize("source", [
    "from workbench.corpus import Document\nDocument('a', 'b')",
    "from workbench.corpus.types import Document as D\nD('a', 'b', '', {})",
    "import workbench.corpus as c\nc.Document('a', 'b')",
    "import workbench.corpus.types\nworkbench.corpus.types.Document('a', 'b')",
    "from workbench import corpus\ncorpus.Document('a', 'b')",
    "from workbench.corpus import Document\nmake = Document\nmake('a', 'b')",
    "from workbench.corpus import Document\nlist(map(Document, ['a'], ['b']))",
    "import workbench.corpus as c\ngetattr(c, 'Document')('a', 'b')",
])
def test_the_source_walk_finds_every_way_of_building_one(source):
    assert constructions(source)


def test_annotations_and_isinstance_are_not_constructions():
    source = ("from workbench.corpus import Document\n"
              "Docs = Mapping[str, Document] | Iterable[Document]\n"
              "def f(d: Document, m: dict[str, Document]) -> list[Document]:\n"
              "    x: Document = d\n    return [d] if isinstance(d, Document) else []\n")
    assert constructions(source) == []


@pytest.mark.parametrize("key", ["acl", "ACL", "groups", "restricted_to", "visible_to",
                                 "classification", "audience", "Sensitivity", "ａｃｌ"])
def test_a_document_with_access_built_outside_the_door_raises(key):
    with pytest.raises(ValueError, match="only through the one door"):
        Document("d", "text", "", {key: ["finance"]})
    Document("d", "text", "", {"product": "payroll"})  # a public document is still plain data


def test_the_door_key_is_handed_out_once_and_admitted_metadata_needs_it():
    with pytest.raises(ValueError, match=r"held by workbench\.corpus\.admission"):
        admission_key()
    with pytest.raises(ValueError, match=r"only by workbench\.corpus\.admit"):
        Admitted({"acl": ("finance",)}, object())
    doc = admit("d", "text", "T", {"acl": "finance, hr"})
    assert doc.acl == ("finance", "hr") and isinstance(doc.metadata, Admitted)
