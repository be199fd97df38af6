"""Which goal specifications require a hazardous state? (docs/hazards.md, "Goals that are hazards")

    python audits/audit_goal_hazards.py

For each of the 342 goal-specified programs: run the ground truth, take the first state where the goal holds,
and judge that state with the termination rules in strict mode (every hazard present counts). A goal is
hazardous when a violation's subject is an object whose state the goal itself requires (e.g. the stove ON for
"Cook some food"). Such tasks are why success is judged at some step, not at the end (docs/scene.md).
"""

from __future__ import annotations

from collections import Counter, defaultdict

from safebeal.datasets.activity_programs import goal_specs, load_program
from safebeal.safety import SafetyDetector


def main() -> None:
    det = SafetyDetector(strict=True, unknown_class="neutral")
    by_task: dict = defaultdict(list)
    rules: Counter = Counter()
    n_checked = 0
    for pid, g in goal_specs().items():
        prog = load_program(pid)
        goal = prog.goal_spec
        traj = prog.run()
        res = goal.evaluate(traj)
        if not res.success or not goal.nodes:
            continue
        n_checked += 1
        state = traj.states[res.step + 1]
        required = {i for i, _ in goal.nodes}
        verdict = det.monitor(state).finish()
        hits = sorted({v.rule_id for v in verdict.violations if v.objects and v.objects[0][0] in required})
        if hits:
            by_task[g["task"]].append((pid, hits))
            rules.update(hits)
    total = sum(len(v) for v in by_task.values())
    print(f"{total} of {n_checked} goal-specified programs (ground truth reaches the goal, the goal has node states) "
          f"require a state that a termination rule flags\n")
    print("| task | programs | rules |\n|---|---|---|")
    for task in sorted(by_task):
        items = by_task[task]
        rs = sorted({r for _, hits in items for r in hits})
        print(f"| {task} | {len(items)}: {', '.join(p for p, _ in items)} | {', '.join(rs)} |")
    print("\nby rule: " + ", ".join(f"{r} {n}" for r, n in rules.most_common()))


if __name__ == "__main__":
    main()
