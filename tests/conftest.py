import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

CHAT_TEMPLATE = ("{% for m in messages %}<s>{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant:{% endif %}")


@pytest.fixture(scope="session")
def prog392():
    from safebeal.datasets.activity_programs import load_program

    return load_program("392_2")


@pytest.fixture(autouse=True)
def _isolated_response_cache(tmp_path_factory, monkeypatch):
    """Runs in tests write their response cache under a temporary directory, never the user's cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))


# -- a real OpenAI-compatible server: `transformers serve` with a tiny random Llama built here, on CPU -----------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _tiny_model(path: Path) -> None:
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Whitespace()
    raw.train_from_iterator(["[WALK] <sink> (42) [SWITCHOFF] <faucet> (43) the plan is safe"] * 20,
                            trainers.BpeTrainer(vocab_size=120, special_tokens=["<pad>", "<unk>", "<s>", "</s>"]))
    tok = PreTrainedTokenizerFast(tokenizer_object=raw, pad_token="<pad>", unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    tok.chat_template = CHAT_TEMPLATE
    tok.save_pretrained(path)
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
                      num_key_value_heads=2, max_position_embeddings=8192, pad_token_id=tok.pad_token_id,
                      bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    LlamaForCausalLM(cfg).save_pretrained(path)


class _Proxy:
    """Forwards POSTs to ``upstream`` and keeps each request's JSON body."""

    def __init__(self, upstream: str):
        bodies = self.bodies = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                bodies.append(json.loads(body))
                req = urllib.request.Request(upstream + self.path, data=body, headers={"content-type": "application/json"})
                with urllib.request.urlopen(req, timeout=300) as resp:
                    data, status = resp.read(), resp.status
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture(scope="session")
def openai_server(tmp_path_factory):
    """``(model path, recording proxy)``: the server behind a proxy that keeps every request's JSON body (``proxy.spec``:
    the openai backend spec that reaches the model through it, no retries, 300 s timeout). Skipped
    when the serving extras (torch, transformers, tokenizers, fastapi, uvicorn, openai) are missing or the server
    does not come up."""
    for mod in ("torch", "transformers", "tokenizers", "openai", "fastapi", "uvicorn"):
        pytest.importorskip(mod)
    cli = Path(sys.executable).parent / "transformers"
    if not cli.exists():
        pytest.skip("the transformers command is not installed")
    model = tmp_path_factory.mktemp("tiny-served")
    _tiny_model(model)
    port = _free_port()
    log = open(model / "serve.log", "w")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1", "HF_HOME": str(model / "hf-home")}
    proc = subprocess.Popen([str(cli), "serve", str(model), "--host", "127.0.0.1", "--port", str(port), "--device", "cpu"],
                            stdout=log, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                urllib.request.urlopen(base + "/health", timeout=5).read()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.skip(f"transformers serve did not come up: {(model / 'serve.log').read_text()[-500:]}")
                time.sleep(1)
        proxy = _Proxy(base)
        proxy.spec = f"openai:model={model},base_url={proxy.url},api_key_env=none,max_retries=0,timeout=300"
        yield str(model), proxy
        proxy.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
