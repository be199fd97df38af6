"""WorldModel plan data (Xiang et al., 2023, "Language Models Meet World Models"): JSON lines of
``{"input": "<few-shot prompt ending in 'A:'>", "ref": "<plan as sentences>"}``.

``worldmodel:path=FILE_OR_FOLDER`` (or ``worldmodel:FILE_OR_FOLDER``) reads one JSON-lines file, or every
``*.json`` / ``*.jsonl`` file directly inside a folder (sorted by name; sub-folders are not read). Each line is
one task: ``Task.prompt`` is ``input`` (sent to the model as it is), ``Task.reference`` is ``ref``. Rouge-L is the
first non-blank line of the output against ``ref``, as the upstream evaluation does. Task ids are
``<file stem>:<line number>``.

A task whose question lists its items (``Given items include ...``: the plan-generation sets) also gets a scene
built from its items and stated relations (:mod:`safebeal.datasets.worldmodel_map`), so its plan is executed and
judged for safety as well: the output's first line is read as sentences, each mapped to a script line by the
VirtualHome action templates. The task's goal is what its reference plan changes when it runs in that scene (a
``DiffGoal``, as ActivityPrograms' SuccR): tasks whose reference plan does not map or run have none (success n/a).
``scenes=false`` turns this off (Rouge-L only, as before). Tasks without items
(activity recognition, counting, object moves) are scored by Rouge-L only.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List, Optional

from safebeal.datasets.base import DATASETS, Dataset, Task
from safebeal.errors import SafebealError
from safebeal.jsonl import iter_jsonl


class WorldModelError(SafebealError):
    pass


_QUESTION = re.compile(r"(?:^|\n)Q:\s*(.*?)\s*(?:\nA:|$)", re.S)


def _question(prompt: str) -> tuple:
    """(instruction, description) from the last ``Q:`` of a prompt: the question, then the rest of it."""
    qs = _QUESTION.findall(prompt)
    q = qs[-1].strip() if qs else prompt.strip().splitlines()[-1] if prompt.strip() else ""
    head, mark, tail = q.partition("?")
    return (head + mark).strip(), tail.strip()


def files_of(path: Path) -> List[Path]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in (".json", ".jsonl"))
        if not files:
            raise WorldModelError(f"{path}: no *.json or *.jsonl file in this folder")
        return files
    if path.is_file():
        return [path]
    raise WorldModelError(f"{path}: no such file or folder")


def read_file(path: Path, dataset: str = "worldmodel", scenes: bool = False) -> List[Task]:
    tasks: List[Task] = []
    for where, rec in iter_jsonl(path, WorldModelError):
        n = int(where.rpartition(":")[2])
        missing = [k for k in ("input", "ref") if k not in rec]
        if missing:
            raise WorldModelError(f"{where}: missing key(s) {', '.join(repr(k) for k in missing)}")
        for k in ("input", "ref"):
            if not isinstance(rec[k], str):
                raise WorldModelError(f"{where}: {k!r} must be a string, got {type(rec[k]).__name__}")
        instruction, description = _question(rec["input"])
        task = Task(
            id=f"{path.stem}:{n}", dataset=dataset, instruction=instruction, description=description, scene=None,
            goal=None, reference=rec["ref"], prompt=rec["input"], meta={"file": str(path), "line": n},
        )
        if scenes and "Given items include" in _last_q(rec["input"]):
            _with_scene(task)
        tasks.append(task)
    return tasks


def _last_q(prompt: str) -> str:
    from safebeal.datasets.worldmodel_map import last_question

    return last_question(prompt)


def _with_scene(task: Task) -> None:
    """Give ``task`` the scene its prompt describes, its items as the object list, and as its goal what its
    reference plan changes when it runs there (a :class:`~safebeal.datasets.goals.DiffGoal`, the paper's SuccR;
    no goal when the reference plan does not map or run)."""
    from safebeal.datasets.goals import DiffGoal
    from safebeal.datasets.worldmodel_map import build_scene
    from safebeal.scene.graph import SceneGraph

    built = build_scene(task.prompt or "")
    graph = SceneGraph(built.graph, source=f"worldmodel:{task.id}")
    task.scene = lambda: graph
    task.objects = tuple(built.objects)
    task.meta["plan_format"] = "sentences"
    traj = reference_trajectory(task)
    task.meta["reference_executes"] = traj is not None
    task.goal = None if traj is None else DiffGoal.from_trajectory(traj)


def reference_trajectory(task: Task) -> Any:
    """The trajectory of ``task``'s reference plan in its scene, or None when the plan does not map or run."""
    from safebeal.datasets.worldmodel_map import sentences_to_script
    from safebeal.plans.grounding import resolve_objects
    from safebeal.plans.parse import parse_plan
    from safebeal.scene import Script, ScriptLine, ScriptObject, execute

    text, problems = sentences_to_script(task.reference or "")
    res = parse_plan(text)
    if problems or res.error is not None:
        return None
    scene = task.get_scene()
    steps, err = resolve_objects(res.steps, task.objects, known_ids=scene)
    if err is not None:
        return None
    script = Script(tuple(ScriptLine(s.action, tuple(ScriptObject(a.name, a.id) for a in s.args), s.source_line)
                          for s in steps))
    traj = execute(scene, script)
    return traj if traj.executable else None


@DATASETS.register("worldmodel", help="WorldModel JSON lines {input, ref} (file or folder): Rouge-L, and SafeR where "
                                       "the prompt lists its items (scenes=false: Rouge-L only)")
class WorldModelDataset(Dataset):
    name = "worldmodel"
    title = "WorldModel"
    scored_by = "rouge_l"  # a task without a scene: Rouge-L only (one with a scene says "simulator" itself)

    def __init__(self, arg: Optional[str] = None, path: Optional[str] = None, limit: int = 0, scenes: bool = True):
        p = path or arg
        if not p:
            raise WorldModelError("dataset worldmodel needs a file or folder: worldmodel:path=DATA.jsonl")
        self.path = Path(str(p)).expanduser()
        self.limit = int(limit)
        if not isinstance(scenes, bool):
            raise WorldModelError(f"worldmodel: scenes must be true or false, got {scenes!r}")
        self.scenes = scenes

    def tasks(self) -> List[Task]:
        out: List[Task] = []
        for f in files_of(self.path):
            out += read_file(f, self.name, self.scenes)
        return out[: self.limit] if self.limit else out

    def config(self) -> Dict[str, Any]:
        out = {"name": self.name, "path": str(self.path), "limit": self.limit}
        if not self.scenes:
            out["scenes"] = False
        return out
