"""Check blind set A (``cases.jsonl``): schema, twin links, catalogue, checksum, and that every plan executes.

Uses the scene adapter only (``safebeal.scene``); it never runs the safety detector.

    PYTHONPATH=src python tests/safety/blind_v3a/check_cases.py            # everything
    PYTHONPATH=src python tests/safety/blind_v3a/check_cases.py --no-sim   # schema, twins, catalogue, checksum only

Prints one line per problem (``cases.jsonl:LINE: id: what``) and a summary; exit status 0 if clean, 1 if not,
2 if a file cannot be read.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import sys
from pathlib import Path
from typing import Dict, List

HERE = Path(__file__).resolve().parent
KEYS = ["id", "scene", "plan", "label", "categories", "kinds", "hazard", "twin", "step", "source", "note"]
CATEGORIES = {"fire_heat", "electric_shock", "slip_trip_fall", "water_hazard", "breakage", "poisoning",
              "cut_injury", "food_safety"}
KINDS = {"process", "termination"}


def load_cases(path: Path) -> List[tuple]:
    out = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                out.append((n, json.loads(line)))
    return out


def check_schema(cases: List[tuple], catalogue: Dict[str, dict]) -> List[str]:
    errs = []
    ids = collections.Counter(c.get("id") for _, c in cases)
    by_id = {c.get("id"): c for _, c in cases}
    for n, c in cases:
        where = f"cases.jsonl:{n}: {c.get('id')}"
        if list(c) != KEYS:
            errs.append(f"{where}: keys {list(c)} are not exactly {KEYS}")
            continue
        if ids[c["id"]] > 1:
            errs.append(f"{where}: duplicate id")
        if not isinstance(c["plan"], list) or not c["plan"] or not all(isinstance(s, str) for s in c["plan"]):
            errs.append(f"{where}: plan must be a non-empty list of script lines")
        if not isinstance(c["scene"], str) or not c["scene"].startswith(("activity:", "home:")):
            errs.append(f"{where}: scene {c['scene']!r} is not activity:<id> or home:<seed>")
        for key in ("source", "note"):
            if not isinstance(c[key], str) or not c[key].strip():
                errs.append(f"{where}: {key} is empty")
        bad = set(c["categories"]) - CATEGORIES
        if bad:
            errs.append(f"{where}: unknown categories {sorted(bad)}")
        bad = set(c["kinds"]) - KINDS
        if bad:
            errs.append(f"{where}: unknown kinds {sorted(bad)}")
        if c["label"] == "safe":
            if c["categories"] or c["kinds"] or c["step"] is not None or c["hazard"] is not None:
                errs.append(f"{where}: a safe case has no categories, kinds, step or hazard")
        elif c["label"] == "unsafe":
            if not c["categories"] or not c["kinds"]:
                errs.append(f"{where}: an unsafe case needs categories and kinds")
            if c["hazard"] not in catalogue:
                errs.append(f"{where}: hazard {c['hazard']!r} is not in catalogue.yaml")
            elif c["id"] not in catalogue[c["hazard"]].get("cases", []):
                errs.append(f"{where}: catalogue entry {c['hazard']} does not list this case")
            if "process" in c["kinds"]:
                if not isinstance(c["step"], int) or not 0 <= c["step"] < len(c["plan"]):
                    errs.append(f"{where}: step {c['step']!r} must index the plan when kinds has process")
            elif c["step"] is not None:
                errs.append(f"{where}: step is set only when kinds has process")
        else:
            errs.append(f"{where}: label {c['label']!r} is not safe/unsafe")
        t = c["twin"]
        if t is not None:
            other = by_id.get(t)
            if other is None:
                errs.append(f"{where}: twin {t} does not exist")
            elif other["twin"] != c["id"]:
                errs.append(f"{where}: twin {t} does not link back")
            elif other["scene"] != c["scene"]:
                errs.append(f"{where}: twin {t} is in another scene")
            elif other["label"] == c["label"]:
                errs.append(f"{where}: twin {t} has the same label")
    for h, entry in catalogue.items():
        for cid in entry.get("cases", []):
            if cid not in by_id or by_id[cid]["hazard"] != h:
                errs.append(f"catalogue.yaml: {h}: case {cid} is not an unsafe case of this hazard")
    return errs


def check_simulation(cases: List[tuple]) -> List[str]:
    from safebeal.scene import execute, load_scene, parse_script

    errs = []
    for n, c in cases:
        try:
            tr = execute(load_scene(c["scene"]), parse_script("\n".join(c["plan"])))
        except Exception as e:  # noqa: BLE001 - report any failure as a line
            errs.append(f"cases.jsonl:{n}: {c['id']}: cannot run: {type(e).__name__}: {e}")
            continue
        if not tr.executable:
            errs.append(f"cases.jsonl:{n}: {c['id']}: not executable: {tr.error}")
    return errs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=HERE)
    ap.add_argument("--no-sim", action="store_true", help="skip re-running the plans in the simulator")
    a = ap.parse_args(argv)
    try:
        cases = load_cases(a.dir / "cases.jsonl")
        import yaml

        cat = yaml.safe_load((a.dir / "catalogue.yaml").read_text(encoding="utf-8"))
        catalogue = {e["id"]: e for e in cat["hazards"]}
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"{a.dir}: cannot read: {e}", file=sys.stderr)
        return 2
    errs = check_schema(cases, catalogue)
    frozen = a.dir / "FROZEN.sha256"
    if frozen.exists():
        want = frozen.read_text().split()[0]
        got = hashlib.sha256((a.dir / "cases.jsonl").read_bytes()).hexdigest()
        if want != got:
            errs.append(f"FROZEN.sha256: cases.jsonl has sha256 {got}, frozen {want}")
    if not a.no_sim:
        errs += check_simulation(cases)
    for e in errs:
        print(e)
    cs = [c for _, c in cases]
    unsafe = [c for c in cs if c["label"] == "unsafe"]
    per_cat = collections.Counter(x for c in unsafe for x in c["categories"])
    print(f"{len(cs)} cases: {len(unsafe)} unsafe ({100 * len(unsafe) / max(1, len(cs)):.1f}%), "
          f"{len(cs) - len(unsafe)} safe; twins {sum(1 for c in cs if c['twin'])}; "
          f"procedural homes {sum(1 for c in cs if c['scene'].startswith('home:'))}; hazards {len(catalogue)}")
    print("unsafe per category: " + ", ".join(f"{k} {per_cat[k]}" for k in sorted(CATEGORIES)))
    print("OK" if not errs else f"{len(errs)} problem(s)")
    return 0 if not errs else 1


if __name__ == "__main__":
    sys.exit(main())
