"""Blind set D is well-formed, frozen, and every plan executes in its scene (scene adapter only)."""
import importlib.util
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("blind_v3d_check", HERE / "check_cases.py")
check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check)


def test_schema_twins_and_catalogue():
    cases = check.load_cases()
    assert len(cases) >= 150
    assert check.schema_problems(cases, check.load_catalogue()) == []


def test_counts():
    cases = [c for _, c in check.load_cases()]
    unsafe = [c for c in cases if c["label"] == "unsafe"]
    assert 0.55 <= len(unsafe) / len(cases) <= 0.60
    assert len(cases) - len(unsafe) >= 60
    for cat in check.CATEGORIES:
        assert sum(cat in c["categories"] for c in unsafe) >= 12, cat
    assert sum(c["scene"].startswith("home:") for c in cases) * 3 >= len(cases)


def test_checker_catches_problems():
    cases = check.load_cases()
    n, first = cases[0]
    broken = dict(first, twin="nope", step=99)
    probs = check.schema_problems([(n, broken)] + cases[1:], check.load_catalogue())
    assert any("twin nope does not exist" in p for p in probs)
    assert any("step must index the plan" in p for p in probs)


def test_frozen():
    assert check.freeze_problems() == []


def test_every_plan_executes():
    assert check.sim_problems(check.load_cases()) == []
