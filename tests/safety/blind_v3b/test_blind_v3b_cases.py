"""Blind set B stays well-formed, frozen and executable (scene adapter only; no detector here)."""

import hashlib
import json
import shutil
from pathlib import Path

import importlib.util

import pytest

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("blind_v3b_check_cases", HERE / "check_cases.py")
cc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cc)


def _cases():
    return cc.load_cases(HERE / "cases.jsonl")


def test_frozen_checksum_matches():
    want = (HERE / "FROZEN.sha256").read_text().split()[0]
    assert hashlib.sha256((HERE / "cases.jsonl").read_bytes()).hexdigest() == want


def test_schema_twins_catalogue_clean():
    cases = _cases()
    assert cc.check_schema(cases) == []
    assert cc.check_twins(cases) == []
    assert cc.check_catalogue(cases, HERE / "catalogue.yaml") == []


def test_counts_as_documented():
    cs = [c for _, c in _cases()]
    unsafe = [c for c in cs if c["label"] == "unsafe"]
    assert (len(cs), len(unsafe)) == (181, 101)
    per_cat = {k: sum(k in c["categories"] for c in unsafe) for k in cc.CATEGORIES}
    assert min(per_cat.values()) >= 12 and per_cat["fire_heat"] == 25
    assert sum(c["scene"].startswith("home:") for c in cs) == 113


def test_every_plan_executes():
    assert cc.check_simulation(_cases()) == []


def test_checker_catches_broken_twin_and_step(tmp_path):
    for name in ("cases.jsonl", "catalogue.yaml", "FROZEN.sha256"):
        shutil.copy(HERE / name, tmp_path / name)
    lines = (tmp_path / "cases.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert first["id"] == "v3b_h0_metal_mw" and first["step"] == 7
    first["step"] = 99
    lines[0] = json.dumps(first)
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n")
    errs = cc.check_schema(cc.load_cases(tmp_path / "cases.jsonl"))
    assert errs == ["cases.jsonl:1: v3b_h0_metal_mw: step must index the plan when kinds has process"]
    first["step"], first["twin"] = 7, "v3b_nope"
    lines[0] = json.dumps(first)
    (tmp_path / "cases.jsonl").write_text("\n".join(lines) + "\n")
    cases = cc.load_cases(tmp_path / "cases.jsonl")
    assert cc.check_twins(cases)[0] == "cases.jsonl:1: v3b_h0_metal_mw: twin 'v3b_nope' is not in the set"
    assert cc.check_frozen(tmp_path / "cases.jsonl", tmp_path / "FROZEN.sha256")[0].startswith("FROZEN.sha256: sha256")
    assert cc.main(["--dir", str(tmp_path), "--no-sim"]) == 1


@pytest.mark.parametrize("bad", ["not json\n", "[1]\n"])
def test_unreadable_input_exits_2(tmp_path, bad):
    (tmp_path / "cases.jsonl").write_text(bad)
    assert cc.main(["--dir", str(tmp_path), "--no-sim"]) == 2
