"""A tiny OpenAI-compatible chat server on 127.0.0.1 for runner tests: counts requests, scripts replies.

``script(n, body)`` returns ``(status, json_body, delay_s)`` for the n-th request (0-based); the default answers
every request with a fixed plan. ``requests`` holds every request body, ``completed`` the bodies whose reply was
sent in full.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

PLAN = "[WALK] <kitchen> (11)\n[FIND] <fridge> (12)"


def completion(text: str, finish: str = "stop") -> dict:
    return {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
    }


def error(message: str, kind: str = "server_error") -> dict:
    return {"error": {"message": message, "type": kind, "code": None, "param": None}}


class FakeServer:
    def __init__(self, script=None):
        self.script = script or (lambda n, body: (200, completion(PLAN), 0))
        self.requests: list = []
        self.completed: list = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                with outer.lock:
                    n = len(outer.requests)
                    outer.requests.append(body)
                status, payload, delay = outer.script(n, body)
                if delay:
                    time.sleep(delay)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    return
                with outer.lock:
                    outer.completed.append(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        if self.thread.is_alive():
            self.httpd.shutdown()
            self.httpd.server_close()

    def task_ids(self, bodies=None) -> list:
        """The task of each request, read from its user message (``Task: ...`` line)."""
        return [b["messages"][-1]["content"].splitlines()[0] for b in (self.requests if bodies is None else bodies)]


# -- shared by the bench tests that run against it ------------------------------------------------------------
@pytest.fixture
def server_factory(monkeypatch):
    """Start fake servers (``make(script)``) with proxies and OPENAI_BASE_URL unset; all closed at the end."""
    pytest.importorskip("openai")
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    servers = []

    def make(script=None):
        s = FakeServer(script)
        servers.append(s)
        return s

    yield make
    for s in servers:
        s.close()


def backend(server, extra: str = "") -> str:
    """The openai backend spec for a fake server: no key, no retries, 2 requests at a time."""
    return f"openai:model=m,base_url={server.url},api_key_env=none,max_retries=0,concurrency=2" + extra
