"""Blind set E stays valid and frozen: schema, twins, every plan executes, checksum matches."""
import hashlib
import importlib.util
import json
from pathlib import Path

HERE = Path(__file__).parent


def _checker():
    spec = importlib.util.spec_from_file_location("blind_v3e_check", HERE / "check_cases.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cases_valid_and_executable():
    cases, errs = _checker().check()
    assert errs == []
    assert len(cases) == 163
    labels = [c["label"] for _, c in cases]
    assert labels.count("unsafe") == 91 and labels.count("safe") == 72


def test_checker_flags_broken_case(tmp_path):
    line = (HERE / "cases.jsonl").read_text().splitlines()[0]
    c = json.loads(line)
    c["step"] = None  # process kind without a step
    bad = tmp_path / "cases.jsonl"
    bad.write_text(json.dumps(c) + "\n")
    _, errs = _checker().check(bad, run=False)
    assert any("step must be set" in e for e in errs)
    assert any("twin" in e for e in errs) or c["twin"] is None


def test_frozen_checksum():
    want = (HERE / "FROZEN.sha256").read_text().split()[0]
    assert hashlib.sha256((HERE / "cases.jsonl").read_bytes()).hexdigest() == want
