"""audits/pair_naturalness.py: the blind naturalness sample hides where each plan came from, and the score counts
the verdicts per source against the controls (hand-worked)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from script_helpers import load_script

ROOT = Path(__file__).resolve().parents[2]


def _rec(i, source, task):
    prompt = [{"role": "system", "content": "sys"}, {"role": "user", "content": f"Task: request {i}\nObjects: ..."}]
    return {"prompt": prompt, "chosen": [{"role": "assistant", "content": f"[WALK] <a> ({i})\n[SWITCHOFF] <a> ({i})"}],
            "rejected": [{"role": "assistant", "content": f"[WALK] <a> ({i})\n[RUN] <b> ({i})"}], "source": source,
            "task_id": task}


def test_sample_is_blind_and_score_counts_by_source(tmp_path):
    m = load_script(ROOT / "audits" / "pair_naturalness.py")
    pairs = tmp_path / "pairs"
    pairs.mkdir()
    rows = ([_rec(i, "mutation:omit_step", f"t{i}") for i in range(4)] + [_rec(10 + i, "saferisks:order", f"u{i}") for i in range(4)]
            + [_rec(20 + i, "llm:x", f"v{i}") for i in range(3)])
    (pairs / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "audit"
    h1 = m.sample(pairs, out, n=4, controls=2, seed=1)
    key = json.loads((out / "key.json").read_text())
    # 2 per builder source (round-robin), none from the llm source; controls are chosen plans of other tasks
    assert sorted(e["source"] for e in key) == ["chosen", "chosen", "mutation:omit_step", "mutation:omit_step",
                                                "saferisks:order", "saferisks:order"]
    assert not {e["task_id"] for e in key if e["kind"] == "control"} & {e["task_id"] for e in key if e["kind"] == "rejected"}
    md = (out / "sample.md").read_text()
    assert "mutation" not in md and "saferisks" not in md and "control" not in md and md.count("## Item ") == 6
    assert m.sample(pairs, tmp_path / "again", n=4, controls=2, seed=1)[0] == h1[0]  # the same seed, the same file
    verdicts = [{"item": e["item"], "natural": e["source"] != "mutation:omit_step", "reason": "r"} for e in key]
    (out / "verdicts.jsonl").write_text("".join(json.dumps(v) + "\n" for v in verdicts[:-1]))
    res = m.score(out)
    assert res["judged"] == 5 and res["missing"] == [key[-1]["item"]]
    g = res["groups"]
    assert g["mutation:omit_step"]["natural"] == 0 and g["saferisks:order"]["n"] + g["mutation:omit_step"]["n"] + \
        g.get("control", {"n": 0})["n"] == 5
    assert m.wilson(0, 0) == (0.0, 1.0) and m.wilson(5, 10)[0] == pytest.approx(0.2366, abs=1e-4)
    (out / "verdicts.jsonl").write_text('{"item": 99, "natural": true}\n')
    with pytest.raises(SystemExit, match="verdicts.jsonl:1"):
        m.score(out)


def test_sample_can_audit_one_source(tmp_path):
    m = load_script(ROOT / "audits" / "pair_naturalness.py")
    pairs = tmp_path / "pairs"
    pairs.mkdir()
    rows = [_rec(i, "mutation:omit_step", f"t{i}") for i in range(4)] + [_rec(10 + i, "mutation:add_step", f"u{i}")
                                                                       for i in range(4)]
    (pairs / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    m.sample(pairs, tmp_path / "a", n=3, controls=2, seed=1, only=("mutation:add_step",))
    key = json.loads((tmp_path / "a" / "key.json").read_text())
    assert sorted(e["source"] for e in key) == ["chosen", "chosen"] + ["mutation:add_step"] * 3
