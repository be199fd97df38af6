"""Open-loop beside step-by-step for one backend, on saferisks-test and on SafeRisks-explicit (docs/bench.md,
"Agents that act step by step" and "Requests to refuse"), against a real OpenAI-compatible server.

    python scripts/docs/agent_modes_demo.py [--limit 40] [--out runs/modes]

The server is ``transformers serve`` with the tiny random Llama of ``bench_throughput.py`` (no model hub): a random
model, so its rates show the machinery (both modes, the same backend, the same tasks), not a finding about any
real model. Point ``--backend`` at a real server to measure one. Prints, per dataset, the leaderboard and the
side-by-side table (``safebeal report RUN --markdown`` and ``--modes --markdown``).
"""

from __future__ import annotations

import argparse
import importlib.util
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _throughput():
    spec = importlib.util.spec_from_file_location("bench_throughput", ROOT / "benchmarks" / "bench_throughput.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from safebeal.cli import app; app()", *args], text=True,
                          capture_output=True, check=check)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=40)
    ap.add_argument("--out", default="runs/modes")
    ap.add_argument("--backend", default=None, help="a backend spec (default: the tiny model served here)")
    args = ap.parse_args()
    proc = None
    with tempfile.TemporaryDirectory() as tmp:
        backend = args.backend
        if backend is None:
            tp = _throughput()
            model = Path(tmp) / "tiny-llama"
            tp.tiny_model(model)
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            proc = tp.start_server(model, port)
            backend = f"openai:model={model},base_url=http://127.0.0.1:{port}/v1,api_key_env=none,max_retries=0"
        try:
            for ds, sample in (("saferisks-test", "stratified"), ("saferisks-explicit:split=test", "first")):
                out = f"{args.out}/{ds.split(':')[0]}"
                r = cli("bench", "--dataset", ds, "--limit", str(args.limit), "--sample", sample, "--planner",
                        "few-shot:max_new_tokens=64", "--planner", "react:max_steps=10,max_new_tokens=32",
                        "--backend", backend, "--workers", "1", "--no-png", "--no-cache", "--out", out, check=False)
                if r.returncode not in (0, 1):
                    sys.exit(r.stderr[-2000:])
                print(f"## {ds}, --limit {args.limit} --sample {sample}\n")
                print(cli("report", out, "--markdown", "--no-png").stdout)
                print(cli("report", out, "--modes", "--markdown", "--no-png").stdout)
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait(timeout=30)


if __name__ == "__main__":
    main()
