"""Judging candidate pairs: the records (:class:`SafePlan`, :class:`PreferencePair`, :class:`PlanResult`), the
filters a chosen and a rejected plan must pass, and :class:`PairMaker`, which turns the candidates that pass into
pairs. The pair sources use it: the mutation operators and SafeRisks' unsafe plans (:mod:`safebeal.align.pairs`)
and the adversarial LLM (:mod:`safebeal.align.adversarial`). Filters and reasons: :mod:`safebeal.align.pairs`."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Iterable, List, Optional, Protocol, Sequence, Tuple

from safebeal.align.data import common_prefix_length
from safebeal.align.tidy import tidy_edit
from safebeal.datasets.base import Task
from safebeal.generation.temptation import step_action
from safebeal.planners.prompts import build_messages, completion_text
from safebeal.scene import SceneEnv, SceneGraph, Script, ScriptLine, ScriptSyntaxError, Trajectory, parse_line

COLUMNS = ("prompt", "chosen", "rejected", "prefix_actions", "category", "rule_id", "task_id", "source", "split",
           "goal_reached_both")

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
    "rejected_goal_not_reached": "the unsafe plan does not reach the task's goal (the pair would differ in task "
                                 "success too; goal_both)",
    "artefact_action": "the edit writes an action real planners almost never write there (artefact_actions: "
                       "TURNTO padding, DROP, RUN)",
}

#: actions an edit may not add (more of them after the plans part in the rejected plan than in the chosen one),
#: unless a real planner wrote it (the ``llm`` source): in the 15 recorded LLMs' 15,492 actions DROP is 2 and RUN
#: 3, and TURNTO (1.1%) is never what they write in place of a safety step, which ``omit_step:pad=true`` does.
#: Issue 32 found them on one side of the pairs only: TURNTO in 800 rejected plans and no chosen one, DROP in
#: 553, RUN in 211.
ARTEFACT_ACTIONS: Tuple[str, ...] = ("TURNTO", "DROP", "RUN")

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
    # the rejected plan reaches the task's goal too (the chosen one always does): the pair differs in safety only
    goal_reached_both: bool = False

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

class JudgeSettings(Protocol):
    """What judging reads of a build's settings (a :class:`safebeal.align.pairs.BuildConfig` has them)."""

    min_actions: int
    keep_prefix_pairs: bool
    prompt_objects: str  # "task" or "chosen" (prompt_task)
    goal_both: bool  # the unsafe plan must reach the goal too
    artefact_actions: Tuple[str, ...]  # actions an edit may not add (see ARTEFACT_ACTIONS)
    pad_omissions: bool  # judge a pure omission with a WALK in place of each left-out step first
    tidy_edits: bool  # remove the idle steps an edit leaves behind (align.tidy) before judging; llm source exempt


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
    if not det.check(traj, intended=plan.task.intended).safe:
        return "safe_flagged"
    return None


def judge_unsafe(traj: Trajectory, det, intended: Iterable[Tuple[int, str]] = ()):
    """(reason or None, first violation or None): the unsafe plan must execute and be flagged. ``intended``: the
    ``(id, STATE)`` pairs the request asks for (a stove the task wants on is no hazard), as the benchmark passes."""
    if not traj.executable:
        return "unsafe_not_executable", None
    verdict = det.check(traj, intended=intended)
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


def added_artefact(chosen: Sequence[str], rejected: Sequence[str], k: int, artefacts: Iterable[str]) -> Optional[str]:
    """The first of ``artefacts`` (action names) the rejected plan has more of than the chosen one after their
    common prefix of ``k`` lines, or None: what the edit added that real planners almost never write."""
    arts = set(artefacts)
    if not arts:
        return None
    extra = Counter(map(step_action, rejected[k:])) - Counter(map(step_action, chosen[k:]))
    return next((a for a in sorted(arts) if extra[a] > 0), None)


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

# -- the prompt ------------------------------------------------------------------------------------------------
def prompt_task(plan: SafePlan, how: str = "task") -> Task:
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


# -- running and judging one candidate --------------------------------------------------------------------------
@dataclass
class PlanResult:
    key: str
    origin: str
    pairs: List[PreferencePair] = field(default_factory=list)
    safe_reason: Optional[str] = None
    rejections: Counter = field(default_factory=Counter)  # (source, reason) -> n
    tried: Counter = field(default_factory=Counter)  # source -> candidates judged
    inapplicable: List[str] = field(default_factory=list)  # operators with no candidate
    tidied: Counter = field(default_factory=Counter)  # source -> candidates whose idle steps were removed
    rejected_reach_goal: int = 0


def run_plan(scene: SceneGraph, lines: Sequence[ScriptLine]) -> Trajectory:
    return SceneEnv(scene).run(Script(tuple(lines)))


def run_shared(base: Trajectory, lines: Sequence[ScriptLine], k: int) -> Trajectory:
    """Run ``lines``, whose first ``k`` lines are those of the executable ``base``, reusing ``base``'s first ``k``
    steps instead of simulating them again. The result equals a run from scratch (tested)."""
    if k <= 0 or not base.executable or k > len(base.steps):
        return run_plan(base.scene, lines)
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

    def __init__(self, plan: SafePlan, traj: Trajectory, det, cfg: JudgeSettings, result: PlanResult):
        self.plan, self.traj, self.det, self.cfg, self.res = plan, traj, det, cfg, result
        self.chosen = [str(ln) for ln in plan.lines]
        self.seen = {tuple(self.chosen)}
        self.task = prompt_task(plan, how=cfg.prompt_objects)
        self.prompt = build_messages(self.task, example=None, safety_prompt=False)
        self.listed = frozenset(i for _, i in self.task.objects)

    def offer(self, lines: Sequence[ScriptLine], source: str) -> Optional[PreferencePair]:
        """Judge one candidate unsafe plan; record a rejection or return the pair (also appended to results). With
        ``pad_omissions``, a candidate that only leaves steps out is first judged with a WALK to each omitted
        step's object in its place (:func:`pad_deletions`), and as it is where that fails. With ``tidy_edits``, the
        idle steps the edit left behind are removed first (:func:`safebeal.align.tidy.tidy_edit`; not from the
        ``llm`` source's plans, which a real planner wrote): only the tidied plan is judged."""
        self.res.tried[source] += 1
        if self.cfg.tidy_edits and not source.startswith("llm"):
            tidied = tidy_edit(self.plan.lines, lines)
            if tidied is not None:
                self.res.tidied[source] += 1
                lines = tidied
        padded = pad_deletions(self.plan.lines, lines) if self.cfg.pad_omissions else None
        reason = pair = None
        if padded is not None:
            reason, pair = self._judge(padded, source)
            if pair is not None:
                return pair
        if reason != "duplicate":  # the padded plan was already paired: so is this candidate
            reason, pair = self._judge(lines, source)
        if reason is not None:
            self.res.rejections[(source, reason)] += 1
        return pair

    def _judge(self, lines: Sequence[ScriptLine], source: str) -> Tuple[Optional[str], Optional[PreferencePair]]:
        """(why the candidate is refused, None) or (None, the pair, recorded)."""
        rejected = [str(ln) for ln in lines]
        k = prefix_length(self.chosen, rejected)
        reason = trivial_reason(self.chosen, rejected, k, self.cfg.min_actions, self.cfg.keep_prefix_pairs)
        if reason is None and tuple(rejected) in self.seen:
            reason = "duplicate"
        if reason is None and any(a.id not in self.listed and a.name != "character" for ln in lines for a in ln.args):
            reason = "unlisted_object"
        if reason is None and not source.startswith("llm") and added_artefact(
                self.chosen, rejected, k, self.cfg.artefact_actions) is not None:
            reason = "artefact_action"
        violation = None
        traj = None
        if reason is None:
            traj = run_shared(self.traj, lines, k)
            reason, violation = judge_unsafe(traj, self.det, self.plan.task.intended)
        both = None
        if reason is None:
            both = self.plan.goal is not None and bool(self.plan.goal.evaluate(traj).success)
            if self.cfg.goal_both and self.plan.goal is not None and not both:
                reason = "rejected_goal_not_reached"
        if reason is not None:
            return reason, None
        if violation.kind == "process" and violation.step is not None and violation.step < k:
            raise AssertionError(f"{self.plan.key}: violation at step {violation.step} inside the shared prefix {k}")
        self.seen.add(tuple(rejected))
        if both:
            self.res.rejected_reach_goal += 1
        pair = PreferencePair(
            prompt=self.prompt,
            chosen=completion_text(self.chosen), rejected=completion_text(rejected), prefix_actions=k,
            category=violation.category, rule_id=violation.rule_id, task_id=self.plan.task.id, source=source,
            split=self.plan.split, goal_reached_both=both,
        )
        self.res.pairs.append(pair)
        return None, pair


def pad_deletions(chosen: Sequence[ScriptLine], rejected: Sequence[ScriptLine]) -> Optional[List[ScriptLine]]:
    """``rejected`` with a WALK to each left-out step's object in its place, when ``rejected`` is ``chosen`` with
    one or more steps left out (nothing else changed), each of them names an object and the agent is not at it
    already (the line before is no WALK to it); else None. The plans then have the same length, and the filler is
    an action chosen plans use as much (WALK: a third of the recorded LLMs' actions), unlike the TURNTO padding
    issue 32 found one-sided."""
    out: List[ScriptLine] = []
    j = 0
    for ln in chosen:
        if j < len(rejected) and str(rejected[j]) == str(ln):
            out.append(rejected[j])
            j += 1
        elif ln.args and ln.action != "WALK":
            walk = ScriptLine("WALK", (ln.args[-1],))
            if out and str(out[-1]) == str(walk):  # already there: a second WALK would be a one-sided cue
                return None
            out.append(walk)
        else:
            return None
    if j != len(rejected) or len(out) == len(rejected):
        return None
    return out


def plan_rng(seed: int, key: str, what: str) -> random.Random:
    # a string seed is hashed with SHA-512: the same on every run and process, whatever the order of work
    return random.Random(f"{seed}:{key}:{what}")
