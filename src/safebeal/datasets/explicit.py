"""SafeRisks-explicit: requests that ask outright for a hazardous act, each with a harmless twin (issue 33).

Every pair shares one environment, one goal (the request's harmless part) and one hazard: the *hazardous* request
asks for what a SafeRisks family's unsafe plan does ("... and leave the burner on"); its *twin* differs by a word
or a phrase and asks for what the family's safe plan does ("... and switch the burner off"). Both were run in the
simulator when the file was built (``safebeal saferisks build-explicit``): the literal plan of the hazardous
request reaches the goal and breaks the family's rule, the twin's reaches it with no violation.

    from safebeal.datasets.explicit import load_explicit_pairs
    pairs = load_explicit_pairs()                     # the shipped file
    p = pairs[0]
    p.hazardous.instruction, p.twin.instruction

Importing this module registers the dataset ``saferisks-explicit``: two tasks per pair, ``<pair>/hazardous`` and
``<pair>/twin``, whose episodes carry ``request`` (kind, pair, category) for the metrics
(:mod:`safebeal.bench.requests`: rejection rate, over-refusal rate, SSR on the twins).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Dict, List, Literal, Optional, Sequence, Tuple, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

from safebeal.datasets.base import DATASETS, Dataset, Task
from safebeal.datasets.goals import GoalSpec
from safebeal.datasets.saferisks import (Environment, IntendedState, Materialised, SafeRisksError, _check_plan,
                                         dump_entries, load_records)
from safebeal.errors import SafebealError
from safebeal.resources import PACKAGE_DATA
from safebeal.safety.taxonomy import SLUGS, CategorySlug

EXPLICIT_FILE = PACKAGE_DATA / "datasets" / "data" / "saferisks_explicit.jsonl.gz"
KINDS = ("hazardous", "twin")


class ExplicitError(SafeRisksError):
    pass


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Request(_Model):
    """One side of a pair: what is asked, and the plan that does literally that (verified when built)."""

    instruction: str
    plan: List[str]
    template: int  # index of the family's explicit pair it was rendered from


class ExplicitPair(Materialised, _Model):
    SOURCE: ClassVar[str] = "saferisks-explicit"

    id: str  # <family>/x<NNN>
    family: str
    category: CategorySlug
    rule_id: str  # the rule the hazardous request's literal plan breaks
    hazard: str
    catalogue: List[str] = Field(default_factory=list)  # hazard catalogue entries that list the rule
    split: Literal["train", "test"]  # the family's SafeRisks split
    environment: Environment
    goal: Dict[str, Any]  # vh_goal form, as SafeRisks
    intended: List[IntendedState] = Field(default_factory=list)
    objects: List[Tuple[str, int]] = Field(default_factory=list)
    hazardous: Request
    twin: Request
    seed: int = 0

    @model_validator(mode="after")
    def _consistent(self) -> "ExplicitPair":
        for kind in KINDS:
            r: Request = getattr(self, kind)
            if not r.plan:
                raise ValueError(f"{kind}.plan is empty")
            _check_plan(r.plan, f"{self.id} {kind}.plan")
        if self.hazardous.instruction == self.twin.instruction:
            raise ValueError("the hazardous request and its twin are the same text")
        try:
            GoalSpec.from_vh_goal(self.goal, source="goal")
        except SafebealError as exc:
            raise ValueError(str(exc)) from None
        return self

    def to_json(self) -> str:
        import json

        d = self.model_dump(mode="json")
        if not d["intended"]:
            del d["intended"]
        return json.dumps(d, ensure_ascii=False, separators=(",", ":"))


def load_explicit_pairs(path: Union[str, Path, None] = None) -> List[ExplicitPair]:
    """Pairs of a SafeRisks-explicit JSONL file (gzip or plain); default: the shipped file."""
    return load_records(Path(path) if path is not None else EXPLICIT_FILE, ExplicitPair, ExplicitError,
                        "SafeRisks-explicit", "pair", "safebeal saferisks build-explicit")


def dump_pairs(pairs: Sequence[ExplicitPair], path: Union[str, Path]) -> Path:
    """Write JSONL (deterministic gzip when the name ends in .gz), as SafeRisks."""
    return dump_entries(pairs, path)  # type: ignore[arg-type]  # anything with to_json()


def pair_task(p: ExplicitPair, kind: str, dataset: str) -> Task:
    r: Request = getattr(p, kind)
    return Task(
        id=f"{p.id}/{kind}",
        dataset=dataset,
        instruction=r.instruction,
        scene=p.scene,
        goal=p.goal_spec,
        # the reference is the safe way to do what the request may safely be done: the twin's plan, on both sides
        reference="\n".join(p.twin.plan),
        objects=[(c, i) for c, i in p.objects],
        categories=[p.category],
        intended=[(x.id, x.state) for x in p.intended],
        meta={"family": p.family, "cluster": p.family, "hazard": p.hazard, "split": p.split, "rule": p.rule_id,
              "request": {"kind": kind, "pair": p.id, "category": p.category},
              "refusal_prompt": True,
              # the hazardous request's literal plan, as SafeRisks' unsafe plans (the detector's expected finding)
              "unsafe_plans": [{"plan": p.hazardous.plan, "rule_id": p.rule_id, "category": p.category}]},
    )


@DATASETS.register("saferisks-explicit", help="SafeRisks-explicit: requests that ask outright for a hazardous act, "
                                              "each with a harmless twin (rejection and over-refusal rates)")
class ExplicitDataset(Dataset):
    name = "saferisks-explicit"
    title = "SafeRisks-explicit"

    def __init__(self, path: Optional[str] = None, category: Optional[str] = None, split: Optional[str] = None,
                 kind: Optional[str] = None, limit: int = 0, arg: Optional[str] = None):
        self.path = path or arg
        if category is not None and category not in SLUGS:
            raise ExplicitError(f"unknown category {category!r}; known: {list(SLUGS)}")
        if split is not None and split not in ("train", "test"):
            raise ExplicitError(f"split={split!r}: use train or test")
        if kind is not None and kind not in KINDS:
            raise ExplicitError(f"kind={kind!r}: use {' or '.join(KINDS)}")
        self.category, self.split, self.kind, self.limit = category, split, kind, int(limit or 0)

    def pairs(self) -> List[ExplicitPair]:
        ps = load_explicit_pairs(self.path)
        if self.split is not None:
            ps = [p for p in ps if p.split == self.split]
        if self.category is not None:
            ps = [p for p in ps if p.category == self.category]
        return ps[: self.limit] if self.limit else ps

    def tasks(self) -> List[Task]:
        kinds = (self.kind,) if self.kind else KINDS
        return [pair_task(p, k, self.name) for p in self.pairs() for k in kinds]

    def config(self) -> dict:
        return {"name": self.name, "path": str(self.path or EXPLICIT_FILE), "category": self.category,
                "split": self.split, "kind": self.kind, "limit": self.limit}
