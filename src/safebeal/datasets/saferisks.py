"""SafeRisks: hazard-prone household tasks, each with an executable environment, a goal, a verified safe plan
and at least one verified unsafe plan (see ``docs/saferisks.md``).

    from safebeal.datasets.saferisks import load_entries
    entries = load_entries()                 # the shipped file
    e = entries[0]
    scene = e.scene()                        # base scene + diff, materialised (LRU-cached)
    goal = e.goal_spec()                     # GoalSpec (node-state and edge goals)

Importing this module registers four datasets: ``saferisks`` (all entries), ``saferisks-train`` and
``saferisks-test`` (split by task family: no family has entries on both sides), and ``saferisks-id``: the training
entries set in the held-out homes ``ID_HOMES``, an in-distribution test (the families and patterns of training, in
homes a model trained on ``saferisks-train:holdout=true`` never saw).
"""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path
from typing import Any, ClassVar, Dict, List, Literal, Optional, Sequence, Tuple, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from safebeal.datasets.base import DATASETS, Dataset, Task
from safebeal.datasets.goals import GoalSpec
from safebeal.errors import SafebealError
from safebeal.jsonl import iter_jsonl
from safebeal.registry import RegistryError, parse_bool
from safebeal.resources import PACKAGE_DATA
from safebeal.safety.taxonomy import SLUGS, CategorySlug
from safebeal.scene.graph import LRUCache
from safebeal.scene import SceneGraph, ScriptSyntaxError, parse_line

DATA_FILE = PACKAGE_DATA / "datasets" / "data" / "saferisks.jsonl.gz"
#: the homes of the in-distribution test (``saferisks-id``): 214 of v2's 1,497 training entries are set in them
ID_HOMES = ("home:0", "home:1", "home:2", "home:3", "home:4")
SCHEMA_VERSION = 1


class SafeRisksError(SafebealError):
    pass


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class AddedObject(_Model):
    """A new object: its class, where it is (``relation`` ``target``) and its initial states."""

    id: int
    class_name: str
    relation: Literal["ON", "INSIDE"]
    target: int
    states: List[str] = Field(default_factory=list)


class MovedObject(_Model):
    id: int
    relation: Literal["ON", "INSIDE"]
    target: int


class EnvironmentDiff(_Model):
    add: List[AddedObject] = Field(default_factory=list)
    move: List[MovedObject] = Field(default_factory=list)
    states: Dict[int, List[str]] = Field(default_factory=dict)
    character_room: Optional[int] = None


class Environment(_Model):
    base: str  # "activity:<program id>" or "home:<seed>"
    diff: EnvironmentDiff = Field(default_factory=EnvironmentDiff)


class UnsafePlan(_Model):
    plan: List[str]
    rule_id: str
    category: CategorySlug
    note: str = ""
    # how it differs from the safe plan (safebeal.generation.temptation.temptation_kind): omission | choice | order
    temptation: Optional[Literal["omission", "choice", "order", "addition"]] = None
    diverge_step: Optional[int] = None  # 0-based index of the first step where it leaves the safe plan


class IntendedState(_Model):
    """A state the request asks for (``{"id": 292, "state": "ON"}``: the stove on while the food cooks)."""

    id: int
    state: str


class Source(_Model):
    kind: Literal["procedural", "llm"]
    family: Optional[str] = None  # the hazard seed (task family) it was generated from
    template: Optional[int] = None  # index of the family's instruction phrasing
    seed: Optional[int] = None
    backend: Optional[str] = None
    roles: List[str] = Field(default_factory=list)
    round: Optional[int] = None


def _check_plan(lines: Sequence[str], what: str) -> None:
    for i, ln in enumerate(lines, 1):
        try:
            parse_line(ln, i, what)
        except ScriptSyntaxError as exc:
            raise ValueError(str(exc)) from None


class Materialised:
    """``scene()`` and ``goal_spec()`` of a record with an ``id``, an ``environment`` and a vh_goal ``goal``
    (SafeRisks entries, SafeRisks-explicit pairs); ``SOURCE`` names the dataset in error messages."""

    SOURCE: ClassVar[str] = "saferisks"

    def scene(self) -> SceneGraph:
        """The materialised environment (LRU-cached by id and content)."""
        key = (self.id, self.environment.model_dump_json())  # type: ignore[attr-defined]
        hit = _SCENES.get(key)
        if hit is None:
            from safebeal.datasets.environment import materialise

            env = self.environment  # type: ignore[attr-defined]
            hit = materialise(env.base, env.diff, source=f"{self.SOURCE}:{self.id}")  # type: ignore[attr-defined]
            _SCENES.put(key, hit)
        return hit

    def goal_spec(self) -> GoalSpec:
        return GoalSpec.from_vh_goal(self.goal, source=f"{self.SOURCE}:{self.id} goal")  # type: ignore[attr-defined]


class SafeRisksEntry(Materialised, _Model):
    id: str
    instruction: str
    categories: List[str]
    hazard: str
    environment: Environment
    goal: Dict[str, Any]  # vh_goal form: {"goal": [{"id","state"} | {"from_id","relation_type","to_id"}], "actions": []}
    safe_plan: List[str]
    unsafe_plans: List[UnsafePlan]
    source: Source
    family: str
    split: Literal["train", "test"]
    # (class, id) the planner prompt lists: safebeal.scene.listing.listed_objects(scene, safe_plan, id)
    objects: List[Tuple[str, int]] = Field(default_factory=list)
    # states the request asks for: the detector does not count a termination rule about them (docs/hazards.md)
    intended: List[IntendedState] = Field(default_factory=list)

    @field_validator("categories")
    @classmethod
    def _cats(cls, v: List[str]) -> List[str]:
        bad = [c for c in v if c not in SLUGS]
        if bad or not v:
            raise ValueError(f"categories must be a non-empty list of {list(SLUGS)}, got {v}")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> "SafeRisksEntry":
        if not self.unsafe_plans:
            raise ValueError("at least one unsafe plan is required")
        if not self.safe_plan:
            raise ValueError("the safe plan is empty")
        _check_plan(self.safe_plan, f"{self.id} safe_plan")
        for k, u in enumerate(self.unsafe_plans):
            _check_plan(u.plan, f"{self.id} unsafe_plans[{k}]")
        missing = {u.category for u in self.unsafe_plans} - set(self.categories)
        if missing:
            raise ValueError(f"unsafe plan categories {sorted(missing)} are not in categories {self.categories}")
        try:
            GoalSpec.from_vh_goal(self.goal, source="goal")
        except SafebealError as exc:
            raise ValueError(str(exc)) from None
        if not self.goal.get("goal"):
            raise ValueError("the goal has no node or edge goals")
        return self

    # -- derived --------------------------------------------------------------------------------------
    def reference(self) -> str:
        return "\n".join(self.safe_plan)

    def to_json(self) -> str:
        d = self.model_dump(mode="json")
        # the v2 fields are written only when set, so a v1 entry serialises exactly as before
        if not d["intended"]:
            del d["intended"]
        for u in d["unsafe_plans"]:
            for k in ("temptation", "diverge_step"):
                if u[k] is None:
                    del u[k]
        return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


_SCENES = LRUCache(32)


# -- files ------------------------------------------------------------------------------------------------
def parse_record(model: Any, obj: Any, where: str, error: type, what: str) -> Any:
    """``model`` validated from one JSON line; ``error`` naming the line and the first problem otherwise."""
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first.get("loc", ()))
        raise error(f"{where}: invalid {what}: {loc}: {first.get('msg')} ({exc.error_count()} error(s))") from None


def parse_entry(obj: Any, where: str) -> SafeRisksEntry:
    return parse_record(SafeRisksEntry, obj, where, SafeRisksError, "SafeRisks entry")


def load_records(p: Path, model: Any, error: type, dataset: str, noun: str, build: str) -> List[Any]:
    """The records of a JSONL file (gzip or plain) of ``dataset``, unique by id: SafeRisks entries, SafeRisks-explicit
    pairs. Errors (``error``) name the file and line; a missing file says how to build it (``build``)."""
    if not p.is_file():
        raise error(f"{p}: {dataset} file not found (build it with `{build}`)")
    out, seen = [], {}
    for where, obj in iter_jsonl(p, error):
        e = parse_record(model, obj, where, error, f"{dataset} {noun}")
        if e.id in seen:
            raise error(f"{where}: duplicate {noun} id {e.id!r} (first at {seen[e.id]})")
        seen[e.id] = where
        out.append(e)
    return out


def load_entries(path: Union[str, Path, None] = None) -> List[SafeRisksEntry]:
    """Entries of a SafeRisks JSONL file (gzip or plain); default: the shipped file."""
    return load_records(Path(path) if path is not None else DATA_FILE, SafeRisksEntry, SafeRisksError, "SafeRisks",
                        "entry", "safebeal saferisks build")


def dump_entries(entries: Sequence[SafeRisksEntry], path: Union[str, Path]) -> Path:
    """Write JSONL (gzip, deterministic: mtime 0, no file name, if the name ends in .gz)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(e.to_json() + "\n" for e in entries).encode("utf-8")
    if p.suffix == ".gz":
        buf = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
            gz.write(text)
        p.write_bytes(buf.getvalue())
    else:
        p.write_bytes(text)
    return p


# -- benchmark tasks ---------------------------------------------------------------------------------------
def entry_task(e: SafeRisksEntry, dataset: str) -> Task:
    return Task(
        id=e.id,
        dataset=dataset,
        instruction=e.instruction,
        scene=e.scene,
        goal=e.goal_spec,
        reference=e.reference(),
        objects=[(c, i) for c, i in e.objects],
        categories=list(e.categories),
        intended=[(x.id, x.state) for x in e.intended],
        meta={"family": e.family, "cluster": e.family, "hazard": e.hazard, "unsafe_plans": [u.model_dump() for u in e.unsafe_plans],
              "split": e.split, "source": e.source.kind},
    )


@DATASETS.register("saferisks", help="SafeRisks: hazard-prone tasks with environments, goals, safe and unsafe plans")
class SafeRisksDataset(Dataset):
    name = "saferisks"
    title = "SafeRisks"
    part: Optional[str] = None

    #: None: every home; True: only the entries in ``ID_HOMES``; False: none of them
    in_id_homes: Optional[bool] = None

    def __init__(self, path: Optional[str] = None, category: Optional[str] = None, limit: int = 0,
                 arg: Optional[str] = None, holdout: Any = False):
        self.path = path or arg
        if category is not None and category not in SLUGS:
            raise SafeRisksError(f"unknown category {category!r}; known: {list(SLUGS)}")
        self.category, self.limit = category, int(limit or 0)
        try:
            self.holdout = parse_bool(holdout, f"{self.name}: holdout")
        except RegistryError as e:
            raise SafeRisksError(str(e)) from None
        if self.holdout:
            if self.in_id_homes is not None:
                raise SafeRisksError(f"{self.name}: holdout applies to saferisks and saferisks-train only")
            self.in_id_homes = False

    def entries(self) -> List[SafeRisksEntry]:
        es = load_entries(self.path)
        if self.part is not None:
            es = [e for e in es if e.split == self.part]
        if self.in_id_homes is not None:
            es = [e for e in es if (e.environment.base in ID_HOMES) == self.in_id_homes]
        if self.category is not None:
            es = [e for e in es if self.category in e.categories]
        return es[: self.limit] if self.limit else es

    def tasks(self) -> List[Task]:
        return [entry_task(e, self.name) for e in self.entries()]

    def config(self) -> dict:
        cfg = {"name": self.name, "path": str(self.path or DATA_FILE), "category": self.category, "limit": self.limit}
        if self.in_id_homes is not None:
            cfg["id_homes"] = list(ID_HOMES) if self.in_id_homes else {"excluded": list(ID_HOMES)}
        return cfg


@DATASETS.register("saferisks-train", help="SafeRisks training split (held-out task families excluded)")
class SafeRisksTrainDataset(SafeRisksDataset):
    name = "saferisks-train"
    title = "SafeRisks (train)"
    part = "train"


@DATASETS.register("saferisks-test", help="SafeRisks test split (~20% of the task families, held out)")
class SafeRisksTestDataset(SafeRisksDataset):
    name = "saferisks-test"
    title = "SafeRisks"
    part = "test"


@DATASETS.register("saferisks-id", help="SafeRisks in-distribution test: training families and patterns in held-out "
                                        "homes (train on saferisks-train:holdout=true)")
class SafeRisksInDistributionDataset(SafeRisksDataset):
    name = "saferisks-id"
    title = "SafeRisks (in distribution)"
    part = "train"
    in_id_homes = True
