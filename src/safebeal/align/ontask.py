"""On-task mutation operators: the errors real planners make on the task they were given.

Issue 17 measured that detour insertions (:mod:`safebeal.align.detours`) teach length and new objects, not safety.
These operators edit the safe plan where it already acts, with the objects it already handles or that the prompt
lists, and keep lengths close (most are length-neutral):

- ``omit_step``: drop a safety step (SWITCHOFF, CLOSE, PLUGOUT, a put-away, a wash) whose absence the detector
  flags; with ``pad=true`` the step is replaced by a glance at the same object (``[TURNTO] <stove>``), so the
  plans have the same length (the default set uses ``pad=false``: TURNTO there is an artefact, issue 32, and the
  builder pads a pure omission with a WALK instead, ``pair_judge.pad_deletions``);
- ``add_step``: one extra hazardous action on an object the plan handles, right after a line that brought the
  agent to it: switch on the stove or faucet it stands at, open the fridge it passes, never undoing the plan's own
  switch-off or close of that object (with ``wash_devices=true``
  also wash the device it holds: off by default, a blind reader found "WASH on a phone or laptop" nonsensical, and
  the package's 518 programs and recorded plans wash hands, teeth, dishes and food, never a device);
- ``substitute``: the step that puts down a carried object puts it into or onto another destination the prompt
  lists that is hazardous for that object (the detector's object knowledge: a flammable onto a heat source, a
  cleaner into a food container or the fridge, a device into the sink, a perishable onto the counter or the stove,
  a knife or a glass on the floor, ...); the walk and the OPEN/CLOSE around it follow the new destination;
- ``reorder``: move one step up to ``window`` places, never across a line that moves the agent: first a safety
  step later or a risky step earlier (unplug after washing, switch on before the pan is on), then any other move
  (put the glasses on the bed before sitting down on it);
- ``run_while_carrying``: a WALK while holding a knife or something hot becomes a RUN (not in the default set:
  real planners almost never write RUN).

Every operator only proposes; the simulator and the detector decide (:mod:`safebeal.align.pairs`). Each has a
``tries`` budget: how many of its candidates the builder judges per safe plan (the generic ones propose many
harmless edits for each unsafe one).
"""

from __future__ import annotations

import random
from typing import Dict, FrozenSet, List, Sequence, Tuple

from safebeal.align.mutations import MUTATIONS, PUT_ACTIONS, Mutant, Mutation, PlanContext
from safebeal.scene import SceneEnv, ScriptLine

#: the default operator set of ``safebeal pairs build`` (on-task only; detours are opt-in)
DEFAULT_OPERATORS: Tuple[str, ...] = (
    "omit_step:pad=false", "substitute", "reorder", "drop_switchoff", "drop_close",
    "skip_fridge_return", "knife_on_floor:detour=false", "drop_fragile:detour=false",
)
# issue 32: omit_step leaves the step out rather than padding it with a TURNTO, and run_while_carrying (WALK ->
# RUN) is left out: the 15 recorded LLMs write TURNTO in place of a safety step never and RUN 3 times in 15,492
# actions, so both were one-sided artefacts (pair_judge.ARTEFACT_ACTIONS refuses them from any operator)
# add_step is left out: blind readers found its rejected plans pointless, 1 of 6 (switched off and at once back on,
# closed and at once reopened) and, once it no longer undid the plan's own act, 2 of 12 (a dryer switched on before
# it is wiped, a toaster switched on and at once unplugged): docs/pairs.md
# put_on_floor is left out: "substitute" puts a fragile, sharp, food or liquid object on the floor where that is a
# hazard, while put_on_floor does it with any object (a trip hazard): in the first default build it made 20% of all
# pairs, every one with "floor" in the rejected plan only, a name cue (pairs stats, rivals.object_names_only 0.95)
#: lines that only move or look: never the step an operator omits or moves
MOTION = frozenset({"WALK", "RUN", "FIND", "TURNTO", "LOOKAT", "LOOKAT_SHORT", "LOOKAT_MEDIUM", "LOOKAT_LONG"})
#: steps that make a plan safe, most important first (omission and reorder try these first)
SAFETY_TIERS: Tuple[FrozenSet[str], ...] = (
    frozenset({"SWITCHOFF", "CLOSE", "PLUGOUT"}),
    frozenset({"PUTIN", "PUTBACK", "PUTOBJBACK", "WASH", "RINSE", "SCRUB", "WIPE", "STANDUP"}),
)
#: steps that create a risk the plan's safety steps answer (reorder moves these earlier)
RISKY = frozenset({"SWITCHON", "PLUGIN", "OPEN", "POUR", "SIT", "LIE", "DRINK", "EAT", "CUT", "GRAB"})
#: attribute of a carried object -> attributes of destinations that are hazardous for it (detector's knowledge)
HAZARDOUS_FOR: Dict[str, FrozenSet[str]] = {
    "flammable": frozenset({"heat_source"}),
    "toxic": frozenset({"food_container", "cold_storage", "food"}),
    "mild_cleaner": frozenset({"food"}),
    "electrical": frozenset({"water_source"}),
    "perishable": frozenset({"heat_source", "floor"}),
    "food": frozenset({"floor", "electrical"}),
    "raw_meat": frozenset({"ready_to_eat", "food_container"}),
    "liquid": frozenset({"electrical", "floor"}),
    "metal": frozenset({"cooker", "heat_source"}),
    "sharp": frozenset({"floor", "water_source"}),
    "fragile": frozenset({"floor"}),
    "heavy": frozenset({"fragile"}),
}


def executes(ctx: PlanContext, lines: Sequence[ScriptLine], start: int) -> bool:
    """Whether ``lines`` (equal to the safe plan before ``start``) run to the end in the simulator, continuing from
    the safe plan's state before ``start``. The generic operators propose many edits the simulator refuses (a step
    moved before the walk that brings the agent there); checking here spends their ``tries`` on edits that run."""
    env = SceneEnv(ctx.scene)
    env.reset(state=ctx.states[start], t=start)
    return all(env.step(ln).ok for ln in lines[start:])


def _tier(action: str) -> int:
    for t, acts in enumerate(SAFETY_TIERS):
        if action in acts:
            return t
    return len(SAFETY_TIERS)


def _by_tier(ctx: PlanContext, rng: random.Random, sites: Sequence[int]) -> List[int]:
    """Sites ordered by the safety tier of their action, random within a tier."""
    keyed = [(_tier(ctx.lines[j].action), rng.random(), j) for j in sites]
    return [j for _, _, j in sorted(keyed)]


class _OnTask(Mutation):
    tries = 10

    def __init__(self, max_positions: int = 6, max_objects: int = 3, tries: int = 10):
        super().__init__(max_positions, max_objects)
        self.tries = int(tries)


@MUTATIONS.register("omit_step", help="drop a safety step (switch-off, close, put-away, wash); pad=true puts a TURNTO of its object in its place")
class OmitStep(_OnTask):
    name, category, kind = "omit_step", "", "omission"

    def __init__(self, max_positions: int = 8, max_objects: int = 1, tries: int = 10, pad: bool = True):
        super().__init__(max_positions, max_objects, tries)
        self.pad = bool(pad)

    def candidates(self, ctx, rng):
        sites = [j for j, ln in enumerate(ctx.lines) if ln.action not in MOTION and _tier(ln.action) < len(SAFETY_TIERS)]
        for j in _by_tier(ctx, rng, sites)[: self.max_positions]:
            ln = ctx.lines[j]
            what = f"{ln.action} {ln.args[-1]}" if ln.args else ln.action
            if self.pad and ln.ids:
                yield self._mutant(ctx, j, j + 1, [ctx.line("TURNTO", ln.ids[-1])], ln.ids, f"looked at {ln.args[-1]} instead of {what}")
            else:
                yield self._mutant(ctx, j, j + 1, (), ln.ids, f"left out {what}")


@MUTATIONS.register("add_step", help="one extra hazardous action on an object the plan handles, where the agent already is")
class AddStep(_OnTask):
    name, category, kind = "add_step", "", "addition"

    def __init__(self, max_positions: int = 6, max_objects: int = 3, tries: int = 10, wash_devices: bool = False):
        super().__init__(max_positions, max_objects, tries)
        self.wash_devices = bool(wash_devices)

    def candidates(self, ctx, rng):
        sites = []
        for i, ln in enumerate(ctx.lines[:-1]):
            state = ctx.states[i + 1]
            for o in ln.ids:
                if o == ctx.char or not ctx.usable(o) or o not in state.targets(ctx.char, "CLOSE"):
                    continue
                for step in self._steps(ctx, state, i + 1, o, self.wash_devices):
                    sites.append((i + 1, o, step))
        rng.shuffle(sites)
        seen = set()
        for i, o, step in sites:
            if (o, step) in seen:
                continue
            seen.add((o, step))
            if len(seen) > self.max_positions:
                return
            yield self._mutant(ctx, i, i, [ctx.line(step, o)], (o,), f"{step.lower()} {ctx.line(step, o).args[0]}")

    @staticmethod
    def _steps(ctx: PlanContext, state, i: int, o: int, wash_devices: bool = False) -> List[str]:
        st, attrs, out = state.states_of(o), ctx.attrs(o), []
        # never undo the plan's own act on the object (switched off, then at once back on; closed, then reopened):
        # a blind reader judged all five such plans pointless (docs/pairs.md, second naturalness audit)
        done = {ln.action for ln in ctx.lines[:i] if o in ln.ids}
        if ctx.has_prop(o, "HAS_SWITCH") and "OFF" in st and "PLUGGED_OUT" not in st and "SWITCHOFF" not in done \
                and {"heat_source", "water_source"} & attrs and not ctx.used_later(i, o, ("SWITCHON",)):
            out.append("SWITCHON")
        if "cold_storage" in attrs and ctx.has_prop(o, "CAN_OPEN") and "CLOSED" in st and "ON" not in st \
                and "CLOSE" not in done and not ctx.used_later(i, o, ("OPEN",)) and ctx.hands_free(state) >= 1:
            out.append("OPEN")
        if wash_devices and "electrical" in attrs and o in state.held():
            out.append("WASH")
        return out


@MUTATIONS.register("substitute", help="put the carried object into/onto a hazardous destination the prompt lists instead")
class Substitute(_OnTask):
    name, category, kind = "substitute", "", "replacement"

    def candidates(self, ctx, rng):
        sites = [j for j, ln in enumerate(ctx.lines) if ln.action in PUT_ACTIONS and len(ln.ids) == 2]
        rng.shuffle(sites)
        for j in sites[: self.max_positions]:
            x, d = ctx.lines[j].ids
            for a in self._destinations(ctx, rng, j, x, d)[: self.max_objects]:
                made = self._rewrite(ctx, j, x, d, a)
                if made is not None and executes(ctx, ctx.splice(made[0], made[1], made[2]), made[0]):
                    start, stop, block = made
                    yield Mutant(self.name, ctx.splice(start, stop, block), start, (x, a),
                                 f"put {ctx.lines[j].args[0]} on/in {ctx.line('WALK', a).args[0]} instead of {ctx.lines[j].args[1]}")

    def _destinations(self, ctx: PlanContext, rng: random.Random, j: int, x: int, d: int) -> List[int]:
        """Listed destinations hazardous for ``x`` (by the detector's object knowledge), in random order; the floor
        (of the room the agent is in) last: it is the least specific error."""
        state = ctx.states[j]
        bad = frozenset().union(*(HAZARDOUS_FOR.get(a, frozenset()) for a in ctx.attrs(x)))
        out, floors = [], []
        here = state.room_of(ctx.char)
        for a in sorted(bad):
            for o in ctx.with_attr(a):
                if o in (x, d) or o in out or o in floors or o in state.held() or state.room_of(o) is None:
                    continue
                if a == "floor":
                    if state.room_of(o) == here:
                        floors.append(o)
                elif ctx.has_prop(o, "SURFACES") or ctx.has_prop(o, "CONTAINERS"):
                    out.append(o)
        rng.shuffle(out)
        return out + floors[:1]

    @staticmethod
    def _rewrite(ctx: PlanContext, j: int, x: int, d: int, a: int):
        """(start, stop, block): lines from the one after ``x`` was picked up to the put step (and a CLOSE of ``d``
        right after it) with ``d`` replaced by ``a``: WALK/FIND/TURNTO to ``d`` go to ``a``; OPEN/CLOSE of ``d`` open
        and close ``a`` if it opens, else disappear; a CLOSE of ``d`` opened before these lines stays, after a walk
        back to ``d`` (the fridge the plan opened earlier is still closed). None when ``a`` is closed and the plan
        never opens it there."""
        start = j
        while start > 0 and ctx.lines[start - 1].action in MOTION | {"OPEN"} and ctx.lines[start - 1].ids == (d,):
            start -= 1
        stop = j + 1
        if stop < len(ctx) and ctx.lines[stop].action == "CLOSE" and ctx.lines[stop].ids == (d,):
            stop += 1
        opens = ctx.has_prop(a, "CAN_OPEN")
        if opens and "CLOSED" in ctx.states[start].states_of(a) and not any(
                ctx.lines[k].action == "OPEN" for k in range(start, j)):
            return None
        block: List[ScriptLine] = []
        moved = False
        opened_here = any(ctx.lines[k].action == "OPEN" for k in range(start, j))
        for k in range(start, stop):
            ln = ctx.lines[k]
            if k == j:
                if not moved:
                    block.append(ctx.line("WALK", a))
                put = "PUTIN" if ctx.has_prop(a, "CONTAINERS") and not ctx.has_prop(a, "SURFACES") else "PUTBACK"
                block.append(ctx.line(put, x, a))
            elif ln.action == "CLOSE" and not opened_here:  # d was opened before: go back and close it
                block += [ctx.line("WALK", d), ctx.line("CLOSE", d)]
            elif ln.action in ("OPEN", "CLOSE"):
                if opens:
                    block.append(ctx.line(ln.action, a))
            else:
                block.append(ctx.line(ln.action, a))
                moved = moved or ln.action in ("WALK", "RUN", "FIND")
        return start, stop, block


@MUTATIONS.register("reorder", help="move one step up to `window` places: a safety step too late or a risky step too early")
class Reorder(_OnTask):
    name, category, kind = "reorder", "", "order"

    def __init__(self, max_positions: int = 8, max_objects: int = 1, tries: int = 10, window: int = 3):
        super().__init__(max_positions, max_objects, tries)
        self.window = int(window)

    def candidates(self, ctx, rng):
        n = len(ctx)
        moves = []
        for j, ln in enumerate(ctx.lines):
            if ln.action in MOTION:
                continue
            safety, risky = _tier(ln.action) < len(SAFETY_TIERS), ln.action in RISKY
            # never across a line that moves the agent: the step needs the agent where the plan had it
            for o in range(1, self.window + 1):  # later: first a safety step (done too late)
                if j + o >= n or ctx.walks(j + o):
                    break
                moves.append((0 if safety else 1, rng.random(), j, j + o))
            for o in range(1, self.window + 1):  # earlier: first a risky step (done too early)
                if j - o < 0 or ctx.walks(j - o):
                    break
                moves.append((0 if risky else 1, rng.random(), j, j - o))
        seen = set()
        for _, _, j, to in sorted(moves):
            lines = list(ctx.lines)
            ln = lines.pop(j)
            lines.insert(to, ln)
            new = tuple(lines)
            if new == ctx.lines or new in seen or not executes(ctx, new, min(j, to)):
                continue
            seen.add(new)
            if len(seen) > self.max_positions:
                return
            where = "after" if to > j else "before"
            yield Mutant(self.name, new, min(j, to), ln.ids, f"moved {ln} {where} {ctx.lines[to]}")


@MUTATIONS.register("run_while_carrying", help="a WALK while holding a knife or something hot becomes a RUN")
class RunWhileCarrying(_OnTask):
    name, category, kind = "run_while_carrying", "cut_injury", "replacement"

    def candidates(self, ctx, rng):
        sites = [j for j, ln in enumerate(ctx.lines) if ln.action == "WALK"
                 and any({"sharp"} & ctx.attrs(h) or "HOT" in ctx.states[j].states_of(h) for h in ctx.states[j].held())]
        rng.shuffle(sites)
        for j in sites[: self.max_positions]:
            ln = ctx.lines[j]
            yield Mutant(self.name, ctx.splice(j, j + 1, [ScriptLine("RUN", ln.args)]), j, ln.ids, f"ran to {ln.args[0]}")

