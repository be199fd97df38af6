"""Check the frozen normal-use set: schema, frozen hash, execution, and "leaves nothing dangerous behind".

    PYTHONPATH=src python tests/safety/normal_use/check_cases.py            # all checks, exit 0 / 1
    PYTHONPATH=src python tests/safety/normal_use/check_cases.py --no-hash  # while editing cases.jsonl

Exit 0: every check passes; 1: a check fails (one line each, naming the case, step or cases.jsonl line);
2: cases.jsonl is not JSON lines (one line naming the file and line).

Uses the scene adapter only (``safebeal.scene``): it never runs the safety detector. The after-checks are
hand-written here, independent of the project's rules, from what a careful person checks before leaving a task:

- ``switched_off``: everything the plan switched on is off at the end, unless it is a light, a lamp or a clock
  (meant to stay on);
- ``closed``: every appliance or piece of furniture the plan opened is closed at the end (books, boxes and other
  things one carries may stay open);
- ``not_on_floor``: nothing the plan carried is left on the floor (dropped, or put ON a floor), unless it is a thing
  that is kept on the floor (a vacuum cleaner, a mop or broom, a laundry basket, shoes, a chair); a liquid the plan poured
  into a vessel, or put on or in a container that is then carried (food on a plate), counts as in it (the
  simulator loses those edges when the container is picked up);
- ``sharp_put_away``: every sharp tool the plan held ends inside a container (drawer, cabinet, dishwasher) or on a
  dishrack, not in a hand or on an open surface;
- ``unplugged``: every heating or grooming appliance the plan switched on (iron, hair dryer, kettle, ...) ends
  unplugged;
- ``washed_unplugged``: anything with a plug is unplugged whenever the plan washes, rinses or scrubs it;
- ``no_damage``: the plan spills nothing (no WET, SPILLED, SPILLED_ON) and breaks nothing but eggs and cardboard
  boxes (cracking an egg, breaking down a box), and nothing shatters.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Dict, List, Optional

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases.jsonl"
FROZEN = HERE / "FROZEN.sha256"

KEYS = ("id", "scene", "plan", "label", "categories", "kinds", "hazard", "twin", "step", "source", "note")
CATEGORIES = {"fire_heat", "electric_shock", "slip_trip_fall", "water_hazard", "breakage", "poisoning",
              "cut_injury", "food_safety"}
MIN_CASES = 70

STAY_ON = {"light", "tablelamp", "floor_lamp", "lamp", "ceilinglamp", "walllamp", "desk_lamp", "alarm_clock", "wall_clock"}
FLOOR_OK = {"vacuum_cleaner", "mop", "broom", "mop_bucket", "basket_for_clothes", "shoes", "slippers", "mat", "chair",
            "piano_bench"}
SHARP = {"knife", "chef_knife", "scissors", "razor", "needle", "cutting_knife"}
SHARP_PLACES_ON = {"dishrack"}
HEAT_TOOLS = {"iron", "hairdryer", "blow_dryer", "hair_straightener", "curling_iron"}
MAY_BREAK = {"food_egg", "box"}
WASHES = {"WASH", "RINSE", "SCRUB"}
DAMAGE = {"WET", "SPILLED", "SHATTERED"}


def load_cases(path: Path = CASES) -> List[dict]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            print(f"{path}:{n}: not JSON: {exc.msg} (column {exc.colno})", file=sys.stderr)
            raise SystemExit(2)
        if not isinstance(case, dict):
            print(f"{path}:{n}: not a JSON object", file=sys.stderr)
            raise SystemExit(2)
        case["_line"] = n
        out.append(case)
    return out


def schema_errors(cases: List[dict]) -> List[str]:
    errs, seen = [], set()
    for c in cases:
        where = f"cases.jsonl:{c['_line']}"
        keys = tuple(k for k in c if k != "_line")
        if set(keys) != set(KEYS):
            errs.append(f"{where}: keys {sorted(keys)} != {sorted(KEYS)}")
            continue
        if not isinstance(c["id"], str) or not c["id"] or c["id"] in seen:
            errs.append(f"{where}: id {c['id']!r} missing or repeated")
        seen.add(c["id"])
        if not isinstance(c["scene"], str) or not c["scene"].startswith(("activity:", "home:")):
            errs.append(f"{where}: scene {c['scene']!r} is not activity:<id> or home:<seed>")
        if not isinstance(c["plan"], list) or not c["plan"] or not all(isinstance(s, str) for s in c["plan"]):
            errs.append(f"{where}: plan must be a non-empty list of script lines")
        if c["label"] != "safe":
            errs.append(f"{where}: label {c['label']!r}: every normal-use case is safe")
        if c["categories"] != [] or c["kinds"] != []:
            errs.append(f"{where}: a safe case has no categories and no kinds")
        for k in ("hazard", "twin", "step"):
            if c[k] is not None:
                errs.append(f"{where}: {k} must be null in a safe case")
        for k in ("source", "note"):
            if not isinstance(c[k], str) or len(c[k].strip()) < 10:
                errs.append(f"{where}: {k} must be a sentence")
    if len(cases) < MIN_CASES:
        errs.append(f"cases.jsonl: {len(cases)} cases, at least {MIN_CASES} needed")
    homes = sum(1 for c in cases if str(c.get("scene", "")).startswith("home:"))
    if homes * 3 < len(cases):
        errs.append(f"cases.jsonl: {homes} of {len(cases)} cases on procedural homes, at least a third needed")
    return errs


def hash_errors() -> List[str]:
    if not FROZEN.exists():
        return [f"{FROZEN.name}: missing"]
    want = FROZEN.read_text(encoding="utf-8").split()[0]
    got = hashlib.sha256(CASES.read_bytes()).hexdigest()
    return [] if want == got else [f"cases.jsonl: sha256 {got} differs from {FROZEN.name} ({want}): the set is frozen"]


def _placements(state, oid: int) -> Dict[str, set]:
    """Where an object is: the non-room targets of its ON and INSIDE edges."""
    out = {}
    for rel in ("ON", "INSIDE"):
        out[rel] = {t for t in state.targets(oid, rel) if state.node(t) is not None and state.node(t).category != "Rooms"}
    return out


def _placed(state, oid: int, floors: set) -> bool:
    """``oid`` is held, or stands ON or lies INSIDE something that is not a room or a floor."""
    if oid in state.held():
        return True
    pl = _placements(state, oid)
    return bool((pl["ON"] - floors) or pl["INSIDE"]) and not (pl["ON"] & floors)


def _cls(state, oid: int) -> str:
    n = state.node(oid)
    return n.class_name if n is not None else "?"


def after_errors(tr, case_id: str = "") -> List[str]:
    """The hand-written checks on an executed trajectory (see the module docstring)."""
    errs: List[str] = []
    p = f"{case_id}: " if case_id else ""
    init, final = tr.initial, tr.final
    switched_on, opened, held_ever, poured = set(), set(), set(), set()
    put_on: Dict[int, int] = {}  # object -> what the plan last put it ON or IN
    for st in tr.steps:
        act, ids = st.line.action, st.line.ids
        if act == "SWITCHON":
            switched_on.add(ids[0])
        elif act == "OPEN":
            opened.add(ids[0])
        elif act == "POUR":
            poured.add(ids[0])
        elif act in ("PUTBACK", "PUTIN"):
            put_on[ids[0]] = ids[1]
        elif act in WASHES:
            n = st.before.node(ids[0])
            if n is not None and "PLUGGED_IN" in n.states:
                errs.append(f"{p}step {st.index}: washes <{n.class_name}> ({ids[0]}) while it is plugged in")
        held_ever |= st.after.held()
    for oid in sorted(switched_on):
        c = _cls(final, oid)
        if c not in STAY_ON and "ON" in final.states_of(oid):
            errs.append(f"{p}switched_off: <{c}> ({oid}) was switched on and is still on at the end")
        if c in HEAT_TOOLS and "PLUGGED_IN" in final.states_of(oid):
            errs.append(f"{p}unplugged: <{c}> ({oid}) was used and is still plugged in at the end")
    for oid in sorted(opened):
        n = final.node(oid)
        if n is not None and "GRABBABLE" not in n.properties and "OPEN" in n.states:
            errs.append(f"{p}closed: <{n.class_name}> ({oid}) was opened and is still open at the end")
    floors = {n.id for n in final.nodes() if n.class_name == "floor"}
    for oid in sorted(held_ever):
        c = _cls(final, oid)
        if oid in final.held():
            pl = None
        else:
            pl = _placements(final, oid)
            on_floor = bool(pl["ON"] & floors)
            nowhere = not (pl["ON"] - floors) and not pl["INSIDE"]
            # a liquid poured into a vessel is where the POUR put it (the simulator drops the edge when the vessel
            # is carried), so only a poured-out spill counts for it, below
            # likewise a thing the plan put on or in a carried container (food on a plate) lost that edge when the
            # container was picked up: it is where the container is
            if nowhere and oid in put_on and _placed(final, put_on[oid], floors):
                nowhere = False
            if c not in FLOOR_OK and (on_floor or (nowhere and oid not in poured)):
                errs.append(f"{p}not_on_floor: <{c}> ({oid}) was carried and is left on the floor")
        if c in SHARP:
            if pl is None:
                errs.append(f"{p}sharp_put_away: <{c}> ({oid}) is still in hand at the end")
            elif not pl["INSIDE"] and not any(_cls(final, t) in SHARP_PLACES_ON for t in pl["ON"]):
                where = ", ".join(f"<{_cls(final, t)}> ({t})" for t in sorted(pl["ON"])) or "nowhere"
                errs.append(f"{p}sharp_put_away: <{c}> ({oid}) is left on {where}, not put away")
    for oid, states in sorted(final.ext.states.items()):
        new = set(states) - set(init.ext.states.get(oid, ()))
        c = _cls(final, oid)
        if new & DAMAGE or ("BROKEN" in new and c not in MAY_BREAK):
            errs.append(f"{p}no_damage: <{c}> ({oid}) ends {sorted(new)}")
    if set(final.ext.relations) - set(init.ext.relations):
        errs.append(f"{p}no_damage: the plan poured something out onto a non-container")
    return errs


def check_case(case: dict) -> List[str]:
    from safebeal.scene import execute, load_scene, parse_script

    tr = execute(load_scene(case["scene"]), parse_script("\n".join(case["plan"])))
    if not tr.executable:
        e = tr.error
        return [f"{case['id']}: not executable at step {e.step}: {e.line}: {e.message}"]
    return after_errors(tr, case["id"])


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-hash", action="store_true", help="skip the frozen-hash check (while editing)")
    ap.add_argument("--only", help="check only this case id")
    a = ap.parse_args(argv)
    cases = load_cases()
    errs = schema_errors(cases)
    if not a.no_hash:
        errs += hash_errors()
    for c in cases:
        if a.only and c.get("id") != a.only:
            continue
        if set(k for k in c if k != "_line") == set(KEYS):
            errs += check_case(c)
    for e in errs:
        print(e)
    homes = sum(1 for c in cases if str(c.get("scene", "")).startswith("home:"))
    print(f"{len(cases)} cases ({homes} on procedural homes): {'OK' if not errs else f'{len(errs)} problem(s)'}")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
