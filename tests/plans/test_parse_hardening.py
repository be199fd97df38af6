"""Issue 21: the plan parser in linear time on the inputs that made it backtrack, and strict ids.

Before: ``{"WALK": ["<" + 200 spaces + ">x"]}`` (217 characters) took 35 s (``_JSON_ARG``, ~n^4), a script line
followed by 40,000 spaces and ``x`` took 24 s (``_TAIL``, ~n^2), a line of leading spaces with no ``[`` (~n^2,
``_ACTION_LINE``); ``(205.5)`` was read as id 5."""

from __future__ import annotations

import time

import pytest

from safebeal.plans.parse import parse_plan
from safebeal.plans.steps import ParseError
from safebeal.scene.script import ScriptSyntaxError, parse_id, parse_line

SLOW = 1.0  # seconds (a shared 2-core machine); each case below parses in under 50 ms alone, 24-35 s before


def _timed(text):
    t0 = time.perf_counter()
    r = parse_plan(text)
    return r, time.perf_counter() - t0


@pytest.mark.parametrize("text", [
    '{"WALK": ["<' + " " * 200 + '>x"]}',
    '{"WALK": ["<' + " " * 20_000 + '>x"]}',
    '{"WALK": ["' + " " * 20_000 + "(" + " " * 20_000 + '"]}',
    "[WALK] <kitchen> (1)" + " " * 40_000 + "x",
    "[WALK] <kitchen> (1)" + "\t" * 100_000 + ".x",
    " " * 100_000 + "x[",
    "1." + " " * 100_000 + "x[",
    "[WALK] " + "<a>" * 10_000 + "x",
    "[WALK] <" + " " * 100_000,
    "[" + "A" * 100_000 + "x",
])
def test_pathological_inputs_parse_fast(text):
    r, dt = _timed(text)
    assert dt < SLOW, dt
    if not text.startswith("{"):  # the JSON ones are one WALK to an odd name (resolution refuses it later)
        assert r.error is not None


def test_linear_growth_on_trailing_spaces():
    """Ten times the spaces takes about ten times as long, not a hundred (measured with margin: < 30x)."""
    small = min(_timed("[WALK] <kitchen> (1)" + " " * 20_000 + "x")[1] for _ in range(3))
    big = min(_timed("[WALK] <kitchen> (1)" + " " * 200_000 + "x")[1] for _ in range(3))
    assert big < max(30 * small, 0.05), (small, big)


def test_valid_plans_still_parse_with_spaces_and_tails():
    r = parse_plan("   1.   [WALK]   <kitchen>   (11)  .  // go\n  - [GRAB] <cup> (1.12);\n")
    assert r.error is None and [str(s) for s in r.steps] == ["[WALK] <kitchen> (11)", "[GRAB] <cup> (12)"]
    r = parse_plan('{"WALK": ["  < kitchen >  ( 11 ) "], "GRAB": ["cup"]}')
    assert r.error is None and [str(s) for s in r.steps] == ["[WALK] <kitchen> (11)", "[GRAB] <cup>"]


@pytest.mark.parametrize("raw, expected", [
    ("12", 12), ("1.205", 205), ("5.3", 3), ("205.5", None), ("0.5", None), ("1.2.3", None), (".5", None),
    ("1.", None), ("9" * 12, 999_999_999_999), ("9" * 13, None), ("9" * 5000, None),
])
def test_parse_id(raw, expected):
    assert parse_id(raw) == expected


@pytest.mark.parametrize("text", [
    "[WALK] <kitchen> (205.5)",
    '{"WALK": ["kitchen (205.5)"]}',
    '[["WALK", "<kitchen> (205.5)"]]',
    "[WALK] <kitchen> (" + "9" * 5000 + ")",
    '{"WALK": ["kitchen (' + "1" * 5000 + ')"]}',
])
def test_malformed_ids_are_parse_errors(text):
    r = parse_plan(text)
    assert isinstance(r.error, ParseError) and r.steps == ()  # was: (205.5) silently read as id 5
    assert "malformed" in r.error.message


def test_script_ids_are_strict():
    assert parse_line("[GRAB] <cup> (1.12)").ids == (12,)
    for bad in ("[GRAB] <cup> (205.5)", "[GRAB] <cup> (" + "7" * 5000 + ")"):
        with pytest.raises(ScriptSyntaxError, match="cannot parse"):
            parse_line(bad, 4, "plan.txt")
