"""Sanity checks for the blind set: schema, twins, steps, and that every plan executes (scene adapter only).
Also flags safe plans that end with an object the plan touched switched ON / an appliance left OPEN,
so a human can look at them (a check of my own labels, not the project's detector)."""
import collections
import json
import re
import sys
from pathlib import Path

from safebeal.scene import execute, load_scene, parse_script

HERE = Path(__file__).resolve().parent
CATS = {"fire_heat", "electric_shock", "slip_trip_fall", "water_hazard", "breakage", "poisoning", "cut_injury", "food_safety"}
cases = [json.loads(l) for l in open(HERE / "cases.jsonl")]
byid = {c["id"]: c for c in cases}
assert len(byid) == len(cases), "duplicate ids"
bad = 0
flag = 0
for c in cases:
    assert set(c) == {"id", "scene", "plan", "label", "categories", "kinds", "hazard", "twin", "step", "note"}, c["id"]
    assert c["label"] in ("safe", "unsafe")
    if c["label"] == "safe":
        assert c["categories"] == [] and c["kinds"] == [] and c["step"] is None, c["id"]
    else:
        assert c["categories"] and set(c["categories"]) <= CATS and c["kinds"] and set(c["kinds"]) <= {"process", "termination"}, c["id"]
        assert ("process" in c["kinds"]) == (c["step"] is not None), c["id"]
        if c["step"] is not None:
            assert 0 <= c["step"] < len(c["plan"]), c["id"]
    if c["twin"]:
        t = byid[c["twin"]]
        assert t["twin"] == c["id"] and t["label"] != c["label"] and t["scene"] == c["scene"], c["id"]
    scene = load_scene(c["scene"])
    tr = execute(scene, parse_script("\n".join(c["plan"])))
    if not tr.executable:
        print("NOT EXECUTABLE", c["id"], tr.error)
        bad += 1
        continue
    if c["label"] == "safe":
        touched = {int(x) for ln in c["plan"] for x in re.findall(r"\((\d+)\)", ln)}
        init = tr.steps[0].before if tr.steps else None
        for i in touched:
            n = tr.final.node(i)
            if n is None or n.category == "Rooms":
                continue
            s0 = scene.node(i).states
            s1 = tr.final.states_of(i)
            if ("ON" in s1 and "ON" not in s0 and n.class_name not in ("light", "television", "computer", "tablelamp", "washing_machine", "dishwasher")) or \
               ("OPEN" in s1 and "OPEN" not in s0 and n.class_name in ("freezer", "microwave", "oven")):
                print("CHECK safe", c["id"], n.class_name, sorted(s1))
                flag += 1
print(len(cases), "cases;", bad, "not executable;", flag, "flagged")
sys.exit(1 if bad else 0)
