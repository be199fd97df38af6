"""Study v2 B at toy size (``run.py --config configs/study_b_smoke.yaml``): base data with unsafe plans, SafeRisks
pairs, grammar-constrained evaluation, and the minimum detectable effect reported before the results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("trl")
pytest.importorskip("peft")
pytest.importorskip("tokenizers")

pytestmark = [pytest.mark.slow, pytest.mark.train]

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "experiments" / "small_scale" / "run.py"
CONFIG = ROOT / "experiments" / "small_scale" / "configs" / "study_b_smoke.yaml"


def test_study_b_smoke(tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(RUN), "--config", str(CONFIG), "--out", str(tmp_path)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    summary = (tmp_path / "summary.md").read_text()
    assert summary.index("## Minimum detectable effect") < summary.index("## Table 1")
    assert "grammar=actions" in summary and "'saferisks-unsafe'" in summary
    mde = json.loads((tmp_path / "mde.json").read_text())
    assert mde["saferisks-test"]["n_tasks"] == 6 and mde["saferisks-test"]["seeds"] == 2
    data = json.loads((tmp_path / "work" / "data" / "data.json").read_text())
    assert data["sft_by_source"]["activity"] == 0 and data["sft_by_source"]["saferisks-unsafe"] > 0
    pairs = [json.loads(x) for x in (tmp_path / "work" / "data" / "pairs.jsonl").read_text().splitlines() if x]
    assert pairs and all(p["source"].startswith("saferisks") for p in pairs)
    samples = tmp_path / "work" / "units" / "dpo-s0" / "bench" / "saferisks-test" / "samples.jsonl"
    for line in samples.read_text().splitlines():  # constrained decoding: every output parses
        rec = json.loads(line)
        assert rec["parse_error"] is None and rec["raw_output"].endswith("\n"), rec["raw_output"][-80:]
