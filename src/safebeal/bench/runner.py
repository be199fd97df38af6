"""The benchmark runner: planners x dataset -> run directory (config.json, samples.jsonl, summary.json, report)."""

from __future__ import annotations

import hashlib
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from safebeal.bench.evaluate import detector_for, evaluate_output
from safebeal.bench.records import Episode
from safebeal.bench.rundir import RunDir, package_versions
from safebeal.datasets.base import DATASETS, Task
from safebeal.errors import SafebealError

DEFAULT_PLANNERS = "replay:*"


@dataclass
class RunConfig:
    planners: List[str] = field(default_factory=lambda: [DEFAULT_PLANNERS])
    dataset: str = "virtualhome"
    out: str = "runs/latest"
    workers: int = 2
    resume: bool = False
    overwrite: bool = False
    strict: bool = False
    rules: List[str] = field(default_factory=list)
    objects: List[str] = field(default_factory=list)
    chunk: int = 64
    limit: int = 0


def expand_planners(specs: Sequence[str]) -> List[str]:
    from safebeal.planners.planners import recorded_models

    out: List[str] = []
    for s in specs:
        if s in ("replay:*", "replay:all"):
            out += [f"replay:{m}" for m in recorded_models()]
        else:
            out.append(s)
    return out


# -- worker side ---------------------------------------------------------------------------------------------
_TASKS: Dict[str, Task] = {}
_DET_ARGS: Tuple = ()


def _init_worker(dataset: str, det_args: Tuple) -> None:
    global _TASKS, _DET_ARGS
    _TASKS = {t.id: t for t in DATASETS.create(dataset).tasks()}
    _DET_ARGS = det_args


def _eval_group(job: Tuple[str, List[Tuple[str, Optional[str], Optional[str]]]]) -> List[str]:
    task_id, outputs = job
    task = _TASKS[task_id]
    det = detector_for(*_DET_ARGS)
    return [evaluate_output(task, planner, text, err, det).model_dump_json() for planner, text, err in outputs]


def run_bench(cfg: RunConfig, progress: Optional[Callable[[int, int], None]] = None) -> Dict[str, Any]:
    from safebeal.bench.metrics import summarize
    from safebeal.planners.planners import PLANNERS

    t0 = time.perf_counter()
    ds = DATASETS.create(cfg.dataset)
    tasks = ds.tasks()
    if cfg.limit:
        tasks = tasks[: cfg.limit]
    det = detector_for(tuple(cfg.rules), tuple(cfg.objects), cfg.strict)  # fails early on bad rules
    specs = expand_planners(cfg.planners)
    planners = [PLANNERS.create(s) for s in specs]
    labels = [p.spec for p in planners]
    if len(set(labels)) != len(labels):
        raise SafebealError(f"two planners have the same name: {labels}")
    run = RunDir(cfg.out)
    config = {
        "dataset": cfg.dataset,
        "dataset_config": ds.config(),
        "planners": labels,
        "planner_configs": {p.spec: p.config() for p in planners},
        "rules_digest": det.rules.digest(),
        "rule_files": det.rules.files,
        "object_files": det.rules.kb.sources,
        "strict": cfg.strict,
        "n_tasks": len(tasks),
        "versions": package_versions(),
    }
    run.prepare(config, resume=cfg.resume, overwrite=cfg.overwrite)
    done = run.done_keys() if cfg.resume else set()
    total = len(tasks) * len(planners)
    n_done = sum(1 for p in labels for t in tasks if (p, t.id) in done)
    if progress:
        progress(n_done, total)
    det_args = (tuple(cfg.rules), tuple(cfg.objects), cfg.strict)
    pool = ProcessPoolExecutor(max_workers=cfg.workers, initializer=_init_worker, initargs=(cfg.dataset, det_args)) if cfg.workers > 1 else None
    if pool is None:
        _init_worker(cfg.dataset, det_args)
    try:
        for start in range(0, len(tasks), cfg.chunk):
            chunk = tasks[start : start + cfg.chunk]
            by_task: Dict[str, List[Tuple[str, Optional[str], Optional[str]]]] = {t.id: [] for t in chunk}
            for planner, label in zip(planners, labels):
                todo = [t for t in chunk if (label, t.id) not in done]
                if not todo:
                    continue
                for out in planner.plan(todo):
                    by_task[out.task_id].append((label, out.text, out.error))
            jobs = [(tid, outs) for tid, outs in by_task.items() if outs]
            results = pool.map(_eval_group, jobs) if pool else map(_eval_group, jobs)
            for lines in results:
                run.append(Episode.model_validate_json(l) for l in lines)
                n_done += len(lines)
                if progress:
                    progress(n_done, total)
    finally:
        if pool:
            pool.shutdown()
    episodes = run.load()
    summary = summarize_run(episodes, labels)
    summary_meta = {"dataset": cfg.dataset, "n_tasks": len(tasks), "seconds": round(time.perf_counter() - t0, 2)}
    run.write_json("summary.json", summary)
    from safebeal.bench.report import write_report

    write_report(run.path, summary, config, summary_meta)
    return summary


def summarize_run(episodes: Sequence[Episode], labels: Sequence[str]) -> Dict[str, Any]:
    from safebeal.bench.metrics import summarize

    out: Dict[str, Any] = {}
    for label in labels:
        eps = [e for e in episodes if e.planner == label]
        out[label] = summarize([e.model_dump() for e in eps])
    return out
