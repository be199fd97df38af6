"""The task record every dataset yields, and the dataset registry."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from safebeal.registry import Registry


class LazyObjects(Sequence):
    """A task's object listing, computed on first use (it may need the scene: a dataset of hundreds of tasks
    should not load every scene to be listed)."""

    def __init__(self, compute: Callable[[], Sequence[Tuple[str, int]]]):
        self._compute = compute
        self._value: Optional[Tuple[Tuple[str, int], ...]] = None

    def _get(self) -> Tuple[Tuple[str, int], ...]:
        if self._value is None:
            self._value = tuple(self._compute())
        return self._value

    def __getitem__(self, i):  # type: ignore[override]
        return self._get()[i]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self) -> Iterator[Tuple[str, int]]:
        return iter(self._get())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and list(self) == list(other)

    def __repr__(self) -> str:
        return f"LazyObjects({list(self._get())!r})" if self._value is not None else "LazyObjects(<not computed>)"


@dataclass
class Task:
    """One benchmark task. ``scene`` is a spec (``activity:<id>``) or a callable returning a SceneGraph;
    tasks without a scene (WorldModel) are scored by Rouge-L only."""

    id: str
    dataset: str
    instruction: str
    description: str = ""
    scene: Any = None
    goal: Any = None  # a safebeal.datasets.goals.Goal, or a callable returning one (lazy)
    reference: Optional[str] = None  # reference plan text (one action per line)
    objects: Sequence[Tuple[str, int]] = ()  # (name, id) the prompt lists; plan names resolve against them
    prompt: Optional[str] = None  # datasets that come with their own prompt (WorldModel)
    categories: Sequence[str] = ()
    meta: Dict[str, Any] = field(default_factory=dict)
    #: ``(id, STATE)`` pairs the request itself asks for (the stove ON while the food cooks): the detector does not
    #: count a termination rule about that state of that object (docs/hazards.md, "Intended states")
    intended: Sequence[Tuple[int, str]] = ()

    def get_goal(self):
        return self.goal() if callable(self.goal) else self.goal

    def get_scene(self):
        from safebeal.scene import load_scene

        return self.scene() if callable(self.scene) else load_scene(self.scene)


class Dataset:
    name = "dataset"
    #: how a sample of the dataset is scored when its episode does not say (``Episode.scored_by`` None):
    #: ``simulator`` (SSR, SafeR, SuccR, ... from the simulated plan) or ``rouge_l`` (Rouge-L against the reference
    #: only: tasks without a scene). Read with :func:`scored_by`.
    scored_by = "simulator"
    #: the dataset's name in tables and reports (``safebeal diag``'s columns); the registered name where empty.
    #: Read with :func:`title_of`.
    title = ""

    def tasks(self) -> List[Task]:  # pragma: no cover - abstract
        raise NotImplementedError

    def config(self) -> Dict[str, Any]:
        return {"name": self.name}


def scored_by(dataset: Optional[str]) -> str:
    """How dataset ``dataset``'s samples are scored when they do not say (:attr:`Dataset.scored_by`;
    ``simulator`` for a name this installation does not know)."""
    return _scored_by(dataset) if isinstance(dataset, str) else "simulator"


@lru_cache(maxsize=64)
def _scored_by(dataset: str) -> str:
    from safebeal.registry import parse_spec

    name = parse_spec(dataset)[0] if dataset.strip() else dataset
    return DATASETS.get(name).factory.scored_by if name in DATASETS else "simulator"


def title_of(dataset: Optional[str]) -> str:
    """Dataset ``dataset``'s title (:attr:`Dataset.title`) from its spec; the spec itself for a name this
    installation does not know or a dataset that declares none."""
    if not isinstance(dataset, str) or not dataset.strip():
        return str(dataset)
    from safebeal.registry import parse_spec

    name = parse_spec(dataset)[0]
    return (DATASETS.get(name).factory.title or dataset) if name in DATASETS else dataset


#: built-in dataset modules, imported on first lookup
DATASET_MODULES = (
    "safebeal.datasets.virtualhome",  # virtualhome, activity-test, activity-train
    "safebeal.datasets.worldmodel",  # worldmodel
    "safebeal.datasets.saferisks",  # saferisks, saferisks-train, saferisks-test
    "safebeal.datasets.explicit",  # saferisks-explicit
)
DATASETS: Registry[Dataset] = Registry("dataset", plugins=DATASET_MODULES)
