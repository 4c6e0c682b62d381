"""``workbench cache clear`` deletes only what the workbench wrote: a fake ``$HOME`` holding a
user's own ``embeddings/``, ``generations/`` and ``models/`` survives every form of the command,
and a real cache (marked by its writers, its files in their manifests) is emptied of the
workbench's files only. Generated set-ups put user files in every position of a real cache,
under every name (ours among them), and replace the cache's files and folders by symlinks,
tampered copies and foreign markers: no user file is ever deleted."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.cli import main
from workbench.generation.answer_cache import GenerationCache
from workbench.generation.prompt import Answer
from workbench.retrieval import EmbeddingCache
from workbench.runtime import CACHE_MANIFEST, CACHE_MARKER, mark_cache_folder, record_cache_tree


class Fake:
    model_id = "fake/model"

    def encode_documents(self, texts):
        return np.ones((len(texts), 4), dtype=np.float32)

    encode_queries = encode_documents


def _user_files(home: Path) -> dict[Path, bytes]:
    """A user's files in folders named like the cache's, and one in a folder of ~."""
    files = {
        home / "embeddings" / "my_vectors.npy": b"mine",
        home / "generations" / "my-project" / "results.json": b"{}",
        home / "generations" / "ab" / ("ab" + "0" * 62 + ".json"): b"not the workbench's",
        home / "models" / "llama" / "config.json": b"{}",
        home / "projects" / "notes.txt": b"keep",
    }
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def _snapshot(home: Path) -> set[Path]:
    return {p for p in home.rglob("*") if p.is_file()}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("WORKBENCH_CACHE", raising=False)
    monkeypatch.delenv("WORKBENCH_MODEL_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    return home


SETUPS = ["--cache ~", "--cache HOME", "WORKBENCH_CACHE=~", "symlink to ~",
          "WORKBENCH_MODEL_CACHE=~", "WORKBENCH_MODEL_CACHE=symlink", "--cache /",
          "unmarked folder", "--cache parent of ~"]


@pytest.mark.parametrize("setup", SETUPS)
@pytest.mark.parametrize("only", [None, "embeddings", "generations", "models"])
def test_a_users_files_survive_every_form_of_clear(home, monkeypatch, capsys, setup, only):
    files = _user_files(home)
    before = _snapshot(home)
    args = ["cache", "clear"]
    if setup == "--cache ~":
        args += ["--cache", "~"]
    elif setup == "--cache HOME":
        args += ["--cache", str(home)]
    elif setup == "WORKBENCH_CACHE=~":
        monkeypatch.setenv("WORKBENCH_CACHE", str(home))
    elif setup == "symlink to ~":
        link = home.parent / "link"
        link.symlink_to(home)
        args += ["--cache", str(link)]
    elif setup == "WORKBENCH_MODEL_CACHE=~":
        monkeypatch.setenv("WORKBENCH_MODEL_CACHE", str(home))
        args += ["--cache", str(home.parent / "cache")]
    elif setup == "WORKBENCH_MODEL_CACHE=symlink":
        (home.parent / "mlink").symlink_to(home / "models")
        monkeypatch.setenv("WORKBENCH_MODEL_CACHE", str(home.parent / "mlink"))
        args += ["--cache", str(home.parent / "cache")]
    elif setup == "--cache /":
        args += ["--cache", "/"]
    elif setup == "unmarked folder":
        args += ["--cache", str(home.parent / "elsewhere")]
        for path, data in files.items():  # the same shapes, outside ~, never marked
            target = home.parent / "elsewhere" / path.relative_to(home)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    elif setup == "--cache parent of ~":
        args += ["--cache", str(home.parent)]
    if only:
        args += ["--only", only]
    code = main(args)
    err = capsys.readouterr().err
    assert _snapshot(home) == before, setup
    assert all(p.read_bytes() == data for p, data in files.items())
    if setup == "unmarked folder":
        assert all((home.parent / "elsewhere" / p.relative_to(home)).exists() for p in files)
    if code != 0:  # a refusal says why and how to clear by hand, in one line
        assert len(err.strip().splitlines()) == 1, err
        assert "home" in err or "root" in err or "by hand" in err, err


def _converted_model(models: Path, name: str) -> Path:
    """A converted model as the converters leave it: files in a folder of a marked models
    folder, listed in its manifest."""
    mark_cache_folder(models, "models")
    (models / name / "tokenizer").mkdir(parents=True)
    (models / name / "model.safetensors").write_bytes(b"x" * 10)
    (models / name / "workbench-source.json").write_text("{}", encoding="utf-8")
    (models / name / "tokenizer" / "vocab.json").write_text('{"a": 1}', encoding="utf-8")
    record_cache_tree(models, models / name)
    return models / name


def test_clear_deletes_only_the_workbenchs_files_in_a_marked_cache(home, capsys):
    cache = home / ".cache" / "workbench"
    EmbeddingCache(cache / "embeddings").embed(Fake(), ["a", "b"], progress=False)
    answers = GenerationCache(cache / "generations")
    answers.put("ab" + "1" * 62, Answer(text="yes"))
    models = cache / "models"
    _converted_model(models, "smol-1")
    (models / "smol-1" / "escape").symlink_to(home / "projects")
    ours = {p for p in cache.rglob("*") if p.is_file() and not p.is_symlink()
            and p.name not in (CACHE_MARKER, CACHE_MANIFEST) and not p.name.endswith(".lock")}
    assert len(ours) == 6  # model.json, one shard, one answer, three model files
    mine = {
        cache / "embeddings" / "my_vectors.npy": b"mine",
        cache / "generations" / "notes.txt": b"mine",
        cache / "models" / "llama" / "config.json": b"{}",
        cache / "models" / "llama" / "workbench-source.json": b"{}",
        home / "projects" / "keep.txt": b"keep",
    }
    for path, data in mine.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (cache / "embeddings" / "link").symlink_to(home / "projects")
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert "generations: 1 answers" in out and "smol-1 (" in out and "llama" not in out
    assert main(["cache", "clear"]) == 0
    out = capsys.readouterr().out
    assert "2 vectors" in out and "1 generated answers" in out and "1 converted model(s)" in out
    assert not any(p.exists() for p in ours)
    assert all(p.read_bytes() == data for p, data in mine.items())
    assert not (cache / "generations" / "ab").exists()  # emptied by the clear: removed
    assert (models / "smol-1" / "escape").is_symlink()  # not ours: kept, so is its folder
    assert all((cache / kind / CACHE_MARKER).is_file()
               for kind in ("embeddings", "generations", "models"))


@pytest.mark.parametrize("marker", [
    b"Signature: 8a477f597d28d172789f06886806bc55\n# created by workbench-sync, not ours\n",
    "other kind", "symlink to our bytes", "our bytes and more"])
def test_a_marker_is_ours_only_when_it_holds_exactly_our_bytes(home, capsys, marker):
    cache = home / ".cache" / "workbench"
    model = _converted_model(cache / "models", "smol-1")
    tag = cache / "models" / CACHE_MARKER
    ours = tag.read_bytes()
    tag.unlink()
    if marker == "other kind":
        mark_cache_folder(home / "other", "generations")
        tag.write_bytes((home / "other" / CACHE_MARKER).read_bytes())
    elif marker == "symlink to our bytes":
        (home / "tag").write_bytes(ours)
        tag.symlink_to(home / "tag")
    elif marker == "our bytes and more":
        tag.write_bytes(ours + b"#")
    else:
        tag.write_bytes(marker)
    assert main(["cache", "clear", "--only", "models"]) == 2
    assert "no workbench marker" in capsys.readouterr().err
    assert (model / "model.safetensors").exists()


def test_a_file_given_as_the_cache_folder_is_refused(home, capsys):
    path = home / "notes.txt"
    path.write_text("mine", encoding="utf-8")
    for action in ("info", "clear"):
        assert main(["cache", action, "--cache", str(path)]) == 2
        assert "is a file, not a cache folder" in capsys.readouterr().err
    assert path.read_text(encoding="utf-8") == "mine"


def test_embedding_cache_clear_refuses_an_unmarked_folder(home):
    (home / "embeddings").mkdir()
    (home / "embeddings" / "x.npy").write_bytes(b"mine")
    with pytest.raises(ValueError, match="no workbench marker"):
        EmbeddingCache(home / "embeddings").clear()
    assert (home / "embeddings" / "x.npy").exists()


# ----------------------------------------------------------------------------- generated set-ups

#: Names a user file may have: ours among them (an answer, a shard, model.json, the marker, the
#: manifest, a lock), names a converted model holds, and plain ones.
USER_NAMES = ["notes.txt", "model.json", "config.json", "workbench-source.json", CACHE_MARKER,
              CACHE_MANIFEST, ".lock", f".{CACHE_MANIFEST}.lock", "ab" + "0" * 62 + ".json",
              "1-2-ab." + "0" * 64 + ".npz", "my.npz", "sub/dir/data.bin", "{ours}"]
FORMS = [[], ["--only", "embeddings"], ["--only", "generations"], ["--only", "models"],
         ["--model", "fake/a"]]
TAMPER = ["append", "flip", "symlink to a copy", "hard link to a copy", "user's file there"]
MARKERS = ["ours", "foreign, says workbench", "another kind's", "symlink to our bytes",
           "missing"]
TALLY = {"set-ups": 0, "user files": 0, "user files deleted": 0, "cleared": 0, "refused": 0}


class FakeA(Fake):
    model_id = "fake/a"


class FakeB(Fake):
    model_id = "fake/b"


@pytest.fixture(scope="module")
def real_cache(tmp_path_factory) -> Path:
    """A cache as the writers leave it: two models' embeddings, answers, a converted model
    (written once; each set-up gets a copy, the manifests' paths being relative)."""
    cache = tmp_path_factory.mktemp("real") / "cache"
    for encoder in (FakeA(), FakeB()):
        EmbeddingCache(cache / "embeddings", shard_size=2).embed(encoder, ["a", "b", "c"],
                                                                  progress=False)
    answers = GenerationCache(cache / "generations")
    for key in ("ab" + "1" * 62, "ab" + "2" * 62, "cd" + "3" * 62):
        answers.put(key, Answer(text=f"answer {key[:4]}"))
    _converted_model(cache / "models", "smol-1")
    return cache


def _ours(cache: Path) -> set[Path]:
    """The files the writers listed (what a clear may delete)."""
    from workbench.runtime import cache_files

    return {cache / kind / rel for kind in ("embeddings", "generations", "models")
            for rel in cache_files(cache / kind)}


@st.composite
def cache_setups(draw: st.DrawFn) -> dict:
    index = st.integers(0, 10_000)
    return {
        "where": draw(st.sampled_from(["--cache", "WORKBENCH_CACHE", "XDG_CACHE_HOME", "HOME"])),
        "form": draw(st.sampled_from(FORMS)),
        "user": draw(st.lists(st.tuples(index, st.sampled_from(USER_NAMES),
                                        st.binary(min_size=1, max_size=40)), max_size=8)),
        "tamper": draw(st.lists(st.tuples(index, st.sampled_from(TAMPER)), max_size=3)),
        "folder links": draw(st.lists(index, max_size=2)),
        "marker": draw(st.tuples(st.sampled_from(["embeddings", "generations", "models"]),
                                 st.sampled_from(MARKERS))),
    }


def _apply(setup: dict, home: Path, cache: Path
           ) -> tuple[dict[Path, bytes], set[Path], set[str]]:
    """Put the user's files into a real cache as ``setup`` says: its files (path -> bytes),
    the cache's own files that stay the workbench's (untouched, reachable, still listed) and
    the kinds whose marker is no longer the workbench's."""
    user: dict[Path, bytes] = {}
    ours = _ours(cache)
    unmarked: set[str] = set()
    kinds = {cache / kind: kind for kind in ("embeddings", "generations", "models")}
    outside = home / "projects"
    outside.mkdir(exist_ok=True)

    def put(path: Path, data: bytes) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink() or path.is_file():
            path.unlink()
        if not path.is_dir():
            path.write_bytes(data)
            user[path] = data
            ours.discard(path)
        if path.parent in kinds and path.name in (CACHE_MARKER, CACHE_MANIFEST):
            ours.difference_update([p for p in ours if path.parent in p.parents])
            if path.name == CACHE_MARKER:
                unmarked.add(kinds[path.parent])

    kind, marker = setup["marker"]
    tag = cache / kind / CACHE_MARKER
    if marker != "ours":
        mine = tag.read_bytes()
        tag.unlink()
        if marker == "foreign, says workbench":
            put(tag, b"Signature: 8a477f597d28d172789f06886806bc55\n# not workbench's\n")
        elif marker == "another kind's":
            other = "models" if kind != "models" else "generations"
            put(tag, (cache / other / CACHE_MARKER).read_bytes())
        elif marker == "symlink to our bytes":
            put(outside / "tag", mine)
            tag.symlink_to(outside / "tag")
        ours -= {p for p in ours if (cache / kind) in p.parents}
        unmarked.add(kind)
    for n, (i, how) in enumerate(setup["tamper"]):
        victims = sorted(ours)
        if not victims:
            break
        path = victims[i % len(victims)]
        data = path.read_bytes()
        if how in ("symlink to a copy", "hard link to a copy"):
            copy = outside / f"copy-{n}"
            put(copy, data)
            path.unlink()
            (path.symlink_to if how == "symlink to a copy" else path.hardlink_to)(copy)
            ours.discard(path)
        else:
            put(path, {"append": data + b"!", "flip": bytes([data[0] ^ 1]) + data[1:],
                       "user's file there": b"mine"}[how])
    for n, i in enumerate(setup["folder links"]):
        folders = sorted({p.parent for p in ours} - {cache / k for k in
                                                     ("embeddings", "generations", "models")})
        if not folders:
            break
        folder = folders[i % len(folders)]
        copy = outside / f"folder-{n}"
        for path in [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()]:
            put(copy / path.relative_to(folder), path.read_bytes())
        shutil.rmtree(folder)
        folder.symlink_to(copy)
        ours -= {p for p in ours if folder in p.parents}
    positions = sorted({home, cache, *[p for p in cache.rglob("*")
                                       if p.is_dir() and not p.is_symlink()]})
    for i, name, data in setup["user"]:
        folder = positions[i % len(positions)]
        if name == "{ours}":
            here = sorted(p for p in ours if p.parent == folder)
            name = here[i % len(here)].name if here else "notes.txt"
        if (folder / name).is_symlink() or (folder / name).is_dir():
            continue
        put(folder / name, data)
    return user, ours, unmarked


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(setup=cache_setups())
def test_generated_cache_setups_never_lose_a_user_file(tmp_path_factory, real_cache, setup):
    base = tmp_path_factory.mktemp("setup")
    home = base / "home"
    cache = {"--cache": base / "cache", "WORKBENCH_CACHE": base / "env-cache",
             "XDG_CACHE_HOME": base / "xdg" / "workbench",
             "HOME": home / ".cache" / "workbench"}[setup["where"]]
    home.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        for var in ("WORKBENCH_CACHE", "WORKBENCH_MODEL_CACHE", "XDG_CACHE_HOME"):
            mp.delenv(var, raising=False)
        if setup["where"] == "WORKBENCH_CACHE":
            mp.setenv("WORKBENCH_CACHE", str(cache))
        elif setup["where"] == "XDG_CACHE_HOME":
            mp.setenv("XDG_CACHE_HOME", str(cache.parent))
        shutil.copytree(real_cache, cache, symlinks=True)
        user, ours, unmarked = _apply(setup, home, cache)
        args = ["cache", "clear", *setup["form"]]
        if setup["where"] == "--cache":
            args += ["--cache", str(cache)]
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
            code = main(args)
    lost = [p for p, data in user.items() if not p.is_file() or p.read_bytes() != data]
    TALLY["set-ups"] += 1
    TALLY["user files"] += len(user)
    TALLY["user files deleted"] += len(lost)
    TALLY["cleared" if code == 0 else "refused"] += 1
    assert not lost, (setup, lost)
    if code != 0:
        assert code == 2 and len(stderr.getvalue().strip().splitlines()) == 1, stderr.getvalue()
        assert unmarked, setup  # refused only where a marker is not the workbench's
        return
    cleared = {"--only": [setup["form"][-1:]], "--model": [["embeddings"]]}.get(
        setup["form"][0] if setup["form"] else "", [["embeddings", "generations", "models"]])[0]
    for path in ours:  # the workbench's own files, intact and reachable, are gone
        kind = path.relative_to(cache).parts[0]
        if kind in cleared and not (setup["form"][:1] == ["--model"]
                                    and "fake_b" in path.as_posix()):
            assert not path.exists(), path


@pytest.fixture(scope="module", autouse=True)
def _report_tally():
    yield
    if TALLY["set-ups"]:
        print(f"\ncache set-ups tried: {TALLY['set-ups']} ({TALLY['cleared']} cleared, "
              f"{TALLY['refused']} refused), user files placed: {TALLY['user files']}, "
              f"user files deleted: {TALLY['user files deleted']}")
