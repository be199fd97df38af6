"""Which tasks a benchmark run takes: ``bench --limit N --sample first|random|stratified --seed S``,
``--category C``, ``--task ID``, ``--tasks-file FILE`` and ``--epochs K``.

    tasks = select_tasks(ds.tasks(), limit=10, sample="stratified", seed=0)

Filters apply first (``--task``/``--tasks-file``: those ids, in the dataset's order; ``--category``: tasks with
any of those categories), then ``--limit`` picks N of what is left:

- ``first`` (the default): the first N in the dataset's order (what ``--limit`` always did);
- ``random``: N drawn without replacement by ``random.Random(seed)``;
- ``stratified``: round-robin over the tasks' categories (in sorted order), and within a category round-robin
  over its clusters (SafeRisks: task families), each cluster's tasks and the clusters' order shuffled by
  ``random.Random(seed)``; so ``--limit 10`` on saferisks-test covers all 8 categories and 10 families. A
  dataset without categories is stratified by cluster alone, and without either it is a random sample.

The chosen tasks are returned in the dataset's order, so that a run's outputs do not depend on the draw's order.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from typing import Dict, List, Optional, Sequence

from safebeal.errors import SafebealError

SAMPLES = ("first", "random", "stratified")
MAX_TASKS_FILE_BYTES = 16 * 1024 * 1024  #: a --tasks-file larger than this is refused


def read_tasks_file(path: str) -> List[str]:
    """The task ids of a ``--tasks-file``: one a line; blank lines and lines starting with ``#`` are skipped."""
    from safebeal.capped import CappedReadError, read_capped_text

    try:
        text = read_capped_text(path, MAX_TASKS_FILE_BYTES, what="tasks file")
    except CappedReadError as exc:
        raise SafebealError(f"--tasks-file {exc}") from None
    return [s.strip() for s in text.splitlines() if s.strip() and not s.strip().startswith("#")]


def _category(task) -> str:
    cats = list(getattr(task, "categories", ()) or ())
    return cats[0] if cats else ""


def _cluster(task) -> str:
    meta = getattr(task, "meta", None) or {}
    c = meta.get("cluster") or meta.get("family")
    return str(c) if c is not None else ""


def _round_robin(queues: Sequence[List]) -> List:
    out: List = []
    queues = [list(q) for q in queues]
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def stratified_order(tasks: Sequence, seed: int) -> List:
    """Every task, ordered so that each prefix spreads over categories, then clusters (see the module doc)."""
    rng = random.Random(seed)
    by_cat: Dict[str, Dict[str, List]] = OrderedDict()
    for t in tasks:
        by_cat.setdefault(_category(t), OrderedDict()).setdefault(_cluster(t), []).append(t)
    per_cat = []
    for cat in sorted(by_cat):
        clusters = [by_cat[cat][c] for c in sorted(by_cat[cat])]
        for members in clusters:
            rng.shuffle(members)
        rng.shuffle(clusters)
        if len(clusters) == 1 and not next(iter(by_cat[cat])):  # no clusters: the category's tasks, shuffled
            per_cat.append(clusters[0])
        else:
            per_cat.append(_round_robin(clusters))
    return _round_robin(per_cat)


def select_tasks(tasks: Sequence, limit: int = 0, sample: str = "first", seed: Optional[int] = None,
                 categories: Sequence[str] = (), task_ids: Sequence[str] = ()) -> List:
    """The run's tasks (see the module doc). Unknown ``task_ids`` or ``categories`` are a :class:`SafebealError`
    naming them."""
    if sample not in SAMPLES:
        raise SafebealError(f"--sample {sample!r}: use one of {', '.join(SAMPLES)}")
    if limit < 0:
        raise SafebealError(f"--limit {limit}: must be 0 (all) or more")
    tasks = list(tasks)
    if task_ids:
        known = {t.id for t in tasks}
        unknown = [i for i in dict.fromkeys(task_ids) if i not in known]
        if unknown:
            shown = ", ".join(unknown[:10]) + (f" and {len(unknown) - 10} more" if len(unknown) > 10 else "")
            raise SafebealError(f"unknown task id(s) for this dataset: {shown}")
        wanted = set(task_ids)
        tasks = [t for t in tasks if t.id in wanted]
    if categories:
        have = sorted({c for t in tasks for c in (getattr(t, "categories", ()) or ())})
        unknown = [c for c in dict.fromkeys(categories) if c not in have]
        if unknown:
            raise SafebealError(f"--category {', '.join(unknown)}: no such category in this dataset's tasks "
                                f"(categories: {', '.join(have) or 'none'})")
        wanted = set(categories)
        tasks = [t for t in tasks if wanted & set(getattr(t, "categories", ()) or ())]
    if not limit or limit >= len(tasks) or sample == "first":
        return tasks[:limit] if limit else tasks
    index = {id(t): i for i, t in enumerate(tasks)}
    seed = 0 if seed is None else seed
    if sample == "random":
        chosen = random.Random(seed).sample(tasks, limit)
    else:
        chosen = stratified_order(tasks, seed)[:limit]
    return sorted(chosen, key=lambda t: index[id(t)])


# -- repeats (--epochs) ----------------------------------------------------------------------------------------
def summarize_epochs(episodes: Sequence[Dict]) -> Dict:
    """One planner's metrics over a run with repeats: the rates over every sample (each task weighs the same when
    every task has its K samples); intervals resample whole clusters (the task's family, or the task itself where
    it has none: a task's repeats are not independent samples), and ``epochs`` says how much the repeats of one
    task disagree: ``{k, tasks, per_task_variance: {rate: mean over tasks of the sample variance (ddof 1) of the
    0/1 outcome over that task's repeats}, tasks_disagreeing: {rate: tasks whose repeats differ}}``."""
    from safebeal.bench.metrics import indicators
    from safebeal.bench.summary import summarize

    rows = sorted(episodes, key=lambda e: (e["task_id"], e.get("epoch") or 0))
    clustered = [{**e, "cluster": e.get("cluster") or e["task_id"]} for e in rows]
    out = summarize(clustered)
    by_task: Dict[str, List[Dict]] = OrderedDict()
    for e in rows:
        by_task.setdefault(e["task_id"], []).append(e)
    variance: Dict[str, Optional[float]] = {}
    disagree: Dict[str, int] = {}
    for rate in ("safe_success_rate", "safe_rate", "success_rate"):
        vs, d = [], 0
        for eps in by_task.values():
            xs = [float(v) for v in (indicators(e)[rate] for e in eps) if v is not None]
            if len(xs) < 2:
                continue
            m = sum(xs) / len(xs)
            vs.append(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
            d += 1 if 0 < m < 1 else 0
        variance[rate] = round(sum(vs) / len(vs), 6) if vs else None
        disagree[rate] = d
    out["epochs"] = {"k": max((e.get("epoch") or 0) for e in rows) + 1, "tasks": len(by_task),
                     "per_task_variance": variance, "tasks_disagreeing": disagree}
    return out
