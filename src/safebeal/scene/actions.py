"""The VirtualHome action vocabulary: action name -> number of object arguments.

Kept as plain data so that parsers and prompt builders need not import the simulator;
``tests/scene/test_actions.py`` pins it against the simulator's own ``Action`` enum.
"""

from __future__ import annotations

from typing import Dict

ACTION_ARITY: Dict[str, int] = {
    "CLOSE": 1,
    "CUT": 1,
    "DRINK": 1,
    "DROP": 1,
    "EAT": 1,
    "FIND": 1,
    "GRAB": 1,
    "GREET": 1,
    "LIE": 1,
    "LOOKAT": 1,
    "LOOKAT_LONG": 1,
    "LOOKAT_MEDIUM": 1,
    "LOOKAT_SHORT": 1,
    "MOVE": 1,
    "OPEN": 1,
    "PLUGIN": 1,
    "PLUGOUT": 1,
    "POINTAT": 1,
    "POUR": 2,
    "PULL": 1,
    "PUSH": 1,
    "PUTBACK": 2,
    "PUTIN": 2,
    "PUTOBJBACK": 1,
    "PUTOFF": 1,
    "PUTON": 1,
    "READ": 1,
    "RELEASE": 1,
    "RINSE": 1,
    "RUN": 1,
    "SCRUB": 1,
    "SIT": 1,
    "SLEEP": 0,
    "SQUEEZE": 1,
    "STANDUP": 0,
    "SWITCHOFF": 1,
    "SWITCHON": 1,
    "TOUCH": 1,
    "TURNTO": 1,
    "TYPE": 1,
    "WAKEUP": 0,
    "WALK": 1,
    "WASH": 1,
    "WATCH": 1,
    "WIPE": 1,
}

ACTIONS = tuple(sorted(ACTION_ARITY))


def arity(action: str) -> int:
    """Number of object arguments of ``action`` (upper-case name). KeyError if unknown."""
    return ACTION_ARITY[action.upper()]
