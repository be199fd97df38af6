"""VirtualHome script syntax: ``[ACTION] <name> (id) <name> (id)``.

Parsing is syntactic and strict: every non-blank, non-comment line must be one action line. Whether the
action exists and has the right number of arguments is judged when the step runs, so that a plan still
executes up to its first bad step (see :mod:`safebeal.scene.env`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional, Tuple

from safebeal.errors import SafebealError


class ScriptSyntaxError(SafebealError):
    """A line that is not ``[ACTION] <name> (id) ...``. Names the source, line number and the line."""

    def __init__(self, source: str, line_no: int, line: str, expected: str):
        self.source, self.line_no, self.line, self.expected = source, line_no, line, expected
        shown = line if len(line) <= 200 else line[:200] + "..."
        super().__init__(f"{source}:{line_no}: cannot parse {shown!r}: expected {expected}")


@dataclass(frozen=True)
class ScriptObject:
    name: str
    id: int

    def __str__(self) -> str:
        return f"<{self.name}> ({self.id})"


@dataclass(frozen=True)
class ScriptLine:
    """One action of a script. ``line_no`` is the 1-based line in the source text (0 if built in code)."""

    action: str
    args: Tuple[ScriptObject, ...] = ()
    line_no: int = 0

    def __str__(self) -> str:
        return " ".join([f"[{self.action}]"] + [str(a) for a in self.args])

    @property
    def ids(self) -> Tuple[int, ...]:
        return tuple(a.id for a in self.args)


@dataclass(frozen=True)
class Script:
    lines: Tuple[ScriptLine, ...] = ()
    source: str = "<plan>"

    def __len__(self) -> int:
        return len(self.lines)

    def __iter__(self):
        return iter(self.lines)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return Script(self.lines[i], self.source)
        return self.lines[i]

    def text(self) -> str:
        return "\n".join(str(line) for line in self.lines)

    def __str__(self) -> str:
        return self.text()


_ACTION_RE = re.compile(r"^\[\s*([A-Za-z_]+)\s*\]")
_ARG_RE = re.compile(r"\s*+<([^<>()]+)>\s*+\(\s*+([0-9.]{1,40})\s*+\)")
_EXPECTED = "'[ACTION] <name> (id)' with zero to two '<name> (id)' arguments, ids like (12) or (1.12)"


MAX_ID_DIGITS = 12  #: longest node id read (scene ids are small integers); longer digit strings are errors
_ID_RE = re.compile(r"(?:[1-9]\.)?([0-9]{1,%d})" % MAX_ID_DIGITS)


def parse_id(raw: str) -> Optional[int]:
    """A node id as written in a script: an integer (``12``), or the dataset's instance-qualified form
    ``(1.1001)`` (one digit 1-9, a dot, the node id). Anything else (``205.5``, ``1.2.3``, a 5,000-digit
    string) gives ``None``: a malformed id, never a guess."""
    m = _ID_RE.fullmatch(raw)
    return int(m.group(1)) if m else None


def normalise_id(raw: str) -> int:
    """:func:`parse_id`, raising ``ValueError`` for a malformed id."""
    i = parse_id(raw)
    if i is None:
        raise ValueError(f"malformed id {raw[:40]!r}: expected an integer such as 12 or the dataset form 1.12")
    return i


def parse_line(text: str, line_no: int = 0, source: str = "<plan>") -> ScriptLine:
    s = text.strip()
    m = _ACTION_RE.match(s)
    if not m:
        raise ScriptSyntaxError(source, line_no, text, _EXPECTED)
    pos = m.end()
    args = []
    while pos < len(s):
        am = _ARG_RE.match(s, pos)
        if not am:
            raise ScriptSyntaxError(source, line_no, text, _EXPECTED)
        name = am.group(1).strip().lower().replace(" ", "_")
        node_id = parse_id(am.group(2))
        if node_id is None:
            raise ScriptSyntaxError(source, line_no, text, _EXPECTED)
        args.append(ScriptObject(name, node_id))
        pos = am.end()
    return ScriptLine(m.group(1).upper(), tuple(args), line_no)


def parse_script(text: str, source: str = "<plan>") -> Script:
    """Parse a plan: one action line per line; blank lines and ``#`` comments are ignored."""
    lines = []
    for i, raw in enumerate(text.splitlines(), start=1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        lines.append(parse_line(s, i, source))
    return Script(tuple(lines), source)


def script_from_lines(lines: Iterable[str], source: str = "<plan>") -> Script:
    return parse_script("\n".join(lines), source)


@dataclass(frozen=True)
class StepError:
    """Why a step failed. ``kind`` is one of :data:`STEP_ERROR_KINDS`."""

    kind: str
    message: str
    step: int
    line: str
    line_no: int = 0
    sim_error_type: Optional[str] = None

    def __str__(self) -> str:
        return f"step {self.step + 1} ({self.line}): {self.kind}: {self.message}"

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "message": self.message,
            "step": self.step,
            "line": self.line,
            "line_no": self.line_no,
            "sim_error_type": self.sim_error_type,
        }


STEP_ERROR_KINDS = (
    "unknown_action",  # not in the VirtualHome action vocabulary
    "argument_count",  # wrong number of <name> (id) arguments
    "unknown_object",  # id not in the scene
    "name_mismatch",  # the name does not match the class of the node with that id
    "precondition",  # the simulator refused: precondition or affordance failure (its message is kept)
    "not_run",  # a step after a failed step
)
