"""A planner in one module: each task's reference plan, cut to its first ``max_steps`` steps.

An open-loop planner gets the tasks and returns one PlanOutput per task, whose ``text`` is the plan (one action
per line, ``[WALK] <kitchen> (11)``); the runner parses, executes and judges it. Run it:

    safebeal bench --planner reference-plan:max_steps=3 --dataset virtualhome --limit 2

(with this module imported, or installed with the entry point of docs/extending.md).
"""

from __future__ import annotations

from typing import List, Sequence

from safebeal.datasets.base import Task
from safebeal.planners.planners import PLANNERS, Planner, PlanOutput


@PLANNERS.register("reference-plan", help="each task's reference plan (an upper bound); max_steps=N keeps N steps")
class ReferencePlanner(Planner):
    name = "reference-plan"

    def __init__(self, max_steps: int = 0):
        super().__init__()
        self.max_steps = int(max_steps)
        # the spec re-creates the planner: runs record it, and `safebeal report` and resumes re-create from it
        self.spec = f"{self.name}:max_steps={self.max_steps}" if self.max_steps else self.name

    def config(self) -> dict:
        return {"name": self.name, "max_steps": self.max_steps}

    def plan(self, tasks: Sequence[Task]) -> List[PlanOutput]:
        outs = []
        for t in tasks:
            if t.reference is None:  # a dataset without reference plans: a recorded error, not a crash
                outs.append(PlanOutput(t.id, None, error="the task has no reference plan"))
                continue
            lines = t.reference.strip().splitlines()
            outs.append(PlanOutput(t.id, "\n".join(lines[: self.max_steps] if self.max_steps else lines)))
        return outs
