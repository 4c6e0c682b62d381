"""OpenAIChatGenerator: any OpenAI-compatible ``/v1/chat/completions`` endpoint, stdlib
HTTP, with retries (exponential backoff and jitter) on 429/5xx/timeouts."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import random
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from tqdm.auto import tqdm

from workbench.generation.context import AssembledContext
from workbench.generation.prompt import (
    PROMPT_VERSION,
    Answer,
    ChatReply,
    build_messages,
    make_answer,
    safe_generate,
)

_RETRY_STATUS = {408, 409, 425, 429}


class OpenAIChatGenerator:
    """Client for an OpenAI-compatible ``/v1/chat/completions`` endpoint (stdlib HTTP).

    ``base_url`` may end in ``/v1`` or not. The key is read from ``api_key_env`` when set
    (local servers need none). 429, 5xx, timeouts and dropped connections are retried up to
    ``max_retries`` times with exponential backoff (``backoff_base * 2**attempt``, capped at
    ``backoff_max``, honouring ``Retry-After``) and jitter; other errors fail at once. A
    failure becomes ``Answer.error``; it never raises out of ``generate``.
    """

    def __init__(self, base_url: str, model: str, *, api_key_env: str = "OPENAI_API_KEY",
                 timeout: float = 60, max_retries: int = 4, concurrency: int = 4,
                 max_tokens: int = 256, temperature: float = 0.0, backoff_base: float = 0.5,
                 backoff_max: float = 30.0, model_id: str | None = None,
                 prompt_version: str = PROMPT_VERSION, seed: int | None = 0,
                 extra_body: Mapping[str, Any] | None = None):
        base = base_url.rstrip("/")
        self.url = base + ("/chat/completions" if base.endswith("/v1") else "/v1/chat/completions")
        self.model = model
        self.model_id = model_id or model
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.concurrency = max(1, concurrency)
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.prompt_version = prompt_version
        self.seed = seed
        self.extra_body = dict(extra_body or {})
        self._rng = random.Random()
        self.sleep: Callable[[float], None] = time.sleep

    def __repr__(self) -> str:
        return f"OpenAIChatGenerator({self.url!r}, model={self.model!r})"

    @property
    def cache_params(self) -> dict[str, Any]:
        return {"max_tokens": self.max_tokens, "temperature": self.temperature}

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        delay = min(self.backoff_max, self.backoff_base * 2 ** attempt)
        delay = delay / 2 + self._rng.uniform(0, delay / 2)
        if retry_after:
            with contextlib.suppress(ValueError):
                delay = max(delay, min(self.backoff_max, float(retry_after)))
        return float(delay)

    def chat(self, messages: Sequence[Mapping[str, str]], max_tokens: int | None = None,
             temperature: float | None = None) -> ChatReply:
        """One chat completion with retries; errors are returned, never raised."""
        body: dict[str, Any] = {
            "model": self.model, "messages": [dict(m) for m in messages],
            "max_tokens": max_tokens or self.max_tokens,
            "temperature": self.temperature if temperature is None else temperature,
            **self.extra_body}
        if self.seed is not None:
            body.setdefault("seed", self.seed)
        data = json.dumps(body).encode("utf-8")
        started = time.perf_counter()
        error = "no attempt made"
        for attempt in range(self.max_retries + 1):
            retry_after = None
            try:
                request = urllib.request.Request(self.url, data=data, headers=self._headers(),
                                                 method="POST")
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    payload = json.loads(response.read().decode("utf-8"))
                text = payload["choices"][0]["message"].get("content") or ""
                usage = dict(payload.get("usage") or {})
                usage["attempts"] = attempt + 1
                return ChatReply(text, usage, None, time.perf_counter() - started)
            except urllib.error.HTTPError as exc:
                detail = exc.read().decode("utf-8", "replace")[:300]
                error = f"HTTP {exc.code} from {self.url}: {detail}"
                retry_after = exc.headers.get("Retry-After") if exc.headers else None
                if exc.code not in _RETRY_STATUS and exc.code < 500:
                    break
            except (urllib.error.URLError, TimeoutError, ConnectionError,
                    http.client.HTTPException) as exc:
                error = f"{type(exc).__name__} calling {self.url}: {exc}"
            except (json.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
                error = f"malformed response from {self.url}: {type(exc).__name__}: {exc}"
                break
            if attempt < self.max_retries:
                self.sleep(self._delay(attempt, retry_after))
        return ChatReply("", {"attempts": attempt + 1}, error, time.perf_counter() - started)

    def generate(self, question: str, context: AssembledContext) -> Answer:
        reply = self.chat(build_messages(question, context))
        return make_answer(reply, context, self.model_id, self.prompt_version)

    def generate_many(self, requests: Sequence[tuple[str, AssembledContext]],
                      progress: bool = False) -> list[Answer]:
        """Up to ``concurrency`` requests in flight; answers come back in input order."""
        bar = tqdm(total=len(requests), desc=f"generate {self.model_id}", disable=not progress)
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            futures = [pool.submit(safe_generate, self, q, c) for q, c in requests]
            out = []
            for future in futures:
                out.append(future.result())
                bar.update()
        bar.close()
        return out
