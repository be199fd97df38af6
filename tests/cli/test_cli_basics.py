"""The command line: version, scene show, check on the shipped example, and bad input that must give a one-line
error naming the file, line or step (exit code 2, never a traceback)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from safebeal import __version__
from safebeal.cli import app

runner = CliRunner()


def invoke(*args, input=None):
    return runner.invoke(app, list(args), input=input)


def test_version():
    r = invoke("--version")
    assert r.exit_code == 0 and r.output.strip() == f"safebeal {__version__}"


def test_scene_show_json_lists_objects_with_ids_and_states():
    r = invoke("scene", "show", "activity:392_2", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    ovens = [o for o in data["objects"] if o["class_name"] == "oven"]
    assert ovens and all(isinstance(o["id"], int) for o in ovens)
    assert "dining_room" in data["rooms"].values()  # this apartment cooks in the dining room


def test_check_default_example_json():
    r = invoke("check", "--json")
    assert r.exit_code == 0, r.output
    rec = json.loads(r.output)
    assert rec["scene"] == "activity:392_2" and rec["executable"] is True
    assert [s["index"] for s in rec["steps"]] == list(range(rec["n_steps"]))
    assert rec["success"] is True and rec["error"] is None


def test_check_plan_from_stdin_stops_at_first_failing_step():
    plan = "[WALK] <dining_room> (201)\n[GRAB] <knife> (999999)\n[WALK] <dining_room> (201)\n"
    r = invoke("check", "--scene", "activity:392_2", "--plan", "-", "--json", input=plan)
    assert r.exit_code == 0, r.output
    rec = json.loads(r.output)
    assert rec["executable"] is False
    assert rec["error"]["kind"] == "unknown_object" and rec["error"]["step"] == 1
    assert [s["ok"] for s in rec["steps"]] == [True, False, False]
    assert rec["steps"][2]["error"]["kind"] == "not_run"


@pytest.mark.parametrize(
    "args, needle",
    [
        (("check", "--scene", "activity:392_2", "--plan", "NO_SUCH_FILE.txt"), "NO_SUCH_FILE.txt: plan file not found"),
        (("check", "--scene", "activity:0_0", "--plan", "-"), "unknown ActivityPrograms id '0_0'"),
        (("check", "--scene", "NO_SUCH_SCENE.json", "--plan", "-"), "NO_SUCH_SCENE.json: scene file not found"),
        (("check", "--scene", "activity:392_2"), "give both --scene and --plan"),
        (("scene", "show", "activity:nope"), "unknown ActivityPrograms id"),
    ],
)
def test_bad_input_is_one_clear_line(args, needle):
    r = invoke(*args, input="[WALK] <dining_room> (201)\n")
    assert r.exit_code == 2, r.output
    assert needle in " ".join(r.output.split())
    assert "Traceback" not in r.output


def test_malformed_plan_line_names_file_and_line(tmp_path):
    plan = tmp_path / "plan.txt"
    plan.write_text("[WALK] <dining_room> (201)\n\nwalk to the kitchen please\n")
    r = invoke("check", "--scene", "activity:392_2", "--plan", str(plan))
    assert r.exit_code == 2
    # the whole message, on one line (the old check removed every space, so "cannot parse" could never match)
    assert r.output.strip() == f"error: {plan}:3: cannot parse 'walk to the kitchen please': expected " \
        "'[ACTION] <name> (id)' with zero to two '<name> (id)' arguments, ids like (12) or (1.12)"
    assert "Traceback" not in r.output


def test_corrupt_scene_file_names_line(tmp_path):
    bad = tmp_path / "scene.json"
    bad.write_text('{"nodes": [\n  {"id": 1,\n')
    r = invoke("check", "--scene", str(bad), "--plan", "-", input="[WALK] <dining_room> (201)\n")
    assert r.exit_code == 2
    assert "corrupt JSON" in r.output and "scene.json:3" in r.output.replace("\n", "")
