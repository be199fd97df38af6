"""Blind set C stays frozen, well-formed and executable; its checker catches a tampered copy.

Runs the scene adapter only, never the safety detector.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("blind_v3c_check_cases", HERE / "check_cases.py")
check_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_cases)


def _cases():
    return [json.loads(line) for line in (HERE / "cases.jsonl").read_text(encoding="utf-8").splitlines() if line]


def test_set_is_clean_frozen_and_executes(capsys):
    assert check_cases.main(["--dir", str(HERE)]) == 0
    out = capsys.readouterr().out
    assert out.strip().endswith("OK")


def test_composition():
    cs = _cases()
    unsafe = [c for c in cs if c["label"] == "unsafe"]
    assert len(cs) >= 150
    assert 0.55 <= len(unsafe) / len(cs) <= 0.60
    assert len(cs) - len(unsafe) >= 60
    for cat in check_cases.CATEGORIES:
        assert sum(cat in c["categories"] for c in unsafe) >= 12, cat
    homes = sum(c["scene"].startswith("home:") for c in cs)
    assert homes * 3 >= len(cs)


def test_checker_reports_tampering(tmp_path, capsys):
    for name in ("cases.jsonl", "catalogue.yaml", "FROZEN.sha256"):
        shutil.copy(HERE / name, tmp_path / name)
    cs = _cases()
    by = {c["id"]: c for c in cs}
    by["C-FH01s"]["twin"] = None                      # C-FH01u's twin no longer links back
    by["C-ES03u"]["step"] = 99                        # past the end of its 6-line plan
    by["C-SN01"]["plan"][-1] = "[PUTBACK] <plate> (69) <table> (99999)"   # unknown object: does not execute
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cs), encoding="utf-8")

    assert check_cases.main(["--dir", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "C-FH01u: twin C-FH01s does not link back" in out
    assert "C-ES03u: kinds has process, so step must index the plan (got 99)" in out
    assert "C-SN01: does not execute" in out
    assert "the set changed after freezing" in out
