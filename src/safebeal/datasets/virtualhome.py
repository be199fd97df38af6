"""The 342 goal-specified VirtualHome tasks (the ones the 15 recorded LLMs answer).

Each task is an ActivityPrograms program with a goal spec. Its *relevant objects* are what a planner's
prompt lists and what names in a plan resolve to: the nodes whose record differs between the shipped
initial and final graphs, plus both ends of every relation that differs (the objects virtualhome-eval's
prompts list). When two relevant nodes share a class name, the name resolves to the one the goal or the
ground-truth script uses, else the lowest id (virtualhome-eval picks by set iteration order, which varies
between processes).

What a task lists (:attr:`Task.objects`: the prompt's observation, and what names resolve against):

- ``virtualhome`` (the 342 tasks the recorded LLMs answered): virtualhome-eval's relevant objects first, as its
  prompt listed them (so a recorded output's names resolve to the same ids as before), then the objects that
  :func:`safebeal.scene.listing.listed_objects` adds (the relevant objects miss an object of the
  ground-truth script, or a container that holds one, in 133 of the 342 tasks);
- ``activity-test`` / ``activity-train``: :func:`~safebeal.scene.listing.listed_objects` alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, List, Tuple

from safebeal.datasets.activity_programs import Program, goal_specs, load_program


def _node_key(n: dict) -> tuple:
    return (n["id"], n["class_name"], tuple(sorted(n.get("states", []))), tuple(sorted(n.get("properties", []))))


@lru_cache(maxsize=None)
def relevant_objects(pid: str) -> Tuple[Tuple[str, int, Tuple[str, ...]], ...]:
    """(class_name, id, properties) of the task's relevant objects, sorted by id."""
    p = load_program(pid)
    init, final = p.init_graph, p.final_graph
    ni = {_node_key(n) for n in init["nodes"]}
    nf = {_node_key(n) for n in final["nodes"]}
    ids = {k[0] for k in ni ^ nf}
    ei = {(e["from_id"], e["relation_type"], e["to_id"]) for e in init["edges"]}
    ef = {(e["from_id"], e["relation_type"], e["to_id"]) for e in final["edges"]}
    for f, _, t in ei ^ ef:
        ids.update((f, t))
    by_id = {n["id"]: n for n in init["nodes"]}
    by_id.update({n["id"]: n for n in final["nodes"] if n["id"] not in by_id})
    return tuple(sorted(((by_id[i]["class_name"], i, tuple(sorted(by_id[i].get("properties", [])))) for i in ids if i in by_id), key=lambda x: x[1]))


@lru_cache(maxsize=None)
def name_to_id(pid: str) -> Dict[str, int]:
    p = load_program(pid)
    preferred = set(p.script.lines and [a.id for ln in p.script for a in ln.args])
    g = p.goal_spec
    if g is not None:
        preferred |= {i for i, _ in g.nodes} | {x for f, _, t in g.edges for x in (f, t)}
    out: Dict[str, int] = {}
    for cls, i, _ in relevant_objects(pid):
        if cls not in out or (i in preferred and out[cls] not in preferred):
            out[cls] = i
    return out


@dataclass(frozen=True)
class VHTask:
    id: str  # program id, e.g. "27_2"
    task: str  # task name, e.g. "Wash clothes"

    @property
    def program(self) -> Program:
        return load_program(self.id)


@lru_cache(maxsize=1)
def tasks() -> List[VHTask]:
    from safebeal.datasets.activity_programs import _pid_key

    return [VHTask(pid, g["task"]) for pid, g in sorted(goal_specs().items(), key=lambda kv: _pid_key(kv[0]))]


# -- benchmark datasets -------------------------------------------------------------------------------
from safebeal.datasets.base import DATASETS, Dataset, LazyObjects, Task  # noqa: E402


@lru_cache(maxsize=None)
def listing(pid: str, relevant_first: bool) -> Tuple[Tuple[str, int], ...]:
    """The objects a program's task lists (see the module docstring); kept in the scene cache
    (:mod:`safebeal.scene.cache`), so a later process needs neither the scene nor the final graph for it."""
    from safebeal.scene.cache import cached_json

    return cached_json(f"listing-{pid}-{int(relevant_first)}", lambda: [list(x) for x in _listing(pid, relevant_first)],
                       decode=lambda raw: tuple((str(c), int(i)) for c, i in raw))


def _listing(pid: str, relevant_first: bool) -> Tuple[Tuple[str, int], ...]:
    from safebeal.scene.listing import listed_objects

    p = load_program(pid)
    rule = listed_objects(p.scene(), p.script_text.splitlines(), pid)
    if not relevant_first:
        return tuple(rule)
    rel = [(c, i) for c, i, _ in relevant_objects(pid) if c != "character"]
    seen = {i for _, i in rel}
    return tuple(rel + [(c, i) for c, i in rule if i not in seen])


def program_task(pid: str, dataset: str, success: str = "goal_spec") -> Task:
    """A benchmark task for an ActivityPrograms program (goal spec where it has one, else the diff)."""
    p = load_program(pid)

    def goal():
        if success == "diff" or p.goal_spec is None:
            return p.diff_goal()
        return p.goal_spec

    objs = LazyObjects(lambda: listing(pid, dataset == "virtualhome"))
    return Task(
        id=pid, dataset=dataset, instruction=p.title, description=p.description, scene=f"activity:{pid}",
        goal=goal, reference=p.script_text, objects=objs, meta={"task": p.title},
    )


@DATASETS.register("virtualhome", help="the 342 goal-specified VirtualHome tasks (answered by the 15 recorded LLMs)")
class VirtualHomeDataset(Dataset):
    name = "virtualhome"
    title = "VirtualHome"

    def __init__(self, success: str = "goal_spec", limit: int = 0):
        self.success, self.limit = success, limit

    def tasks(self) -> List[Task]:
        ts = [program_task(t.id, self.name, self.success) for t in tasks()]
        return ts[: self.limit] if self.limit else ts

    def config(self) -> dict:
        return {"name": self.name, "success": self.success, "limit": self.limit}


@DATASETS.register("activity-test", help="the ActivityPrograms test split (6 tasks, up to 4 programs each)")
class ActivityTestDataset(VirtualHomeDataset):
    name = "activity-test"
    title = "ActivityPrograms (test)"
    part = "test"

    def tasks(self) -> List[Task]:
        from safebeal.datasets.activity_programs import split

        ts = [program_task(pid, self.name, self.success) for pid in split()[self.part]]
        return ts[: self.limit] if self.limit else ts


@DATASETS.register("activity-train", help="the ActivityPrograms training split (424 programs of 20 tasks)")
class ActivityTrainDataset(ActivityTestDataset):
    name = "activity-train"
    title = "ActivityPrograms (train)"
    part = "train"
