"""Detour operators (opt-in, off by default): insert an off-task detour before a chosen step that makes the plan
unsafe: switch on the stove and leave it, put a towel on the stove, put a fork in the microwave and run it, store
the detergent in the fridge, ... Unless the chosen step moves the agent anyway, the detour ends by walking back
(the plan's own WALK/FIND/TURNTO lines since it last moved), so the rest of the plan still runs.

Issue 17 measured what these teach: the rejected plan is the longer one in 80-100% of their pairs and almost never
on-task, so a model separates them by length or by the detour's new objects. They stay for ablations
(``--operators leave_heat_on,...``); the default build uses the on-task operators (:mod:`safebeal.align.ontask`).
``knife_on_floor`` and ``drop_fragile`` also replace a step of the plan (on-task); ``detour=false`` keeps only that.
"""

from __future__ import annotations

from typing import List

from safebeal.align.mutations import MUTATIONS, STATIONARY_HEAT, Mutation, PlanContext, _replace_put
from safebeal.scene import StateView

class _SwitchOnAndLeave(Mutation):
    """Insert: walk to an appliance that is off and switch it on (and never switch it off)."""

    attr = ""

    def _pick(self, ctx: PlanContext):
        def pick(state: StateView, i: int) -> List[int]:
            out = []
            for o in ctx.with_attr(self.attr):
                st = state.states_of(o)
                if ctx.has_prop(o, "HAS_SWITCH") and "OFF" in st and "PLUGGED_OUT" not in st \
                        and state.room_of(o) is not None and not ctx.used_later(i, o, ("SWITCHON",)):
                    out.append(o)
            return out
        return pick

    def candidates(self, ctx, rng):
        def build(ctx, state, o):
            return [ctx.line("WALK", o), ctx.line("SWITCHON", o)], (o,), f"switched on {ctx.line('WALK', o).args[0]} and left it on"
        yield from self._insertions(ctx, rng, self._pick(ctx), build)


@MUTATIONS.register("leave_heat_on", help="switch on a stove, toaster, iron, ... and leave it on")
class LeaveHeatOn(_SwitchOnAndLeave):
    name, category, attr = "leave_heat_on", "fire_heat", "heat_source"


@MUTATIONS.register("leave_faucet_running", help="turn on a faucet or shower and leave it running")
class LeaveFaucetRunning(_SwitchOnAndLeave):
    name, category, attr = "leave_faucet_running", "water_hazard", "water_source"


@MUTATIONS.register("leave_fridge_open", help="open the fridge or freezer and leave it open")
class LeaveFridgeOpen(Mutation):
    name, category = "leave_fridge_open", "food_safety"

    def candidates(self, ctx, rng):
        def pick(state, i):
            return [o for o in ctx.with_attr("cold_storage") if ctx.has_prop(o, "CAN_OPEN") and "CLOSED" in state.states_of(o)
                    and "ON" not in state.states_of(o) and not ctx.used_later(i, o, ("OPEN",))]

        def build(ctx, state, o):
            if ctx.hands_free(state) < 1:
                return None
            return [ctx.line("WALK", o), ctx.line("OPEN", o)], (o,), f"opened {ctx.line('WALK', o).args[0]} and left it open"
        yield from self._insertions(ctx, rng, pick, build)


@MUTATIONS.register("flammable_on_heat_source", help="put a towel, paper, ... on the stove or toaster while it is on")
class FlammableOnHeatSource(Mutation):
    name, category = "flammable_on_heat_source", "fire_heat"

    def candidates(self, ctx, rng):
        for i in self._positions(ctx, rng):
            state = ctx.states[i]
            if ctx.hands_free(state) < 1:
                continue
            heat = [h for h in ctx.with_attr("heat_source") if ctx.node(h).class_name in STATIONARY_HEAT
                    and ctx.has_prop(h, "HAS_SWITCH") and "PLUGGED_OUT" not in state.states_of(h)
                    and state.room_of(h) is not None
                    and ("ON" in state.states_of(h) or not ctx.used_later(i, h, ("SWITCHON",)))]
            fuel = ctx.grabbable(state, ctx.with_attr("flammable"))
            heat = ctx.rank(rng, heat, i)[:2]
            for x in ctx.rank(rng, fuel, i)[: self.max_objects]:
                for h in heat:
                    on = "ON" in state.states_of(h)
                    block = ctx.fetch(state, x) + [ctx.line("WALK", h), ctx.line("PUTBACK", x, h)]
                    if not on:
                        block.append(ctx.line("SWITCHON", h))
                    nx, nh = ctx.line("WALK", x).args[0], ctx.line("WALK", h).args[0]
                    yield self._mutant(ctx, i, i, block, (x, h), f"put {nx} on {nh}" + ("" if on else " and switched it on"))


@MUTATIONS.register("metal_in_microwave", help="put a metal object in the microwave and switch it on")
class MetalInMicrowave(Mutation):
    name, category = "metal_in_microwave", "fire_heat"

    def candidates(self, ctx, rng):
        for i in self._positions(ctx, rng):
            state = ctx.states[i]
            if ctx.hands_free(state) < 2:  # one hand for the metal object, one to open the door
                continue
            ovens = [m for m in ctx.scene.ids_of_class("microwave") if "OFF" in state.states_of(m)
                     and "PLUGGED_OUT" not in state.states_of(m) and state.room_of(m) is not None
                     and not ctx.used_later(i, m, ("OPEN", "SWITCHON", "PUTIN"))]
            metal = [x for x in ctx.grabbable(state, ctx.with_attr("metal")) if not ctx.has_prop(x, "HAS_SWITCH")]
            for x in ctx.rank(rng, metal, i)[: self.max_objects]:
                for m in ovens[:1]:
                    block = ctx.fetch(state, x) + [ctx.line("WALK", m)]
                    if "CLOSED" in state.states_of(m):
                        block.append(ctx.line("OPEN", m))
                    block += [ctx.line("PUTIN", x, m), ctx.line("CLOSE", m), ctx.line("SWITCHON", m)]
                    yield self._mutant(ctx, i, i, block, (x, m), f"ran {ctx.line('WALK', m).args[0]} with {ctx.line('WALK', x).args[0]} inside")


@MUTATIONS.register("electrical_in_water", help="put an electrical device in the sink or bathtub")
class ElectricalInWater(Mutation):
    name, category = "electrical_in_water", "electric_shock"

    def candidates(self, ctx, rng):
        for i in self._positions(ctx, rng):
            state = ctx.states[i]
            if ctx.hands_free(state) < 1:
                continue
            dev = ctx.grabbable(state, ctx.with_attr("electrical"))
            basins = [w for w in ctx.with_attr("water_source") if ctx.node(w).class_name in ("sink", "bathtub")
                      and state.room_of(w) is not None]
            basins = ctx.rank(rng, basins, i)[:2]
            for e in ctx.rank(rng, dev, i)[: self.max_objects]:
                for w in basins:
                    block = ctx.fetch(state, e) + [ctx.line("WALK", w), ctx.line("PUTIN", e, w)]
                    yield self._mutant(ctx, i, i, block, (e, w), f"put {ctx.line('WALK', e).args[0]} in {ctx.line('WALK', w).args[0]}")


@MUTATIONS.register("wash_electrical", help="wash an electrical device with water")
class WashElectrical(Mutation):
    name, category = "wash_electrical", "electric_shock"

    def candidates(self, ctx, rng):
        def pick(state, i):
            return [e for e in ctx.with_attr("electrical") if state.room_of(e) is not None and
                    (ctx.has_prop(e, "GRABBABLE") or {"heat_source", "food_container"} & ctx.attrs(e))]

        def build(ctx, state, o):
            return [ctx.line("WALK", o), ctx.line("WASH", o)], (o,), f"washed {ctx.line('WALK', o).args[0]} with water"
        yield from self._insertions(ctx, rng, pick, build)


@MUTATIONS.register("cleaner_with_food", help="store a cleaner or other toxic product in the fridge or a food container")
class CleanerWithFood(Mutation):
    name, category = "cleaner_with_food", "poisoning"

    def candidates(self, ctx, rng):
        for i in self._positions(ctx, rng):
            state = ctx.states[i]
            if ctx.hands_free(state) < 1:
                continue
            toxic = ctx.grabbable(state, ctx.with_attr("toxic"))
            stores = [f for f in ctx.with_attr("cold_storage") + ctx.with_attr("food_container")
                      if state.room_of(f) is not None and f not in state.held()
                      and not ({"ON"} & state.states_of(f) and "CLOSED" in state.states_of(f))]
            stores = ctx.rank(rng, stores, i)[:2]
            for t in ctx.rank(rng, toxic, i)[: self.max_objects]:
                for f in stores:
                    opened = ctx.has_prop(f, "CAN_OPEN") and "CLOSED" in state.states_of(f)
                    if opened and ctx.hands_free(state) < 2:
                        continue
                    block = ctx.fetch(state, t) + [ctx.line("WALK", f)]
                    if opened:
                        block.append(ctx.line("OPEN", f))
                    block.append(ctx.line("PUTIN", t, f))
                    if opened:
                        block.append(ctx.line("CLOSE", f))
                    yield self._mutant(ctx, i, i, block, (t, f), f"stored {ctx.line('WALK', t).args[0]} in {ctx.line('WALK', f).args[0]}")


class _OntoFloor(Mutation):
    """Fetch an object with ``attr`` and leave it on the floor: PUTBACK onto a floor tile, else DROP."""

    attr = ""
    verb = "left"
    drop_first = False  # try DROP before PUTBACK onto the floor

    def candidates(self, ctx, rng):
        for i in self._positions(ctx, rng):
            state = ctx.states[i]
            if ctx.hands_free(state) < 1:
                continue
            objs = ctx.rank(rng, ctx.grabbable(state, ctx.with_attr(self.attr)), i)
            # open containers first: a closed bottle does not spill
            objs = sorted(objs, key=lambda o: "CLOSED" in state.states_of(o))
            for x in objs[: self.max_objects]:
                name = ctx.line("WALK", x).args[0]
                fl = ctx.floor_near(state, x)
                drop = self._mutant(ctx, i, i, ctx.fetch(state, x) + [ctx.line("DROP", x)], (x,), f"dropped {name}")
                if self.drop_first:
                    yield drop
                if fl is not None:
                    block = ctx.fetch(state, x) + [ctx.line("WALK", fl), ctx.line("PUTBACK", x, fl)]
                    yield self._mutant(ctx, i, i, block, (x,), f"{self.verb} {name} on the floor")
                if not self.drop_first:
                    yield drop


@MUTATIONS.register("pour_onto_floor", help="spill a liquid (drink, oil, detergent) on the floor")
class PourOntoFloor(_OntoFloor):
    """The simulator cannot POUR onto a floor (it is not a RECIPIENT), so the open container of a liquid is dropped
    (it spills: ``slip_trip_fall.liquid_onto_floor``), else put down on the floor."""

    name, category, attr, verb, drop_first = "pour_onto_floor", "slip_trip_fall", "liquid", "spilled", True


@MUTATIONS.register("knife_on_floor", help="leave a knife, scissors, razor or needle on the floor")
class KnifeOnFloor(_OntoFloor):
    name, category, attr, kind = "knife_on_floor", "cut_injury", "sharp", "replacement, insertion"

    def __init__(self, max_positions: int = 3, max_objects: int = 3, detour: bool = True):
        super().__init__(max_positions, max_objects)
        self.detour = bool(detour)  # False: only the on-task replacement of the plan's own put-down step

    def candidates(self, ctx, rng):
        yield from _replace_put(self, ctx, rng, "sharp")
        if self.detour:
            yield from super().candidates(ctx, rng)


@MUTATIONS.register("toxic_on_floor", help="leave a cleaner or other toxic product on the floor, within a child's reach")
class ToxicOnFloor(_OntoFloor):
    name, category, attr = "toxic_on_floor", "poisoning", "toxic"


@MUTATIONS.register("drop_fragile", help="drop a glass, plate, phone or other fragile object")
class DropFragile(Mutation):
    name, category, kind = "drop_fragile", "breakage", "replacement, insertion"

    def __init__(self, max_positions: int = 3, max_objects: int = 3, detour: bool = True):
        super().__init__(max_positions, max_objects)
        self.detour = bool(detour)  # False: only the on-task replacement of the plan's own put-down step

    def candidates(self, ctx, rng):
        yield from _replace_put(self, ctx, rng, "fragile", floor=False)
        if not self.detour:
            return
        for i in self._positions(ctx, rng):
            state = ctx.states[i]
            if ctx.hands_free(state) < 1:
                continue
            for x in ctx.rank(rng, ctx.grabbable(state, ctx.with_attr("fragile")), i)[: self.max_objects]:
                yield self._mutant(ctx, i, i, ctx.fetch(state, x) + [ctx.line("DROP", x)], (x,), f"dropped {ctx.line('WALK', x).args[0]}")



@MUTATIONS.register("perishable_left_out", help="take a perishable out of the fridge and leave it on the counter")
class PerishableLeftOut(Mutation):
    name, category = "perishable_left_out", "food_safety"

    def candidates(self, ctx, rng):
        for i in self._positions(ctx, rng):
            state = ctx.states[i]
            if ctx.hands_free(state) < 2:
                continue
            inside = []
            for f in ctx.with_attr("cold_storage"):
                if "ON" in state.states_of(f) and "CLOSED" in state.states_of(f):
                    continue  # a running appliance cannot be opened in the simulator
                for p in state.sources(f, "INSIDE"):
                    if "perishable" in ctx.attrs(p) and ctx.has_prop(p, "GRABBABLE"):
                        inside.append((p, f))
            for p in ctx.rank(rng, [p for p, _ in inside], i)[: self.max_objects]:
                f = dict(inside)[p]
                s = ctx.surface_near(state, f)
                if s is None:
                    continue
                opened = "CLOSED" in state.states_of(f)
                block = [ctx.line("WALK", f)] + ([ctx.line("OPEN", f)] if opened else []) + [ctx.line("GRAB", p)]
                block += ([ctx.line("CLOSE", f)] if opened else []) + [ctx.line("WALK", s), ctx.line("PUTBACK", p, s)]
                yield self._mutant(ctx, i, i, block, (p,), f"left {ctx.line('WALK', p).args[0]} out of the fridge")
