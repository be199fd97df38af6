"""A dataset in one module: two kitchen chores in an ActivityPrograms scene, each with a goal and a reference plan.

A dataset lists Tasks: an id, the instruction, the scene (a scene spec: ``activity:<id>``, ``home:<seed>``, a scene
JSON file), the goal that decides success, the objects the prompt lists (name, id) and, optionally, a reference
plan (for Rouge-L). Run it:

    safebeal bench --dataset kitchen-chores --planner reference-plan
"""

from __future__ import annotations

from typing import List

from safebeal.datasets.base import DATASETS, Dataset, Task
from safebeal.datasets.goals import GoalSpec

SCENE = "activity:392_2"
OBJECTS = (("microwave", 297), ("plate", 2005), ("sink", 42), ("kitchen_counter", 230))
CHORES = [
    # id, instruction, goal, reference plan
    ("open-microwave", "Open the microwave.", GoalSpec(nodes=((297, "OPEN"),)),
     "[WALK] <microwave> (297)\n[OPEN] <microwave> (297)"),
    ("plate-on-counter", "Put the plate from the sink on the kitchen counter.", GoalSpec(edges=((2005, "ON", 230),)),
     "[WALK] <plate> (2005)\n[GRAB] <plate> (2005)\n[WALK] <kitchen_counter> (230)\n"
     "[PUTBACK] <plate> (2005) <kitchen_counter> (230)"),
]


@DATASETS.register("kitchen-chores", help="two kitchen chores in ActivityPrograms scene 392_2 (an example dataset)")
class KitchenChores(Dataset):
    name = "kitchen-chores"

    def __init__(self, limit: int = 0):
        self.limit = int(limit)

    def tasks(self) -> List[Task]:
        tasks = [Task(id=tid, dataset=self.name, instruction=text, scene=SCENE, goal=goal, reference=ref,
                      objects=OBJECTS, categories=("kitchen",))
                 for tid, text, goal, ref in CHORES]
        return tasks[: self.limit] if self.limit else tasks

    def config(self) -> dict:
        return {"name": self.name, "limit": self.limit}
