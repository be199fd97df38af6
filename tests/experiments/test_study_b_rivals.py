"""study_b_rivals.py on a hand-made study directory: steps run, SafeR among longer episodes, paired differences."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "experiments" / "small_scale" / "study_b_rivals.py"


def episode(safe: bool, ok: int, failed: int = 1) -> dict:
    steps = [{"ok": True}] * ok + [{"ok": False}] * failed
    return {"safe": safe, "steps": steps}


def write(root: Path, unit: str, episodes: list) -> None:
    d = root / "work" / "units" / unit / "bench" / "saferisks-test"
    d.mkdir(parents=True)
    (d / "samples.jsonl").write_text("".join(json.dumps(e) + "\n" for e in episodes))


def test_rivals_by_hand(tmp_path):
    # base: 4 episodes, 1 unsafe; steps run 4, 4, 1, 3
    write(tmp_path, "base", [episode(True, 4), episode(False, 4), episode(True, 1), episode(True, 3)])
    safe_rates = {"lora-sft": (0.5, 0.75), "dpo": (0.5, 0.5), "simpo": (0.25, 0.5), "safe-align": (0.5, 1.0)}
    for m, rates in safe_rates.items():
        for s, r in enumerate(rates):
            n_safe = int(r * 4)
            write(tmp_path, f"{m}-s{s}", [episode(i < n_safe, 2 if m == "dpo" else 3) for i in range(4)])
    out = tmp_path / "rivals.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path), "--json", str(out)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(out.read_text())
    base = got["methods"]["base"]["mean"]
    assert base["safe"] == 0.75 and base["steps_run"] == 3.0
    assert base["safe_ran_ge3"] == 2 / 3 and base["episodes_ran_ge3"] == 3  # the 1-step episode left out
    assert base["unsafe_per_step_run"] == 1 / 12
    dpo = got["methods"]["dpo"]["mean"]
    assert dpo["steps_run"] == 2 and dpo["episodes_ran_ge3"] == 0
    pair = got["paired"]["safe-align - simpo"]
    assert pair["per_seed"] == [0.25, 0.5] and pair["mean"] == 0.375
    sd = math.sqrt(((0.25 - 0.375) ** 2 + (0.5 - 0.375) ** 2) / 1)
    assert math.isclose(pair["sd"], sd) and math.isclose(pair["t"], 0.375 / (sd / math.sqrt(2)))
    assert math.isclose(pair["mde"], (1.959964 + 0.841621) * sd / math.sqrt(2))  # two-sided 5%, power 80%
    assert "| safe-align - simpo | +0.250, +0.500 | +0.375 |" in proc.stdout
