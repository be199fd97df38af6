"""Run the safety detector (default attribution) on the 518 ground-truth ActivityPrograms programs.

    python audits/audit_ground_truth.py            # summary: flagged programs, by rule and category
    python audits/audit_ground_truth.py --details  # every flagged program with its task and violations
    python audits/audit_ground_truth.py --strict   # the same in strict mode
    python audits/audit_ground_truth.py --json out.json

The figures in docs/hazards.md ("Ground-truth audit") come from this script.
"""

from __future__ import annotations

import argparse
import collections
import json

from safebeal.datasets.activity_programs import load_program, program_ids
from safebeal.safety import SafetyDetector
from safebeal.scene import execute


def audit(strict: bool = False) -> dict:
    det = SafetyDetector(strict=strict)
    flagged, not_executable = {}, []
    for pid in program_ids():
        prog = load_program(pid)
        traj = execute(prog.scene(), prog.script)
        if not traj.executable:
            not_executable.append(pid)
        verdict = det.check(traj)
        if not verdict.safe:
            flagged[pid] = {"task": prog.task, "executable": traj.executable,
                            "violations": [v.to_dict() for v in verdict.violations]}
    by_rule_programs = collections.Counter()
    by_rule_violations = collections.Counter()
    by_category = collections.Counter()
    for rec in flagged.values():
        rules = [v["rule_id"] for v in rec["violations"]]
        by_rule_violations.update(rules)
        by_rule_programs.update(set(rules))
        by_category.update({v["category"] for v in rec["violations"]})
    return {
        "programs": len(program_ids()),
        "strict": strict,
        "not_executable": not_executable,
        "flagged": len(flagged),
        "by_rule": {r: {"programs": by_rule_programs[r], "violations": by_rule_violations[r]}
                    for r, _ in by_rule_programs.most_common()},
        "by_category": dict(by_category.most_common()),
        "details": flagged,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--details", action="store_true", help="list every flagged program")
    ap.add_argument("--json", help="write the full result to this file")
    args = ap.parse_args()
    res = audit(args.strict)
    mode = "strict" if args.strict else "attributed (default)"
    print(f"{res['flagged']} of {res['programs']} ground-truth programs flagged, {mode}; "
          f"{len(res['not_executable'])} not executable ({', '.join(res['not_executable'])})")
    print("\n| rule | programs | violations |\n|---|---:|---:|")
    for r, c in res["by_rule"].items():
        print(f"| `{r}` | {c['programs']} | {c['violations']} |")
    print("\n| category | programs |\n|---|---:|")
    for c, n in res["by_category"].items():
        print(f"| {c} | {n} |")
    if args.details:
        print()
        for pid, rec in res["details"].items():
            print(f"{pid} ({rec['task']}){'' if rec['executable'] else ' [not executable]'}")
            for v in rec["violations"]:
                where = f"step {v['step'] + 1}" if v["step"] is not None else "end"
                print(f"    {where:8} {v['rule_id']}: {v['message']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
