"""The benchmark runner: planners x dataset -> run directory (config.json, samples.jsonl, summary.json, report).

    cfg = RunConfig(planners=["replay:gpt-4o"], dataset="virtualhome", out="runs/gpt4o")
    summary = run_bench(cfg)          # {planner label: metrics}

Planners produce raw text in the main process (backends batch, retry and record failures there); evaluation
(parse, resolve, simulate, detect, goal check) runs in an executor (worker processes, or Ray tasks:
``safebeal.bench.executors``; with ``--executor ray`` generation runs as Ray tasks as well,
``safebeal.planners.backends.ray_remote``). Recorded outputs (replay) are evaluated one task's outputs of every such planner
per job, so each scene is loaded once per job and identical outputs on the same task are evaluated once.
Generated outputs stream: each one is evaluated as soon as its generation finishes, while the backend keeps
``concurrency`` requests in flight, and is written (fsynced) as soon as it is evaluated; there is no batch
barrier. ``resume=True`` skips the (planner, task) pairs already there, so a killed run loses nothing and
duplicates nothing; generations that finished but were not yet evaluated are in the response cache.
"""

from __future__ import annotations

import time
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from safebeal.bench.evaluate import DEFAULT_EPISODE_TIMEOUT, detector_for
from safebeal.bench.executors import Output, _init_worker, dump_episode, make_executor  # noqa: F401 - re-exported
from safebeal.bench.records import Episode, sample_key
from safebeal.bench.rundir import RunDir, RunDirError, package_versions, read_config
from safebeal.datasets.base import DATASETS, Task
from safebeal.errors import SafebealError
from safebeal.scene.extensions import check_actions

DEFAULT_PLANNERS = "replay:*"
Progress = Callable[[int, int], None]


@dataclass
class RunConfig:
    planners: List[str] = field(default_factory=lambda: [DEFAULT_PLANNERS])
    dataset: str = "virtualhome"
    out: str = "runs/latest"
    backend: Optional[str] = None  # default backend for generating planners that name none
    workers: int = 2
    resume: bool = False
    overwrite: bool = False
    strict: bool = False
    rules: List[str] = field(default_factory=list)
    objects: List[str] = field(default_factory=list)
    chunk: int = 64  # unused since outputs stream (kept so that older run configs still load)
    limit: int = 0
    episode_timeout: Optional[float] = DEFAULT_EPISODE_TIMEOUT  # seconds per episode's evaluation (None/0: no limit)
    gen: Dict[str, Any] = field(default_factory=dict)  # the run's generation settings (bench --temperature ...)
    cache: bool = True  # the response cache for generating backends (bench --no-cache turns it off)
    cache_dir: Optional[str] = None  # None: the user cache directory
    executor: str = "local"  # local | ray
    ray_address: Optional[str] = None
    retry_failed: bool = False  # drop the samples whose generation failed, then resume (bench --retry-failed)
    actions: str = "extended"  # the action vocabulary: extended (with the action extensions) or vh
    png: bool = True  # also draw the report's charts as PNG files (bench --no-png: not; not part of config.json)
    sample: str = "first"  # how --limit picks tasks: first | random | stratified (safebeal.bench.sampling)
    seed: Optional[int] = None  # the sampling seed (bench --seed; None: 0)
    categories: List[str] = field(default_factory=list)  # only tasks of these categories (bench --category)
    tasks: List[str] = field(default_factory=list)  # only these task ids (bench --task / --tasks-file)
    epochs: int = 1  # samples per (planner, task) (bench --epochs)


def expand_planners(specs: Sequence[str]) -> List[str]:
    """``replay:*`` (or ``replay:all``) stands for the 15 recorded models, also as a wrapped planner
    (``shield:planner=replay:*,mode=repair``: one shield per model)."""
    from safebeal.planners.planners import recorded_models

    out: List[str] = []
    for s in specs:
        if s in ("replay:*", "replay:all"):
            out += [f"replay:{m}" for m in recorded_models()]
        elif "=replay:*" in s or "=[replay:*]" in s:  # a wrapper of every model: shield:planner=replay:*,mode=repair
            out += [s.replace("replay:*", f"replay:{m}", 1) for m in recorded_models()]
        else:
            out.append(s)
    return out


def build_planners(specs: Sequence[str], backend: Optional[str] = None, gen: Optional[Dict[str, Any]] = None,
                   cache: Any = None, actions: str = "extended") -> list:
    """Planners from specs; ``backend`` is the default for generating planners that name none (and for what a
    wrapper such as ``shield`` wraps), ``gen`` the run's generation settings, ``cache`` the response cache their
    (cacheable) backends use and ``actions`` the vocabulary their prompts list (``--actions``)."""
    from safebeal.planners.planners import create_planner, planner_label
    from safebeal.planners.backends.retry import strip_userinfo

    planners = [create_planner(s, backend, actions) for s in expand_planners(specs)]
    for p in planners:
        attach(p, gen, cache)
        p.spec = strip_userinfo(p.spec)  # a label never carries a URL's credentials (user:secret@)
        p.run_label = strip_userinfo(planner_label(p))
    labels = [p.run_label for p in planners]
    dupes = sorted({l for l in labels if labels.count(l) > 1})
    if dupes:
        raise SafebealError(f"two planners have the same name: {dupes}; give each its own label= "
                            "(e.g. few-shot:label=fs-warm,temperature=0.7)")
    return planners


def attach(planner: Any, gen: Optional[Dict[str, Any]], cache: Any) -> None:
    """Give a generating planner the run's generation settings and the response cache (detached again by
    :func:`detach` when the run ends, so a planner can serve several runs)."""
    if gen and hasattr(planner, "set_run_settings"):
        planner.set_run_settings(gen)
    backend = getattr(planner, "backend", None)
    if cache is not None and backend is not None and getattr(backend, "cacheable", False) and backend.cache is None:
        backend.cache = cache


def detach(planners: Sequence[Any], cache: Any) -> None:
    for p in planners:
        backend = getattr(p, "backend", None)
        if backend is not None and cache is not None and getattr(backend, "cache", None) is cache:
            backend.cache = None


# -- main side -----------------------------------------------------------------------------------------------
def _dataset_spec(cfg: RunConfig) -> str:
    return cfg.dataset


def run_bench(cfg: RunConfig, progress: Optional[Progress] = None, planners: Optional[list] = None) -> Dict[str, Any]:
    """Run ``cfg``; returns the summary (planner label -> metrics) and writes the run directory."""
    t0 = time.perf_counter()
    ds = DATASETS.create(_dataset_spec(cfg))
    tasks = ds.tasks()
    if cfg.epochs < 1:
        raise SafebealError(f"--epochs {cfg.epochs}: must be 1 or more")
    if cfg.limit or cfg.categories or cfg.tasks or cfg.sample != "first":
        from safebeal.bench.sampling import select_tasks

        tasks = select_tasks(tasks, cfg.limit, cfg.sample, cfg.seed, cfg.categories, cfg.tasks)
    if not tasks:
        raise SafebealError(f"dataset {cfg.dataset!r} has no tasks")
    det = detector_for(tuple(cfg.rules), tuple(cfg.objects), cfg.strict)  # fails early on bad rules
    from safebeal.planners.backends.cache import open_cache

    actions = check_actions(cfg.actions)
    cache = open_cache(cfg.cache_dir, cfg.cache)
    try:
        if planners is None:
            planners = build_planners(cfg.planners, cfg.backend, cfg.gen, cache, actions)
        else:
            for p in planners:
                attach(p, cfg.gen, cache)
        return _run_with(cfg, ds, tasks, det, planners, progress, t0)
    finally:
        if cache is not None:
            detach(planners or [], cache)
            cache.close()


def _run_with(cfg: RunConfig, ds: Any, tasks: List[Task], det: Any, planners: list, progress: Optional[Progress],
              t0: float) -> Dict[str, Any]:
    from safebeal.planners.planners import planner_label

    labels = [planner_label(p) for p in planners]
    run = RunDir(cfg.out)
    config = {
        "dataset": cfg.dataset,
        "dataset_config": ds.config(),
        "planners": labels,
        "planner_configs": {planner_label(p): p.config() for p in planners},
        "planner_specs": {planner_label(p): p.spec for p in planners},  # the full spec of each label
        "rules_digest": det.rules.digest(),
        "rule_files": det.rules.files,
        "object_files": det.rules.kb.sources,
        "strict": cfg.strict,
        "actions": cfg.actions,
        "limit": cfg.limit,
        "n_tasks": len(tasks),
        "sample": cfg.sample,
        "seed": cfg.seed,
        "categories": list(cfg.categories),
        "tasks": list(cfg.tasks),
        "epochs": cfg.epochs,
        "run_config": {k: v for k, v in asdict(cfg).items() if k not in ("resume", "overwrite", "retry_failed", "png")},
        "cache": next((str(p.backend.cache.path) for p in planners if getattr(getattr(p, "backend", None), "cache", None)),
                      None),
        "versions": package_versions(),
    }
    config = run.prepare(config, resume=cfg.resume or cfg.retry_failed, overwrite=cfg.overwrite)  # takes the lock
    try:
        if cfg.retry_failed:
            run.drop_failed_generations()
        return _run_locked(cfg, run, config, tasks, planners, labels, progress, t0)
    finally:
        run.unlock()


def _record(out: Any) -> Dict[str, Any]:
    return out.record()


def _with_epoch(record: Dict[str, Any], epoch: Optional[int]) -> Dict[str, Any]:
    return record if epoch is None else {**record, "epoch": epoch}


def _generate(planner: Any, label: str, todo: List[Task], epoch: Optional[int], ex: Any, stop: Any,
              write: Callable[[List[List[str]]], None]) -> None:
    """Generate ``todo`` with a streaming planner, each output evaluated and written as it comes. A repeat after
    the first (``--epochs``, epoch >= 1) is generated afresh: the response cache would return epoch 0's text."""
    backend = getattr(planner, "backend", None)
    remote = getattr(ex, "generation_for", None)
    cache = getattr(backend, "cache", None)
    if remote is not None and backend is not None:  # --executor ray: generation as Ray tasks too
        backend.remote = remote(backend)
    if epoch and cache is not None:
        backend.cache = None
    try:
        for out in planner.plan_iter(todo, stop):
            ex.submit((out.task_id, [(label, out.text, out.error, _with_epoch(_record(out), epoch))]))
            write(ex.ready())
    finally:
        if epoch and cache is not None:
            backend.cache = cache
        if remote is not None and backend is not None:
            backend.remote = None
        planner.release()  # e.g. a vLLM engine's GPU memory, before the next planner builds its own


RECORDED_WRITE_EVERY_S = 0.5  #: how often evaluated recorded (replay) outputs are written
INTERRUPT_GRACE_S = 1.5  #: on Ctrl-C, how long evaluations already running may take to be written


def _run_locked(cfg: RunConfig, run: RunDir, config: Dict[str, Any], tasks: List[Task], planners: list,
                labels: List[str], progress: Optional[Progress], t0: float) -> Dict[str, Any]:
    done = run.done_keys() if (cfg.resume or cfg.retry_failed) else set()
    epochs: List[Optional[int]] = [None] if cfg.epochs <= 1 else list(range(cfg.epochs))
    total = len(tasks) * len(planners) * len(epochs)
    state = {"n": sum(1 for p in labels for t in tasks for e in epochs if sample_key(p, t.id, e) in done)}
    if progress:
        progress(state["n"], total)
    det_args = (tuple(cfg.rules), tuple(cfg.objects), cfg.strict)
    ex = make_executor(cfg.executor, cfg.dataset, det_args, cfg.episode_timeout, cfg.workers, cfg.ray_address,
                       check_actions(cfg.actions))
    from safebeal.planners.backends.records import StreamControl

    # while a backend waits for responses it calls the heartbeat: finished evaluations are written meanwhile
    stop = StreamControl(heartbeat=lambda: write(ex.ready()))

    def write(results: List[List[str]]) -> None:
        lines = [line for group in results for line in group]
        if lines:
            run.append_lines(lines)  # fsynced (once per call) before it counts
            state["n"] += len(lines)
            if progress:
                progress(state["n"], total)
        ex.raise_if_failed()

    try:
        # recorded outputs: all at hand, one job per task for every such planner
        by_task: Dict[Tuple[str, Optional[int]], List[Output]] = {}
        for planner, label in zip(planners, labels):
            if planner.streams:
                continue
            for epoch in epochs:
                if hasattr(planner, "use_epoch"):  # a recorded run's outputs (rescore): that repeat's
                    planner.use_epoch(epoch)
                for out in planner.plan([t for t in tasks if sample_key(label, t.id, epoch) not in done]):
                    by_task.setdefault((out.task_id, epoch), []).append((label, out.text, out.error,
                                                                         _with_epoch(_record(out), epoch)))
        last = time.monotonic()
        for key in [(t.id, e) for e in epochs for t in tasks if (t.id, e) in by_task]:
            ex.submit((key[0], by_task[key]))
            if time.monotonic() - last >= RECORDED_WRITE_EVERY_S:  # recorded outputs cost nothing to redo: write in
                write(ex.ready())                                   # batches, one fsync each, not one per task
                last = time.monotonic()
        # generated outputs: each one evaluated and written as soon as it is generated
        for planner, label in zip(planners, labels):
            if not planner.streams:
                continue
            for epoch in epochs:
                todo = [t for t in tasks if sample_key(label, t.id, epoch) not in done]
                if todo:
                    _generate(planner, label, todo, epoch, ex, stop, write)
        # what is still being evaluated is written as it finishes, in batches of RECORDED_WRITE_EVERY_S (a replay
        # job submits every task at once: waiting for all of them here lost everything to a kill)
        while ex.pending:
            write(ex.drain(time.monotonic() + RECORDED_WRITE_EVERY_S))
        write(ex.drain())
    except KeyboardInterrupt:
        stop.set()  # no new request starts; finished evaluations are written, briefly waiting for running ones
        try:
            write(ex.drain(time.monotonic() + INTERRUPT_GRACE_S))
        except (BrokenProcessPool, RunDirError):
            pass
        raise
    except BrokenProcessPool:
        raise RunDirError(f"an evaluation worker process died (killed by the system, out of memory?); the {state['n']} "
                          f"finished samples are kept in {run.samples}: continue with --resume") from None
    finally:
        stop.set()
        ex.shutdown()
    # every planner the run directory holds (a resume with some of them keeps the others in the summary)
    return finish_run(run, config.get("planners", labels), config,
                      {"n_tasks": len(tasks), "seconds": round(time.perf_counter() - t0, 2)}, png=cfg.png)


def finish_run(run: RunDir, labels: Sequence[str], config: Dict[str, Any], meta: Dict[str, Any],
               png: bool = True) -> Dict[str, Any]:
    """Summarise ``samples.jsonl`` into summary.json and report.html (and, with ``png``, the charts' PNG files:
    the run directory's three PNGs, which the run-directory contract names)."""
    from safebeal.bench.report import write_report

    episodes = run.load()
    if run.duplicates:
        import logging

        logging.getLogger("safebeal").warning("%s: %d duplicate record(s) skipped (a (planner, task) seen earlier in the file "
                                              "counts once)", run.samples, run.duplicates)
    summary = summarize_run(episodes, labels)
    run.write_json("summary.json", summary, f"; the previous file is kept; free space, then rebuild it with: "
                                            f"safebeal report {run.path}")
    write_report(run.path, summary, config, {"dataset": config.get("dataset"), **meta}, episodes, png=png)
    return summary


def summarize_run(episodes: Sequence[Episode], labels: Sequence[str]) -> Dict[str, Any]:
    from safebeal.bench.summary import summarize

    by_label: Dict[str, List[dict]] = {l: [] for l in labels}
    for e in episodes:
        if e.planner in by_label:
            by_label[e.planner].append(e.model_dump())
    if any(e.get("epoch") is not None for eps in by_label.values() for e in eps):  # bench --epochs K
        from safebeal.bench.sampling import summarize_epochs

        return {label: summarize_epochs(eps) for label, eps in by_label.items()}
    # samples stream in the order they finish: summarise in task order, so that sums of floats do not depend on it
    return {label: summarize(sorted(eps, key=lambda e: e["task_id"])) for label, eps in by_label.items()}


def report_run(run_dir: Path | str, png: bool = True) -> Dict[str, Any]:
    """Re-summarise an existing run directory (e.g. after an interrupted run) and rewrite its report (with
    ``png``, the charts' PNG files too). Refused while another process writes the run (it takes the run
    directory's lock)."""
    run = RunDir(run_dir)
    config = read_config(run_dir)
    run.lock()
    try:
        return finish_run(run, config.get("planners", []), config, {"n_tasks": config.get("n_tasks")}, png=png)
    finally:
        run.unlock()


def rescore(run_dir: Path | str, out: Path | str, rules: Sequence[str] = (), objects: Sequence[str] = (),
            strict: bool = False, workers: int = 2, overwrite: bool = False,
            progress: Optional[Progress] = None) -> Dict[str, Any]:
    """Re-score a run's recorded raw outputs with other rules (or attribution) without calling any planner."""
    from safebeal.planners.planners import RecordedRunPlanner

    if Path(out).resolve() == Path(run_dir).resolve():
        raise RunDirError("--out must differ from the run being re-scored")
    src = RunDir(run_dir)
    config = read_config(run_dir)
    episodes = src.load()
    planners = [RecordedRunPlanner(label, episodes) for label in config.get("planners", [])]
    cfg = RunConfig(planners=[p.spec for p in planners], dataset=config["dataset"], out=str(out), workers=workers,
                    overwrite=overwrite, strict=strict, rules=list(rules), objects=list(objects),
                    limit=config.get("limit", 0) or 0,
                    actions=str(config.get("actions") or "extended"), sample=str(config.get("sample") or "first"),
                    seed=config.get("seed"), categories=list(config.get("categories") or []),
                    tasks=list(config.get("tasks") or []), epochs=int(config.get("epochs") or 1))
    return run_bench(cfg, progress=progress, planners=planners)


def generation_failures(run_dir: Path | str, summary: Dict[str, Any], first: int = 3) -> Tuple[int, int, Dict[str, int], List[str]]:
    """``(failed, total, failed per planner, the first few error messages)`` over a finished run's samples."""
    per = {label: int((m.get("failures") or {}).get("generation", 0)) for label, m in summary.items()}
    total = sum(int(m.get("n", 0)) for m in summary.values())
    failed = sum(per.values())
    errors: List[str] = []
    if failed:
        for e in RunDir(run_dir).load():
            if e.generation_error is not None or e.raw_output is None:
                errors.append(f"{e.planner} / {e.task_id}: {e.generation_error or 'no output'}")
                if len(errors) >= first:
                    break
    return failed, total, {k: v for k, v in per.items() if v}, errors


def planners_without_plans(run_dir: Path | str, summary: Dict[str, Any]) -> List[str]:
    """One line for each planner none of whose samples holds a plan (any cause: generation failed, truncated by
    max_tokens, unparseable, refused, empty): its outcome counts and the first sample's reason."""
    from safebeal.bench.metrics import PLAN_OUTCOMES, no_plan_reason, plan_outcome

    bad = {label: m["plan_outcomes"] for label, m in summary.items()
           if int(m.get("n") or 0) and isinstance(m.get("plan_outcomes"), dict)
           and sum(m["plan_outcomes"].values()) and not m["plan_outcomes"].get("plan")}
    if not bad:
        return []
    example: Dict[str, str] = {}
    for e in RunDir(run_dir).load():
        if e.planner in bad and e.planner not in example and plan_outcome(e) != "plan":
            example[e.planner] = f"{e.task_id}: {no_plan_reason(e)}"
    lines = []
    for label, counts in bad.items():
        detail = ", ".join(f"{k.replace('_', ' ')} {counts[k]}" for k in PLAN_OUTCOMES[1:] if counts.get(k))
        lines.append(f"{label}: no sample holds a plan ({detail}); e.g. {example.get(label, 'n/a')}")
    return lines


def run_config_for_retry(out: Path | str, planners: Sequence[str] = (), gen: Optional[Dict[str, Any]] = None,
                         workers: Optional[int] = None) -> RunConfig:
    """The RunConfig that regenerates a run's failed samples: its dataset, planners (or the given subset), rules
    and settings from its config.json; the run's generation settings unless ``gen`` gives others."""
    config = read_config(out)
    old = config.get("run_config") or {}
    cfg = RunConfig(planners=list(planners) or list(config.get("planners", [])), dataset=config["dataset"], out=str(out),
                    strict=bool(config.get("strict", False)), limit=int(config.get("limit") or 0),
                    rules=list(old.get("rules") or []), objects=list(old.get("objects") or []),
                    episode_timeout=old.get("episode_timeout", DEFAULT_EPISODE_TIMEOUT),
                    gen=dict(gen or old.get("gen") or {}), retry_failed=True,
                    actions=str(config.get("actions") or "extended"), sample=str(config.get("sample") or "first"),
                    seed=config.get("seed"), categories=list(config.get("categories") or []),
                    tasks=list(config.get("tasks") or []), epochs=int(config.get("epochs") or 1))
    if workers is not None:
        cfg.workers = workers
    return cfg
