"""LLM-Planner's dynamic re-planning (Song et al., 2023): execute as you plan, re-prompt on a failed step.

``llm-planner:replan=k`` runs each plan in the simulator as soon as it is generated. When a step fails (it cannot
be read, names an object the scene does not have, or the simulator refuses it), the planner is prompted again in
the same conversation with what went wrong, the steps that ran, and the objects observed so far (every object in
the rooms the agent has been in, up to :data:`MAX_OBSERVED`), and asked to continue from there. The plan it then
evaluates is the steps that ran followed by the continuation; this repeats for up to k rounds
(:data:`MAX_REPLAN` at most) or until the plan runs to its end.

Every round is recorded on the sample (``Episode.extras["llm-planner"]``): its output, the failed step and its error, the
objects observed, the re-prompt, and the plan as it stood after the round. The re-prompt is
``templates/replan.txt`` (a failed step) or ``templates/replan_unreadable.txt`` (an output that is not a plan).
Tasks without a scene, and WorldModel tasks (whose plans are sentences), are planned once (``reason`` says why).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from safebeal.datasets.base import Task
from safebeal.plans.grounding import resolve_objects
from safebeal.plans.parse import parse_plan

MAX_REPLAN = 10  #: most re-planning rounds
MAX_OBSERVED = 80  #: most objects listed as observed in a re-prompt


def _lines(text: str, steps: Sequence[Any], fmt: str) -> List[str]:
    """The lines of ``text`` that hold ``steps`` as written (their confidences kept), or the steps themselves
    where the output is not one step per line (JSON)."""
    raw = text.splitlines()
    if fmt in ("script", "numbered") and all(0 < s.source_line <= len(raw) for s in steps):
        return [raw[s.source_line - 1].strip() for s in steps]
    return [str(s) for s in steps]


def attempt(task: Task, text: Optional[str], actions: str = "extended") -> Dict[str, Any]:
    """Run ``text`` on ``task``'s scene. Returns ``{ok, prefix, failed_step, line, error, observed}``: ``prefix``
    the lines of the steps that ran before the failure (all of them when ``ok``), ``observed`` the objects
    ``(name, id)`` in the rooms the agent was in."""
    from safebeal.scene import Script, ScriptLine, ScriptObject, execute

    scene = task.get_scene()
    res = parse_plan(text, actions=actions)
    if res.error is not None:
        return {"ok": False, "prefix": [], "failed_step": None, "line": res.error.text,
                "error": {"kind": res.error.kind, "message": res.error.message}, "observed": _observed(scene, None),
                "readable": False}
    steps, err = resolve_objects(res.steps, task.objects, known_ids=scene)
    runnable = list(steps[: err.step]) if err is not None and err.step is not None else list(steps)
    if err is not None and err.step is None:
        runnable = []
    script = Script(tuple(ScriptLine(s.action, tuple(ScriptObject(a.name, a.id) for a in s.args), s.source_line)
                          for s in runnable))
    traj = execute(scene, script, actions=actions)
    lines = _lines(text or "", runnable, res.format)
    observed = _observed(scene, traj)
    if traj.error is not None:
        i = traj.error.step if traj.error.step is not None else len(traj.executed)
        return {"ok": False, "prefix": lines[:i], "failed_step": i, "line": str(script[i]) if i < len(script) else None,
                "error": {"kind": traj.error.kind, "message": traj.error.message}, "observed": observed, "readable": True}
    if err is not None:
        i = err.step if err.step is not None else 0
        return {"ok": False, "prefix": lines, "failed_step": i, "line": err.text,
                "error": {"kind": err.kind, "message": err.message}, "observed": observed, "readable": True}
    return {"ok": True, "prefix": lines, "failed_step": None, "line": None, "error": None, "observed": observed,
            "readable": True}


def _observed(scene: Any, traj: Any) -> List[Tuple[str, int]]:
    """Objects in the rooms the agent has been in (the start room, then the room after each step that ran)."""
    from safebeal.scene.listing import SceneIndex

    idx = SceneIndex(scene)
    rooms: List[int] = []
    if traj is not None:
        for st in traj.states:
            r = st.room_of(st.character_id())
            if r is not None and r not in rooms:
                rooms.append(r)
    else:
        r = idx.character_room()
        rooms = [r] if r is not None else []
    out: List[Tuple[str, int]] = []
    for i in sorted(idx.nodes):
        if idx.is_room(i) or idx.is_structure(i) or idx.nodes[i].get("class_name") == "character":
            continue
        if idx.room_of(i) in rooms:
            out.append((str(idx.nodes[i]["class_name"]), i))
    return out[:MAX_OBSERVED]


def feedback(result: Dict[str, Any]) -> str:
    """The re-prompt after a failed round (``templates/replan.txt`` / ``replan_unreadable.txt``)."""
    from safebeal.planners.texts import read_template

    err = result["error"] or {}
    if not result["readable"]:
        return read_template("replan_unreadable").strip().format(error=err.get("message", ""))
    done = ("These steps ran:\n" + "\n".join(result["prefix"])) if result["prefix"] else "No step ran."
    observed = ", ".join(f"<{n}> ({i})" for n, i in result["observed"]) or "none"
    return read_template("replan").strip().format(done=done, step=result["failed_step"] + 1,
                                                  line=result["line"] or "", error=err.get("message", ""),
                                                  observed=observed)


def continued(result: Dict[str, Any], text: str) -> str:
    """The plan after a round: the steps that ran, then the new output (the whole new output when the previous
    one was not a plan)."""
    if not result["readable"] or not result["prefix"]:
        return text
    return "\n".join(result["prefix"]) + "\n" + text


def replan_task(task: Task, first: Any, prompt: List[Dict[str, str]], backend: Any, settings: Dict[str, Any],
                rounds: int, actions: str = "extended") -> Tuple[Optional[str], List[Dict[str, str]], Dict[str, Any]]:
    """``(final text, conversation, record)`` for one task whose first generation is ``first``."""
    text = first.text
    record: Dict[str, Any] = {"max_rounds": rounds, "rounds": [{"round": 0, "output": first.text, "error": first.error}]}
    conv = list(prompt)
    why = ("no scene" if task.scene is None else "no output" if first.error is not None or text is None
           else "the plans are sentences" if task.meta.get("plan_format") == "sentences" else None)
    if why is not None:  # nothing to execute as it plans (WorldModel's sentence plans are not re-planned)
        record.update(n_rounds=0, final_output=text, executed=None, reason=why)
        return text, conv, record
    for k in range(1, rounds + 1):
        res = attempt(task, text, actions)
        last = record["rounds"][-1]
        last.update(failed_step=res["failed_step"], step_error=res["error"], executed=res["ok"])
        if res["ok"]:
            break
        msg = feedback(res)
        last.update(observed=[[n, i] for n, i in res["observed"]], feedback=msg)
        conv = conv + [{"role": "assistant", "content": record["rounds"][-1]["output"] or ""},
                       {"role": "user", "content": msg}]
        [g] = backend.generate([conv], **settings)
        rnd: Dict[str, Any] = {"round": k, "output": g.text, "error": g.error}
        record["rounds"].append(rnd)
        if g.error is not None or g.text is None:
            break
        text = continued(res, g.text)
        rnd["plan"] = text
    else:
        res = attempt(task, text, actions)
        record["rounds"][-1].update(failed_step=res["failed_step"], step_error=res["error"], executed=res["ok"])
    record.update(n_rounds=len(record["rounds"]) - 1, final_output=text,
                  executed=bool(record["rounds"][-1].get("executed")))
    return text, conv, record
