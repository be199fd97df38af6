"""Kill a ``safebeal bench`` subprocess with SIGKILL as soon as its samples.jsonl holds a complete sample, and read
what it kept: the kill-and-resume tests of the runner, the agents and the real server share it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import List, Sequence, Tuple

SRC = Path(__file__).resolve().parents[1] / "src"


def bench_env() -> dict:
    """The environment of a bench subprocess: this checkout's source first, one thread."""
    return {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"}


def written(p: Path) -> int:
    try:
        return p.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def kill_once_written(cmd: Sequence[str], samples: Path, timeout: float = 120) -> Tuple[int, List[dict]]:
    """Run ``cmd``; SIGKILL it once ``samples`` holds a line. Returns (lines seen when killed, the complete records
    kept: a record cut by the kill may follow them). Fails when the run ended before writing anything."""
    proc = subprocess.Popen(list(cmd), env=bench_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen = 0
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            seen = written(samples)
            if seen:
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.01)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, ("the run ended before any sample was written", proc.stderr.read()[-2000:])
    raw = samples.read_bytes()
    return seen, [json.loads(x) for x in raw[: raw.rfind(b"\n") + 1].decode().splitlines()]


def resume(cmd: Sequence[str], timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), env=bench_env(), capture_output=True, text=True, timeout=timeout)
