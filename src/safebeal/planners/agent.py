"""Agents that act step by step: ``act`` (one action per turn) and ``react`` (a thought, then one action).

    --planner react:backend=openai:model=...,safety_prompt=true,max_steps=30,max_failures=3
    --planner act --backend mock:outputs=turns.jsonl
    --planner shield:planner=[react:backend=...],mode=repair      # the shield acts on each proposed action

Each task is an episode in the simulator (:class:`safebeal.scene.SceneEnv`). At every turn the model gets the
task, what the agent observes in the current state (its room, what it holds, the task's objects around it with
their states, the others with their room: :func:`safebeal.planners.observation.observe_state`), the actions it
took so far with their results, and answers with one action, ``[DONE]`` or ``[REFUSE] <reason>``
(``templates/agent_*.txt``). The action runs; a failed action (unreadable, an unknown object, refused by the
simulator) changes nothing and is reported back. The episode stops at ``[DONE]``, a refusal, ``max_steps`` turns,
``max_failures`` consecutive failed turns, or a failed generation.

The sample's plan is the actions that ran, in order (``raw_output``), so it is judged exactly as an open-loop plan
is, by the same evaluation (``bench.evaluate``: simulate, goal check, the run's safety detector on every step and
on the final state) and every metric applies. A refusal before any action ran is the plan ``[REFUSE] <reason>``
(a refusal for the metrics). The sample also records every turn (``Episode.turns``: the turn's prompt, raw
output, thought, action, result, error, the plan steps it ran and their process ``violations``, filled in by the
evaluation) and the episode (``Episode.agent``: why it stopped, the refusal and its signal, counts).

Refusal is read from the structured answer ``[REFUSE]`` (signal ``action``); an answer with no action whose text
declines the task (:func:`safebeal.planners.refusal.is_refusal`'s phrases) is a refusal too (signal ``phrase``).

Every turn is one request through the backend (its retries and the response cache apply per turn, so a resumed
run replays an interrupted episode's turns from the cache). Up to ``parallel`` episodes run side by side, their
turns sent together (default: the backend's ``concurrency``, else 8).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

from safebeal.datasets.base import Task
from safebeal.errors import SafebealError
from safebeal.planners.planners import PLANNERS, GeneratingPlanner, PlanOutput
from safebeal.planners.refusal import is_refusal

STYLES = ("act", "react")
DEFAULT_MAX_STEPS = 30  #: turns per episode
DEFAULT_MAX_FAILURES = 3  #: consecutive failed turns that end an episode
MAX_STEPS_LIMIT = 200
DEFAULT_PARALLEL = 8
NEXT = {"act": " Your next action:", "react": " Your thought and next action:"}

_BRACKET = re.compile(r"\[\s*([A-Za-z_]+)\s*\]")
_LABEL = re.compile(r"^\s*(?:\*\*)?\s*(thought|action)\s*(?:\*\*)?\s*:\s*(?:\*\*)?[ \t]*", re.I | re.M)


@dataclass(frozen=True)
class Reply:
    """A turn's answer read from the model's text."""

    kind: str  # action | done | refuse | unreadable
    line: Optional[str] = None  # the action as written, from its "[" to the end of its line
    thought: Optional[str] = None
    reason: Optional[str] = None  # refuse: the reason given
    signal: Optional[str] = None  # refuse: "action" ([REFUSE]) or "phrase" (a refusal phrase, no action)


def read_reply(text: Optional[str], style: str = "act") -> Reply:
    """The answer in one turn's output. ``react``: the text after the last ``Action:`` label holds the answer and
    the text after ``Thought:`` before it is the thought; without the labels the whole text is read. The first
    ``[WORD]`` in the answer decides: ``[DONE]``, ``[REFUSE] reason``, or an action line."""
    text = text or ""
    thought, answer = None, text
    labels = list(_LABEL.finditer(text))
    if style == "react" and labels:
        acts = [m for m in labels if m.group(1).lower() == "action"]
        if acts:
            answer = text[acts[-1].end():]
        th = [m for m in labels if m.group(1).lower() == "thought"]
        if th:
            end = acts[-1].start() if acts and acts[-1].start() > th[0].end() else len(text)
            thought = text[th[0].end():end].strip() or None
    m = _BRACKET.search(answer)
    if m is not None:
        word = m.group(1).upper()
        rest = answer[m.end():].split("\n", 1)[0].strip()
        if word == "DONE":
            return Reply("done", "[DONE]", thought)
        if word in ("REFUSE", "REFUSED", "REFUSAL"):
            return Reply("refuse", "[REFUSE]", thought, rest or None, "action")
        return Reply("action", answer[m.start():].split("\n", 1)[0].strip(), thought)
    if is_refusal(text):
        return Reply("refuse", None, thought, " ".join(text.split())[:300] or None, "phrase")
    return Reply("unreadable", None, thought)


# -- one episode ---------------------------------------------------------------------------------------------
@dataclass
class AgentEpisode:
    """The loop's state for one task: the simulator, the actions that ran, the turns."""

    task: Task
    env: Any
    state: Any
    guard: Any = None  # a safety Shield acting on each proposed action (shield:planner=react...)
    executed: List[str] = field(default_factory=list)
    turns: List[Dict[str, Any]] = field(default_factory=list)
    failures: int = 0
    stop: Optional[str] = None  # done | refused | step_limit | failure_limit | generation_error
    refusal: Optional[Dict[str, Any]] = None
    error: Optional[str] = None
    first_prompt: Optional[List[Dict[str, str]]] = None
    interventions: List[Dict[str, Any]] = field(default_factory=list)

    def run(self, line: Any) -> Any:
        """Run one script line from the current state; a line that ran is added to the plan (and shown to the
        guard)."""
        self.env.reset(state=self.state, t=len(self.executed))
        r = self.env.step(line)
        if r.ok:
            self.state = r.after
            self.executed.append(str(r.line))
            if self.guard is not None:
                self.guard.observe(r.line)
        return r


class StepwisePlanner(GeneratingPlanner):
    """A generating planner that acts one step at a time (see the module docstring)."""

    name = "act"
    style = "act"

    def __init__(self, *args: Any, max_steps: Any = DEFAULT_MAX_STEPS, max_failures: Any = DEFAULT_MAX_FAILURES,
                 parallel: Any = None, **kwargs: Any):
        self.max_steps = _whole(max_steps, "max_steps", self.name, 1, MAX_STEPS_LIMIT)
        self.max_failures = _whole(max_failures, "max_failures", self.name, 1, MAX_STEPS_LIMIT)
        self.parallel = None if parallel is None else _whole(parallel, "parallel", self.name, 1, 256)
        if str(kwargs.get("template", "default")) != "default":
            raise SafebealError(f"planner {self.name!r}: template= is for open-loop planners; a step-by-step agent "
                                "has its own prompt (templates/agent_*.txt)")
        if kwargs.get("confidence") not in (None, False, 0):
            raise SafebealError(f"planner {self.name!r}: confidence=true is for open-loop planners")
        super().__init__(*args, **kwargs)
        self.spec += f",max_steps={self.max_steps},max_failures={self.max_failures}"

    def config(self) -> Dict[str, Any]:
        return {**super().config(), "style": self.style, "max_steps": self.max_steps,
                "max_failures": self.max_failures, "parallel": self._parallel()}

    def _parallel(self) -> int:
        if self.parallel is not None:
            return self.parallel
        conc = getattr(self.backend, "concurrency", None)
        return int(conc) if isinstance(conc, int) and conc > 0 else DEFAULT_PARALLEL

    # -- prompts --------------------------------------------------------------------------------------------
    def system_prompt(self) -> str:
        from safebeal.planners.texts import read_template

        parts = [read_template("agent_system").strip(), read_template(f"agent_{self.style}").strip()]
        if self.safety_prompt:
            parts.append(read_template("safety").strip())
        return "\n\n".join(parts)

    def turn_messages(self, ep: AgentEpisode) -> List[Dict[str, str]]:
        """The messages of ``ep``'s next turn: the system prompt, then the task, the observation of the current
        state, the actions and the history."""
        from safebeal.planners.observation import observe_state
        from safebeal.planners.prompts import actions_block, goal_block
        from safebeal.planners.texts import read_template

        t = ep.task
        user = read_template("agent_turn").strip("\n").format(
            task=t.instruction, description=t.description, observation=observe_state(ep.state, t.objects).render(),
            actions=actions_block(self.actions), goal=goal_block(t) if self.show_goal else "",
            history=history_text(ep.turns), turn=len(ep.turns) + 1, max_steps=self.max_steps, next=NEXT[self.style])
        return [{"role": "system", "content": self.system_prompt()}, {"role": "user", "content": user}]

    def messages(self, task: Task) -> List[Dict[str, str]]:
        """The first turn's messages (``safebeal prompt show``)."""
        return self.turn_messages(self.start(task))

    # -- the loop -------------------------------------------------------------------------------------------
    def start(self, task: Task, guard: Any = None) -> AgentEpisode:
        from safebeal.scene import SceneEnv

        env = SceneEnv(task.get_scene(), actions=self.actions)
        return AgentEpisode(task, env, env.reset(), guard)

    def plan_iter(self, tasks: Sequence[Task], stop: Any = None,
                  guard: Optional[Callable[[Task], Any]] = None) -> Iterator[PlanOutput]:
        """Each task's episode, yielded when it ends (in the order episodes end). ``guard(task)`` gives the
        safety shield that checks each proposed action (the ``shield`` wrapper). Once ``stop`` is set no new
        turn starts; episodes not finished are not yielded (a resumed run does them again)."""
        for t in tasks:
            why = ("it has no scene" if t.scene is None else
                   "its plans are sentences" if t.meta.get("plan_format") == "sentences" else None)
            if why:
                raise SafebealError(f"planner {self.name!r}: task {t.id} of dataset {t.dataset!r}: {why}; a "
                                    "step-by-step agent needs a simulated scene")
        settings = self.settings
        sent = self.backend.request_settings(settings)
        queue = list(tasks)
        active: List[AgentEpisode] = []
        while queue or active:
            while queue and len(active) < self._parallel():
                t = queue.pop(0)
                active.append(self.start(t, guard(t) if guard is not None else None))
            if stop is not None and stop.is_set():
                return
            prompts = [self.turn_messages(ep) for ep in active]
            finished: List[AgentEpisode] = []
            for i, g in self.backend.generate_iter(prompts, settings, stop):
                ep = active[i]
                if ep.first_prompt is None:
                    ep.first_prompt = prompts[i]
                self.take(ep, prompts[i], g)
                if ep.stop is not None:
                    finished.append(ep)
            for ep in finished:  # an episode that did not get its turn (stop was set) takes it next round
                active.remove(ep)
                yield self.output(ep, sent)

    def take(self, ep: AgentEpisode, prompt: List[Dict[str, str]], g: Any) -> None:
        """One turn: the generation ``g`` for ``prompt``; runs the action and records the turn."""
        turn: Dict[str, Any] = {"turn": len(ep.turns) + 1, "prompt": prompt[-1]["content"], "output": g.text,
                                "thought": None, "action": None, "result": None, "error": None, "step": None,
                                "steps": [], "violations": [], "latency_s": round(g.latency_s, 4),
                                "cache_hit": g.cache_hit, "usage": g.usage, "finish_reason": g.finish_reason,
                                "attempts": g.attempts}
        ep.turns.append(turn)
        if g.error is not None or g.text is None:
            turn.update(result="generation_error", error={"kind": "generation", "message": g.error or "no output"})
            ep.stop, ep.error = "generation_error", g.error or "no output"
            return
        reply = read_reply(g.text, self.style)
        turn.update(thought=reply.thought, action=reply.line)
        if reply.kind == "done":
            turn["result"] = "done"
            ep.stop = "done"
        elif reply.kind == "refuse":
            turn["result"] = "refused"
            ep.stop = "refused"
            ep.refusal = {"turn": turn["turn"], "signal": reply.signal, "reason": reply.reason}
        elif reply.kind == "unreadable":
            self._failed(ep, turn, {"kind": "parse", "message": "no action, [DONE] or [REFUSE] in the answer"})
        else:
            self._act(ep, turn, reply.line or "")
        if ep.stop is None and len(ep.turns) >= self.max_steps:
            ep.stop = "step_limit"

    def _failed(self, ep: AgentEpisode, turn: Dict[str, Any], error: Dict[str, Any], result: str = "failed") -> None:
        turn.update(result=result, error=error)
        ep.failures += 1
        if ep.failures >= self.max_failures:
            ep.stop = "failure_limit"

    def _act(self, ep: AgentEpisode, turn: Dict[str, Any], text: str) -> None:
        from safebeal.plans.compile import compile_output

        c = compile_output(text, ep.task.objects, known_ids=ep.state.scene, actions=self.actions)
        if c.error is not None or not c.script.lines:
            err = c.error.to_dict() if c.error is not None else {"kind": "parse", "message": "no action"}
            return self._failed(ep, turn, {"kind": err.get("kind"), "message": err.get("message")})
        line = c.script.lines[0]
        turn["action"] = str(line)
        if ep.guard is not None:
            d = ep.guard.check(line)
            if d.verdict != "allow":
                iv = {"kind": "process", "rule_id": d.rule_id, "step": len(ep.executed), "line": str(line),
                      "steps": [str(s) for s in d.steps], "message": d.reason, "turn": turn["turn"],
                      "action": "blocked" if d.verdict == "block" else
                      ("skipped" if not d.steps else "replaced") if d.replace else "repaired_before"}
                ep.interventions.append(iv)
                turn["shield"] = d.to_dict()
                if d.verdict == "block":
                    return self._failed(ep, turn, {"kind": "shield", "message": f"blocked by the safety shield: "
                                                                                f"{d.reason}"}, "blocked")
                for s in d.steps:
                    r = ep.run(s)
                    if not r.ok:  # the shield's copy and the episode differ (it checked the steps): stop repairing
                        return self._failed(ep, turn, r.error.to_dict())
                    turn["steps"].append(len(ep.executed) - 1)
                if d.replace:
                    turn["result"] = "replaced" if d.steps else "skipped"
                    ep.failures = 0
                    return
        r = ep.run(line)
        if not r.ok:
            e = r.error.to_dict()
            return self._failed(ep, turn, {"kind": e.get("kind"), "message": e.get("message")})
        turn.update(result="executed", step=len(ep.executed) - 1)
        turn["steps"].append(len(ep.executed) - 1)
        ep.failures = 0

    def output(self, ep: AgentEpisode, sent: Dict[str, Any]) -> PlanOutput:
        """The episode as a sample: the plan that ran, the turns, the agent record (and a shield's)."""
        shield = None
        if ep.guard is not None and ep.stop != "generation_error":
            appended = []
            for s in ep.guard.finish():  # termination repairs, already run in the shield's copy
                ep.env.reset(state=ep.state, t=len(ep.executed))
                r = ep.env.step(s)
                if r.ok:
                    ep.state = r.after
                    ep.executed.append(str(r.line))
                    appended.append(str(r.line))
            ivs = ep.interventions + [i.to_dict() for i in ep.guard.interventions]
            changing = {"blocked", "replaced", "skipped", "repaired_before", "appended", "skipped_dependent"}
            shield = {"mode": ep.guard.mode, "stepwise": True, "shielded": True, "final_plan": list(ep.executed),
                      "interventions": ivs, "appended": appended,
                      "n_interventions": sum(1 for i in ivs if i.get("action") in changing),
                      "unresolved": sum(1 for i in ivs if i.get("action") not in changing),
                      "changed": any(i.get("action") in changing for i in ivs), "failed": None}
        if ep.stop == "refused" and not ep.executed:
            text: Optional[str] = "[REFUSE]" + (f" {ep.refusal['reason']}" if ep.refusal and ep.refusal.get("reason") else "")
        else:
            text = "\n".join(ep.executed)
        usage: Dict[str, int] = {}
        for t in ep.turns:
            for k, v in (t.get("usage") or {}).items():
                if isinstance(v, int):
                    usage[k] = usage.get(k, 0) + v
        agent = {"style": self.style, "stop": ep.stop, "n_turns": len(ep.turns), "n_executed": len(ep.executed),
                 "n_failed": sum(1 for t in ep.turns if t["result"] in ("failed", "blocked")),
                 "max_steps": self.max_steps, "max_failures": self.max_failures, "refusal": ep.refusal}
        last = ep.turns[-1] if ep.turns else {}
        return PlanOutput(ep.task.id, text, ep.error if ep.stop == "generation_error" else None, ep.first_prompt,
                          round(sum(t["latency_s"] or 0.0 for t in ep.turns), 4),
                          sum(int(t.get("attempts") or 0) for t in ep.turns), usage or None, last.get("finish_reason"),
                          bool(ep.turns) and all(t.get("cache_hit") for t in ep.turns), sent,
                          turns=ep.turns, agent=agent, extras={} if shield is None else {"shield": shield})


def history_text(turns: Sequence[Dict[str, Any]]) -> str:
    """The actions so far, one line each with its result: ``2. [GRAB] <cup> (5): failed: ...``."""
    if not turns:
        return "(none yet)"
    out = []
    for t in turns:
        what = t.get("action") or " ".join(str(t.get("output") or "").split())[:120] or "(empty answer)"
        res = t.get("result")
        if res == "executed":
            note = "done"
        elif res in ("replaced", "skipped"):
            note = f"the safety shield {'ran ' + ', '.join(t['shield']['steps']) + ' instead' if res == 'replaced' else 'skipped it'}"
        else:
            note = f"{res}: {(t.get('error') or {}).get('message', '')}".rstrip(": ")
        if res == "executed" and t.get("shield"):
            note = f"done, after the safety shield ran {', '.join(t['shield']['steps'])}"
        out.append(f"{t['turn']}. {what}: {note}")
    return "\n".join(out)


_TURN = re.compile(r"Turn (\d+) of")


def follow_plans(plans: Dict[str, Sequence[str]]) -> Callable[[List[Dict[str, str]]], str]:
    """A scripted model for the mock backend (tests, benchmarks): on turn k of a task it answers the k-th line of
    the plan given for the task's instruction, then ``[DONE]``. It reads the turn prompt
    (``templates/agent_turn.txt``: the first line ``Task: <instruction>``, then ``Turn <k> of ...``)."""

    def answer(prompt: List[Dict[str, str]]) -> str:
        u = prompt[-1]["content"]
        lines = plans[u.splitlines()[0][len("Task: "):]]
        k = int(_TURN.search(u).group(1))
        return lines[k - 1] if k <= len(lines) else "[DONE]"

    return answer


def follow_references(tasks: Sequence[Task]) -> Callable[[List[Dict[str, str]]], str]:
    """:func:`follow_plans` with each task's reference plan."""
    return follow_plans({t.instruction: t.reference.splitlines() for t in tasks})


def _whole(value: Any, key: str, planner: str, lo: int, hi: int) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        n = None
    if n is None or isinstance(value, bool) or str(value).strip() != str(n) or not lo <= n <= hi:
        raise SafebealError(f"planner {planner!r}: {key} must be a whole number from {lo} to {hi}, got {value!r}")
    return n


@PLANNERS.register("act", help="an agent that acts step by step: one action per turn, seeing the result "
                               "(max_steps=30, max_failures=3)")
class ActPlanner(StepwisePlanner):
    name = "act"
    style = "act"


@PLANNERS.register("react", help="a ReAct agent: a thought then one action per turn, seeing the result "
                                 "(max_steps=30, max_failures=3)")
class ReactPlanner(StepwisePlanner):
    name = "react"
    style = "react"
