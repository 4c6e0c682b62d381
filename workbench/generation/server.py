"""A minimal OpenAI-compatible server for the local model (stdlib only).

    python -m workbench.generation.server --port 8011          # --port 0 picks a free port

Endpoints: ``GET /v1/models``, ``POST /v1/chat/completions`` (non-streaming; greedy, so
``temperature`` is ignored), ``GET /health``. The model loads before the server answers;
the line ``workbench.generation.server listening on http://HOST:PORT`` on stdout says it is ready.
Requests are served by threads but generation is serialised (one model, one lock), so any
OpenAI-compatible client, :class:`~workbench.generation.OpenAIChatGenerator` included, can
talk to the bundled SmolLM2 exactly as it would to a remote endpoint.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from workbench.generation.local import LocalGenerator

MAX_BODY = 4 * 1024 * 1024


class _Handler(BaseHTTPRequestHandler):
    server: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        self._send(status, {"error": {"message": message, "type": kind}})

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            self._send(200, {"object": "list", "data": [
                {"id": self.server.model_name, "object": "model", "created": 0,
                 "owned_by": "workbench"}]})
        elif path in ("/health", ""):
            self._send(200, {"status": "ok", "model": self.server.model_name})
        else:
            self._error(404, f"no route {self.path}; try /v1/models or /v1/chat/completions")

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, f"no route {self.path}; POST /v1/chat/completions")
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length <= 0 or length > MAX_BODY:
            self._error(400, "missing or oversized JSON body")
            return
        try:
            body = json.loads(self.rfile.read(length).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._error(400, f"body is not valid JSON: {exc}")
            return
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list) or not messages or not all(
                isinstance(m, dict) and isinstance(m.get("role"), str)
                and isinstance(m.get("content"), str) for m in messages):
            self._error(400, "messages must be a non-empty list of {role, content} strings")
            return
        if body.get("stream"):
            self._error(400, "streaming is not supported by workbench.generation.server; "
                             "send stream=false")
            return
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens")
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
            self._error(400, "max_tokens must be a positive integer")
            return
        limit = min(int(max_tokens or self.server.generator.max_new_tokens),
                    self.server.max_tokens_cap)
        reply = self.server.generator.chat(messages, max_tokens=limit)
        if reply.error:
            self._error(500, reply.error, "server_error")
            return
        usage = {"prompt_tokens": int(reply.usage.get("prompt_tokens", 0)),
                 "completion_tokens": int(reply.usage.get("completion_tokens", 0))}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        finish = "length" if usage["completion_tokens"] >= limit else "stop"
        self._send(200, {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion",
            "created": int(time.time()), "model": self.server.model_name,
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": reply.text}}],
            "usage": usage})


class ModelServer(ThreadingHTTPServer):
    """ThreadingHTTPServer holding one loaded :class:`LocalGenerator`."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], generator: LocalGenerator,
                 *, model_name: str | None = None, max_tokens_cap: int = 512,
                 verbose: bool = False):
        super().__init__(address, _Handler)
        self.generator = generator
        self.model_name = model_name or generator.model_id
        self.max_tokens_cap = max_tokens_cap
        self.verbose = verbose


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workbench.generation.server",
                                     description="OpenAI-compatible server for the local model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8011, help="0 picks a free port")
    parser.add_argument("--model", default=None,
                        help="a .gguf file or transformers folder (default: bundled SmolLM2)")
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--name", default=None, help="model name reported to clients")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    args = parser.parse_args(argv)
    generator = LocalGenerator(args.model, max_new_tokens=args.max_new_tokens,
                               threads=args.threads)
    generator.load()
    server = ModelServer((args.host, args.port), generator, model_name=args.name,
                         verbose=args.verbose)
    host, port = str(server.server_address[0]), int(server.server_address[1])
    print(f"workbench.generation.server listening on http://{host}:{port} "
          f"model={server.model_name} (loaded in {generator.load_seconds:.1f}s)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
