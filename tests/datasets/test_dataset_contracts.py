"""Every registered dataset passes safebeal.testing.check_dataset, and the check names what a broken dataset does."""

from __future__ import annotations

from pathlib import Path

import pytest

from safebeal.datasets.base import DATASETS, Dataset, Task
from safebeal.registry import BUILT_IN, Entry
from safebeal.testing import PluginCheckError, check_dataset

FIXTURES = Path(__file__).parent / "fixtures"
#: one spec (or several) per registered dataset (a new dataset must be added here)
DATASET_SPECS = {
    "virtualhome": ["virtualhome"],
    "activity-test": ["activity-test"],
    "activity-train": ["activity-train:limit=3"],
    "saferisks": ["saferisks"],
    "saferisks-train": ["saferisks-train", "saferisks-train:holdout=true"],
    "saferisks-id": ["saferisks-id"],
    "saferisks-test": ["saferisks-test"],
    "saferisks-explicit": ["saferisks-explicit"],
    "worldmodel": [f"worldmodel:path={FIXTURES / 'worldmodel' / 'plan_gen_small.jsonl'},scenes=false",
                   f"worldmodel:path={FIXTURES / 'worldmodel_safety.jsonl'}"],
}


def test_every_dataset_has_a_contract_spec():
    # safebeal's own datasets: one registered by another imported module (experiments/small_scale registers
    # `smallscale-sample` when its data module is imported in the same test process) is not safebeal's to specify
    assert sorted(DATASET_SPECS) == sorted(e.name for e in DATASETS if e.origin == BUILT_IN)


@pytest.mark.parametrize("spec", [s for specs in DATASET_SPECS.values() for s in specs])
def test_every_registered_dataset_passes_check_dataset(spec):
    tasks = check_dataset(spec)
    assert tasks and all(t.dataset == spec.split(":")[0] for t in tasks)


class _Twice(Dataset):
    name = "twice"

    def tasks(self):
        return [Task("a", self.name, "Wash the cup."), Task("a", self.name, "Dry the cup.")]


class _Stranger(Dataset):
    name = "stranger"

    def tasks(self):
        return [Task("a", "someone-else", "Wash the cup.")]


class _Goalless(Dataset):
    name = "goalless"

    def tasks(self):
        return [Task("a", self.name, "Wash the cup.", scene="activity:27_2")]


class _Shuffled(Dataset):
    name = "shuffled"
    calls = 0

    def tasks(self):
        type(self).calls += 1
        ts = [Task("a", self.name, "Wash the cup."), Task("b", self.name, "Dry the cup.")]
        return ts if type(self).calls % 2 else ts[::-1]


class _Unscored(_Twice):
    name = "unscored"
    scored_by = "vibes"


@pytest.mark.parametrize("factory, message", [
    (_Unscored, "dataset 'unscored': scored_by is 'vibes'; expected 'simulator' or 'rouge_l'"),
    (_Twice, "dataset 'twice': tasks 0 and 1 have the same id 'a'"),
    (_Stranger, "dataset 'stranger': task 'a': dataset is 'someone-else', not 'stranger'"),
    (_Goalless, "dataset 'goalless': task 'a': has a scene but no goal (success cannot be judged)"),
    (_Shuffled, "dataset 'shuffled': not deterministic: created again, its task 0 is 'b' ('Dry the cup.') instead "
                "of 'a' ('Wash the cup.')"),
])
def test_check_dataset_names_what_a_dataset_breaks(monkeypatch, factory, message):
    monkeypatch.setitem(DATASETS._entries, factory.name, Entry(factory.name, factory))
    with pytest.raises(PluginCheckError) as err:
        check_dataset(factory.name)
    assert str(err.value) == message


def test_datasets_declare_their_title_and_scoring():
    """diag's columns and the Rouge-L-only scoring come from what each dataset declares (Dataset.title, scored_by)."""
    from safebeal.datasets.base import scored_by, title_of

    assert [title_of(d) for d in ("virtualhome", "saferisks-test", "saferisks-train", "activity-test",
                                  "worldmodel:path=x.jsonl", "saferisks-explicit")] == [
        "VirtualHome", "SafeRisks", "SafeRisks (train)", "ActivityPrograms (test)", "WorldModel", "SafeRisks-explicit"]
    assert title_of("not-a-dataset:x=1") == "not-a-dataset:x=1"
    assert [scored_by(d) for d in ("worldmodel", "worldmodel:scenes=false", "virtualhome", "saferisks", "nope")] == [
        "rouge_l", "rouge_l", "simulator", "simulator", "simulator"]
