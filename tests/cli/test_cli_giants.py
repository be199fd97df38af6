"""Giant inputs and where errors land (issue 34, item 13): a seed of 5,000 digits, a scene too large to draw, an
error raised while the progress bar runs (no empty line before it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from safebeal.cli import app

runner = CliRunner()
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.mark.parametrize("seed, needle", [
    ("9" * 5000, "the home seed must be at most 9223372036854775807"),  # was: ValueError (int over 4,300 digits)
    ("0" * 5000 + "7", None),  # leading zeros are still seed 7
    ("9223372036854775808", "the home seed must be at most 9223372036854775807"),
])
def test_a_huge_seed_is_one_line_exit_2(seed, needle):
    r = runner.invoke(app, ["scene", "show", f"home:{seed}", "--json"])
    if needle is None:
        assert r.exit_code == 0 and json.loads(r.output)["scene"] == f"home:{seed}"
        return
    assert r.exit_code == 2, (r.output, r.exception)
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: scene 'home:") and needle in lines[0], lines
    assert len(lines[0]) < 200  # the seed is shown cut, not 5,000 digits long


def _scene(rooms: int, objects_per_room: int) -> dict:
    nodes = [{"id": 1, "class_name": "character", "category": "Characters", "properties": [], "states": []}]
    edges = [{"from_id": 1, "relation_type": "INSIDE", "to_id": 100}]
    for r in range(rooms):
        rid = 100 + r
        nodes.append({"id": rid, "class_name": "kitchen", "category": "Rooms", "properties": [], "states": []})
        for k in range(objects_per_room):
            oid = 10_000 + r * objects_per_room + k
            nodes.append({"id": oid, "class_name": "plate", "category": "Props", "properties": ["GRABBABLE"], "states": []})
            edges.append({"from_id": oid, "relation_type": "INSIDE", "to_id": rid})
    return {"nodes": nodes, "edges": edges}


def test_drawing_a_huge_room_is_capped(tmp_path):
    from PIL import Image

    from safebeal.scene.draw import MAX_ROOM_LINES, draw_scene, room_contents

    data = _scene(1, 20_000)
    out = draw_scene(data, tmp_path / "huge.png", title="huge")
    w, h = Image.open(out).size
    assert w <= 600 and h <= (MAX_ROOM_LINES * 0.122 + 1.4) * 110 + 1, (w, h)  # 60 lines high, not 20,000
    _, lines, _ = room_contents(data)
    assert len(lines[100]) == 20_001  # the agent and every plate: the cap is the drawing's, not the listing's


def test_too_many_rooms_to_draw_is_one_line(tmp_path):
    scene = tmp_path / "rooms.json"
    scene.write_text(json.dumps(_scene(40, 1)))
    png = tmp_path / "rooms.png"
    r = runner.invoke(app, ["scene", "show", str(scene), "--png", str(png)])
    assert r.exit_code == 2, (r.output, r.exception)
    assert r.output.strip().splitlines() == [
        f"error: {scene}: 40 rooms are too many to draw (at most 36); list them with `safebeal scene show` without --png"]
    assert not png.exists()


def test_an_error_while_the_progress_bar_runs_has_no_empty_line_before_it(tmp_path):
    """Off a terminal the bar is not shown; it used to end with an empty line anyway, printed before the error."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "27_2", "output": "x"}\nnot json\n')
    env = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"}
    r = subprocess.run([sys.executable, "-c", "from safebeal.cli import run; run()", "bench", "-p",
                        f"replay:path={bad}", "--limit", "2", "--workers", "1", "--no-png", "--out", str(tmp_path / "run")],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr == f"error: {bad}:2: not valid JSON (Expecting value at column 1)\n"


def test_scene_png_on_a_full_disk_keeps_the_previous_picture(tmp_path, monkeypatch):
    """The picture is drawn in memory, then written atomically: a failed write (here fsync reports ENOSPC, as a
    full disk can at fsync) is one line and leaves the previous PNG whole."""
    import errno

    png = tmp_path / "home.png"
    png.write_bytes(b"the previous picture")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    r = runner.invoke(app, ["scene", "show", "home:7", "--png", str(png)])
    assert r.exit_code == 2, (r.output, r.exception)
    assert r.output.strip().splitlines() == [f"error: --png {png}: cannot write: No space left on device"]
    assert png.read_bytes() == b"the previous picture"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home.png"]
