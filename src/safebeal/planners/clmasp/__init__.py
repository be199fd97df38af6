"""``clmasp``: CLMASP (Lin et al. 2024, arXiv 2406.03367): an LLM's skeleton plan, grounded in the scene and
completed by an answer set program that holds the robot's action knowledge.

    --planner clmasp --backend openai:model=gpt-4o        # the LLM writes a skeleton (zero-shot prompt + one line)
    --planner clmasp:planner=replay:gpt-4o-2024-05-13     # refine another planner's plans (no LLM call)
    --planner 'clmasp:planner=replay:*'                   # one per recorded model
    --planner clmasp:planner=replay:gpt-4o,safe=true      # never insert a step the detector's process rules flag

Options: ``planner`` (the planner whose output is the skeleton; default: a zero-shot planner asked for a
skeleton, on ``backend=`` or the run's ``--backend``), ``max_insert`` (filler slots before each skeleton step,
default 3), ``safe`` (default false), ``threshold`` (lexical grounding, default 0.8), ``embed`` (a transformers
encoder for grounding by embedding, ``hf`` extra). Nested specs work as in ``shield`` (square brackets around a
spec with commas). Each sample records ``extras["clmasp"]``: the original output, the grounding of every object,
the inserted steps and their positions, per-step solve records and ASP seconds. See docs/design/clmasp.md.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from safebeal.datasets.base import Task
from safebeal.errors import SafebealError
from safebeal.plans.parse import parse_plan
from safebeal.planners.planners import PLANNERS, GeneratingPlanner, Planner, PlanOutput, create_planner, extra_of
from safebeal.planners.texts import read_template
from safebeal.planners.shield import inner_spec
from safebeal.registry import parse_bool
from safebeal.scene.extensions import check_actions

OWN_OPTIONS = ("max_insert", "safe", "threshold", "embed", "backend")




class SkeletonPlanner(GeneratingPlanner):
    """The standalone CLMASP's LLM: the zero-shot prompt, asked for a skeleton (``templates/clmasp_skeleton.txt``)."""

    name = "clmasp-skeleton"

    def messages(self, task: Task) -> List[Dict[str, str]]:
        msgs = [dict(m) for m in super().messages(task)]
        note = read_template("clmasp_skeleton").strip()
        if msgs and msgs[0]["role"] == "system":
            msgs[0]["content"] = msgs[0]["content"] + "\n\n" + note
        else:
            msgs.insert(0, {"role": "system", "content": note})
        return msgs


def _act(step) -> Tuple[str, Tuple[int, ...]]:
    return step.action, tuple(int(a.id) for a in step.args)


@PLANNERS.register("clmasp", help="CLMASP: an LLM skeleton completed by an ASP action model: "
                                  "clmasp[:planner=<spec>,max_insert=3,safe=false]")
class CLMASPPlanner(Planner):
    name = "clmasp"
    label_as_written = True
    takes_default_backend = True
    takes_actions = True  # bench --actions vh: the action model leaves out the extensions
    summary_order = 40

    @classmethod
    def summarize(cls, episodes: Sequence[Any], safe: Any) -> Dict[str, Any]:
        """``refinement``: plans refined (parsed and grounded), changed, steps inserted, plans where a step could
        not be made to run, and ASP seconds per refined plan."""
        recs = [extra_of(e, cls.name) or {} for e in episodes]
        done = [r for r in recs if r.get("refined")]
        secs = sorted(float(r.get("asp_seconds") or 0.0) for r in done)
        inserted = sum(len(r.get("inserted") or ()) for r in done)
        return {"refinement": {
            "plans": len(recs), "refined": len(done), "changed": sum(1 for r in done if r.get("changed")),
            "inserted_steps": inserted, "inserted_per_refined_plan": inserted / len(done) if done else None,
            "stopped": sum(1 for r in done if r.get("stopped_at") is not None),
            "asp_seconds_median": secs[len(secs) // 2] if secs else None,
            "asp_seconds_max": secs[-1] if secs else None}}

    def __init__(self, planner: Any = None, max_insert: int = 3, safe: Any = False, threshold: float = 0.8,
                 embed: Optional[str] = None, backend: Optional[str] = None, default_backend: Optional[str] = None,
                 actions: str = "extended", **extra: Any):
        super().__init__()
        from safebeal.planners.clmasp.asp import require_clingo

        require_clingo()  # a missing extra fails before the run
        try:
            self.max_insert = int(max_insert)
        except (TypeError, ValueError):
            raise SafebealError(f"clmasp: max_insert must be a whole number, got {max_insert!r}") from None
        if not 0 <= self.max_insert <= 8:
            raise SafebealError(f"clmasp: max_insert must be 0 to 8, got {max_insert!r}")
        self.safe = parse_bool(safe, "clmasp: safe")
        try:
            self.threshold = float(threshold)
        except (TypeError, ValueError):
            raise SafebealError(f"clmasp: threshold must be a number, got {threshold!r}") from None
        self.embed = embed
        self._embedder = None
        self.actions = check_actions(str(actions))
        if isinstance(planner, Planner):
            if extra:
                raise SafebealError(f"clmasp: unknown option(s) {sorted(extra)}")
            self.inner, self.inner_spec = planner, planner.spec
        elif planner is None:
            if extra:
                raise SafebealError(f"clmasp: unknown option(s) {sorted(extra)}")
            if not (backend or default_backend):
                from safebeal.planners.planners import no_backend_message

                raise SafebealError(no_backend_message("clmasp"))
            self.inner = SkeletonPlanner(backend=backend or default_backend, actions=self.actions)
            self.inner_spec = self.inner.spec
        else:
            if backend is not None:
                extra["backend"] = backend
            self.inner_spec = inner_spec(planner, extra)
            self.inner = create_planner(self.inner_spec, default_backend, actions)
        self.streams = self.inner.streams
        if isinstance(self.inner, GeneratingPlanner):
            self.backend = self.inner.backend  # the run's response cache attaches to it
        self._det = None
        if planner is None:
            self.spec = "clmasp" + (f":backend={self.inner.backend.spec()}" if hasattr(self.inner.backend, "spec") else "")
        else:
            wrapped = self.inner.spec if "," not in self.inner.spec else f"[{self.inner.spec}]"
            self.spec = f"clmasp:planner={wrapped}"
        if self.max_insert != 3:
            self.spec += f"{',' if ':' in self.spec else ':'}max_insert={self.max_insert}"
        if self.safe:
            self.spec += f"{',' if ':' in self.spec else ':'}safe=true"

    def config(self) -> Dict[str, Any]:
        return {"name": self.name, "max_insert": self.max_insert, "safe": self.safe, "threshold": self.threshold,
                "embed": self.embed, "planner": self.inner.config(), "planner_spec": self.inner.spec,
                "action_model": "safebeal/planners/data/clmasp/actions.lp"}

    def set_run_settings(self, settings: Dict[str, Any]) -> None:
        if hasattr(self.inner, "set_run_settings"):
            self.inner.set_run_settings(settings)

    def release(self) -> None:
        self.inner.release()

    @property
    def detector(self):
        if self._det is None:
            from safebeal.safety import SafetyDetector

            self._det = SafetyDetector(unknown_class="neutral")
        return self._det

    # -- one output -----------------------------------------------------------------------------------
    def refine(self, task: Task, text: Optional[str]) -> Tuple[Optional[str], Dict[str, Any]]:
        """``(final text, record)``: the output grounded and completed. The text is the output as written when
        nothing was inserted or re-grounded (``refined: false`` with the reason when it is not a plan)."""
        from safebeal.planners.clmasp.asp import Refiner
        from safebeal.planners.clmasp.grounding import Embedder, ground
        from safebeal.scene import SceneEnv

        record: Dict[str, Any] = {"original_output": text, "safe": self.safe, "max_insert": self.max_insert}
        if text is None:
            return text, {**record, "refined": False, "reason": "no output"}
        if task.scene is None:
            return text, {**record, "refined": False, "reason": "the task has no scene"}
        res = parse_plan(text, actions=self.actions)
        if res.error is not None:
            return text, {**record, "refined": False, "reason": f"not a plan: {res.error.kind}"}
        scene = task.get_scene()
        if self.embed and self._embedder is None:
            self._embedder = Embedder(self.embed)
        env = SceneEnv(scene, actions=self.actions)
        view = env.reset()
        scene_objects = [(n.class_name, n.id) for n in view.nodes()]
        steps, groundings, why = ground(res.steps, task.objects, scene_objects, known_ids=scene,
                                        threshold=self.threshold, embedder=self._embedder)
        record["grounding"] = [g.to_dict() for g in groundings]
        if steps is None:
            return text, {**record, "refined": False, "reason": f"not grounded: {why}"}
        check = self._safety_check(task, scene) if self.safe else None
        t0 = time.perf_counter()
        refiner = Refiner(view, [_act(s) for s in steps], self.max_insert, extended=self.actions == "extended",
                          check=check)
        plan, inserted_at, records = refiner.run()
        wall = time.perf_counter() - t0
        names = {a.id: a.name for s in steps for a in s.args}
        lines = [_line(a, ids, names, view) for a, ids in plan]
        regrounded = any(g.method != "resolve" for g in groundings)
        stopped = next((r.index for r in records if not r.runs), None)
        record.update(
            refined=True, changed=bool(inserted_at) or regrounded, skeleton_steps=len(steps), final_steps=len(plan),
            inserted=inserted_at, inserted_steps=[lines[i] for i in inserted_at], final_plan=lines,
            stopped_at=stopped, stop_reasons=None if stopped is None else records[stopped].reasons,
            asp_seconds=round(sum(r.seconds for r in records), 4), wall_seconds=round(wall, 4), solves=len(records),
            forbidden=[f"[{a}] " + " ".join(f"({i})" for i in ids) for r in records for a, ids in r.forbidden])
        return ("\n".join(lines) if record["changed"] else text), record

    def _safety_check(self, task: Task, scene):
        from safebeal.scene import Script, ScriptLine, ScriptObject, execute

        det = self.detector

        def script(acts):
            return Script(tuple(ScriptLine(a, tuple(ScriptObject(scene.node(i).class_name, i) for i in ids), k + 1)
                                for k, (a, ids) in enumerate(acts)))

        def check(done, new) -> Optional[int]:
            traj = execute(scene, script(list(done) + list(new)), actions=self.actions)
            verdict = det.check(traj, intended=task.intended)
            for v in sorted(verdict.violations, key=lambda v: (v.step is None, v.step or 0)):
                if v.kind == "process" and v.step is not None and v.step >= len(done):
                    return v.step - len(done)
            return None

        return check

    # -- planning -------------------------------------------------------------------------------------------
    def _wrap(self, task: Task, o: PlanOutput) -> PlanOutput:
        if o.error is not None or o.text is None:
            return o.with_extra(self.name, {"original_output": o.text, "refined": False, "reason": "no output"})
        try:
            text, record = self.refine(task, o.text)
        except SafebealError as exc:  # the solver failed on this plan: keep it as written, say why
            text, record = o.text, {"original_output": o.text, "refined": False, "reason": f"error: {exc}"}
        return replace(o, text=text).with_extra(self.name, record)

    def plan(self, tasks: Sequence[Task]) -> List[PlanOutput]:
        outs = self.inner.plan(tasks)
        return [self._wrap(t, o) for t, o in zip(tasks, outs)]

    def plan_iter(self, tasks: Sequence[Task], stop: Any = None) -> Iterator[PlanOutput]:
        by_id = {t.id: t for t in tasks}
        for o in self.inner.plan_iter(tasks, stop):
            yield self._wrap(by_id[o.task_id], o)


def _line(action: str, ids: Sequence[int], names: Dict[int, str], view) -> str:
    parts = [f"[{action}]"]
    for i in ids:
        parts.append(f"<{names.get(i) or view.node(i).class_name}> ({i})")
    return " ".join(parts)
