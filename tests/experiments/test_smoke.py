"""The whole small-scale study at toy size (``run.py --smoke``): every stage produces its files and sane numbers.

The checks are recomputed here from the files the run wrote, not read from its own checks.json: every rate in
[0, 1], every training loss falls, Table 1 has the five methods with one row per seed, Table 2 both normalisers,
the pairs and the benchmark both use the compact prompt.
"""

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
RATES = ("executable_rate", "success_rate", "safe_rate", "safe_rate_at_success", "safe_rate_parsed")
FILES = ("summary.md", "table1.json", "table2.json", "checks.json", "results.json", "timings.json",
         "train_curves.json", "table1.png", "violations.png", "losses.png", "alpha_sweep.png")


def run_study(*args: str) -> subprocess.CompletedProcess:
    """``run.py ARGS`` in its own process; it must exit 0."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(RUN), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke")
    return out, run_study("--smoke", "--out", str(out)).stdout


def load(out: Path, name: str):
    return json.loads((out / name).read_text())


def test_every_stage_writes_its_files(smoke):
    out, stdout = smoke
    for name in FILES:
        assert (out / name).stat().st_size > 0, name
    for png in [n for n in FILES if n.endswith(".png")]:
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for stage in ("data", "model", "base", "units", "report"):
        assert f"stage {stage} done" in stdout
    timings = load(out, "timings.json")
    assert set(timings["stages"]) >= {"data", "model", "base", "units", "report", "total"}
    work = out / "work"
    assert (work / "base" / "model.safetensors").exists() and (work / "base" / "tokenizer.json").exists()
    assert load(out, "checks.json")["ok"] is True


def test_tables_have_every_method_seed_and_sweep_point(smoke):
    out, _ = smoke
    t1 = load(out, "table1.json")
    assert t1["seeds"] == [0, 1]
    assert list(t1["rows"]) == ["Base (SFT from scratch)", "Lora", "DPO", "SimPO", "Safe-Align"]
    assert t1["rows"]["Base (SFT from scratch)"]["seeds"] == [None]
    for label in ("Lora", "DPO", "SimPO", "Safe-Align"):
        assert t1["rows"][label]["seeds"] == [0, 1]
        for ds in t1["datasets"]:
            if ds == "virtualhome-unseen":
                continue
            assert t1["rows"][label][ds]["safe_rate"]["n"] == 2
            assert t1["rows"][label][ds]["n_tasks"] == 3  # eval.limit in smoke.yaml
    t2 = load(out, "table2.json")
    assert set(t2["rows"]) == {"length", "weighted"}
    for norm in ("length", "weighted"):
        assert [e["alpha"] for e in t2["rows"][norm].values()] == [0.0, 1.0]


def test_every_rate_is_in_the_unit_interval(smoke):
    out, _ = smoke
    units = load(out, "results.json")["units"]
    assert len(units) == 1 + 4 * 2 + 4  # base, 4 methods x 2 seeds, 2 alphas x 2 normalisers
    seen = judged = 0
    for u in units:
        for ds, row in u["eval"].items():
            judged += 3 if row["n"] else 0  # executable, success and safe rates exist whenever there are tasks
            for r in RATES:
                v = row[r]
                if v is not None:
                    assert 0.0 <= v <= 1.0, (u["unit"]["name"], ds, r, v)
                    iv = row["intervals"][r]
                    if iv["low"] is None:  # a cluster bootstrap over a single task family claims no interval
                        assert iv["method"] == "cluster_bootstrap" and iv["clusters"] < 2, iv
                    else:
                        assert 0.0 <= iv["low"] <= v <= iv["high"] <= 1.0
                    assert iv["k"] / iv["n"] == pytest.approx(v)
                    seen += 1
            if row["rouge_l"] is not None:
                assert 0.0 <= row["rouge_l"] <= 1.0
    assert judged >= 3 * (1 + 8) * 3 and seen >= judged


def test_every_training_loss_falls(smoke):
    out, _ = smoke
    curves = load(out, "train_curves.json")
    assert len(curves) == 1 + 8 + 4
    for name, c in curves.items():
        assert all(isinstance(x, float) and x == x for x in c), name
        q = max(1, len(c) // 4)
        assert sum(c[-q:]) / q < sum(c[:q]) / q, (name, c)
    assert len(curves["base"]) == 30 and all(len(c) == 8 for n, c in curves.items() if n != "base")
    assert curves["dpo-s0"][0] == pytest.approx(0.6931, abs=1e-3)  # DPO starts at log 2: policy == reference


def test_pairs_and_benchmark_use_the_compact_prompt(smoke):
    out, _ = smoke
    pairs = [json.loads(l) for l in (out / "work" / "data" / "pairs.jsonl").read_text().splitlines()]
    assert len(pairs) == 4
    for p in pairs:
        assert len(p["prompt"]) == 1 and p["prompt"][0]["content"].startswith("Task: ")
        assert "\nYou are in <" in p["prompt"][0]["content"] and " Objects: <" in p["prompt"][0]["content"]
        k = p["prefix_actions"]
        assert p["chosen"].split("\n")[:k] == p["rejected"].split("\n")[:k]
    cfg = json.loads((out / "work" / "units" / "dpo-s0" / "bench" / "activity-test" / "config.json").read_text())
    (pc,) = cfg["planner_configs"].values()
    assert pc["template"] == "compact" and pc["generation"]["max_tokens"] == 48 and pc["backend"]["device"] == "cpu"


def test_every_units_samples_are_kept_and_rebuild_the_tables(smoke, tmp_path):
    """Issue 32, item 4: each unit's per-episode samples are kept beside the tables (gzip, byte-stable), and
    ``--report-only --from-samples`` recomputes every evaluation row from them: equal to results.json."""
    import gzip
    import shutil

    out, _ = smoke
    results = load(out, "results.json")
    for r in results["units"]:
        name = r["unit"]["name"]
        for ds in r["unit"]["datasets"]:
            kept = out / "samples" / name / f"{ds}.jsonl.gz"
            src = out / "work" / "units" / name / "bench" / ds / "samples.jsonl"
            assert gzip.decompress(kept.read_bytes()) == src.read_bytes(), kept
    # a copy without the work folder (what a reader gets): the tables come back from the samples alone
    copy = tmp_path / "copy"
    shutil.copytree(out, copy, ignore=shutil.ignore_patterns("work"))
    before = (copy / "table1.json").read_text()
    proc = run_study("--smoke", "--out", str(copy), "--report-only", "--from-samples")
    assert "every value equal to results.json" in proc.stdout + proc.stderr
    assert (copy / "table1.json").read_text() == before
    # a changed sample is found and named, and the exit is 1
    unit = results["units"][-1]["unit"]
    f = copy / "samples" / unit["name"] / f"{unit['datasets'][0]}.jsonl.gz"
    lines = gzip.decompress(f.read_bytes()).decode().splitlines()
    f.write_bytes(gzip.compress(("\n".join(lines[1:]) + "\n").encode()))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    bad = subprocess.run([sys.executable, str(RUN), "--smoke", "--out", str(copy), "--report-only", "--from-samples"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert bad.returncode == 1 and f"{unit['name']} {unit['datasets'][0]} n: recorded" in bad.stdout + bad.stderr


CONFIG_B = ROOT / "experiments" / "small_scale" / "configs" / "study_b_smoke.yaml"


def test_study_b_smoke(tmp_path):
    """Study v2 B at toy size (``configs/study_b_smoke.yaml``): base data with unsafe plans, SafeRisks pairs,
    grammar-constrained evaluation, and the minimum detectable effect reported before the results."""
    run_study("--config", str(CONFIG_B), "--out", str(tmp_path))
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
