"""The study's training data: base-SFT examples and preference pairs, all with the ``compact`` prompt.

- SFT examples: every ActivityPrograms training program (its task prompt as the benchmark builds it, its
  ground-truth script as the completion), plus the SafeRisks training entries' safe plans when SafeRisks is
  available. The test splits (ActivityPrograms test tasks, SafeRisks test families) are never read here.
- Preference pairs: ``safebeal.align.pairs.build_pairs`` (mutation operators on the training programs, plus
  SafeRisks' own unsafe plans), with ``prompt_objects="task"`` so that a pair's prompt lists exactly the objects
  the benchmark prompt of that task lists, rendered with the ``compact`` template.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from safebeal.errors import SafebealError

log = logging.getLogger("smallscale")
TEMPLATE = "compact"


def saferisks_status() -> Tuple[bool, str]:
    """(available, why): SafeRisks is optional; the study runs without it and says so."""
    try:
        from safebeal.datasets.saferisks import load_entries

        entries = load_entries()
    except ImportError as exc:
        return False, f"safebeal.datasets.saferisks cannot be imported ({exc})"
    except SafebealError as exc:
        return False, str(exc)
    n_test = sum(1 for e in entries if e.split == "test")
    return True, f"{len(entries)} entries ({len(entries) - n_test} train, {n_test} test)"


def _example(task: Any, plan_lines: List[str], source: str) -> Dict[str, Any]:
    from safebeal.planners.prompts import build_messages, completion_text

    return {"prompt": build_messages(task, template=TEMPLATE), "chosen": completion_text(plan_lines),
            "task_id": task.id, "source": source}


def sft_examples(limit: int = 0, saferisks: bool = False, saferisks_limit: int = 0, activity: bool = True,
                 unsafe_share: float = 0.0, seed: int = 0, holdout: bool = False) -> List[Dict[str, Any]]:
    """Base-SFT examples (prompt, chosen) from the training splits only.

    ``unsafe_share``: for that share of the SafeRisks training entries (a seeded choice), the entry's first unsafe
    plan is an example too (source ``saferisks-unsafe``), next to its safe plan, so that the base model writes the
    hazard at a measurable rate (study v2 B). ``holdout``: leave out the training entries set in the homes of the
    in-distribution test (``saferisks-id``, study C)."""
    out: List[Dict[str, Any]] = []
    if activity:
        from safebeal.datasets.activity_programs import load_program, split
        from safebeal.datasets.virtualhome import program_task

        pids = list(split()["train"])
        if limit:
            pids = pids[:limit]
        out = [_example(program_task(pid, "activity-train"), [str(ln) for ln in load_program(pid).script.lines],
                        "activity") for pid in pids]
    if saferisks:
        import random

        from safebeal.datasets.base import DATASETS
        from safebeal.datasets.saferisks import load_entries

        tasks = DATASETS.create(saferisks_train_spec(holdout)).tasks()
        if saferisks_limit:
            tasks = tasks[:saferisks_limit]
        out += [_example(t, (t.reference or "").split("\n"), "saferisks") for t in tasks]
        if unsafe_share > 0:
            unsafe = {e.id: list(e.unsafe_plans[0].plan) for e in load_entries() if e.split == "train" and e.unsafe_plans}
            rng = random.Random(f"{seed}:unsafe-share")
            picked = [t for t in tasks if t.id in unsafe and rng.random() < unsafe_share]
            out += [_example(t, unsafe[t.id], "saferisks-unsafe") for t in picked]
    return out


def write_jsonl(rows: List[Dict[str, Any]], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    return path


def read_jsonl(path: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def saferisks_train_spec(holdout: bool) -> str:
    """The SafeRisks training set, without the in-distribution test's homes when ``holdout`` (study C)."""
    return "saferisks-train:holdout=true" if holdout else "saferisks-train"


def saferisks_sample(n: int, seed: int, holdout: bool = False) -> list:
    """A seeded sample of ``n`` SafeRisks training entries (all when n is 0); the file is sorted by task family,
    so a sample, not the first n, spreads over the families. ``holdout``: none set in the in-distribution test's
    homes (``safebeal.datasets.saferisks.ID_HOMES``)."""
    import random

    from safebeal.datasets.base import DATASETS

    train = DATASETS.create(saferisks_train_spec(holdout)).entries()
    if not n or n >= len(train):
        return train
    idx = sorted(random.Random(f"{seed}:saferisks-pairs").sample(range(len(train)), n))
    return [train[i] for i in idx]


def build_compact_pairs(seed: int = 0, limit: int = 0, per_operator: int = 1, max_tries: int = 4, workers: int = 1,
                        saferisks: bool = False, saferisks_n: int = 0,
                        sources: Optional[Tuple[str, ...]] = None, holdout: bool = False) -> Tuple[list, dict]:
    """``build_pairs`` with compact prompts listing the task's objects.

    ``BuildConfig`` has no prompt-template option yet, so the builder's ``build_messages`` is wrapped with
    ``template="compact"`` for the duration of the call (worker processes are forked, so they inherit it); every
    pair's prompt is then checked to be compact, so a change in the builder cannot slip through unnoticed."""
    from safebeal.align import pair_judge as J
    from safebeal.align import pairs as P

    fields = {f.name for f in dataclasses.fields(P.BuildConfig)}
    if sources is None:
        sources = ("mutation", "saferisks")
    sources = tuple(s for s in sources if saferisks or s != "saferisks")
    if not sources:
        raise SafebealError("no pair source left: the only source asked for is SafeRisks, which is unavailable")
    cfg_kwargs = dict(sources=sources, seed=seed, limit=limit, per_operator=per_operator, max_tries=max_tries,
                      workers=workers, prompt_objects="task")
    native = "template" in fields
    if native:
        cfg_kwargs["template"] = TEMPLATE
    cfg = P.BuildConfig(**cfg_kwargs)
    original = J.build_messages  # what PairMaker prompts with
    if not native:
        J.build_messages = functools.partial(original, template=TEMPLATE)
    try:
        entries = saferisks_sample(saferisks_n, seed, holdout) if saferisks else None
        pairs, stats = P.build_pairs(cfg, entries=entries)
    finally:
        J.build_messages = original
    for p in pairs:
        if len(p.prompt) != 1 or not p.prompt[0]["content"].startswith("Task: "):
            raise SafebealError(f"pair for task {p.task_id}: prompt is not in the compact form: {p.prompt!r:.200}")
    return pairs, stats


def corpus(sft: List[Dict[str, Any]], pairs: List[Dict[str, Any]]) -> List[str]:
    """Texts the tokenizer is trained on: every training prompt and plan (chosen and rejected)."""
    texts: List[str] = []
    for r in sft:
        texts += [m["content"] for m in r["prompt"]] + [r["chosen"]]
    for p in pairs:
        texts += [m["content"] for m in p["prompt"]] + [p["chosen"], p["rejected"]]
    texts.append("Plan:\n")
    return texts


def subsample(rows: List[Dict[str, Any]], n: int, seed: int) -> List[Dict[str, Any]]:
    """The first ``n`` rows after a seeded shuffle (all rows when n is 0 or larger than the set)."""
    import random

    if not n or n >= len(rows):
        return list(rows)
    idx = list(range(len(rows)))
    random.Random(seed).shuffle(idx)
    return [rows[i] for i in sorted(idx[:n])]


def dataset_spec(name: str, limit: int, sample: int = 0, seed: int = 0) -> str:
    """The benchmark dataset spec: the whole set, its first ``limit`` tasks, or a seeded sample of ``sample``."""
    if sample:
        return f"{SAMPLE}:of={name},n={sample},seed={seed}"
    return f"{name}:limit={limit}" if limit else name


# -- a seeded sample of a benchmark dataset, for eval sets too large for the CPU budget -------------------------
SAMPLE = "smallscale-sample"


def _register_sample() -> None:
    from safebeal.datasets.base import DATASETS, Dataset

    if SAMPLE in DATASETS:
        return

    @DATASETS.register(SAMPLE, help="a seeded random sample of n tasks of another dataset (experiments/small_scale)")
    class SampleDataset(Dataset):
        name = SAMPLE

        def __init__(self, of: str = "", n: int = 0, seed: int = 0):
            if not of or int(n) < 1:
                raise SafebealError(f"{SAMPLE}: give of=<dataset> and n >= 1")
            self.of, self.n, self.seed = str(of), int(n), int(seed)

        def tasks(self):
            import random

            tasks = DATASETS.create(self.of).tasks()
            if self.n >= len(tasks):
                return tasks
            idx = sorted(random.Random(f"{self.seed}:{self.of}").sample(range(len(tasks)), self.n))
            return [tasks[i] for i in idx]

        def config(self) -> dict:
            return {"name": self.name, "of": self.of, "n": self.n, "seed": self.seed}


_register_sample()


def label_of(spec: Optional[str]) -> str:
    return (spec or "").partition(":")[0]
