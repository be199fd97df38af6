"""Execute scripts step by step, Gymnasium-style.

    env = SceneEnv(load_scene("activity:628_2"))
    state = env.reset()
    result = env.step("[WALK] <dining_room> (201)")   # StepResult: ok, error, before, after
    traj = env.run(script)                            # Trajectory: every step's states, first error

Execution stops at the first failing step; later steps are reported as not run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Union

from safebeal.errors import SafebealError
from safebeal.resources import name_equivalence
import safebeal.scene._sim as _sim
import safebeal.scene.extension_exec as extension_exec
from safebeal.scene.actions import ACTION_ARITY
from safebeal.scene.extensions import DEFAULT_ACTIONS, check_actions, extensions
from safebeal.scene.graph import SceneGraph
from safebeal.scene.sources import load_scene
from safebeal.scene.script import Script, ScriptLine, StepError, parse_line, parse_script
from safebeal.scene.state import StateView


@dataclass
class StepResult:
    index: int  # 0-based step index
    line: ScriptLine
    ok: bool
    before: StateView
    after: StateView  # equals ``before`` when the step failed
    error: Optional[StepError] = None

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "line": str(self.line),
            "ok": self.ok,
            "error": None if self.error is None else self.error.to_dict(),
        }


@dataclass
class Trajectory:
    """A script run on a scene: one :class:`StepResult` per executed step, in order."""

    scene: SceneGraph
    script: Script
    steps: List[StepResult] = field(default_factory=list)
    initial: Optional[StateView] = None

    @property
    def executable(self) -> bool:
        return len(self.steps) == len(self.script) and all(s.ok for s in self.steps)

    @property
    def error(self) -> Optional[StepError]:
        for s in self.steps:
            if s.error is not None:
                return s.error
        return None

    @property
    def executed(self) -> List[StepResult]:
        """The steps that succeeded."""
        return [s for s in self.steps if s.ok]

    @property
    def states(self) -> List[StateView]:
        """Initial state, then the state after each successful step."""
        return [self.initial] + [s.after for s in self.steps if s.ok]

    @property
    def final(self) -> StateView:
        return self.states[-1]

    def step_dicts(self) -> List[dict]:
        out = [s.to_dict() for s in self.steps]
        failed_at = len(self.steps)
        for i in range(failed_at, len(self.script)):
            out.append({"index": i, "line": str(self.script[i]), "ok": False, "error": {
                "kind": "not_run", "message": "not executed: an earlier step failed", "step": i,
                "line": str(self.script[i]), "line_no": self.script[i].line_no, "sim_error_type": None}})
        return out


class EpisodeOver(SafebealError):
    pass


class SceneEnv:
    """A Gymnasium-shaped wrapper around the evolving-graph simulator for one scene."""

    def __init__(self, scene: Union[SceneGraph, str], check_names: bool = True, char_index: int = 0,
                 actions: str = DEFAULT_ACTIONS):
        """``actions``: ``extended`` (default: the simulator's actions plus ``scene/data/actions.yaml``'s POUR onto
        anything, THROW, BREAK) or ``vh`` (the simulator's own only, as the Embodied Agent Interface has them)."""
        self.scene = load_scene(scene)
        self.check_names = check_names
        self.char_index = char_index
        self.actions = check_actions(actions)
        self._ext = extensions() if actions == "extended" else None
        self._eq = name_equivalence()
        self._state = None
        self._view: Optional[StateView] = None
        self._t = 0
        self._failed = False

    # -- Gymnasium-like API -------------------------------------------------------------------
    def reset(self, state: Optional[StateView] = None, t: int = 0) -> StateView:
        """Start an episode from the scene's initial state, or from ``state`` (a state of an earlier run on this
        scene, e.g. ``trajectory.states[k]``) as step ``t``. States are layers the simulator never modifies, so one
        can be shared by any number of continuations."""
        if state is None:
            self._state = _sim.EnvironmentState(self.scene.env_graph, self._eq, instance_selection=True)
            self._view = StateView(self.scene, self._state)
        else:
            if state.scene is not self.scene:
                raise ValueError("reset(state=...): the state belongs to another scene")
            if state.ext and self._ext is None:
                raise ValueError("reset(state=...): the state has extension states; use actions='extended'")
            self._state, self._view = state._st, state
        self._t = t
        self._failed = False
        return self._view

    @property
    def state(self) -> StateView:
        if self._view is None:
            return self.reset()
        return self._view

    @property
    def info(self) -> Dict[str, Any]:
        return {"scene": self.scene.source, "t": self._t, "failed": self._failed}

    def step(self, line: Union[ScriptLine, str]) -> StepResult:
        if self._state is None:
            self.reset()
        if self._failed:
            raise EpisodeOver("a step already failed in this episode; call reset()")
        if isinstance(line, str):
            line = parse_line(line, 0)
        before = self._view
        err = self._check(line)
        new_state, ext = None, before.ext
        if err is None:
            if self._ext is not None and extension_exec.applies(self._ext, line.action, before, line.ids):
                new_state, ext, err = self._extension(line)
            else:
                new_state, err = self._simulate(line)
                if err is None and self._ext is not None and ext:
                    ext = extension_exec.run_hooks(self._ext, line.action, before, line.ids)
        idx = self._t
        self._t += 1
        if err is not None:
            self._failed = True
            return StepResult(idx, line, False, before, before, err)
        self._state = new_state
        self._view = StateView(self.scene, new_state, ext)
        return StepResult(idx, line, True, before, self._view, None)

    def run(self, script: Union[Script, str, Sequence[str]]) -> Trajectory:
        if isinstance(script, str):
            script = parse_script(script)
        elif not isinstance(script, Script):
            script = Script(tuple(parse_line(s, i + 1) for i, s in enumerate(script)))
        traj = Trajectory(self.scene, script, initial=self.reset())
        for line in script:
            r = self.step(line)
            traj.steps.append(r)
            if not r.ok:
                break
        return traj

    def fork(self) -> "SceneEnv":
        """An independent continuation of this episode from its current state (cheap: no copy of the graph).

        Safe because the simulator never changes a state in place: every step builds a new ``EnvironmentState``
        layered over the previous one, so the fork and the original can step on without affecting each other."""
        import copy

        return copy.copy(self)

    # -- internals -------------------------------------------------------------------------------
    def _error(self, kind: str, msg: str, line: ScriptLine, sim_type: Optional[str] = None) -> StepError:
        return StepError(kind, msg, self._t, str(line), line.line_no, sim_type)

    def _check(self, line: ScriptLine) -> Optional[StepError]:
        if self._ext is not None:
            counts = self._ext.arities(line.action)
        else:
            counts = (ACTION_ARITY[line.action],) if line.action in ACTION_ARITY else ()
        if not counts:
            hint = " (an action extension: run with the extended actions)" if self._ext is None and line.action in extensions().actions else ""
            return self._error("unknown_action", f"unknown action {line.action!r}{hint}", line)
        if len(line.args) not in counts:
            n_expected = " or ".join(str(c) for c in counts)
            return self._error(
                "argument_count", f"{line.action} takes {n_expected} argument(s), got {len(line.args)}", line
            )
        for a in line.args:
            node = self._state.get_node(a.id)
            if node is None:
                return self._error("unknown_object", f"no object with id {a.id} in the scene (named <{a.name}>)", line)
            if self.check_names and node.class_name != a.name:
                # the parser writes a name's hyphens as underscores (<band-aids> -> <band_aids>): the same class
                if node.class_name.replace("-", "_") == a.name.replace("-", "_"):
                    continue
                if node.class_name not in self._eq.get(a.name, ()) and a.name not in self._eq.get(node.class_name, ()):
                    return self._error(
                        "name_mismatch", f"id {a.id} is <{node.class_name}>, not <{a.name}>", line
                    )
        return None

    def _extension(self, line: ScriptLine):
        """Run an extension step: ``(env_state, ExtState, None)`` or ``(None, None, StepError)``."""
        try:
            st, ext = extension_exec.run_extension(self._ext, line.action, self._view, line.ids, self.char_index)
        except extension_exec.ExtensionRefused as exc:
            return None, None, self._error("precondition", str(exc), line, "extension")
        return st, ext, None

    def _simulate(self, line: ScriptLine):
        action = _sim.Action[line.action]
        vh_line = _sim.VHScriptLine(action, [_sim.VHScriptObject(a.name, a.id) for a in line.args], self._t + 1)
        info = _sim.ExecutionInfo(eval_mode=True)
        try:
            with _sim.fast_changes():
                new_state = next(
                    _sim.ScriptExecutor.call_action_method(_sim.VHScript([vh_line]), self._state, info, self.char_index),
                    None,
                )
        except Exception as exc:  # the simulator raises on some malformed inputs; never let it escape
            return None, self._error("precondition", f"simulator error: {exc!r}", line)
        if new_state is None:
            msg = info.get_error_string() or "the simulator refused the action"
            msg = msg.replace(' when executing "' + str(vh_line) + '"', "")
            sim_type = _sim.ERROR_TYPES.get(info.error_type) if info.error_type is not None else None
            return None, self._error("precondition", msg, line, sim_type)
        return new_state, None


def execute(scene: Union[SceneGraph, str], script: Union[Script, str, Sequence[str]], check_names: bool = True,
            actions: str = DEFAULT_ACTIONS) -> Trajectory:
    """Run ``script`` on ``scene`` from its initial state and return the trajectory (``actions``: ``extended``,
    the default, or ``vh``: see :class:`SceneEnv`)."""
    return SceneEnv(scene, check_names=check_names, actions=actions).run(script)
