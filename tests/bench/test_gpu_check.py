"""benchmarks/gpu_check.py (issue 32, item 5): on a machine without CUDA it runs the CPU half of the recipe and
reports the GPU checks as skipped; its comparisons are checked on hand values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from script_helpers import load_script

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.train


def _module():
    return load_script(ROOT / "benchmarks" / "gpu_check.py")


def test_max_rel_diff_hand_values():
    m = _module()
    assert m.max_rel_diff([1.0, 2.2], [1.0, 2.0]) == pytest.approx(0.1)
    assert m.max_rel_diff([1.0], [1.0, 2.0]) is None and m.max_rel_diff([], []) is None


def test_cpu_path_runs_and_gpu_checks_are_reported_skipped(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("peft")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # the same on a GPU machine
    assert _module().main(["--out", str(tmp_path), "--steps", "2"]) == 0
    rep = json.loads((tmp_path / "gpu_check.json").read_text())
    assert rep["cuda"] is None and rep["passed"] is True and rep["pairs"] >= 2
    cpu = rep["checks"]["train_cpu"]
    assert cpu["passed"] and len(cpu["losses"]) == 2 and all(0 < x < 20 for x in cpu["losses"])
    assert rep["checks"]["generate_hf_cpu"]["passed"] and len(rep["checks"]["generate_hf_cpu"]["texts"]) == 2
    for name in ("train_cuda_fp32", "train_cuda_bf16", "generate_hf_cuda", "generate_vllm"):
        assert rep["checks"][name] == {"passed": None, "reason": "no CUDA device"}
    # the loss the CPU run logged is what train_log.jsonl holds
    assert _module().losses(tmp_path / "cpu") == cpu["losses"]
