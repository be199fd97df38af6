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
  the plans differ only by where they stop), an unsafe plan shorter than ``min_actions``, duplicates.
"""

from __future__ import annotations

import importlib
import json
import logging
import multiprocessing
import random
import re
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

from safebeal.align.adversarial import CATEGORY_ATTRS, adversarial_messages, llm_pairs  # noqa: F401 (re-exported)
from safebeal.align.mutations import MUTATIONS, Mutation, PlanContext
from safebeal.align.data import common_prefix_length
from safebeal.datasets.base import Task
from safebeal.errors import SafebealError
from safebeal.planners.prompts import build_messages, completion_text
from safebeal.scene import SceneEnv, SceneGraph, Script, ScriptLine, ScriptSyntaxError, Trajectory, parse_line

log = logging.getLogger("safebeal.align.pairs")

COLUMNS = ("prompt", "chosen", "rejected", "prefix_actions", "category", "rule_id", "task_id", "source", "split")
SOURCES = ("mutation", "saferisks", "llm")

SAFE_REASONS = {
    "safe_not_executable": "the safe plan fails in the simulator",
    "safe_goal_not_reached": "the safe plan never reaches its goal",
    "safe_flagged": "the detector flags the safe plan",
    "safe_too_short": "the safe plan has fewer than min_actions actions",
    "safe_unparseable": "the safe plan does not parse",
}
UNSAFE_REASONS = {
    "unsafe_unparseable": "the unsafe plan does not parse (SafeRisks or LLM text)",
    "unsafe_not_executable": "the unsafe plan fails in the simulator",
    "unsafe_not_flagged": "the detector finds no hazard in the unsafe plan",
    "identical": "the unsafe plan equals the safe plan",
    "prefix_only": "one plan is a prefix of the other (k equals a plan's length)",
    "too_short": "the unsafe plan has fewer than min_actions actions",
    "duplicate": "the same unsafe plan was already paired with this safe plan",
    "unlisted_object": "the unsafe plan uses an object the prompt does not list",
    "llm_no_output": "the backend returned no text",
}


# -- records ------------------------------------------------------------------------------------------------------
@dataclass
class PreferencePair:
    prompt: List[Dict[str, str]]
    chosen: str
    rejected: str
    prefix_actions: int
    category: str
    rule_id: str
    task_id: str
    source: str
    split: str = "train"

    def to_dict(self) -> dict:
        return {c: getattr(self, c) for c in COLUMNS}

    def to_record(self) -> dict:
        """What ``write_pairs`` stores: TRL's conversational preference form, where ``prompt``, ``chosen`` and
        ``rejected`` are all message lists (the plans as one assistant message each), so that
        ``trl.data_utils.maybe_apply_chat_template`` and the preference trainers read the files directly."""
        d = self.to_dict()
        if isinstance(self.prompt, list):
            d["chosen"] = [{"role": "assistant", "content": self.chosen}]
            d["rejected"] = [{"role": "assistant", "content": self.rejected}]
        return d


@dataclass
class SafePlan:
    """A candidate chosen plan and what its pairs need: the prompt's task, the scene, the goal."""

    key: str  # unit id, e.g. "activity:628_2" or "saferisks:<id>"
    task: Task
    lines: Tuple[ScriptLine, ...]
    scene: SceneGraph
    goal: Any = None  # a safebeal.datasets.goals.Goal; None = no goal check
    origin: str = "activity"
    split: str = "train"
    given_unsafe: List[dict] = field(default_factory=list)  # SafeRisks: [{plan: [...], rule_id, category, temptation}]


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

    def __post_init__(self) -> None:
        self.sources = tuple(self.sources)
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
        if self.min_actions < 1 or self.per_operator < 1 or self.max_tries < 1:
            raise SafebealError("min_actions, per_operator and max_tries must be at least 1")


# -- filters (pure functions) ----------------------------------------------------------------------------------
def prefix_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Exact longest common prefix, in lines."""
    return common_prefix_length(a, b)


def judge_safe(plan: SafePlan, traj: Trajectory, det, min_actions: int = 1) -> Optional[str]:
    """Why the safe plan cannot be a chosen plan (a key of :data:`SAFE_REASONS`), or None."""
    if len(plan.lines) < min_actions:
        return "safe_too_short"
    if not traj.executable:
        return "safe_not_executable"
    if plan.goal is not None and not plan.goal.evaluate(traj).success:
        return "safe_goal_not_reached"
    if not det.check(traj).safe:
        return "safe_flagged"
    return None


def judge_unsafe(traj: Trajectory, det):
    """(reason or None, first violation or None): the unsafe plan must execute and be flagged."""
    if not traj.executable:
        return "unsafe_not_executable", None
    verdict = det.check(traj)
    if verdict.safe:
        return "unsafe_not_flagged", None
    return None, verdict.violations[0]


def trivial_reason(chosen: Sequence[str], rejected: Sequence[str], k: int, min_actions: int = 1,
                   keep_prefix_pairs: bool = False) -> Optional[str]:
    """Why a pair is trivial (a key of :data:`UNSAFE_REASONS`), or None. ``k`` must be their exact common prefix."""
    if list(chosen) == list(rejected):
        return "identical"
    if not keep_prefix_pairs and (k == len(chosen) or k == len(rejected)):
        return "prefix_only"
    if len(rejected) < min_actions:
        return "too_short"
    return None


def parse_plan_lines(lines: Iterable[str], source: str = "<plan>") -> Tuple[ScriptLine, ...]:
    """Plan lines (``[ACTION] <name> (id) ...``); blank lines, list markers (``1.``, ``-``) and lines that are not
    actions are skipped. Raises :class:`ScriptSyntaxError` on a malformed action line; empty -> error too."""
    out = []
    for i, raw in enumerate(lines, start=1):
        s = _LIST_MARK.sub("", raw.strip())
        if not s.startswith("["):
            continue
        out.append(parse_line(s, i, source))
    if not out:
        raise ScriptSyntaxError(source, 0, "", "at least one action line")
    return tuple(out)


_LIST_MARK = re.compile(r"^(?:\d+\s*[.)]|[-*])\s*")


# -- safe plans -------------------------------------------------------------------------------------------------
def _prompt_task(plan: SafePlan, how: str = "task") -> Task:
    """The task the prompt shows. ``task``: its own object list (what the benchmark planners see); ``chosen``: that
    plus every object the chosen plan uses. Never an object only the rejected plan uses: that would tell the
    model which plan is rejected (issue 17)."""
    if how == "task":
        return plan.task
    objs = list(plan.task.objects)
    seen = {i for _, i in objs}
    for lines in (plan.lines,):
        for ln in lines:
            for a in ln.args:
                if a.id not in seen and a.name != "character":
                    seen.add(a.id)
                    objs.append((a.name, a.id))
    return replace(plan.task, objects=sorted(objs, key=lambda x: x[1]))


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
                objects=[(str(c), int(i)) for c, i in (_get(entry, "objects") or [])])
    goal = entry.goal_spec()
    unsafe = [{"plan": list(_get(u, "plan") or []), "rule_id": _get(u, "rule_id"), "category": _get(u, "category"),
               "temptation": _get(u, "temptation")}
              for u in (_get(entry, "unsafe_plans") or [])]
    return SafePlan(f"saferisks:{eid}", replace(task, goal=goal), lines, entry.scene(), goal, "saferisks",
                    str(_get(entry, "split", None) or "train"), unsafe)


def _saferisks_entries() -> Tuple[Optional[list], str]:
    """(entries or None, status for stats.json)."""
    try:
        saferisks = importlib.import_module("safebeal.datasets.saferisks")
        entries = list(saferisks.load_entries())
    except (ImportError, SafebealError) as exc:
        log.warning("SafeRisks source skipped: %s", exc)
        return None, f"unavailable: {exc}"
    return entries, f"{len(entries)} entries"


# -- per-plan work ---------------------------------------------------------------------------------------------
@dataclass
class PlanResult:
    key: str
    origin: str
    pairs: List[PreferencePair] = field(default_factory=list)
    safe_reason: Optional[str] = None
    rejections: Counter = field(default_factory=Counter)  # (source, reason) -> n
    tried: Counter = field(default_factory=Counter)  # source -> candidates judged
    inapplicable: List[str] = field(default_factory=list)  # operators with no candidate
    rejected_reach_goal: int = 0


def _run(scene: SceneGraph, lines: Sequence[ScriptLine]) -> Trajectory:
    return SceneEnv(scene).run(Script(tuple(lines)))


def run_shared(base: Trajectory, lines: Sequence[ScriptLine], k: int) -> Trajectory:
    """Run ``lines``, whose first ``k`` lines are those of the executable ``base``, reusing ``base``'s first ``k``
    steps instead of simulating them again. The result equals a run from scratch (tested)."""
    if k <= 0 or not base.executable or k > len(base.steps):
        return _run(base.scene, lines)
    if [str(ln) for ln in lines[:k]] != [str(s.line) for s in base.steps[:k]]:
        raise ValueError("run_shared: the first k lines differ from the base trajectory's")
    env = SceneEnv(base.scene)
    env.reset(state=base.states[k], t=k)
    traj = Trajectory(base.scene, Script(tuple(lines)), steps=list(base.steps[:k]), initial=base.initial)
    for line in lines[k:]:
        r = env.step(line)
        traj.steps.append(r)
        if not r.ok:
            break
    return traj


class PairMaker:
    """Judges candidates against one safe plan and turns the survivors into :class:`PreferencePair` records."""

    def __init__(self, plan: SafePlan, traj: Trajectory, det, cfg: BuildConfig, result: PlanResult):
        self.plan, self.traj, self.det, self.cfg, self.res = plan, traj, det, cfg, result
        self.chosen = [str(ln) for ln in plan.lines]
        self.seen = {tuple(self.chosen)}
        self.task = _prompt_task(plan, how=cfg.prompt_objects)
        self.prompt = build_messages(self.task, example=None, safety_prompt=False)
        self.listed = frozenset(i for _, i in self.task.objects)

    def offer(self, lines: Sequence[ScriptLine], source: str) -> Optional[PreferencePair]:
        """Judge one candidate unsafe plan; record a rejection or return the pair (also appended to results)."""
        self.res.tried[source] += 1
        rejected = [str(ln) for ln in lines]
        k = prefix_length(self.chosen, rejected)
        reason = trivial_reason(self.chosen, rejected, k, self.cfg.min_actions, self.cfg.keep_prefix_pairs)
        if reason is None and tuple(rejected) in self.seen:
            reason = "duplicate"
        if reason is None and any(a.id not in self.listed and a.name != "character" for ln in lines for a in ln.args):
            reason = "unlisted_object"
        violation = None
        traj = None
        if reason is None:
            traj = run_shared(self.traj, lines, k)
            reason, violation = judge_unsafe(traj, self.det)
        if reason is not None:
            self.res.rejections[(source, reason)] += 1
            return None
        if violation.kind == "process" and violation.step is not None and violation.step < k:
            raise AssertionError(f"{self.plan.key}: violation at step {violation.step} inside the shared prefix {k}")
        self.seen.add(tuple(rejected))
        if self.plan.goal is not None and self.plan.goal.evaluate(traj).success:
            self.res.rejected_reach_goal += 1
        pair = PreferencePair(
            prompt=self.prompt,
            chosen=completion_text(self.chosen), rejected=completion_text(rejected), prefix_actions=k,
            category=violation.category, rule_id=violation.rule_id, task_id=self.plan.task.id, source=source,
            split=self.plan.split,
        )
        self.res.pairs.append(pair)
        return pair


def _plan_rng(seed: int, key: str, what: str) -> random.Random:
    # a string seed is hashed with SHA-512: the same on every run and process, whatever the order of work
    return random.Random(f"{seed}:{key}:{what}")


def process_plan(plan: SafePlan, det, cfg: BuildConfig, ops: Sequence[Mutation]) -> PlanResult:
    res = PlanResult(plan.key, plan.origin)
    traj = _run(plan.scene, plan.lines)
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
            rng = _plan_rng(cfg.seed, plan.key, op.name)
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
            entries, sr_status = _saferisks_entries()
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
    stats = summarise(results, pairs, cfg, time.perf_counter() - t0, sr_status)
    return pairs, stats


def summarise(results: Sequence[PlanResult], pairs: Sequence[PreferencePair], cfg: BuildConfig, seconds: float,
              saferisks_status: str = "off") -> dict:
    safe = Counter()
    for r in results:
        safe[(r.origin, r.safe_reason or "kept")] += 1
    rej: Counter = Counter()
    tried: Counter = Counter()
    inapplicable: Counter = Counter()
    for r in results:
        rej.update(r.rejections)
        tried.update(r.tried)
        inapplicable.update(r.inapplicable)
    by_source: Dict[str, dict] = {}
    for src in sorted(set(tried) | {p.source for p in pairs}):
        reasons = {reason: n for (s, reason), n in sorted(rej.items()) if s == src}
        made = sum(1 for p in pairs if p.source == src)
        by_source[src] = {"tried": tried[src], "pairs": made, "rejected": reasons}
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


def pair_features():
    import datasets

    msg = {"role": datasets.Value("string"), "content": datasets.Value("string")}
    return datasets.Features({
        "prompt": [msg], "chosen": [msg], "rejected": [msg],
        "prefix_actions": datasets.Value("int64"), "category": datasets.Value("string"),
        "rule_id": datasets.Value("string"), "task_id": datasets.Value("string"), "source": datasets.Value("string"),
        "split": datasets.Value("string"),
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
        feats = pair_features()
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
