"""The safety shield: the detector as an online guard that allows, blocks or repairs an agent's steps.

In a robot loop (the agent acts, the shield keeps its own copy of the world in the simulator)::

    shield = Shield(load_scene("activity:392_2"))            # default rules; rules=RuleSet or rule files
    d = shield.check("[PUTBACK] <towel> (72) <stove> (152)")
    d.verdict                     # "allow" | "block" | "repair"
    d.reason                      # the violated rules' messages
    d.steps, d.replace            # repair: steps to run first (then the action), or instead of it
    shield.observe(line)          # every step the agent ran (repair steps too): the shield's state follows
    shield.finish()               # repair steps for the final state (a stove left on: walk there, switch off)

On a whole plan (what the ``shield`` planner wrapper does on every sample)::

    result = shield_plan(scene, script, mode="repair", goal=task.get_goal())
    result.final, result.interventions

How each hazard is made safe is data: the rule's ``repair:`` options in its YAML (:mod:`safebeal.safety.repairs`).
Every repair is run in the simulator on a copy of the episode and re-checked before it is taken: its steps must
execute, cause no process violation, and remove the violation they are for (a termination repair must also
leave fewer termination violations). A process step no option makes safe is skipped. With a goal, a repair that
would make the goal fail (checked by running the rest of the plan after it) is not taken; when no repair keeps
the goal, the step runs as planned and the conflict is recorded. Success is judged as the benchmark judges it
(the goal holds at some step), so steps appended after the goal was reached never undo it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from safebeal.errors import SafebealError
from safebeal.safety.detector import Monitor, SafetyDetector
from safebeal.safety.repairs import RepairOption
from safebeal.safety.rules import Rule, RuleSet, load_rules
from safebeal.safety.verdict import Violation
from safebeal.scene import SceneEnv, SceneGraph, Script, ScriptLine, ScriptObject, StepResult, Trajectory, parse_line

MODES = ("block", "repair")
#: what the shield did about a violation (``Intervention.action``)
ACTIONS = {
    "repaired_before": "repair steps ran before the step, which then ran safely",
    "replaced": "steps ran instead of the unsafe step",
    "skipped": "the unsafe step was not run",
    "blocked": "the plan stopped before the unsafe step (block mode)",
    "appended": "repair steps were appended after the plan (a termination hazard)",
    "skipped_dependent": "a step that ran in the plan as written cannot run after an earlier repair: not run",
    "conflict": "every repair would make the goal fail: the step ran as planned, unsafe",
    "unrepaired": "no repair works (or block mode, which does not repair): the hazard stays",
}
#: actions that change the plan (counted as interventions); the others record a hazard left as it was
CHANGING = frozenset({"repaired_before", "replaced", "skipped", "blocked", "appended", "skipped_dependent"})
MAX_TERMINATION_ROUNDS = 12
CANDIDATES = 3  #: objects tried for an option's {any:...} / {surface}


@dataclass
class Intervention:
    kind: str  # process | termination
    rule_id: str
    action: str  # one of ACTIONS
    step: Optional[int] = None  # 0-based index of the plan step it concerns (process)
    line: Optional[str] = None  # that plan step
    steps: List[str] = field(default_factory=list)  # the steps the shield ran (before, instead, appended)
    message: str = ""

    @property
    def changes_plan(self) -> bool:
        return self.action in CHANGING

    def to_dict(self) -> Dict[str, Any]:
        return {"kind": self.kind, "rule_id": self.rule_id, "action": self.action, "step": self.step, "line": self.line,
                "steps": list(self.steps), "message": self.message}


@dataclass
class Decision:
    """What :meth:`Shield.check` says about one action."""

    verdict: str  # allow | block | repair
    violations: List[Violation] = field(default_factory=list)
    steps: List[ScriptLine] = field(default_factory=list)  # repair: run these (before the action, or instead)
    replace: bool = False  # repair: the steps replace the action (an empty list: skip the action)
    rule_id: Optional[str] = None  # the rule whose repair was chosen

    @property
    def allowed(self) -> bool:
        return self.verdict == "allow"

    @property
    def reason(self) -> str:
        return "; ".join(f"{v.rule_id}: {v.message}" for v in self.violations)

    def to_dict(self) -> Dict[str, Any]:
        return {"verdict": self.verdict, "reason": self.reason, "steps": [str(s) for s in self.steps],
                "replace": self.replace, "rule_id": self.rule_id, "violations": [v.to_dict() for v in self.violations]}


@dataclass
class ShieldResult:
    """A plan run under the shield: what ran, what was changed and why."""

    mode: str
    original: List[str]
    final: List[str]  # the steps that ran, repairs included, in order
    interventions: List[Intervention] = field(default_factory=list)
    #: the plan's own step that failed in the simulator, where the shielded run stopped (``{step, line, error}``)
    failed: Optional[Dict[str, Any]] = None

    @property
    def changed(self) -> bool:
        return self.final != self.original[: len(self.final)] or any(i.changes_plan for i in self.interventions)

    def to_dict(self) -> Dict[str, Any]:
        return {"mode": self.mode, "original_plan": list(self.original), "final_plan": list(self.final),
                "interventions": [i.to_dict() for i in self.interventions],
                "n_interventions": sum(1 for i in self.interventions if i.changes_plan),
                "unresolved": sum(1 for i in self.interventions if not i.changes_plan),
                "changed": self.changed, "failed": self.failed}


# -- running steps on copies -------------------------------------------------------------------------------
@dataclass
class _Run:
    """One line of the episode: the simulator, the monitor and the steps that ran (all copied on fork)."""

    env: SceneEnv
    mon: Monitor
    results: List[StepResult]

    def fork(self) -> "_Run":
        return _Run(self.env.fork(), self.mon.fork(), list(self.results))

    def step(self, line: ScriptLine) -> Tuple[bool, List[Violation], Optional[StepResult]]:
        """Try ``line``: ``(ran, process violations it would cause, result)``; nothing changes unless ``commit``."""
        trial = self.env.fork()
        r = trial.step(line)
        if not r.ok:
            return False, [], r
        return True, self.mon.would_violate(line, r.index), r

    def commit(self, r: StepResult) -> None:
        self.env.reset(r.after, r.index + 1)
        self.mon.observe(r)
        self.results.append(r)

    def run_checked(self, lines: Sequence[Tuple[ScriptLine, bool]]) -> Optional[Tuple["_Run", List[str]]]:
        """Run ``(line, optional)`` steps on a copy, each checked: None when a required step fails or any step
        would cause a process violation; else the copy and the lines that ran."""
        run = self.fork()
        ran: List[str] = []
        for line, optional in lines:
            ok, viol, r = run.step(line)
            if not ok:
                if optional:
                    continue
                return None
            if viol:
                return None
            run.commit(r)
            ran.append(str(line))
        return run, ran


def _as_line(action: Union[ScriptLine, str]) -> ScriptLine:
    return parse_line(action) if isinstance(action, str) else action


class Shield:
    """The online guard for one episode on ``scene``. ``rules``: a :class:`RuleSet`, or rule files/folders added to
    the default rules; ``detector``: a ready :class:`SafetyDetector` (its rules are used); ``goal``: the task's goal,
    if known (a repair that makes it fail is not taken); ``mode``: ``repair`` or ``block``; ``intended``: ``(id, STATE)`` the request asks for (docs/hazards.md)."""

    def __init__(self, scene: Union[SceneGraph, str], rules: Union[RuleSet, Sequence[Union[str, Path]], None] = None, *,
                 detector: Optional[SafetyDetector] = None, goal: Any = None, mode: str = "repair",
                 strict: bool = False, candidates: int = CANDIDATES, intended: Sequence[Tuple[int, str]] = ()):
        if mode not in MODES:
            raise SafebealError(f"shield mode must be one of {list(MODES)}, got {mode!r}")
        if detector is None:
            ruleset = rules if isinstance(rules, RuleSet) else load_rules(list(rules or ()))
            detector = SafetyDetector(rules=ruleset, strict=strict, unknown_class="neutral")
        self.det = detector
        self.mode = mode
        self.goal = goal
        self.candidates = candidates
        self._rules: Dict[str, Rule] = {r.id: r for r in detector.rules.rules}
        env = SceneEnv(scene)
        initial = env.reset()
        self.scene = env.scene
        # states the request asks for (Task.intended): not hazards to repair, as the judging detector excuses them
        self._run = _Run(env, detector.monitor(initial, intended), [])
        self.interventions: List[Intervention] = []

    # -- state -------------------------------------------------------------------------------------
    @property
    def state(self):
        return self._run.env.state

    @property
    def executed(self) -> List[str]:
        """The steps that ran so far (the agent's and the shield's), in order."""
        return [str(r.line) for r in self._run.results]

    def trajectory(self) -> Trajectory:
        res = self._run.results
        return Trajectory(self.scene, Script(tuple(r.line for r in res)), list(res), self._run.mon.initial)

    # -- the robot-loop API ---------------------------------------------------------------------------
    def check(self, action: Union[ScriptLine, str]) -> Decision:
        """Would ``action`` violate a process rule now? ``allow`` (also when the simulator would refuse it: a failed
        step is no hazard), ``block`` (block mode) or ``repair`` with the steps that make it safe (an empty list
        with ``replace``: skip it). Nothing changes: run the steps and the action, and :meth:`observe` each."""
        line = _as_line(action)
        ok, viol, _ = self._run.step(line)
        if not ok or not viol:
            return Decision("allow")
        if self.mode == "block":
            return Decision("block", viol, rule_id=viol[0].rule_id)
        for kind, rule_id, lines, _run in self._process_candidates(self._run, line, viol):
            return Decision("repair", viol, lines, replace=kind != "before", rule_id=rule_id)
        return Decision("repair", viol, [], replace=True, rule_id=viol[0].rule_id)  # pragma: no cover - skip is always there

    def observe(self, action: Union[ScriptLine, str]) -> List[Violation]:
        """The agent ran ``action``: run it in the shield's copy of the world. Returns its process violations
        (a step the simulator refuses raises :class:`SafebealError`: the shield's world and the agent's differ)."""
        line = _as_line(action)
        ok, viol, r = self._run.step(line)
        if not ok:
            raise SafebealError(f"shield: {line} cannot run in the shield's copy of the scene: {r.error}")
        self._run.commit(r)
        return viol

    def finish(self) -> List[ScriptLine]:
        """Repair steps that make the final state safe (termination rules), already run in the shield's copy of the
        world; what no repair fixes is recorded in :attr:`interventions` as ``unrepaired``. Block mode repairs
        nothing and returns []."""
        before = len(self._run.results)
        self._finish_termination()
        return [r.line for r in self._run.results[before:]]

    def verdict(self):
        """The detector's verdict on everything that ran (process violations and the final state)."""
        return self._run.mon.fork().finish()

    # -- repairs ---------------------------------------------------------------------------------------
    def _bind(self, run: _Run, opt: RepairOption, v: Violation, line: Optional[ScriptLine]) -> Iterator[List[Tuple[ScriptLine, bool]]]:
        """The option's steps with placeholders bound, once per candidate of its ``{any:...}`` (a few)."""
        state = run.env.state
        names: Dict[str, Optional[int]] = {}
        if line is not None:  # process
            ids = [a.id for a in line.args]
            for i, a in enumerate(ids):
                names[f"arg{i}"] = a
            names["object"] = ids[0] if ids else None
            names["witness"] = next((i for i, _ in v.objects if i not in ids), None)
        else:
            names["object"] = v.objects[0][0]
            names["witness"] = v.objects[1][0] if len(v.objects) > 1 else None
        state_held = state.held()
        names["held"] = next((h for h in sorted(state_held) if h not in names.values()), None)
        sel = opt.selector
        picks: List[Optional[int]] = [None]
        if sel is not None:
            picks = self._candidates(state, sel, exclude={i for i in names.values() if i is not None})
        for pick in picks:
            out: List[Tuple[ScriptLine, bool]] = []
            for t in opt.steps:
                objs = []
                for a in t.args:
                    nid = pick if a.startswith("any:") else names.get(a)
                    node = state.node(nid) if nid is not None else None
                    if node is None:
                        break
                    objs.append(ScriptObject(node.class_name, nid))
                else:
                    out.append((ScriptLine(t.action, tuple(objs)), t.optional))
                    continue
                if t.optional:  # nothing to name (no held object): the optional step is left out
                    continue
                break
            else:
                yield out

    def _candidates(self, state, classes: Tuple[str, ...], exclude: set) -> List[int]:
        kb = self.det.rules.kb
        want = {kb.canonical(c) for c in classes}
        char = state.character_id()
        close = state.targets(char, "CLOSE")
        room = state.room_of(char)
        order = {kb.canonical(c): k for k, c in enumerate(classes)}
        found = []
        for n in state.nodes():
            c = kb.canonical(n.class_name)
            if c in want and n.id not in exclude:
                rank = 0 if n.id in close else 1 if (room is not None and state.room_of(n.id) == room) else 2
                found.append((rank, order[c], n.id))
        return [i for _, _, i in sorted(found)[: self.candidates]]

    def _process_candidates(self, run: _Run, line: ScriptLine, viol: List[Violation]) -> Iterator[Tuple[str, str, List[ScriptLine], _Run]]:
        """Ways to make ``line`` safe, each already run and re-checked on a copy of ``run``:
        ``(kind, rule id, steps, the copy after them)``; ``kind`` is ``before`` (the step has run after the steps),
        ``instead`` or ``skip`` (always last)."""
        for v in viol:
            rule = self._rules.get(v.rule_id)
            for opt in (rule.repairs if rule is not None else ()):
                for bound in self._bind(run, opt, v, line):
                    res = run.run_checked(bound)
                    if res is None:
                        continue
                    after, ran = res
                    if opt.kind == "before":
                        ok, still, r = after.step(line)
                        if not ok or still:
                            continue
                        after.commit(r)
                        yield "before", v.rule_id, [parse_line(s) for s in ran], after
                    else:
                        yield "instead", v.rule_id, [parse_line(s) for s in ran], after
        yield "skip", viol[0].rule_id, [], run.fork()

    def _goal_ok(self, run: _Run, rest: Sequence[ScriptLine], ran_ok: int) -> Optional[bool]:
        """Does the goal succeed when the plan's remaining steps ``rest`` run after ``run``? Steps among the first
        ``ran_ok`` of ``rest`` (they ran in the plan as written) that cannot run now are left out."""
        if self.goal is None:
            return None
        r = run.fork()
        failed = False
        for j, line in enumerate(rest):
            trial = r.env.fork()
            res = trial.step(line)
            if res.ok:
                r.env = trial
                r.results.append(res)
            elif j < ran_ok:
                continue
            else:
                failed = True
                break
        res_ = r.results
        traj = Trajectory(self.scene, Script(tuple(x.line for x in res_) + ((rest[j],) if failed else ())),
                          list(res_), self._run.mon.initial)
        return bool(self.goal.evaluate(traj).success)

    def _finish_termination(self) -> None:
        run = self._run
        for _ in range(MAX_TERMINATION_ROUNDS):
            term = run.mon.fork().finish().by_kind("termination")
            if not term or self.mode == "block":
                break
            taken = self._repair_one(run, term)
            if taken is None:
                break
            run, iv = taken
            self.interventions.append(iv)
        self._run = run
        for v in run.mon.fork().finish().by_kind("termination"):
            self.interventions.append(Intervention("termination", v.rule_id, "unrepaired", message=v.message))

    def _repair_one(self, run: _Run, term: List[Violation]) -> Optional[Tuple[_Run, Intervention]]:
        keys = {(v.rule_id, v.objects[0][0]) for v in term}
        goal_before = self._goal_ok(run, (), 0) if self.goal is not None else None
        for v in term:
            rule = self._rules.get(v.rule_id)
            for opt in (rule.repairs if rule is not None else ()):
                for bound in self._bind(run, opt, v, None):
                    res = run.run_checked(bound)
                    if res is None:
                        continue
                    after, ran = res
                    left = after.mon.fork().finish().by_kind("termination")
                    left_keys = {(x.rule_id, x.objects[0][0]) for x in left}
                    if (v.rule_id, v.objects[0][0]) in left_keys or len(left_keys) >= len(keys):
                        continue
                    if goal_before and not self._goal_ok(after, (), 0):
                        continue
                    return after, Intervention("termination", v.rule_id, "appended", steps=ran, message=v.message)
        return None

    # -- a whole plan --------------------------------------------------------------------------------
    def run_plan(self, script: Union[Script, Sequence[Union[ScriptLine, str]]]) -> ShieldResult:
        """Run a plan under the shield from the current state (normally the scene's initial state) and finish."""
        lines = [_as_line(x) for x in script]
        # how far the plan runs as written (steps that cannot run after a repair are left out only before that)
        probe = self._run.env.fork()
        ran_ok = 0
        for line in lines:
            if not probe.step(line).ok:
                break
            ran_ok += 1
        failed = None
        for i, line in enumerate(lines):
            ok, viol, r = self._run.step(line)
            if not ok:
                if i < ran_ok:
                    self.interventions.append(Intervention("process", "", "skipped_dependent", i, str(line),
                                                           message=f"cannot run after an earlier repair: {r.error.message}"))
                    continue
                failed = {"step": i, "line": str(line), "error": r.error.to_dict()}
                break
            if not viol:
                self._run.commit(r)
                continue
            if self.mode == "block":
                for v in viol:
                    self.interventions.append(Intervention("process", v.rule_id, "blocked", i, str(line), message=v.message))
                break
            self._repair_step(i, line, viol, lines[i + 1:], max(ran_ok - i - 1, 0))
        self._finish_termination()
        return ShieldResult(self.mode, [str(x) for x in lines], self.executed, list(self.interventions), failed)

    def _repair_step(self, i: int, line: ScriptLine, viol: List[Violation], rest: Sequence[ScriptLine], rest_ok: int) -> None:
        baseline = None
        if self.goal is not None:
            as_planned = self._run.fork()
            ok, _, r = as_planned.step(line)
            as_planned.commit(r)
            baseline = self._goal_ok(as_planned, rest, rest_ok)
        for kind, rule_id, steps, after in self._process_candidates(self._run, line, viol):
            if baseline and not self._goal_ok(after, rest, rest_ok):
                continue
            self._run = after
            action = {"before": "repaired_before", "instead": "replaced", "skip": "skipped"}[kind]
            msg = "; ".join(v.message for v in viol)
            self.interventions.append(Intervention("process", rule_id, action, i, str(line), [str(s) for s in steps], msg))
            return
        ok, _, r = self._run.step(line)  # every repair makes the goal fail: run the step as planned
        self._run.commit(r)
        for v in viol:
            self.interventions.append(Intervention("process", v.rule_id, "conflict", i, str(line), message=v.message))


def shield_plan(scene: Union[SceneGraph, str], script: Union[Script, Sequence[Union[ScriptLine, str]]], mode: str = "repair",
                goal: Any = None, detector: Optional[SafetyDetector] = None,
                rules: Union[RuleSet, Sequence[Union[str, Path]], None] = None,
                intended: Sequence[Tuple[int, str]] = ()) -> ShieldResult:
    """Run ``script`` on ``scene`` under a :class:`Shield` and return what ran and what was changed."""
    return Shield(scene, rules, detector=detector, goal=goal, mode=mode, intended=intended).run_plan(script)
