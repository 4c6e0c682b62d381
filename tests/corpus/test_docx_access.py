"""Deny by default for DOCX properties: a restricted DOCX (the canary of test_access_shapes in
its body) declares or hints at its readers in a core property (keywords, category, subject,
content status, comments, ...) or a custom property, in generated shapes (key spellings
through NFKC and lookalike letters, separators, sensitivity labels); each loads restricted
or is refused, never public. Positive controls: the plain declaration loads restricted and
a member of the group sees the text; a property with nothing about access loads public."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.corpus.test_access_shapes import CANARY, LETTERS, WORDS, _outcome
from workbench.corpus import load_folder
from workbench.corpus.docx_text import CORE_PROPERTIES, LABEL_PROPERTIES, SENSITIVITY_WORDS

TEXT_PROPERTIES = [p for p in CORE_PROPERTIES if p not in ("author", "last_modified_by")]


def _docx(folder: Path, properties: dict[str, str], custom: dict[str, str] | None = None
          ) -> Path:
    import docx

    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    d = docx.Document()
    d.add_heading("Procurement", level=1)
    d.add_paragraph(CANARY + ".")
    for name, value in properties.items():
        setattr(d.core_properties, name, value)
    path = folder / "procurement.docx"
    d.save(str(path))
    if custom:
        rows = "".join(f'<property fmtid="{{D5CDD505-2E9C-101B-9397-08002B2CF9AE}}" pid="{i}" '
                       f'name="{k}"><vt:lpwstr>{v}</vt:lpwstr></property>'
                       for i, (k, v) in enumerate(custom.items(), start=2))
        with zipfile.ZipFile(path, "a") as zf:
            zf.writestr("docProps/custom.xml", '<?xml version="1.0"?><Properties xmlns='
                        '"http://schemas.openxmlformats.org/officeDocument/2006/custom-'
                        'properties" xmlns:vt="http://schemas.openxmlformats.org/'
                        f'officeDocument/2006/docPropsVTypes">{rows}</Properties>')
    return folder


KEYS = st.one_of(st.sampled_from(WORDS),
                 st.tuples(*[st.sampled_from(LETTERS[ch]) for ch in "acl"]).map("".join))
DECLARATIONS = st.builds(lambda key, sep, groups: f"{key}{sep}{groups}", KEYS,
                         st.sampled_from([": ", "=", " : ", ":", " = "]),
                         st.sampled_from(["finance, managers", "finance", "[finance]",
                                          "finance;managers"]))
LABELS = st.builds(lambda word, case: case(word), st.sampled_from(SENSITIVITY_WORDS),
                   st.sampled_from([str.upper, str.title, str.lower]))
SHAPES = st.one_of(
    st.tuples(st.sampled_from(TEXT_PROPERTIES), DECLARATIONS),
    st.tuples(st.sampled_from(LABEL_PROPERTIES),
              st.builds(lambda label, more: f"{more}{label}", LABELS,
                        st.sampled_from(["", "policy, ", "Q3; "]))),
    st.tuples(st.sampled_from(LABEL_PROPERTIES), KEYS))
TRIED: dict[str, int] = {}


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=SHAPES)
def test_a_core_property_about_access_is_read_or_refuses_the_document(shape,
                                                                      tmp_path_factory):
    name, value = shape
    folder = _docx(tmp_path_factory.mktemp("docx"), {name: value})
    outcome = _outcome(lambda: load_folder(folder))
    TRIED[outcome] = TRIED.get(outcome, 0) + 1
    assert outcome != "public", (name, value)


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=KEYS, value=st.one_of(st.sampled_from(["finance", "finance, managers"]), LABELS))
def test_a_custom_property_about_access_is_read_or_refuses_the_document(key, value,
                                                                        tmp_path_factory):
    folder = _docx(tmp_path_factory.mktemp("docx"), {}, {key: value})
    assert _outcome(lambda: load_folder(folder)) != "public", (key, value)
    folder = _docx(folder, {}, {"Department": value})  # a label in any custom property
    if value in ("finance", "finance, managers"):
        assert _outcome(lambda: load_folder(folder)) == "public"  # nothing about access
    else:
        assert _outcome(lambda: load_folder(folder)) == "refused"


@pytest.mark.parametrize("name", ["keywords", "category", "subject", "comments",
                                  "content_status"])
def test_the_plain_declaration_loads_restricted_and_a_member_sees_it(name, tmp_path):
    folder = _docx(tmp_path / "docs", {name: "acl: finance, managers"})
    assert _outcome(lambda: load_folder(folder)) == "restricted"
    assert _outcome(lambda: load_folder(folder), ["finance"]) == "public"  # a member reads it
    doc = load_folder(folder)["procurement"]
    assert doc.acl == ("finance", "managers")
    assert _outcome(lambda: load_folder(_docx(tmp_path / "docs", {},
                                              {"acl": "finance"}))) == "restricted"


def test_properties_with_nothing_about_access_load_public(tmp_path):
    folder = _docx(tmp_path / "docs", {"keywords": "procurement, purchasing",
                                       "title": "Internal procurement rules",
                                       "subject": "Access to purchase orders",
                                       "category": "Policy", "author": "Private Person"})
    assert _outcome(lambda: load_folder(folder)) == "public"


def test_two_declarations_or_one_beside_a_sidecar_that_disagree_are_refused(tmp_path):
    folder = _docx(tmp_path / "docs", {"keywords": "acl: finance", "category": "acl: hr"})
    with pytest.raises(ValueError, match=r"procurement\.docx: field '(category|keywords)'"):
        load_folder(folder)
    folder = _docx(tmp_path / "docs", {"keywords": "acl: finance"})
    (folder / "procurement.meta.yaml").write_text("acl: [hr]\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"procurement\.meta\.yaml:1: field 'acl'.*keep one"):
        load_folder(folder)
    (folder / "procurement.meta.yaml").write_text("acl: [finance]\n", encoding="utf-8")
    assert load_folder(folder)["procurement"].acl == ("finance",)  # they agree: one list


def test_a_declared_docx_makes_every_other_document_declare(tmp_path):
    folder = _docx(tmp_path / "docs", {"keywords": "acl: finance"})
    (folder / "canteen.md").write_text("# Canteen\n\nLunch is at noon.\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"canteen\.md.*declares no access"):
        load_folder(folder)

