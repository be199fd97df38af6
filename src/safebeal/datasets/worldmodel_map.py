"""WorldModel prompts and plans in the simulator: a scene from a prompt, a script from a plan's sentences.

WorldModel's plan-generation data (Xiang et al., 2023) was written from VirtualHome programs, so its plans are
sentences from a fixed set of action templates ("Walk to kitchen. Grab coffee. Put coffee in coffe maker.") and
each question lists its items and their relations::

    Q: How to make coffee? Given items include kitchen, coffee, coffee maker. The coffee is in the kitchen.
    The coffee maker is in the kitchen. The coffee maker is plugged.

**Scene** (:func:`build_scene`): one node per item, named as the item with spaces as underscores (``coffe maker``
-> ``coffe_maker``), with the simulator's properties of that class (virtualhome-eval's ``properties_data.json``
as :func:`safebeal.scene.homes.knowledge` reads it, with procedural homes' ``classes`` merged in) and the states
procedural homes give a new object (:func:`safebeal.scene.homes.default_states`: CLEAN, CLOSED, OFF,
PLUGGED_IN by property), then the stated relations:

=====================================  ====================================================================
``The X is in the R.`` (R a room)      X INSIDE room R (rooms: :data:`ROOMS`)
``The X is in/inside the Y.``          X INSIDE Y (and CLOSE)
``The X is on the Y.``                 X ON Y (and CLOSE)
``The X is in the character.``         the agent holds X (HOLDS_RH, a second one HOLDS_LH)
``The X is facing the Y.``             X FACING Y
``The X is near the Y.``               CLOSE both ways
``The X is on / off / open / closed /  the state ON, OFF, OPEN, CLOSED, PLUGGED_IN, PLUGGED_OUT, SITTING
plugged / unplugged / sitting.``       (replacing its opposite)
=====================================  ====================================================================

An item no relation puts anywhere is placed as procedural homes place small objects: ON or INSIDE the first
listed item its class may go on or in (virtualhome-eval's ``object_script_placing.json``), else in the room of
the first listed room. Every room gets a floor; the agent (``character``) starts in the first listed room.

**Plan** (:func:`sentences_to_script`): each sentence is matched against :data:`TEMPLATES` (the VirtualHome action
templates WorldModel's sentences come from) and becomes one script line without ids, ``[WALK] <coffe_maker>``;
names resolve against the scene's items as any plan's do (:func:`safebeal.plans.grounding.resolve_objects`, with the
simulator's name equivalences: fridge/freezer, carpet/rug, ...).

What does not map, and why, is counted by :func:`mapping_report` (``audits/worldmodel_mapping.py``):
an item whose class the simulator's data does not know (it is still placed, with no properties), a relation
sentence of another form (ignored), a plan sentence no template matches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Dict, List, Optional, Sequence, Tuple

from safebeal.errors import SafebealError

#: item names that are rooms (as WorldModel writes them, spaces as underscores)
ROOMS = ("kitchen", "bathroom", "bedroom", "dining_room", "livingroom", "living_room", "home_office", "entrance_hall",
         "kids_bedroom")
#: a stated state -> (state set, state removed)
STATES = {"on": ("ON", "OFF"), "off": ("OFF", "ON"), "open": ("OPEN", "CLOSED"), "closed": ("CLOSED", "OPEN"),
          "plugged": ("PLUGGED_IN", "PLUGGED_OUT"), "plugged in": ("PLUGGED_IN", "PLUGGED_OUT"),
          "unplugged": ("PLUGGED_OUT", "PLUGGED_IN"), "sitting": ("SITTING", None), "lying": ("LYING", None),
          "clean": ("CLEAN", "DIRTY"), "dirty": ("DIRTY", "CLEAN")}

#: (sentence pattern, action): the sentence forms of VirtualHome's actions in WorldModel's plans, tried in order
#: (longer prefixes first: "Put back X" before "Put X on Y"). ``{a}``/``{b}``: object names.
TEMPLATES: Tuple[Tuple[str, str], ...] = (
    ("walk to {a}", "WALK"), ("walk towards {a}", "WALK"), ("run to {a}", "RUN"), ("find {a}", "FIND"),
    ("grab {a}", "GRAB"), ("take {a}", "GRAB"), ("open {a}", "OPEN"), ("close {a}", "CLOSE"),
    ("switch on {a}", "SWITCHON"), ("switch off {a}", "SWITCHOFF"), ("turn on {a}", "SWITCHON"),
    ("turn off {a}", "SWITCHOFF"), ("plug in {a}", "PLUGIN"), ("plug out {a}", "PLUGOUT"), ("unplug {a}", "PLUGOUT"),
    ("put back {a}", "PUTOBJBACK"), ("put on {a}", "PUTON"), ("put off {a}", "PUTOFF"), ("take off {a}", "PUTOFF"),
    ("put {a} on {b}", "PUTBACK"), ("put {a} onto {b}", "PUTBACK"), ("put {a} in {b}", "PUTIN"),
    ("put {a} into {b}", "PUTIN"), ("put {a} inside {b}", "PUTIN"), ("pour {a} into {b}", "POUR"),
    ("pour {a} in {b}", "POUR"), ("turn to {a}", "TURNTO"), ("look at {a}", "LOOKAT"), ("point at {a}", "POINTAT"),
    ("sit on {a}", "SIT"), ("sit in {a}", "SIT"), ("lie on {a}", "LIE"), ("stand up", "STANDUP"),
    ("sleep", "SLEEP"), ("wake up", "WAKEUP"), ("type on {a}", "TYPE"), ("push {a}", "PUSH"), ("pull {a}", "PULL"),
    ("move {a}", "MOVE"), ("touch {a}", "TOUCH"), ("rinse {a}", "RINSE"), ("wash {a}", "WASH"), ("scrub {a}", "SCRUB"),
    ("wipe {a}", "WIPE"), ("squeeze {a}", "SQUEEZE"), ("drop {a}", "DROP"), ("release {a}", "RELEASE"),
    ("read {a}", "READ"), ("watch {a}", "WATCH"), ("eat {a}", "EAT"), ("drink {a}", "DRINK"), ("cut {a}", "CUT"),
    ("greet {a}", "GREET"),
)


class MappingError(SafebealError):
    """A plan sentence that no template matches."""


def _compile(t: str) -> "re.Pattern[str]":
    pat = re.escape(t).replace(r"\{a\}", r"(?P<a>.+?)").replace(r"\{b\}", r"(?P<b>.+?)")
    return re.compile("^" + pat + "$")


_TEMPLATES = tuple((_compile(t), a) for t, a in TEMPLATES)


def script_name(name: str) -> str:
    """``coffe maker`` -> ``coffe_maker``: an item name as scripts and scene classes write it."""
    return re.sub(r"[\s\-]+", "_", name.strip().lower())


def split_sentences(plan: str) -> List[str]:
    """A plan's sentences (split at '.', blanks dropped)."""
    return [s.strip() for s in re.split(r"\.+(?:\s+|$)", plan.strip()) if s.strip()]


def sentence_to_line(sentence: str) -> str:
    """One sentence as a script line without ids: ``Put coffee in coffe maker`` -> ``[PUTIN] <coffee> <coffe_maker>``.
    Raises :class:`MappingError` when no template matches."""
    s = re.sub(r"\s+", " ", sentence.strip().rstrip(".").lower())
    for pat, action in _TEMPLATES:
        m = pat.match(s)
        if m:
            args = [script_name(v) for k, v in sorted(m.groupdict().items()) if v is not None]
            if any(not a for a in args):
                continue
            return " ".join([f"[{action}]"] + [f"<{a}>" for a in args])
    raise MappingError(f"no action template matches {sentence.strip()!r}")


def sentences_to_script(plan: str) -> Tuple[str, List[Dict[str, Any]]]:
    """``(script text, problems)``: every sentence of ``plan`` that maps, one line each; ``problems`` lists the
    sentences that do not (``{sentence, index, reason}``)."""
    lines, problems = [], []
    for i, s in enumerate(split_sentences(plan)):
        try:
            lines.append(sentence_to_line(s))
        except MappingError as exc:
            problems.append({"index": i, "sentence": s, "reason": exc.message if hasattr(exc, "message") else str(exc)})
    return "\n".join(lines), problems


# -- the prompt's items and relations ---------------------------------------------------------------------
_ITEMS = re.compile(r"Given items include (.*?)\.(?:\s|$)", re.S)
_REL = re.compile(r"^The (?P<x>.+?) (?:is|are) (?P<rest>.+)$")


@dataclass
class PromptFacts:
    """What the last question of a WorldModel prompt says: its items and relation sentences."""

    question: str
    items: List[str]
    relations: List[Tuple[str, str, str]] = field(default_factory=list)  # (item, INSIDE|ON|FACING|CLOSE|HELD|STATE, other)
    unread: List[str] = field(default_factory=list)  # relation sentences of another form


def last_question(prompt: str) -> str:
    qs = re.findall(r"(?:^|\n)Q:\s*(.*?)\s*(?:\nA:|$)", prompt, re.S)
    return qs[-1].strip() if qs else prompt.strip()


def read_facts(prompt: str) -> PromptFacts:
    q = last_question(prompt)
    m = _ITEMS.search(q)
    items: List[str] = []
    if m:
        for it in m.group(1).split(","):
            n = script_name(it)
            if n and n not in items:
                items.append(n)
    facts = PromptFacts(q, items)
    tail = q[m.end():] if m else ""
    for sent in split_sentences(tail):
        r = _REL.match(sent)
        if not r:
            facts.unread.append(sent)
            continue
        x, rest = script_name(r.group("x")), r.group("rest").strip().lower()
        mm = re.match(r"^(in|inside|on|facing|near|next to) (?:the )?(.+)$", rest)
        if rest in STATES:
            facts.relations.append((x, "STATE", rest))
        elif mm and (mm.group(1) != "on" or rest.startswith("on the ")):
            rel = {"in": "INSIDE", "inside": "INSIDE", "on": "ON", "facing": "FACING", "near": "CLOSE",
                   "next to": "CLOSE"}[mm.group(1)]
            other = script_name(mm.group(2))
            if other == "character" and rel == "INSIDE":
                rel, other = "HELD", "character"
            facts.relations.append((x, rel, other))
        else:
            facts.unread.append(sent)
    return facts


@lru_cache(maxsize=1)
def _kn():
    from safebeal.scene.homes import home_spec, knowledge

    return home_spec().knowledge or knowledge()


def known_class(name: str) -> Optional[str]:
    """The simulator class an item name stands for (itself, or an equivalent name the data knows), or None."""
    kn = _kn()
    if name in kn.properties:
        return name
    for eq in sorted(kn.names(name)):
        if eq in kn.properties:
            return eq
    return None


@dataclass
class BuiltScene:
    graph: Dict[str, Any]
    objects: List[Tuple[str, int]]  # (item name, id), rooms included: what plan names resolve against
    unknown: List[str]  # items whose class the simulator's data does not know
    unread: List[str]  # relation sentences not read
    placed: List[str]  # items placed by the placement knowledge (no relation put them anywhere)
    default_room: bool  # no room among the items: one was added


def build_scene(prompt: str) -> BuiltScene:
    """The scene graph ``{nodes, edges}`` of a WorldModel prompt's last question (see the module docstring)."""
    from safebeal.scene.homes import default_states

    kn = _kn()
    facts = read_facts(prompt)
    nodes: List[Dict[str, Any]] = []
    edges: List[Dict[str, Any]] = []
    seen_edges: set = set()

    def node(cls: str, category: str, props: Sequence[str], states: List[str]) -> int:
        nid = len(nodes) + 1
        nodes.append({"id": nid, "class_name": cls, "category": category, "properties": sorted(props),
                      "states": sorted(set(states)), "prefab_name": None, "bounding_box": None})
        return nid

    def edge(a: int, rel: str, b: int) -> None:
        if (a, rel, b) not in seen_edges:
            seen_edges.add((a, rel, b))
            edges.append({"from_id": a, "relation_type": rel, "to_id": b})

    room_names = [n for n in facts.items if n in ROOMS]
    default_room = not room_names
    if default_room:
        room_names = ["livingroom"]
    rooms = {n: node(n, "Rooms", [], ["CLEAN"]) for n in room_names}
    for rid in list(rooms.values()):
        edge(node("floor", "Floor", ["SURFACES"], ["CLEAN"]), "INSIDE", rid)
    ids: Dict[str, int] = dict(rooms)
    unknown: List[str] = []
    for n in facts.items:
        if n in rooms or n == "character":
            continue
        cls = known_class(n)
        if cls is None:
            unknown.append(n)
        props = list(kn.properties.get(cls, ())) if cls else []
        category = "placable_objects" if "GRABBABLE" in props else "Furniture"
        ids[n] = node(n, category, props, default_states(props))
    char = ids["character"] = node("character", "Characters", [], [])
    # stated relations
    located: set = set()
    held = 0
    for x, rel, other in facts.relations:
        if x not in ids:
            continue
        xid = ids[x]
        if rel == "STATE":
            add, drop = STATES[other]
            st = set(nodes[xid - 1]["states"])
            if drop:
                st.discard(drop)
            st.add(add)
            nodes[xid - 1]["states"] = sorted(st)
            continue
        if rel == "HELD":
            edge(char, "HOLDS_RH" if held == 0 else "HOLDS_LH", xid)
            held += 1
            located.add(x)
            continue
        if other not in ids:
            continue
        oid = ids[other]
        if rel == "INSIDE" and other in rooms:
            edge(xid, "INSIDE", oid)
            located.add(x)
        elif rel in ("INSIDE", "ON"):
            edge(xid, rel, oid)
            edge(xid, "CLOSE", oid)
            edge(oid, "CLOSE", xid)
            located.add(x)
        elif rel == "FACING":
            edge(xid, "FACING", oid)
        elif rel == "CLOSE":
            edge(xid, "CLOSE", oid)
            edge(oid, "CLOSE", xid)
    # every item in a room: its stated room, its holder's, or the first room
    first_room = rooms[room_names[0]]
    placed: List[str] = []
    holder_of = {x: o for x, r, o in facts.relations if r in ("INSIDE", "ON") and o in ids and o not in rooms}
    for n in facts.items:
        if n in rooms or n == "character" or n not in ids:
            continue
        xid = ids[n]
        if n not in located:  # placement knowledge: on or in the first item it may go on or in
            cls = known_class(n) or n
            for h in facts.items:
                if h in rooms or h == n or h not in ids:
                    continue
                rel = next((r for r in ("ON", "INSIDE") if kn.can_place(cls, r, known_class(h) or h)), None)
                if rel is not None:
                    edge(xid, rel, ids[h])
                    edge(xid, "CLOSE", ids[h])
                    edge(ids[h], "CLOSE", xid)
                    holder_of[n] = h
                    placed.append(n)
                    break
    for n in facts.items:
        if n in rooms or n == "character" or n not in ids:
            continue
        if not any(e["from_id"] == ids[n] and e["relation_type"] == "INSIDE" and e["to_id"] in rooms.values()
                   for e in edges):
            room, h, hops = None, holder_of.get(n), 0
            while h is not None and room is None and hops < 10:
                room = next((e["to_id"] for e in edges if e["from_id"] == ids[h] and e["relation_type"] == "INSIDE"
                             and e["to_id"] in rooms.values()), None)
                h, hops = holder_of.get(h), hops + 1
            edge(ids[n], "INSIDE", room or first_room)
    edge(char, "INSIDE", first_room)
    objects = [(n, ids[n]) for n in room_names] + [(n, ids[n]) for n in facts.items if n in ids and n not in rooms]
    return BuiltScene({"nodes": nodes, "edges": edges}, objects, unknown, facts.unread, placed, default_room)


def mapping_report(tasks: Sequence[Any]) -> Dict[str, Any]:
    """How much of a WorldModel set maps: items (known to the simulator's data or not), relation sentences read,
    reference-plan sentences that map to script lines, and why the rest do not (counted by reason)."""
    from collections import Counter

    items = items_known = relations_unread = sents = sents_ok = plans_ok = 0
    unknown: Counter = Counter()
    unmapped: Counter = Counter()
    for t in tasks:
        b = build_scene(t.prompt or "")
        f = read_facts(t.prompt or "")
        items += len([n for n in f.items if n not in ROOMS and n != "character"])
        items_known += len([n for n in f.items if n not in ROOMS and n != "character" and n not in b.unknown])
        unknown.update(b.unknown)
        relations_unread += len(b.unread)
        _, problems = sentences_to_script(t.reference or "")
        n = len(split_sentences(t.reference or ""))
        sents += n
        sents_ok += n - len(problems)
        plans_ok += not problems
        for p in problems:
            words = p["sentence"].lower().split()
            unmapped[" ".join(words[:2])] += 1
    return {"tasks": len(tasks), "items": items, "items_known": items_known,
            "unknown_items": dict(unknown.most_common(20)), "relations_unread": relations_unread,
            "sentences": sents, "sentences_mapped": sents_ok, "plans_fully_mapped": plans_ok,
            "unmapped_sentence_starts": dict(unmapped.most_common(20))}
