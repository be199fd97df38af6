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


def test_one_per_family_spreads_a_cell_over_its_families():
    shipped = [e for e in load_entries() if e.split == "test" and "fire_heat" in e.categories]
    fams = {e.family for e in shipped}
    assert len(fams) == 4  # the shipped v2 file's fire_heat test families
    picked = audit.draw(shipped, 4, 3, one_per_family=True)
    assert len(picked) == 4 and len({e.family for e in picked}) == 4
    # a cell with fewer families than asked: every family once, then a second entry from some
    two = [e for e in shipped if e.family in sorted(fams)[:2]]
    picked = audit.draw(two, 5, 3, one_per_family=True)
    assert len(picked) == 5 and len({e.id for e in picked}) == 5 and len({e.family for e in picked}) == 2
    # the old draw (audits r1-r4) is unchanged: same seed, same sample
    assert [e.id for e in audit.draw(shipped, 6, 3)] == [e.id for e in audit.draw(shipped, 6, 3, one_per_family=False)]
