"""scripts/saferisks/audit_sample.py: a sample drawn from another SafeRisks file is scored against that file."""

from __future__ import annotations

import json

from safebeal.datasets.saferisks import dump_entries, load_entries
from pathlib import Path

from tests.script_helpers import load_script

audit = load_script(Path("scripts/saferisks/audit_sample.py"))


def test_sample_and_score_another_file(tmp_path, capsys):
    shipped = load_entries()
    picked = [next(e for e in shipped if e.split == s and "fire_heat" in e.categories) for s in ("train", "test")]
    # ids the shipped file does not have: scoring against it would not find them
    renamed = [e.model_copy(update={"id": f"elsewhere.{e.split}/000"}) for e in picked]
    path = tmp_path / "other.jsonl"
    dump_entries(renamed, path)
    out = tmp_path / "a"
    assert audit.main(["--per-cell", "1", "--seed", "0", "--out", str(out), "--path", str(path)]) == 0
    key = json.loads((out / "key.json").read_text())
    assert sorted(key.values()) == ["elsewhere.test/000", "elsewhere.train/000"]
    rows = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    for r in rows:
        ok = key[r["key"]].startswith("elsewhere.train")
        r.update({c: True for c in audit.CHECKS}, natural_request=ok, reason="hand-made")
        r["pass"] = ok
    (out / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert audit.main(["--score", str(out), "--path", str(path)]) == 0
    printed = capsys.readouterr().out
    assert "fire_heat       test  0/1" in printed and "fire_heat       train 1/1" in printed
    doc = json.loads((out / "audit.json").read_text())
    assert doc["passed"] == 1 and {r["split"] for r in doc["rows"]} == {"train", "test"}
    assert [r["failed"] for r in doc["rows"] if not r["pass"]] == [["natural_request"]]
