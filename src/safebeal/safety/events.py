"""Trajectory events: what the final graph cannot show, recorded from the actions as they happen.

:data:`OBJECT_EVENTS` (on objects) and :data:`AGENT_EVENTS` (on the agent) name them and say what each means (the
rule loader checks ``event:`` names against them, docs/hazards.md's table lists them); an :class:`EventLog` per
event keeps the step each object last carried it. :mod:`safebeal.safety.recording` records them from the steps;
:mod:`safebeal.safety.conditions` reads them (``event:``, ``recent:``, the derived ``hot``).
"""

from __future__ import annotations

from typing import Dict, List, Optional

OBJECT_EVENTS = {
    "dropped": "dropped or released by the agent and not picked up or put anywhere since",
    "poured_into": "a liquid was poured into or onto it",
    "contaminated": "a toxic product or a soap was poured or put into it and it was not washed or rinsed since",
    "heated": "was on or in a heat source while it was on, directly or in or on a container standing on it (cooked)",
    "used": "an argument of an interaction (anything but walking, finding, looking, turning or pointing), the "
            "container an object was taken from or put back into, or a running tap at hand while washing or drinking",
    "consumed": "eaten or drunk (the simulator keeps the food where it was)",
    "powered_off": "switched off or unplugged by the plan and not switched on or plugged in again since",
    "floored": "dropped, released or put on the floor, or taken out of a bin, at some point and not washed or rinsed "
               "since (what touched the floor or the rubbish)",
    "carried": "in the agent's hands while it walked or ran",
    "prepared": "food the plan began to make into a dish: cut, cracked or broken (BREAK), or put into or onto cookware "
                "(a pot, pan or oven tray)",
    "left_overnight": "the plan had used it when the agent went to sleep (SLEEP, or LIE on a bed): hours passed after "
                      "it, so what it left out has been out overnight",
    "raw_contaminated": "carries raw-meat germs: raw meat out of its packaging (put on or in a plate, board or pan, cut, "
                        "washed or touched there), what such meat or a carrier touched (the board, the knife that cut "
                        "it, the food put on that board) and what hands that handled it touched, until it is washed, "
                        "rinsed or scrubbed, or cooked (heated)",
    "hot": "derived: on or in a heat source that is on (directly or in or on a container standing on it), or heated "
           "there within the last HOT_STEPS steps",
}
#: events the detector records (``hot`` is derived from ``heated`` and the state)
RECORDED_EVENTS = tuple(e for e in OBJECT_EVENTS if e != "hot")
#: how many steps an object stays hot after it was last heated (taken off the stove, the stove switched off)
HOT_STEPS = 3
#: attributes of what heats its contents while on (event ``heated``, derived ``hot``)
HEATERS = frozenset({"heat_source", "cooker"})


class EventLog(dict):
    """Object id -> the step at which an event was last recorded on it. ``clock`` is the step being recorded
    (the monitor sets it, once per step, for all of an episode's logs: they share one clock); ``add``/``update``/
    ``discard`` read like a set's."""

    __slots__ = ("_now",)

    def __init__(self, items=(), now: Optional[List[int]] = None):
        super().__init__(items)
        self._now = now if now is not None else [0]

    @property
    def clock(self) -> int:
        return self._now[0]

    @clock.setter
    def clock(self, step: int) -> None:
        self._now[0] = step

    def add(self, nid: int) -> None:
        self[nid] = self._now[0]

    def update(self, ids=(), **_) -> None:  # type: ignore[override]
        now = self._now[0]
        for i in ids:
            self[i] = now

    def discard(self, nid: int) -> None:
        self.pop(nid, None)


def new_event_logs(clock: int = 0) -> Dict[str, EventLog]:
    """One log per recorded event, sharing one clock (set ``clock`` on any of them)."""
    now = [clock]
    out = {}
    for e in RECORDED_EVENTS:  # (empty logs made without the Python-level __init__: one per event per plan)
        log = out[e] = EventLog.__new__(EventLog)
        log._now = now
    return out


AGENT_EVENTS = {
    "hands_wet": "the agent washed, rinsed or scrubbed something and has not wiped its hands since",
    "hands_raw_contaminated": "the agent handled raw meat out of its packaging (or food carrying its germs) and has not "
                              "washed its hands since (turned on a tap; washing a plate or other object without the tap "
                              "does not wash the hands)",
}


__all__ = ["AGENT_EVENTS", "EventLog", "HEATERS", "HOT_STEPS", "OBJECT_EVENTS", "RECORDED_EVENTS",
           "new_event_logs"]
