"""Safety preference pairs for Safe-Align: a task prompt, a safe plan (chosen) and an unsafe plan (rejected) whose
first ``k`` actions are identical.

    from safebeal.align.pairs import BuildConfig, build_pairs, write_pairs
    pairs, stats = build_pairs(BuildConfig(seed=0))
    write_pairs(pairs, stats, "pairs/")          # datasets.save_to_disk + pairs.jsonl + stats.json

Safe plans: the ground-truth scripts of the ActivityPrograms *training* split, plus SafeRisks safe plans (train
split) when :mod:`safebeal.datasets.saferisks` is importable. Unsafe plans: the mutation operators (by default the
on-task set, :data:`safebeal.align.ontask.DEFAULT_OPERATORS`; the detours of :mod:`safebeal.align.detours` are
opt-in), SafeRisks' own unsafe plans (source ``saferisks:<temptation>``), and an adversarial prompt on any backend
(:mod:`safebeal.align.adversarial`). The prompt lists the task's objects as the benchmark does, never objects only
the rejected plan uses.

Filters (each rejection is counted by reason in ``stats.json``):

- the safe plan is executable, reaches its goal (goal spec, else the program's diff goal, at some step) and the
  detector finds it safe; it has at least ``min_actions`` actions;
- the unsafe plan parses, names only objects the prompt lists, is executable, and the detector flags it; the pair records the category and rule id of
  its first violation (process violations by step, then termination ones). The safe plan has none and shares the
  prefix, so every violation of the unsafe plan comes from the edit;
- ``k`` is the exact longest common prefix of the two plans' lines, as written in ``chosen`` and ``rejected``;
- trivial pairs are dropped: identical plans, one plan a prefix of the other (``k`` equal to either length, so
  the plans differ only by where they stop), an unsafe plan shorter than ``min_actions``, duplicates;
- the pair differs in safety only (issue 32): the unsafe plan reaches the task's goal too (``goal_both``), and
  the edit adds no action that real planners almost never write there (``artefact_actions``: TURNTO padding,
  DROP, RUN; the adversarial LLM's plans are exempt, a real planner wrote them); with ``pad_omissions`` (off by
  default) a pure omission is judged first with a WALK to each left-out step's object in its place;
- the set is balanced on length (``length_balance``): for each length difference, the pairs whose chosen plan is
  the longer are at most 1.3 times those whose chosen plan is the shorter, and back (:func:`balance_length`).
"""

from __future__ import annotations

import importlib
import json
import logging
import multiprocessing
import time
from collections import Counter
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from safebeal.align.adversarial import llm_pairs
from safebeal.align.data import plan_lines
from safebeal.align.mutations import MUTATIONS, Mutation, PlanContext
from safebeal.align.pair_judge import (ARTEFACT_ACTIONS, SAFE_REASONS, UNSAFE_REASONS, PairMaker, PlanResult,
                                       PreferencePair, SafePlan, judge_safe, parse_plan_lines, plan_rng, run_plan)
from safebeal.datasets.base import Task
from safebeal.errors import SafebealError
from safebeal.scene import ScriptSyntaxError

log = logging.getLogger("safebeal.align.pairs")

SOURCES = ("mutation", "saferisks", "llm")


@dataclass
class BuildConfig:
    sources: Tuple[str, ...] = ("mutation", "saferisks")
    operators: Optional[Tuple[str, ...]] = None  # None = the on-task default set (ontask.DEFAULT_OPERATORS); ("all",)
    seed: int = 0
    limit: int = 0  # safe plans per origin (0 = all)
    per_operator: int = 1  # pairs per operator and safe plan
    max_tries: int = 4  # candidates tried per operator and safe plan
    min_actions: int = 3
    workers: int = 1
    llm_backend: Optional[str] = None
    llm_per_plan: int = 1
    rules: Tuple[str, ...] = ()
    objects: Tuple[str, ...] = ()
    strict: bool = False
    prompt_objects: str = "task"  # "task": the benchmark prompt's list; "chosen": that plus the chosen plan's objects
    keep_prefix_pairs: bool = False  # keep near-miss pairs where one plan is a prefix of the other
    saferisks_mutations: bool = True  # also mutate SafeRisks safe plans (not only ActivityPrograms ground truth)
    goal_both: bool = True  # the unsafe plan reaches the task's goal too: the pair differs in safety only (issue 32)
    artefact_actions: Tuple[str, ...] = ARTEFACT_ACTIONS  # actions an edit may not add (llm source exempt)
    # a pure omission is judged first with a WALK to each left-out step's object; off by default: a blind reader
    # judged such WALKs unnatural ("walks there and does nothing", audits/pair_naturalness.py)
    pad_omissions: bool = False
    # remove the idle steps an edit leaves behind (a walk to where nothing is done, an unused OPEN/CLOSE, a pick-up
    # put down unused: align.tidy) before judging; the llm source is exempt. The blind audit's main complaint
    tidy_edits: bool = True
    # the SafeRisks file whose training entries give safe plans and authored unsafe ones (None: the shipped file);
    # e.g. a SafeRisks v3 build (`safebeal saferisks build --seeds v3`), whose split is by hazard pattern
    saferisks_file: Optional[str] = None
    # at most this many pairs whose chosen plan is the longer per pair whose chosen plan is the shorter (and back),
    # for each length difference, so "pick the longer (shorter) plan" scores at most ratio / (1 + ratio); 0 = off
    length_balance: float = 1.3

    def __post_init__(self) -> None:
        self.sources = tuple(self.sources)
        self.artefact_actions = tuple(a.upper() for a in self.artefact_actions)
        bad = [s for s in self.sources if s not in SOURCES]
        if bad:
            raise SafebealError(f"unknown pair source(s) {bad}; known: {', '.join(SOURCES)}")
        if "llm" in self.sources and not self.llm_backend:
            raise SafebealError("source 'llm' needs a backend: --llm-backend SPEC (e.g. mock:outputs=file.jsonl)")
        if self.operators is not None:
            self.operators = tuple(self.operators)
            for op in self.operators:
                if op != "all":
                    MUTATIONS.get(op.partition(":")[0])  # raises RegistryError naming the known operators
        if self.prompt_objects == "union":
            raise SafebealError("prompt_objects 'union' was removed: listing the rejected plan's objects in the prompt "
                                "leaks which plan is rejected; use 'task' or 'chosen'")
        if self.prompt_objects not in ("task", "chosen"):
            raise SafebealError("prompt_objects must be 'task' or 'chosen'")
        if self.length_balance and self.length_balance < 1:
            raise SafebealError(f"length_balance must be 0 (off) or at least 1, not {self.length_balance}")
        if self.min_actions < 1 or self.per_operator < 1 or self.max_tries < 1:
            raise SafebealError("min_actions, per_operator and max_tries must be at least 1")

# -- safe plans -------------------------------------------------------------------------------------------------
def activity_plan(pid: str) -> SafePlan:
    from safebeal.datasets.activity_programs import load_program
    from safebeal.datasets.virtualhome import program_task

    p = load_program(pid)
    task = program_task(pid, "activity-train")
    goal = p.goal_spec if p.goal_spec is not None else p.diff_goal()
    return SafePlan(f"activity:{pid}", replace(task, goal=goal), p.script.lines, p.scene(), goal, "activity")


def _get(obj: Any, key: str, default: Any = None) -> Any:
    return obj.get(key, default) if isinstance(obj, dict) else getattr(obj, key, default)


def saferisks_plan(entry: Any) -> SafePlan:
    """A SafeRisks entry as a safe plan; the prompt lists the entry's ``objects``, as the benchmark prompt does."""
    eid = str(_get(entry, "id"))
    lines = parse_plan_lines(list(_get(entry, "safe_plan") or []), source=f"saferisks:{eid} safe_plan")
    # the hazard sentence is not part of the prompt: it would tell the model what to avoid
    task = Task(id=eid, dataset="saferisks", instruction=str(_get(entry, "instruction", "")), scene=entry.scene,
                objects=[(str(c), int(i)) for c, i in (_get(entry, "objects") or [])],
                intended=[(int(_get(x, "id")), str(_get(x, "state"))) for x in (_get(entry, "intended") or [])])
    goal = entry.goal_spec()
    unsafe = [{"plan": list(_get(u, "plan") or []), "rule_id": _get(u, "rule_id"), "category": _get(u, "category"),
               "temptation": _get(u, "temptation")}
              for u in (_get(entry, "unsafe_plans") or [])]
    return SafePlan(f"saferisks:{eid}", replace(task, goal=goal), lines, entry.scene(), goal, "saferisks",
                    str(_get(entry, "split", None) or "train"), unsafe)


def _saferisks_entries(path: Optional[str] = None) -> Tuple[Optional[list], str]:
    """(entries or None, status for stats.json). The shipped file may be missing (the source is then skipped with a
    warning); a file the user names must load (its error is raised)."""
    try:
        saferisks = importlib.import_module("safebeal.datasets.saferisks")
        entries = list(saferisks.load_entries(path))
    except (ImportError, SafebealError) as exc:
        if path is not None:
            raise
        log.warning("SafeRisks source skipped: %s", exc)
        return None, f"unavailable: {exc}"
    return entries, f"{len(entries)} entries" + (f" from {Path(path).name}" if path is not None else "")

# -- per-plan work ---------------------------------------------------------------------------------------------
def process_plan(plan: SafePlan, det, cfg: BuildConfig, ops: Sequence[Mutation]) -> PlanResult:
    res = PlanResult(plan.key, plan.origin)
    traj = run_plan(plan.scene, plan.lines)
    res.safe_reason = judge_safe(plan, traj, det, cfg.min_actions)
    if res.safe_reason is not None:
        return res
    maker = PairMaker(plan, traj, det, cfg, res)
    if "saferisks" in cfg.sources:  # curated unsafe plans first: a mutant equal to one is a duplicate
        for i, u in enumerate(plan.given_unsafe):
            # v2 entries say how the unsafe plan tempts: saferisks:omission | choice | order | addition
            src = f"saferisks:{u['temptation']}" if u.get("temptation") else "saferisks"
            try:
                lines = parse_plan_lines(u["plan"], source=f"{plan.key} unsafe_plans[{i}]")
            except ScriptSyntaxError:
                res.tried[src] += 1
                res.rejections[(src, "unsafe_unparseable")] += 1
                continue
            maker.offer(lines, src)
    if "mutation" in cfg.sources and (plan.origin != "saferisks" or cfg.saferisks_mutations):
        ctx = PlanContext.from_trajectory(traj, det.rules.kb)
        ctx.listed = maker.listed
        for op in ops:
            rng = plan_rng(cfg.seed, plan.key, op.name)
            made = tries = 0
            budget = getattr(op, "tries", None) or cfg.max_tries
            for mutant in op.candidates(ctx, rng):
                tries += 1
                if maker.offer(mutant.lines, f"mutation:{op.name}") is not None:
                    made += 1
                if made >= cfg.per_operator or tries >= budget:
                    break
            if tries == 0:
                res.inapplicable.append(op.name)
    return res


# -- workers ------------------------------------------------------------------------------------------------------
_W: Dict[str, Any] = {}


def _detector(cfg: BuildConfig):
    from safebeal.safety import SafetyDetector

    return SafetyDetector(strict=cfg.strict, extra_rules=cfg.rules, objects=cfg.objects, unknown_class="neutral")


def _init_worker(cfg: BuildConfig, entries: Optional[list]) -> None:
    _W.update(cfg=cfg, det=_detector(cfg), ops=_operators(cfg), entries=entries)


def operator_specs(cfg: BuildConfig) -> List[str]:
    """The operator specs a build uses (``name:args``): ``cfg.operators``, else the on-task default set; "all" is
    every registered operator. Recorded in ``stats.json`` (``operators``)."""
    if "mutation" not in cfg.sources:
        return []
    from safebeal.align.ontask import DEFAULT_OPERATORS

    specs = list(cfg.operators or DEFAULT_OPERATORS)
    return MUTATIONS.names() if "all" in specs else specs


def _operators(cfg: BuildConfig) -> List[Mutation]:
    return [MUTATIONS.create(s) for s in operator_specs(cfg)]


def _load_unit(unit: Tuple[str, Any]) -> SafePlan:
    origin, ref = unit
    if origin == "activity":
        return activity_plan(ref)
    return saferisks_plan(_W["entries"][ref])


def _work(unit: Tuple[str, Any]) -> PlanResult:
    try:
        plan = _load_unit(unit)
    except ScriptSyntaxError:
        res = PlanResult(f"{unit[0]}:{unit[1]}", unit[0])
        res.safe_reason = "safe_unparseable"
        return res
    try:
        return process_plan(plan, _W["det"], _W["cfg"], _W["ops"])
    finally:
        if unit[0] == "activity":
            _release_program(unit[1])


def _release_program(pid: str) -> None:
    """Drop the scene a loaded ActivityProgram keeps (reloaded on demand): without this a pass over the training
    split holds every scene, 2.3 GB."""
    from safebeal.datasets.activity_programs import load_program

    load_program(pid).release()


# -- the build -------------------------------------------------------------------------------------------------
def _units(cfg: BuildConfig, entries: Optional[list]) -> List[Tuple[str, Any]]:
    from safebeal.datasets.activity_programs import split

    units: List[Tuple[str, Any]] = []
    if {"mutation", "llm"} & set(cfg.sources):  # ground truth has no unsafe plans of its own
        train = list(split()["train"])
        units += [("activity", pid) for pid in (train[: cfg.limit] if cfg.limit else train)]
    if entries:
        idx = [i for i, e in enumerate(entries) if str(_get(e, "split", None) or "train") == "train"]
        units += [("saferisks", i) for i in (idx[: cfg.limit] if cfg.limit else idx)]
    return units


def build_pairs(cfg: BuildConfig, progress: Optional[Callable[[int, int], None]] = None,
                entries: Optional[list] = None) -> Tuple[List[PreferencePair], dict]:
    """Build every pair. ``entries``: SafeRisks entries to use instead of the shipped ones (tests)."""
    t0 = time.perf_counter()
    want_sr = "saferisks" in cfg.sources
    sr_status = "off"
    if want_sr:
        if entries is None:
            entries, sr_status = _saferisks_entries(cfg.saferisks_file)
        else:
            sr_status = f"{len(entries)} entries"
    units = _units(cfg, entries if want_sr else None)
    results: List[PlanResult] = []
    if cfg.workers > 1 and len(units) > 1:
        ctx = multiprocessing.get_context("fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn")
        with ctx.Pool(cfg.workers, initializer=_init_worker, initargs=(cfg, entries)) as pool:
            for r in pool.imap(_work, units, chunksize=4):
                results.append(r)
                if progress:
                    progress(len(results), len(units))
    else:
        _init_worker(cfg, entries)
        for u in units:
            results.append(_work(u))
            if progress:
                progress(len(results), len(units))
    if "llm" in cfg.sources:
        if cfg.workers > 1 and len(units) > 1:  # the workers' state is not in this process
            _init_worker(cfg, entries)
        det = _W["det"]
        ok = [u for u, r in zip(units, results) if r.safe_reason is None]
        by_key = {r.key: r for r in results}
        llm_pairs([_load_unit(u) for u in ok], cfg.llm_backend, det, cfg, by_key)
    pairs = [p for r in results for p in r.pairs]
    dropped: Dict[str, int] = {}
    if cfg.length_balance:
        pairs, dropped = balance_length(pairs, cfg.length_balance, cfg.seed)
    stats = summarise(results, pairs, cfg, time.perf_counter() - t0, sr_status)
    stats["length_balanced_out"] = dropped
    return pairs, stats


def balance_length(pairs: Sequence[PreferencePair], ratio: float, seed: int = 0
                   ) -> Tuple[List[PreferencePair], Dict[str, int]]:
    """Drop pairs so that, for each length difference ``d`` (in lines) between the plans, the pairs whose chosen
    plan is the longer by ``d`` are at most ``ratio`` times those whose chosen plan is the shorter by ``d``, and
    back: a rule that names the chosen plan from the length difference alone then scores at most
    ``ratio / (1 + ratio)`` (issue 32's ``length`` rival; a difference with no pair on the other side loses all its
    pairs). Which pairs go is decided by a hash of the seed and the pair, not by their order. Returns the kept pairs,
    in their order, and the number dropped per signed difference (chosen minus rejected lines)."""
    import hashlib

    by_d: Dict[int, List[int]] = {}
    for i, p in enumerate(pairs):
        by_d.setdefault(len(plan_lines(p.chosen)) - len(plan_lines(p.rejected)), []).append(i)
    drop: set = set()
    out: Dict[str, int] = {}
    for d in sorted({abs(x) for x in by_d} - {0}):
        longer, shorter = by_d.get(d, []), by_d.get(-d, [])
        for more, fewer, sign in ((longer, shorter, d), (shorter, longer, -d)):
            cap = int(len(fewer) * ratio)
            if len(more) > cap:
                ranked = sorted(more, key=lambda i: hashlib.sha256(
                    f"{seed}:{pairs[i].task_id}:{pairs[i].source}:{pairs[i].rejected}".encode()).hexdigest())
                drop.update(ranked[cap:])
                out[str(sign)] = len(more) - cap
    return [p for i, p in enumerate(pairs) if i not in drop], out


def summarise(results: Sequence[PlanResult], pairs: Sequence[PreferencePair], cfg: BuildConfig, seconds: float,
              saferisks_status: str = "off") -> dict:
    safe = Counter()
    for r in results:
        safe[(r.origin, r.safe_reason or "kept")] += 1
    rej: Counter = Counter()
    tried: Counter = Counter()
    inapplicable: Counter = Counter()
    tidied: Counter = Counter()
    for r in results:
        tidied.update(r.tidied)
        rej.update(r.rejections)
        tried.update(r.tried)
        inapplicable.update(r.inapplicable)
    by_source: Dict[str, dict] = {}
    for src in sorted(set(tried) | {p.source for p in pairs}):
        reasons = {reason: n for (s, reason), n in sorted(rej.items()) if s == src}
        made = sum(1 for p in pairs if p.source == src)
        by_source[src] = {"tried": tried[src], "pairs": made, "rejected": reasons}
        if tidied[src]:
            by_source[src]["tidied"] = tidied[src]
    for op, n in inapplicable.items():
        by_source.setdefault(f"mutation:{op}", {"tried": 0, "pairs": 0, "rejected": {}})["no_candidate"] = n
    ks = sorted(p.prefix_actions for p in pairs)
    origins = sorted({r.origin for r in results})
    return {
        "pairs": len(pairs),
        "seconds": round(seconds, 2),
        "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(cfg).items()},
        "operators": operator_specs(cfg),
        "saferisks": saferisks_status,
        "safe_plans": {o: {reason: n for (oo, reason), n in sorted(safe.items()) if oo == o} for o in origins},
        "rejections": {reason: sum(n for (_, r), n in rej.items() if r == reason) for reason in sorted({r for _, r in rej})},
        "by_source": dict(sorted(by_source.items())),
        "by_category": dict(sorted(Counter(p.category for p in pairs).items())),
        "by_rule": dict(sorted(Counter(p.rule_id for p in pairs).items())),
        "by_split": dict(sorted(Counter(p.split for p in pairs).items())),
        "plans_with_pairs": len({p.task_id for p in pairs}),
        "prefix_actions": {"min": ks[0], "median": ks[len(ks) // 2], "max": ks[-1],
                           "mean": round(sum(ks) / len(ks), 2)} if ks else {},
        "rejected_reaches_goal": sum(r.rejected_reach_goal for r in results),
        "reasons": {**SAFE_REASONS, **UNSAFE_REASONS},
    }


def pair_schema():
    """The ``datasets.Features`` of a written pair dataset (TRL's conversational preference form)."""
    import datasets

    msg = {"role": datasets.Value("string"), "content": datasets.Value("string")}
    return datasets.Features({
        "prompt": [msg], "chosen": [msg], "rejected": [msg],
        "prefix_actions": datasets.Value("int64"), "category": datasets.Value("string"),
        "rule_id": datasets.Value("string"), "task_id": datasets.Value("string"), "source": datasets.Value("string"),
        "split": datasets.Value("string"), "goal_reached_both": datasets.Value("bool"),
    })


def write_pairs(pairs: Sequence[PreferencePair], stats: dict, out: Path | str) -> Path:
    """``out/``: the Hugging Face dataset (``save_to_disk``), ``pairs.jsonl`` and ``stats.json``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = [p.to_record() for p in pairs]
    try:
        import datasets
    except ImportError:
        log.warning("the 'datasets' package is missing (pip install 'safebeal[train]'): wrote pairs.jsonl only")
    else:
        feats = pair_schema()
        if rows:
            ds = datasets.Dataset.from_list(rows, features=feats)
        else:  # from_list cannot build an empty dataset with features
            import pyarrow

            ds = datasets.Dataset(pyarrow.Table.from_pylist([], schema=feats.arrow_schema))
        ds.save_to_disk(str(out), num_shards=1)  # one shard: an empty dataset saves too
    with open(out / "pairs.jsonl", "w") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    (out / "stats.json").write_text(json.dumps(stats, indent=1) + "\n")
    return out
