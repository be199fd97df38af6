"""The offline procedural generator: hazard seeds -> verified SafeRisks entries, deterministic for a seed.

For each family, a ``random.Random(f"{seed}:{family id}")`` draws variants: a base scene, an object class
and a placement for every added role, an instance (and so a room) for every existing role, a start room,
0-N distractor objects placed where VirtualHome allows, and an instruction (a phrasing, an opener and an
optional context sentence). A variant whose instruction is too close (Rouge-L) to one the family already
admitted is redrawn before anything is simulated; the rest are materialised and verified
(:mod:`safebeal.generation.verify`) and admitted or rejected with a recorded reason. Families are
independent, so a subset of families regenerates byte-identically.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from safebeal.datasets.saferisks import SafeRisksEntry
from safebeal.datasets.environment import SceneEnvironmentError, base_index, materialise, vh_knowledge
from safebeal.generation.plans import compile_plans
from safebeal.plans.rouge import RougeIndex
from safebeal.generation.seeds import PLACEHOLDER, Common, HazardSeed
from safebeal.generation.temptation import temptation_kind
from safebeal.generation.verify import Problem, check_safe, check_unsafe, detector, hidden_hazard
from safebeal.scene.listing import listed_objects
from safebeal.datasets.goals import GoalSpec

ID_RANGE = (5000, 6000)  # ids of added objects (roles and distractors, shuffled together)
SPLIT_SALT = "safebeal-saferisks-split-v1"
MAX_ATTEMPTS_FACTOR = 5
INSTRUCTION_REDRAWS = 25


@dataclass
class Rejection:
    family: str
    attempt: int
    kind: str
    message: str
    instruction: Optional[str] = None
    entry: Optional[str] = None  # the id a dropped entry had (cross-family duplicates)

    def to_dict(self) -> dict:
        d = {"family": self.family, "attempt": self.attempt, "kind": self.kind, "message": self.message,
             "instruction": self.instruction}
        if self.entry is not None:
            d["entry"] = self.entry
        return d


@dataclass
class FamilyResult:
    family: str
    entries: List[SafeRisksEntry] = field(default_factory=list)
    rejections: List[Rejection] = field(default_factory=list)
    attempts: int = 0


@dataclass
class Variant:
    base: str
    roles: Dict[str, int]
    role_at: Dict[str, int]
    diff: Dict[str, Any]
    distractors: List[int]
    room_ids: Dict[str, int]  # room class -> id
    role_room: Dict[str, int]  # role -> room id


class _NoVariant(Exception):
    pass


def render(template: str, names: Dict[str, str], rooms: Dict[str, str], ats: Dict[str, str]) -> str:
    def sub(m):
        role, attr = m.group(1), m.group(2)
        if attr == "room":
            return rooms[role]
        if attr == "at":
            return ats[role]
        return names[role]

    return PLACEHOLDER.sub(sub, template)


def masked(template: str) -> str:
    """A phrasing with every role (object and room names alike) masked as ``X``: what v3 judges near-duplicates on,
    so that name-swapped twins are duplicates."""
    return PLACEHOLDER.sub("X", template)


def compose(core: str, opener: str, context: str) -> str:
    core = core.strip()
    text = opener.replace("{Core}", core[:1].upper() + core[1:]).replace("{core}", core)
    text = text[:1].upper() + text[1:]
    return f"{text} {context}".strip() if context else text


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def held_out_families(families: Sequence[HazardSeed], fraction: float, minimum: int = 1) -> List[str]:
    """Per category, the families whose salted hash ranks first are test: ``fraction`` of them, at least
    ``minimum`` (SafeRisks v2: 4, so no category's test score rests on one or two templates), always leaving one
    family for training."""
    by_cat: Dict[str, List[str]] = {}
    for f in families:
        by_cat.setdefault(f.category, []).append(f.id)
    out = []
    for cat, ids in sorted(by_cat.items()):
        ranked = sorted(ids, key=lambda i: hashlib.sha256(f"{SPLIT_SALT}:{i}".encode()).hexdigest())
        n = min(len(ids) - 1, max(minimum, round(len(ids) * fraction))) if len(ids) > 1 else 0
        out += ranked[:n]
    return sorted(out)


def llm_split(family: str, fraction: float) -> str:
    h = int(hashlib.sha256(f"{SPLIT_SALT}:{family}".encode()).hexdigest()[:8], 16)
    return "test" if (h % 1000) < fraction * 1000 else "train"


# -- variants --------------------------------------------------------------------------------------------------
def _parse_ref(tok: str) -> Tuple[str, Optional[str]]:
    cls, _, room = tok.partition("@")
    return cls, (room or None)


def draw_variant(fam: HazardSeed, common: Common, rng: random.Random, distractors: bool = True) -> Variant:
    kb = vh_knowledge()
    home = bool(common.homes) and rng.random() >= common.apartment_share
    base = f"home:{rng.choice(common.homes)}" if home else "activity:" + rng.choice(fam.bases or common.bases)
    idx = base_index(base)
    # a seed names rooms as the apartment does (dining_room is its kitchen); in a home each stands for the
    # room classes common.yaml's home_rooms lists (the kitchen or a dining room, the living room or an office)
    by_room_class: Dict[str, List[int]] = {}
    for r in sorted(idx.rooms):
        by_room_class.setdefault(idx.nodes[r]["class_name"], []).append(r)
    if home:
        room_sets = {k: [r for c in v for r in by_room_class.get(c, [])] for k, v in common.home_rooms.items()}
    else:
        room_sets = dict(by_room_class)
    room_ids = {k: v[0] for k, v in room_sets.items() if v}
    by_class: Dict[str, List[int]] = {}
    for nid, n in idx.nodes.items():
        by_class.setdefault(n["class_name"], []).append(nid)
    n_add = sum(1 for r in fam.roles.values() if r.add is not None)
    ids = rng.sample(range(*ID_RANGE), n_add + fam.distractors.max)
    next_id = iter(ids)
    roles: Dict[str, int] = {}
    role_room: Dict[str, int] = {}
    role_at: Dict[str, int] = {}
    add: List[Dict[str, Any]] = []
    states: Dict[int, List[str]] = {}
    added_cls: Dict[int, str] = {}

    def instances(cls: str, room: Optional[str], same_room: Optional[int] = None) -> List[int]:
        out = []
        for nid in sorted(by_class.get(cls, [])):
            r = idx.room(nid)
            if room is not None and r not in room_sets.get(room, ()):
                continue
            if same_room is not None and r != same_room:
                continue
            out.append(nid)
        return out

    for name, r in fam.roles.items():
        if r.use is not None:
            same = role_room.get(r.same_room) if r.same_room else None
            opts = list(r.use)
            rng.shuffle(opts)
            chosen = None
            for u in opts:
                cands = instances(*_parse_ref(u), same)
                if cands:
                    chosen = rng.choice(cands)
                    break
            if chosen is None:
                raise _NoVariant(f"role {name!r}: no {r.use} in {base}")
            roles[name] = chosen
            role_room[name] = idx.room(chosen)
            node = idx.nodes[chosen]
            # a role over several classes may name states only some of them have: keep the valid ones
            sts = [s for s in r.states if kb.valid_state(node["class_name"], node.get("properties", ()), s)]
            if sts:
                states[chosen] = sts
        else:
            cls = rng.choice(r.add)
            options = []
            for at in r.at:
                rel, target = at.split()
                if target.startswith("$"):
                    tid0 = roles[target[1:]]
                    tcls = added_cls.get(tid0) or idx.nodes[tid0]["class_name"]
                else:
                    tcls = _parse_ref(target)[0]
                if kb.can_place(cls, rel, tcls):
                    options.append((rel, target))
            rel, target = rng.choice(options)
            if target.startswith("$"):
                tid = roles[target[1:]]
            else:
                cands = instances(*_parse_ref(target))
                if not cands:
                    raise _NoVariant(f"role {name!r}: no {target} in {base}")
                tid = rng.choice(cands)
            nid = next(next_id)
            roles[name] = nid
            role_at[name] = tid
            added_cls[nid] = cls
            role_room[name] = role_room[target[1:]] if target.startswith("$") else idx.room(tid)
            add.append({"id": nid, "class_name": cls, "relation": rel.upper(), "target": tid, "states": list(r.states)})
    # the simulator refuses to open an appliance that is ON (some bases have the fridge ON): a container the
    # task uses (a role, or where a role's object is put) is switched OFF unless the family sets its states
    for nid in list(roles.values()) + [a["target"] for a in add]:
        n = idx.nodes.get(nid)
        if n is not None and "CAN_OPEN" in n.get("properties", ()) and "ON" in n.get("states", ()) \
                and "ON" not in states.get(nid, ()):
            states[nid] = [s for s in states.get(nid, []) if s != "OFF"] + ["OFF"]
    # distractors: neutral objects where VirtualHome allows them, away from the roles' objects
    dis: List[int] = []
    if distractors and fam.distractors.max > 0:
        n = rng.randint(fam.distractors.min, fam.distractors.max)
        used = set(added_cls.values()) | {idx.nodes[i]["class_name"] for i in roles.values() if i in idx.nodes}
        pool = [c for c in common.distractors.get(fam.distractors.pool, []) if c not in used]
        role_nodes = set(roles.values())
        dests = [nid for c in common.distractor_destinations for nid in sorted(by_class.get(c, []))
                 if nid not in role_nodes]
        for cls in rng.sample(pool, min(n, len(pool))):
            opts = [(rel, d) for d in dests for rel in ("ON", "INSIDE") if kb.can_place(cls, rel, idx.nodes[d]["class_name"])]
            if not opts:
                continue
            rel, d = rng.choice(opts)
            nid = next(next_id)
            dis.append(nid)
            add.append({"id": nid, "class_name": cls, "relation": rel, "target": d, "states": []})
    start = rng.choice(fam.start)
    if not room_sets.get(start):
        raise _NoVariant(f"no {start} to start in, in {base}")
    room = rng.choice(room_sets[start]) if home else room_sets[start][0]  # (no draw in the apartment: v1 unchanged)
    diff = {"add": add, "move": [], "states": states, "character_room": room}
    return Variant(base, roles, role_at, diff, dis, room_ids, role_room)


def role_words(v: Variant, common: Common) -> Tuple[Dict[str, str], Dict[str, str], Dict[str, str]]:
    """What a phrasing's placeholders become for a variant: each role's name, its room's name, and the name of
    where an added role starts (``{role}``, ``{role.room}``, ``{role.at}``)."""
    idx = base_index(v.base)
    cls_of = {n: c["class_name"] for n, c in idx.nodes.items()}
    cls_of.update({a["id"]: a["class_name"] for a in v.diff["add"]})
    names = {k: common.name(cls_of[i]) for k, i in v.roles.items()}
    home = v.base.startswith("home:")
    rooms = {k: common.room_name(idx.nodes[r]["class_name"], home) if r in idx.nodes else ""
             for k, r in v.role_room.items()}
    ats = {k: common.name(cls_of[v.role_at[k]]) if k in v.role_at else names[k] for k in v.roles}
    return names, rooms, ats


def _goal(fam: HazardSeed, roles: Dict[str, int]) -> dict:
    goal, actions = [], []
    for g in fam.goal:
        p = g.split()
        if p[0] == "do":
            actions.append(p[1].upper())
        elif len(p) == 2:
            goal.append({"id": roles[p[0]], "state": p[1].upper()})
        else:
            goal.append({"from_id": roles[p[0]], "relation_type": p[1].upper(), "to_id": roles[p[2]]})
    return {"goal": goal, "actions": actions}


def generate_family(fam: HazardSeed, common: Common, seed: int, target: Optional[int] = None,
                    rouge_threshold: Optional[float] = None, skip_templates: FrozenSet[int] = frozenset()) -> FamilyResult:
    """Admit up to ``target`` verified entries of one family (ids ``<family>/NNN``, split set later), never from
    the phrasings ``skip_templates`` (v3: those that near-duplicate another family's, ``build.clashing_templates``)."""
    det = detector()
    target = target if target is not None else (fam.count or common.count)
    thr = rouge_threshold if rouge_threshold is not None else common.rouge_threshold
    rng = random.Random(f"{seed}:{fam.id}")
    # each family speaks with its own subset of the shared openers and contexts, so that two families' tasks
    # do not look alike merely because they share the same framing sentence
    frame = random.Random(f"{seed}:frame:{fam.id}")
    openers = frame.sample(common.openers, min(common.openers_per_family, len(common.openers)))
    contexts = fam.contexts + frame.sample(common.contexts, min(common.contexts_per_family, len(common.contexts)))
    index = RougeIndex(thr)
    res = FamilyResult(fam.id)
    rule_cat = {r.id: r.category for r in det.rules.rules}
    attempt = 0
    while len(res.entries) < target and attempt < target * MAX_ATTEMPTS_FACTOR:
        attempt += 1
        try:
            v = draw_variant(fam, common, rng)
        except _NoVariant as exc:
            res.rejections.append(Rejection(fam.id, attempt, "environment", str(exc)))
            continue
        names, rooms, ats = role_words(v, common)
        # instruction first: redraw phrasing/opener/context until it is far enough from the family's admitted
        instruction, template, text = None, None, ""
        for _ in range(INSTRUCTION_REDRAWS):
            t = rng.randrange(len(fam.phrasings))
            if t in skip_templates:
                continue
            core = render(fam.phrasings[t], names, rooms, ats)
            opener = rng.choice(openers)
            context = rng.choice(contexts) if contexts and rng.random() < common.context_rate else ""
            text = compose(core, opener, context)
            # v2 (common.dedup_core): the core instruction must be far from the family's admitted cores, so that
            # entries differ by more than their opener and context sentence
            # v3 (common.mask_names): on the phrasing with its names masked, so that a noun swap is no new entry
            score, _ = index.max_score(masked(fam.phrasings[t]) if common.mask_names
                                       else core if common.dedup_core else text)
            if score < thr:
                instruction, template = text, t
                break
        if instruction is None:
            res.rejections.append(Rejection(fam.id, attempt, "duplicate",
                                            f"no instruction below Rouge-L {thr} after {INSTRUCTION_REDRAWS} draws", text))
            continue
        problems = _verify_variant(fam, v, det, rule_cat)
        if isinstance(problems, list) and problems:
            p = problems[0]
            res.rejections.append(Rejection(fam.id, attempt, p.kind, p.message, instruction))
            continue
        lines, unsafe, found = problems  # type: ignore[misc]
        eid = f"{fam.id}/{len(res.entries):03d}"
        # what the prompt lists: the hazard-blind rule over the scene and the safe plan (never the unsafe plans)
        scene = materialise(v.base, v.diff, source=f"saferisks:{eid}")
        objs = listed_objects(scene, lines, eid)
        # v3 (label rules): whatever the first unsafe plan's violation concerns is visible in the prompt
        hidden = hidden_hazard(found, scene, objs) if common.label_rules else []
        if hidden:
            res.rejections.append(Rejection(fam.id, attempt, hidden[0].kind, hidden[0].message, instruction))
            continue
        index.add(masked(fam.phrasings[template]) if common.mask_names
                  else render(fam.phrasings[template], names, rooms, ats) if common.dedup_core else instruction)
        entry = SafeRisksEntry(
            id=eid,
            instruction=instruction,
            categories=sorted({u["category"] for u in unsafe}),
            hazard=_capital(render(fam.hazard, names, rooms, ats)),
            environment={"base": v.base, "diff": v.diff},
            goal=_goal(fam, v.roles),
            safe_plan=lines,
            unsafe_plans=unsafe,
            source={"kind": "procedural", "family": fam.id, "template": template, "seed": seed},
            family=fam.id,
            split="train",
            objects=[(c, i) for c, i in objs],
            intended=[{"id": i, "state": st} for i, st in _intended(fam, v.roles)],
        )
        res.entries.append(entry)
    res.attempts = attempt
    return res


def _verify_variant(fam: HazardSeed, v: Variant, det, rule_cat: Dict[str, str]):
    """Problems (a non-empty list) or (safe plan lines, unsafe plan dicts, the first unsafe plan's violations)."""
    try:
        scene = materialise(v.base, v.diff, source=f"saferisks:{fam.id}")
    except SceneEnvironmentError as exc:
        return [Problem("environment", str(exc))]
    goal = GoalSpec.from_vh_goal(_goal(fam, v.roles))
    intended = _intended(fam, v.roles)
    comps = compile_plans(scene, [fam.safe] + [u.plan for u in fam.unsafe], v.roles)
    safe = comps[0]
    problems = check_safe(safe.trajectory, goal, det, intended)
    if problems:
        return problems
    unsafe = []
    found: list = []  # the first unsafe plan's violations of its rule
    for k, u in enumerate(fam.unsafe):
        cat = u.category or rule_cat.get(u.rule, fam.category)
        comp = comps[k + 1]
        problems = check_unsafe(comp.trajectory, u.rule, cat, det, k, intended, found if k == 0 else None)
        if problems:
            return problems
        rec = {"plan": comp.lines, "rule_id": u.rule, "category": cat, "note": u.note}
        if u.temptation is not None:  # declared: checked here, recorded with where the plans part
            kind, step = temptation_kind(safe.lines, comp.lines)
            if kind != u.temptation:
                return [Problem("temptation", f"unsafe plan {k} is declared {u.temptation} but is {kind}")]
            if not goal.evaluate(comp.trajectory).success:
                return [Problem("unsafe_goal_unmet", f"unsafe plan {k} does not reach the goal")]
            rec.update({"temptation": kind, "diverge_step": step})
        unsafe.append(rec)
    return safe.lines, unsafe, found


def _intended(fam: HazardSeed, roles: Dict[str, int]) -> List[Tuple[int, str]]:
    return [(roles[g.split()[0]], g.split()[1].upper()) for g in fam.intended]
