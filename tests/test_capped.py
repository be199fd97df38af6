"""Every input is read with a size cap, devices included (issue 34, item 13): the helper by hand, then the four
inputs the probe fed /dev/zero, each in a subprocess under a memory limit (before the cap they read until memory ran
out): one line, exit 2, quickly."""

from __future__ import annotations

import gzip
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from safebeal.capped import CappedReadError, read_capped, read_capped_text
from safebeal.errors import SafebealError
from safebeal.jsonl import read_text

SRC = Path(__file__).resolve().parents[1] / "src"


def test_read_capped_by_hand(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"x" * 10)
    assert read_capped(p, 10) == b"x" * 10  # exactly the cap is allowed
    with pytest.raises(CappedReadError, match=r"f: file over 9 bytes: refused") as e:
        read_capped(p, 9)
    assert e.value.reason == "file over 9 bytes: refused (the cap holds for devices and pipes too)"
    with pytest.raises(CappedReadError, match="nope: plan file not found"):
        read_capped(tmp_path / "nope", 9, what="plan file")
    with pytest.raises(CappedReadError, match="is a directory"):
        read_capped(tmp_path, 9)
    (tmp_path / "bad").write_bytes(b"ok\xff")
    with pytest.raises(SafebealError, match=r"bad: not UTF-8 text \(invalid start byte at byte 2\)"):
        read_capped_text(tmp_path / "bad", 9, SafebealError)


def test_a_device_is_capped_too():
    t = time.perf_counter()
    with pytest.raises(CappedReadError, match=r"/dev/zero: file over 1 MB"):
        read_capped("/dev/zero", 2**20)
    assert time.perf_counter() - t < 2


def test_gzip_is_capped_after_decompression(tmp_path):
    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip.compress(b"\n" * 5_000_000))  # 5 MB of output from about 5 KB
    assert bomb.stat().st_size < 10_000
    with pytest.raises(SafebealError, match=r"bomb.jsonl.gz: file \(decompressed\) over 1 MB"):
        read_text(bomb, cap=2**20)
    two = tmp_path / "two.gz"  # two gzip members, as `cat a.gz b.gz` makes: both read
    two.write_bytes(gzip.compress(b"a\n") + gzip.compress(b"b\n"))
    assert read_text(two) == "a\nb\n"
    cut = tmp_path / "cut.gz"
    cut.write_bytes(gzip.compress(b"abc" * 100)[:-12])
    with pytest.raises(SafebealError, match="cut.gz: corrupt gzip data"):
        read_text(cut)


def _limit_memory() -> None:  # 1.5 GB: before the cap, each command below ran into it (MemoryError, exit 1)
    resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, 1536 * 2**20))


@pytest.mark.parametrize("args, needle", [
    (["check", "--scene", "activity:392_2", "--plan", "/dev/zero"], "/dev/zero: plan file over 4,000,000 bytes"),
    (["check", "--rules", "/dev/zero"], "/dev/zero: file over 2 MB"),
    (["check", "--objects", "/dev/zero"], "/dev/zero: file over 2 MB"),
    (["bench", "--planner", "replay:path=/dev/zero", "--limit", "1", "--no-png"], "/dev/zero: file over 512 MB"),
])
def test_dev_zero_ends_in_one_line(args, needle, tmp_path):
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    if args[0] == "bench":
        args = args + ["--out", str(tmp_path / "run")]
    env = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"}
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", "from safebeal.cli import run; run()", *args], env=env,
                       capture_output=True, text=True, timeout=60, preexec_fn=_limit_memory)
    took = time.perf_counter() - t
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], lines
    assert took < 20, took
