"""The blind golden set (tests/safety/blind/): frozen, its reviewed label fixes well-formed, and the detector's
agreement with it no lower than the figures recorded in docs/hazards.md (a regression floor, not a target)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from script_helpers import load_script

ROOT = Path(__file__).resolve().parents[2]
BLIND = ROOT / "tests" / "safety" / "blind"


def _agreement():
    return load_script(ROOT / "audits" / "blind_agreement.py")


def test_the_set_is_frozen():
    want = (BLIND / "FROZEN.sha256").read_text().split()[0]
    assert hashlib.sha256((BLIND / "cases.jsonl").read_bytes()).hexdigest() == want == \
        "d9e8080513818723de62d081c2b2a908b9d3d6635a8dc21e1d54e980a96ef749"


def test_label_fixes_are_reviewed_changes_of_real_cases():
    cases = {json.loads(line)["id"]: json.loads(line) for line in (BLIND / "cases.jsonl").read_text().splitlines()}
    fixes = yaml.safe_load((BLIND / "label_fixes.yaml").read_text())["fixes"]
    assert len({f["id"] for f in fixes}) == len(fixes) == 5
    for f in fixes:
        c = cases[f["id"]]
        assert (f["label"], sorted(f["categories"])) != (c["label"], sorted(c["categories"])), f["id"]
        assert f["label"] in ("safe", "unsafe") and len(f["reason"]) > 80, f["id"]
        assert (f["label"] == "safe") == (not f["categories"]), f["id"]


@pytest.fixture(scope="module")
def figures():
    mod = _agreement()
    return {fixes: mod.figures(mod.judge(mod.load_cases(fixes=fixes))) for fixes in (False, True)}


def test_agreement_does_not_fall_below_the_recorded_figures(figures):
    frozen, fixed = figures[False], figures[True]
    assert frozen["cases"] == 1104 and frozen["not_executable"] == 0
    assert frozen["verdict_agreement"] >= 0.946 and frozen["false_alarm_rate"] <= 0.015
    assert fixed["verdict_agreement"] >= 0.951 and fixed["unsafe_flagged"] >= 0.912
    assert fixed["category_recall"] >= 0.887 and fixed["false_alarm_rate"] <= 0.006


def test_another_frozen_set_is_judged_and_an_edited_one_refused(tmp_path, capsys):
    """``--set DIR`` judges any set in the same format: a stove left on (unsafe) and its twin switched off (safe)."""
    mod = _agreement()
    lines = (BLIND / "cases.jsonl").read_text().splitlines()[:2]  # blind-001 unsafe, blind-002 its safe twin
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n")
    digest = hashlib.sha256((tmp_path / "cases.jsonl").read_bytes()).hexdigest()
    (tmp_path / "FROZEN.sha256").write_text(f"{digest}  cases.jsonl\n")
    assert mod.main(["--set", str(tmp_path), "--json", str(tmp_path / "out.json")]) == 0
    f = json.loads((tmp_path / "out.json").read_text())["figures"]
    assert (f["cases"], f["unsafe"], f["safe"]) == (2, 1, 1)
    assert f["verdict_agreement"] == 1.0 and f["unsafe_flagged"] == 1.0 and f["false_alarm_rate"] == 0.0
    assert f"blind set {tmp_path.name}: 2 cases (1 unsafe, 1 safe), sha256 {digest[:16]}" in capsys.readouterr().out
    (tmp_path / "cases.jsonl").write_text(lines[0] + "\n")
    assert mod.main(["--set", str(tmp_path)]) == 2
    assert "does not match FROZEN.sha256" in capsys.readouterr().err
    assert mod.main(["--set", str(tmp_path / "nowhere")]) == 2
    assert "no cases.jsonl there" in capsys.readouterr().err


@pytest.mark.parametrize("name,digest", [
    ("blind_v3a", "119212d9ef4857e5bec94bff29f027ef8843a6c411c496d89f8900f492ce468b"),
    ("normal_use", "334b0217c97dbb78e612fc931c285d48a5e75df3fe1c13ea32742891c6f5adeb"),
    ("blind_v3b", "6055512a4e1720d3a31f2bd883847d7cfcf414178231d654f2a520c3e82c9e92"),
    ("blind_v3c", "535d569bdc9e23be7091fe56b496e529446e9eb11a16ecc7b241bdc5774527d6"),
    ("blind_v3d", "2ef821036fe27d0fb6a9255fe689c5ab98b99157e150fe7c48d22dfd0d485d46"),
    ("blind_v3e", "d2adf27196b73f60ccfd5bb6a512d2d8dda1b4c8aad5e08fdc58f0253e012862"),
    ("blind_v3f", "1d7df49a33739ec154ba81f5f843e6dc680e32b754ce35dd32011946beec457d"),
])
def test_the_outside_sets_are_frozen(name, digest):
    folder = ROOT / "tests" / "safety" / name
    assert hashlib.sha256((folder / "cases.jsonl").read_bytes()).hexdigest() == digest
    assert (folder / "FROZEN.sha256").read_text().split()[0] == digest


def test_outside_sets_do_not_fall_below_the_recorded_figures():
    """The outside sets (docs/hazards.md, "Blind sets from outside sources"): floors at the figures recorded there
    (agreeing cases, unsafe cases flagged, false alarms), and zero flags on the normal-use set."""
    mod = _agreement()
    floors = {  # set: (cases, unsafe, verdicts agreeing >=, unsafe flagged >=, false alarms <=)
        "blind_v3a": (199, 114, 197, 113, 1),
        "blind_v3b": (181, 101, 178, 98, 0),
        "blind_v3c": (200, 112, 193, 107, 2),
        "blind_v3d": (165, 98, 150, 90, 7),
        "blind_v3e": (163, 91, 154, 85, 3),
        "blind_v3f": (175, 102, 167, 97, 3),
    }
    for name, (n, unsafe, agree, flagged, alarms) in floors.items():
        f = mod.figures(mod.judge(mod.load_cases(ROOT / "tests" / "safety" / name)))
        assert (f["cases"], f["unsafe"], f["not_executable"]) == (n, unsafe, 0), name
        safe = n - unsafe
        assert round(f["verdict_agreement"] * n) >= agree and round(f["unsafe_flagged"] * unsafe) >= flagged, name
        assert round(f["false_alarm_rate"] * safe) <= alarms, name
    rows = mod.judge(mod.load_cases(ROOT / "tests" / "safety" / "normal_use"))
    assert len(rows) == 80 and sorted(r["id"] for r in rows if not r["safe"]) == []
