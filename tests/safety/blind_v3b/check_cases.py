"""Check blind set B: schema, twin links, catalogue, checksum, and that every plan executes in the simulator.

Uses the scene adapter only (``safebeal.scene``); it never runs the safety detector.

    PYTHONPATH=src python tests/safety/blind_v3b/check_cases.py            # everything
    PYTHONPATH=src python tests/safety/blind_v3b/check_cases.py --no-sim   # schema, twins, catalogue, checksum only

Prints one line per problem (``cases.jsonl:LINE: id: what``) and exits 1 if there is any, 2 on unreadable input,
0 with a summary otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, List, Tuple

HERE = Path(__file__).resolve().parent
KEYS = ["id", "scene", "plan", "label", "categories", "kinds", "hazard", "twin", "step", "source", "note"]
CATEGORIES = {"fire_heat", "electric_shock", "slip_trip_fall", "water_hazard", "breakage", "poisoning",
              "cut_injury", "food_safety"}
KINDS = {"process", "termination"}


def load_cases(path: Path) -> List[Tuple[int, dict]]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise SystemExit(f"{path.name}:{n}: not JSON: {e}") from None
        if not isinstance(obj, dict):
            raise SystemExit(f"{path.name}:{n}: not a JSON object")
        out.append((n, obj))
    return out


def check_schema(cases: List[Tuple[int, dict]]) -> List[str]:
    errs: List[str] = []
    seen: Dict[str, int] = {}
    for n, c in cases:
        where = f"cases.jsonl:{n}: {c.get('id', '?')}"
        if list(c) != KEYS:
            errs.append(f"{where}: keys must be exactly {KEYS}, got {list(c)}")
            continue
        if not isinstance(c["id"], str) or not c["id"]:
            errs.append(f"{where}: id must be a non-empty string")
        elif c["id"] in seen:
            errs.append(f"{where}: duplicate id (first on line {seen[c['id']]})")
        else:
            seen[c["id"]] = n
        if not isinstance(c["scene"], str) or not c["scene"].startswith(("activity:", "home:")):
            errs.append(f"{where}: scene must be 'activity:<id>' or 'home:<seed>'")
        if not isinstance(c["plan"], list) or not c["plan"] or not all(isinstance(x, str) for x in c["plan"]):
            errs.append(f"{where}: plan must be a non-empty list of script lines")
        if c["label"] not in ("safe", "unsafe"):
            errs.append(f"{where}: label must be safe or unsafe")
        cats, kinds = c["categories"], c["kinds"]
        if not isinstance(cats, list) or not set(cats) <= CATEGORIES or len(set(cats)) != len(cats):
            errs.append(f"{where}: categories must be distinct values of {sorted(CATEGORIES)}")
        if not isinstance(kinds, list) or not set(kinds) <= KINDS or len(set(kinds)) != len(kinds):
            errs.append(f"{where}: kinds must be distinct values of {sorted(KINDS)}")
        if not isinstance(c["source"], str) or not c["source"].strip():
            errs.append(f"{where}: source must be a non-empty string")
        if not isinstance(c["note"], str) or not c["note"].strip():
            errs.append(f"{where}: note must be a non-empty sentence")
        if c["label"] == "safe":
            if cats or kinds or c["hazard"] is not None or c["step"] is not None:
                errs.append(f"{where}: a safe case has empty categories and kinds, hazard null, step null")
        elif c["label"] == "unsafe":
            if not cats or not kinds or not isinstance(c["hazard"], str):
                errs.append(f"{where}: an unsafe case needs categories, kinds and a hazard id")
            if isinstance(kinds, list) and "process" in kinds:
                if not isinstance(c["step"], int) or isinstance(c["step"], bool) or not (
                        isinstance(c["plan"], list) and 0 <= c["step"] < len(c["plan"])):
                    errs.append(f"{where}: step must index the plan when kinds has process")
            elif c["step"] is not None:
                errs.append(f"{where}: step is set only when kinds has process")
    return errs


def check_twins(cases: List[Tuple[int, dict]]) -> List[str]:
    errs: List[str] = []
    by_id = {c["id"]: (n, c) for n, c in cases if isinstance(c.get("id"), str)}
    for n, c in cases:
        t = c.get("twin")
        if t is None:
            continue
        where = f"cases.jsonl:{n}: {c.get('id')}"
        if t not in by_id:
            errs.append(f"{where}: twin {t!r} is not in the set")
            continue
        _, o = by_id[t]
        if o.get("twin") != c.get("id"):
            errs.append(f"{where}: twin {t!r} does not link back")
        if o.get("scene") != c.get("scene"):
            errs.append(f"{where}: twin {t!r} is in another scene")
        if o.get("label") == c.get("label"):
            errs.append(f"{where}: twin {t!r} has the same label")
    return errs


def check_catalogue(cases: List[Tuple[int, dict]], path: Path) -> List[str]:
    import yaml

    errs: List[str] = []
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    entries = data.get("hazards") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return [f"{path.name}: no 'hazards' list"]
    cat = {}
    for i, e in enumerate(entries):
        missing = {"id", "description", "category", "kinds", "source", "cases"} - set(e or {})
        if missing:
            errs.append(f"{path.name}: entry {i}: missing {sorted(missing)}")
            continue
        if e["category"] not in CATEGORIES:
            errs.append(f"{path.name}: {e['id']}: category {e['category']!r} unknown")
        cat[e["id"]] = e
    used: Dict[str, List[str]] = {}
    for n, c in cases:
        h = c.get("hazard")
        if h is None:
            continue
        used.setdefault(h, []).append(c["id"])
        if h not in cat:
            errs.append(f"cases.jsonl:{n}: {c['id']}: hazard {h!r} is not in {path.name}")
    for h, e in cat.items():
        if sorted(e["cases"]) != sorted(used.get(h, [])):
            errs.append(f"{path.name}: {h}: cases {e['cases']} differ from the set's {used.get(h, [])}")
    return errs


def check_frozen(cases_path: Path, frozen: Path) -> List[str]:
    if not frozen.exists():
        return [f"{frozen.name}: missing"]
    want = frozen.read_text(encoding="utf-8").split()[0]
    got = hashlib.sha256(cases_path.read_bytes()).hexdigest()
    return [] if want == got else [f"{frozen.name}: sha256 {want} != cases.jsonl's {got} (the set changed after freezing)"]


def check_simulation(cases: List[Tuple[int, dict]]) -> List[str]:
    from safebeal.scene import execute, load_scene, parse_script

    errs: List[str] = []
    for n, c in cases:
        try:
            tr = execute(load_scene(c["scene"]), parse_script("\n".join(c["plan"])))
        except Exception as e:  # a scene that does not load or a line that does not parse
            errs.append(f"cases.jsonl:{n}: {c['id']}: {type(e).__name__}: {e}")
            continue
        if not tr.executable:
            errs.append(f"cases.jsonl:{n}: {c['id']}: not executable: {tr.error}")
    return errs


def summary(cases: List[Tuple[int, dict]]) -> str:
    cs = [c for _, c in cases]
    unsafe = [c for c in cs if c["label"] == "unsafe"]
    cats = Counter(x for c in unsafe for x in c["categories"])
    homes = sum(c["scene"].startswith("home:") for c in cs)
    return (f"{len(cs)} cases: {len(unsafe)} unsafe, {len(cs) - len(unsafe)} safe, "
            f"{sum(1 for c in cs if c['twin'])} in twin pairs, {homes} on procedural homes; unsafe by category: "
            + ", ".join(f"{k} {cats[k]}" for k in sorted(CATEGORIES)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=HERE, help="folder with cases.jsonl, catalogue.yaml, FROZEN.sha256")
    ap.add_argument("--no-sim", action="store_true", help="skip re-running the plans in the simulator")
    args = ap.parse_args(argv)
    cases_path = args.dir / "cases.jsonl"
    try:
        cases = load_cases(cases_path)
    except OSError as e:
        print(f"{cases_path}: {e.strerror}", file=sys.stderr)
        return 2
    except SystemExit as e:
        print(e, file=sys.stderr)
        return 2
    errs = check_schema(cases)
    if not errs:
        errs += check_twins(cases)
        errs += check_catalogue(cases, args.dir / "catalogue.yaml")
        errs += check_frozen(cases_path, args.dir / "FROZEN.sha256")
        if not args.no_sim:
            errs += check_simulation(cases)
    for e in errs:
        print(e)
    if errs:
        print(f"{len(errs)} problem(s)")
        return 1
    print(summary(cases) + ("" if args.no_sim else "; every plan executes"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
