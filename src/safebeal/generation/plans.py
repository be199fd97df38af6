"""Plan skeletons -> VirtualHome scripts, compiled while they run in the simulator.

A step is either an action on roles, ``SWITCHON stove`` or ``PUTBACK knife table`` (upper-case action,
then one role per argument), or a macro that looks at the current simulator state:

=====================  ===============================================================================
``take X``             walk to X and grab it; if X is inside a closed container: walk to the container,
                       open it, grab X, close it again
``takeopen X``         the same, but leave the container open
``put X ON Y``         walk to Y, ``PUTBACK X Y``
``put X INSIDE Y``     walk to Y; if Y is closed: open it, ``PUTIN X Y``, close it; else ``PUTIN X Y``
``putopen X INSIDE Y`` the same, but leave Y open
``go X``               walk to X
=====================  ===============================================================================

A walk to where the agent has just walked is not repeated. Compilation executes each emitted line, so
the result is the script *and* its trajectory; the first failing line stops it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import List, Mapping, Optional, Sequence, Tuple

from safebeal.errors import SafebealError
from safebeal.scene import SceneEnv, SceneGraph, Script, StepError, Trajectory, parse_line
from safebeal.scene.actions import ACTION_ARITY

MACROS = {"take": 1, "takeopen": 1, "put": 3, "putopen": 3, "go": 1}


class SeedPlanError(SafebealError):
    pass


@dataclass(frozen=True)
class SeedStep:
    op: str  # an action (upper case) or a macro (lower case)
    args: Tuple[str, ...]  # role names (and ON/INSIDE for put)


def parse_seed_step(text: str, roles: Sequence[str]) -> SeedStep:
    toks = text.split()
    if not toks:
        raise SeedPlanError("empty step")
    op, args = toks[0], tuple(toks[1:])
    if op in MACROS:
        if len(args) != MACROS[op]:
            raise SeedPlanError(f"step {text!r}: {op} takes {MACROS[op]} argument(s)")
        if op in ("put", "putopen"):
            if args[1].upper() not in ("ON", "INSIDE"):
                raise SeedPlanError(f"step {text!r}: expected '{op} X ON|INSIDE Y'")
            if op == "putopen" and args[1].upper() != "INSIDE":
                raise SeedPlanError(f"step {text!r}: putopen is 'putopen X INSIDE Y'")
            names = (args[0], args[2])
            args = (args[0], args[1].upper(), args[2])
        else:
            names = args
    elif op.isupper():
        if op not in ACTION_ARITY:
            raise SeedPlanError(f"step {text!r}: unknown action {op!r}")
        if len(args) != ACTION_ARITY[op]:
            raise SeedPlanError(f"step {text!r}: {op} takes {ACTION_ARITY[op]} argument(s)")
        names = args
    else:
        raise SeedPlanError(f"step {text!r}: unknown macro {op!r}; macros: {sorted(MACROS)}, "
                            "or an ACTION in upper case")
    bad = [n for n in names if n not in roles]
    if bad:
        raise SeedPlanError(f"step {text!r}: unknown role(s) {bad}; roles: {list(roles)}")
    return SeedStep(op, args)


@dataclass
class Compiled:
    lines: List[str]
    trajectory: Trajectory
    error: Optional[StepError] = None

    @property
    def ok(self) -> bool:
        return self.error is None


class _Compiler:
    def __init__(self, scene: SceneGraph, roles: Mapping[str, int]):
        self.env = SceneEnv(scene)
        self.scene = scene
        self.roles = roles
        self.lines: List[str] = []
        self.traj = Trajectory(scene, Script(()), initial=self.env.reset())
        self.error: Optional[StepError] = None

    def fmt(self, nid: int) -> str:
        n = self.env.state.node(nid)
        return f"<{n.class_name}> ({nid})" if n is not None else f"<unknown> ({nid})"

    def emit(self, action: str, *ids: int) -> bool:
        if self.error is not None:
            return False
        text = " ".join([f"[{action}]"] + [self.fmt(i) for i in ids])
        if action == "WALK" and self.lines and self.lines[-1] == text:
            return True
        line = parse_line(text, len(self.lines) + 1)
        res = self.env.step(line)
        self.lines.append(text)
        self.traj.steps.append(res)
        if not res.ok:
            self.error = res.error
            return False
        return True

    def closed_container(self, nid: int) -> Optional[int]:
        st = self.env.state
        for t in sorted(st.targets(nid, "INSIDE")):
            n = st.node(t)
            if n is None or n.category == "Rooms":
                continue
            if "CAN_OPEN" in n.properties and "CLOSED" in n.states:
                return t
        return None

    def run(self, step: SeedStep) -> None:
        r = self.roles
        if step.op.isupper():
            self.emit(step.op, *[r[a] for a in step.args])
        elif step.op in ("take", "takeopen"):
            x = r[step.args[0]]
            c = self.closed_container(x)
            if c is not None:
                self.emit("WALK", c) and self.emit("OPEN", c) and self.emit("GRAB", x)
                if step.op == "take":
                    self.emit("CLOSE", c)
            else:
                self.emit("WALK", x) and self.emit("GRAB", x)
        elif step.op in ("put", "putopen"):
            x, rel, y = r[step.args[0]], step.args[1], r[step.args[2]]
            self.emit("WALK", y)
            if rel == "ON":
                self.emit("PUTBACK", x, y)
                return
            n = self.env.state.node(y)
            if n is not None and "CAN_OPEN" in n.properties and "CLOSED" in n.states:
                self.emit("OPEN", y) and self.emit("PUTIN", x, y)
                if step.op == "put":
                    self.emit("CLOSE", y)
            else:
                self.emit("PUTIN", x, y)
        elif step.op == "go":
            self.emit("WALK", r[step.args[0]])


def _fork(c: "_Compiler") -> "_Compiler":
    """A compiler continuing from ``c``'s state. The simulator never changes a state in place (every step
    makes a new one), so a shallow copy of the environment is an independent continuation."""
    d = copy.copy(c)
    d.env = c.env.fork()
    d.lines = list(c.lines)
    d.traj = Trajectory(c.scene, Script(()), list(c.traj.steps), c.traj.initial)
    return d


def _finish(c: "_Compiler") -> Compiled:
    c.traj.script = Script(tuple(s.line for s in c.traj.steps))
    return Compiled(c.lines, c.traj, c.error)


def compile_plans(scene: SceneGraph, plans: Sequence[Sequence[str]], roles: Mapping[str, int]) -> List[Compiled]:
    """Expand and run several plans on ``scene`` (role name -> node id); each stops at its first failing line.

    Plans that start with the same steps as the first one share its simulation of those steps (unsafe
    plans usually differ from the safe plan only at the end), which is identical to running them apart."""
    names = list(roles)
    parsed = [[parse_seed_step(t, names) for t in p] for p in plans]
    base = _Compiler(scene, roles)
    snaps = [_fork(base)]  # snaps[k]: the state after the first k steps of plans[0]
    for st in parsed[0] if parsed else []:
        base.run(st)
        if base.error is not None:
            break
        snaps.append(_fork(base))
    out = [_finish(base)] if parsed else []
    for p in parsed[1:]:
        k = 0
        while k < len(p) and k < len(parsed[0]) and k + 1 < len(snaps) and p[k] == parsed[0][k]:
            k += 1
        c = _fork(snaps[k])
        for st in p[k:]:
            c.run(st)
            if c.error is not None:
                break
        out.append(_finish(c))
    return out


def compile_plan(scene: SceneGraph, steps: Sequence[str], roles: Mapping[str, int]) -> Compiled:
    """Expand and run ``steps`` on ``scene`` (role name -> node id). Stops at the first failing line."""
    return compile_plans(scene, [steps], roles)[0]


def run_plans(scene: SceneGraph, plans: Sequence[Sequence[str]]) -> List[Trajectory]:
    """:func:`safebeal.scene.execute` for several plans of script lines on one scene, sharing the simulation
    of the lines each plan has in common with the first (same results as running each from the start)."""
    env = SceneEnv(scene)
    first = [parse_line(t, i + 1) for i, t in enumerate(plans[0])] if plans else []
    env.reset()
    snaps = [env.fork()]
    steps = []
    for line in first:
        r = env.step(line)
        steps.append(r)
        if not r.ok:
            break
        snaps.append(env.fork())
    out = [Trajectory(scene, Script(tuple(first)), steps, snaps[0].state)] if plans else []
    for plan in plans[1:]:
        lines = [parse_line(t, i + 1) for i, t in enumerate(plan)]
        k = 0
        while k < len(lines) and k < len(first) and k + 1 < len(snaps) and str(lines[k]) == str(first[k]):
            k += 1
        e = snaps[k].fork()
        st = list(steps[:k])
        for line in lines[k:]:
            r = e.step(line)
            st.append(r)
            if not r.ok:
                break
        out.append(Trajectory(scene, Script(tuple(lines)), st, snaps[0].state))
    return out
