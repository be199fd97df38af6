"""Reading planner output: free-form text -> plan steps (pure: no simulator).

- :func:`parse_plan` reads the text and returns a :class:`ParseResult` (``steps``, ``format``, ``error``).
  Accepted forms:

  * VirtualHome script lines, ``[WALK] <kitchen> (11)``; ids are optional (``[WALK] <kitchen>``) and may be
    written ``(1.11)`` as in the dataset files; a trailing ``# comment`` or ``// comment`` is allowed;
  * the same lines in numbered or bulleted lists (``1. [WALK] ...``, ``2) ...``, ``Step 3: ...``, ``- ...``),
    inside code fences, with chatter before, after or between the action lines;
  * the JSON-dict format of the 15 recorded LLMs, ``{"WALK": ["kitchen"], "GRAB": ["cup"], ...}``, keeping
    the ORDER and the DUPLICATE keys (decoded with an ``object_pairs_hook``: plain ``json.loads`` keeps only the
    last of repeated keys), also Python-style single quotes, trailing commas, prose or fences around it, a list
    of such dicts, ``{"ACTION": [[args], [args]]}`` (one step per inner list), ``[["WALK", "kitchen"], ...]``,
    ``["[WALK] <kitchen> (11)", ...]`` and one wrapping level such as ``{"plan": {...}}``.

  Vocabulary and argument counts are checked here (:data:`safebeal.scene.actions.ACTION_ARITY` and, with
  ``actions="extended"``, the default, the action extensions of ``scene/data/actions.yaml``).

- :func:`safebeal.plans.grounding.resolve_objects`, the second stage, maps the object names to scene ids.

Errors are typed (:mod:`safebeal.plans.steps`: :class:`ParseError`, :class:`EmptyPlan`, :class:`PlanTooLarge`,
:class:`UnknownAction`, :class:`ArgumentCount`, :class:`HallucinatedObject`) and RETURNED, never raised: any string, however broken or
large, gives a result. Outputs over :data:`MAX_CHARS` characters or with more than :data:`MAX_STEPS` steps are
refused with :class:`PlanTooLarge`. ``step`` numbers are 0-based (as in :class:`safebeal.scene.StepError`),
``line`` numbers are 1-based lines of the output text.
"""

from __future__ import annotations

import bisect
import contextvars
import json
import re
from functools import lru_cache
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from safebeal.plans.steps import (Arg, ArgumentCount, EmptyPlan, ParseError, ParseResult, PlanError, PlanTooLarge,
                                  Step, UnknownAction)
from safebeal.scene.extensions import DEFAULT_ACTIONS, action_arities, check_actions
from safebeal.scene.script import parse_id

#: the action vocabulary being parsed against (``parse_plan(..., actions=)``): name -> argument counts
_VOCAB: "contextvars.ContextVar[str]" = contextvars.ContextVar("safebeal_parse_actions", default=DEFAULT_ACTIONS)


@lru_cache(maxsize=None)
def _arities(actions: str) -> Dict[str, Tuple[int, ...]]:
    return action_arities(actions)


def _vocab() -> Dict[str, Tuple[int, ...]]:
    return _arities(_VOCAB.get())


MAX_CHARS = 1_000_000  #: longest output parsed (characters); longer ones give PlanTooLarge
MAX_STEPS = 500  #: most steps in a plan; more give PlanTooLarge (the steps up to the cap are kept)
MAX_JSON_DEPTH = 16  #: deepest JSON nesting walked
_MAX_JSON_STARTS = 20  #: at most this many JSON values are tried as the plan


# -- helpers ---------------------------------------------------------------------------------------------
_SPACES = re.compile(r"[\s\-]+")
_SEPARATORS = re.compile(r"[\s_\-]+")
_WS = re.compile(r"\s+")


def normalise_name(name: str) -> str:
    """How names are written in scripts: lower case, words joined by underscores."""
    return _normalise_name(name) if len(name) <= 64 else _SPACES.sub("_", name.strip().lower())


def name_key(name: str) -> str:
    """The key names are compared by: case, spaces, hyphens and underscores removed."""
    return _name_key(name) if len(name) <= 64 else _SEPARATORS.sub("", name.lower())


def normalise_action(raw: str) -> str:
    """``Walk`` -> ``WALK``, ``SWITCH ON`` / ``switch_on`` -> ``SWITCHON``; unknown names are upper-cased."""
    return _normalise_action(raw, _VOCAB.get()) if len(raw) <= 64 else _WS.sub("", raw.strip().upper())


@lru_cache(maxsize=8192)  # short strings only (see the callers): the cache stays small
def _normalise_name(name: str) -> str:
    return _SPACES.sub("_", name.strip().lower())


@lru_cache(maxsize=8192)
def _name_key(name: str) -> str:
    return _SEPARATORS.sub("", name.lower())


@lru_cache(maxsize=1024)
def _normalise_action(raw: str, actions: str = DEFAULT_ACTIONS) -> str:
    vocab = _arities(actions)
    a = _WS.sub("", raw.strip().upper())
    if a in vocab:
        return a
    b = a.replace("_", "").replace("-", "")
    return b if b in vocab else a


def _id(raw: Optional[str]) -> Optional[int]:
    """An id as written: ``12`` or the dataset form ``1.12`` (see :func:`safebeal.scene.script.parse_id`).
    Callers check :func:`_bad_id` first; here a malformed id cannot occur."""
    if raw is None:
        return None
    i = parse_id(raw)
    assert i is not None, raw
    return i


def _bad_id(raw: Optional[str]) -> bool:
    return raw is not None and parse_id(raw) is None


class _Lines:
    """Line numbers of character offsets."""

    def __init__(self, text: str):
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(self, pos: int) -> int:
        return bisect.bisect_right(self.starts, pos)


def _check_vocab(steps: List[Step]) -> Optional[PlanError]:
    vocab = _vocab()
    for i, s in enumerate(steps):
        counts = vocab.get(s.action)
        if counts is None:
            return UnknownAction(f"unknown action {s.action!r}", line=s.source_line or None, step=i, text=str(s))
        if len(s.args) not in counts:
            n = " or ".join(str(c) for c in counts)
            return ArgumentCount(f"{s.action} takes {n} object(s), got {len(s.args)}", line=s.source_line or None,
                                 step=i, text=str(s))
    return None


# -- script lines ----------------------------------------------------------------------------------------
_FENCE = re.compile(r"^\s*(```|~~~)")
_MARKER = r"(?:(?:step\s*)?\d+\s*[.):]|\(\d+\)|[-*\u2022+])"
# Every pattern here runs in time linear in the line: no two quantifiers can share the same characters
# (possessive ``*+`` / ``++`` and atomic groups never give back what they took), so a line of 40,000 spaces or
# ``<`` + 200 spaces is rejected in one pass (tests/plans/test_parse_hardening.py times them).
_ACTION_LINE = re.compile(r"^\s*+(?:(?P<marker>" + _MARKER + r")\s*+)?\[(?P<action>[A-Za-z][A-Za-z_ \-]*+)\](?P<rest>.*)$", re.I)
_LISTED = re.compile(r"^\s*+" + _MARKER + r"\s++\S", re.I)
_ARG = re.compile(r"\s*+<(?P<name>[^<>]*+)>(?:\s*+\(\s*+(?P<id>[0-9.]{1,40}+)\s*+\))?")
#: a per-step confidence written after the step (``confidence=true``, :func:`step_confidences`): ``(confidence: 0.9)``,
#: ``[conf 85%]``, ``- confidence=0.9``; the documented form ``# confidence: 0.9`` is a comment and needs no rule
_CONF_NOTE = r"(?:[-|:]\s*+)?[(\[]?+\s*+(?i:conf(?:idence)?+)\s*+[:=]?+\s*+\d{1,3}+(?:\.\d{1,6}+)?+%?+\s*+[)\]]?+\s*+"
_TAIL = re.compile(r"\s*+(?:[.,;]\s*+)?(?:" + _CONF_NOTE + r")?(?:[.,;]\s*+)?(?:(?:#|//).*)?$")


def _parse_action_line(m: "re.Match[str]", line_no: int, raw: str) -> Union[Step, PlanError]:
    rest = m.group("rest")
    args: List[Arg] = []
    pos = 0
    while True:
        am = _ARG.match(rest, pos)
        if not am:
            break
        name = normalise_name(am.group("name"))
        if not name:
            return ParseError("empty object name", line=line_no, text=raw.strip())
        if _bad_id(am.group("id")):
            return ParseError(f"malformed id ({am.group('id')}): ids are integers such as (12), or (1.12) as in the dataset",
                              line=line_no, text=raw.strip())
        args.append(Arg(name, _id(am.group("id"))))
        pos = am.end()
    if not _TAIL.match(rest, pos):
        return ParseError("malformed action line: expected '[ACTION] <name> (id) ...'", line=line_no, text=raw.strip())
    return Step(normalise_action(m.group("action")), tuple(args), line_no)


def _parse_script_lines(lines: Sequence[str], hits: List[int]) -> Tuple[List[Step], Optional[PlanError], bool]:
    """Parse the block from the first to the last action line. Inside it, list-marked or '['-led lines that are
    not action lines are errors; other prose lines are chatter."""
    steps: List[Step] = []
    listed = False
    first, last = hits[0], hits[-1]
    for i in range(first, last + 1):
        raw = lines[i]
        s = raw.strip()
        if not s or s.startswith("#") or s.startswith("//") or _FENCE.match(s):
            continue
        m = _ACTION_LINE.match(raw)
        if m:
            listed = listed or bool(m.group("marker"))
            r = _parse_action_line(m, i + 1, raw)
            if isinstance(r, PlanError):
                return steps, r, listed
            steps.append(r)
        elif s.startswith("[") or _LISTED.match(s):
            return steps, ParseError("not an action line inside the plan", line=i + 1, text=s), listed
    return steps, None, listed


# -- JSON ------------------------------------------------------------------------------------------------
class _Obj(list):
    """A decoded JSON object as its ordered (key, value) pairs: duplicate keys kept."""


_DECODER = json.JSONDecoder(object_pairs_hook=_Obj, strict=False)


_JSON_ESCAPES = set('"\\/bfnrtu')


def pythonish_to_json(s: str) -> str:
    """Rewrite Python-style literals as JSON: single-quoted strings become double-quoted, trailing commas
    before ``}`` / ``]`` are dropped, and backslashes JSON does not know (``\\_``, ``\\'``) are removed.
    Character-level, so quotes inside strings are kept correctly."""
    out: List[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c == '"':
            j = i + 1
            buf = ['"']
            while j < n and s[j] != '"':
                if s[j] == "\\" and j + 1 < n:
                    buf.append(s[j : j + 2] if s[j + 1] in _JSON_ESCAPES else s[j + 1])  # "cd\_player" -> "cd_player"
                    j += 2
                    continue
                buf.append(s[j])
                j += 1
            out.append("".join(buf) + ('"' if j < n else ""))
            i = j + 1
        elif c == "'":
            j = i + 1
            buf: List[str] = []
            while j < n and s[j] != "'":
                if s[j] == "\\" and j + 1 < n:
                    buf.append(s[j : j + 2] if s[j + 1] in _JSON_ESCAPES else s[j + 1])
                    j += 2
                    continue
                buf.append('\\"' if s[j] == '"' else s[j])
                j += 1
            out.append('"' + "".join(buf) + ('"' if j < n else ""))
            i = j + 1
        elif c == ",":
            j = i + 1
            while j < n and s[j] in " \t\r\n":
                j += 1
            if j < n and s[j] in "}]":
                i = j
                continue
            out.append(c)
            i += 1
        else:
            j = i
            while j < n and s[j] not in "\"',":
                j += 1
            out.append(s[i:j])
            i = j
    return "".join(out)


def _decode_at(text: str, start: int) -> Tuple[Any, int, Optional[str]]:
    """Decode the JSON value starting at ``start``: strictly, then in the lenient Python-style form.
    Returns (value, end, None) or (None, start, reason); ``end`` is exact for the strict form and at least
    past the value for the lenient one."""
    reason = "malformed JSON plan"
    for lenient in (False, True):
        src = pythonish_to_json(text[start:]) if lenient else text[start:]
        try:
            value, end = _DECODER.raw_decode(src)
            return value, start + end, None
        except json.JSONDecodeError as exc:
            truncated = exc.pos >= len(src.rstrip()) - 1
            reason = ("truncated JSON plan (it ends before the document closes)" if truncated
                      else f"malformed JSON plan: {exc.msg}")
        except ValueError as exc:  # e.g. an integer over Python's 4,300-digit conversion limit
            reason = f"malformed JSON plan: {exc}"[:120]
        except RecursionError:
            return None, start, "JSON plan nested too deeply"
    return None, start, reason


class _JsonWalker:
    """Turns a decoded JSON value into steps, in document order; finds each step's source line."""

    def __init__(self, text: str, base: int, lines: _Lines, max_steps: int):
        self.text, self.cursor, self.lines, self.max_steps = text, base, lines, max_steps
        self.steps: List[Step] = []
        self.error: Optional[PlanError] = None

    def _locate(self, token: str) -> int:
        """Line of the next occurrence of ``token`` as a quoted string (either quote style), from the cursor."""
        body = json.dumps(token)[1:-1]
        best = -1
        for q in ('"', "'"):
            p = self.text.find(q + body + q, self.cursor)
            if p >= 0 and (best < 0 or p < best):
                best = p
        if best < 0:
            return 0
        self.cursor = best + len(body) + 2
        return self.lines.line_of(best)

    def _fail(self, err: PlanError) -> bool:
        self.error = err
        return False

    def _emit(self, action: str, raw_args: Sequence[Any], line: int) -> bool:
        args: List[Arg] = []
        for a in raw_args:
            if not isinstance(a, str):
                return self._fail(ParseError("object names must be strings", line=line or None, step=len(self.steps),
                                             text=f"{action}: {json.dumps(raw_args)}"))
            if not a.strip():
                continue  # "" stands for "no argument" in the recorded outputs (upstream drops it too)
            raw_name, raw_id = _json_arg(a)
            name = normalise_name(raw_name)
            if not name:
                return self._fail(ParseError("empty object name", line=line or None, step=len(self.steps), text=a))
            if _bad_id(raw_id):
                return self._fail(ParseError(f"malformed id ({raw_id}): ids are integers such as (12)", line=line or None,
                                             step=len(self.steps), text=a))
            args.append(Arg(name, _id(raw_id)))
        self.steps.append(Step(normalise_action(action), tuple(args), line))
        return len(self.steps) <= self.max_steps

    def walk(self, value: Any, depth: int = 0) -> bool:
        """False stops the walk (an error, or over max_steps)."""
        if depth > MAX_JSON_DEPTH:
            return self._fail(ParseError("JSON plan nested too deeply"))
        if isinstance(value, _Obj):
            return all(self._pair(key, v, depth) for key, v in value)
        if isinstance(value, list):
            return all(self._item(e, depth) for e in value)
        return self._fail(ParseError("JSON value is not a plan", text=json.dumps(value)))

    def _pair(self, key: str, v: Any, depth: int) -> bool:
        line = self._locate(key)
        is_action = normalise_action(key) in _vocab()
        if isinstance(v, _Obj) or (isinstance(v, list) and any(isinstance(e, _Obj) for e in v)):
            if is_action:
                return self._fail(ParseError(f"the objects of {key} must be a list of names", line=line or None,
                                             step=len(self.steps), text=key))
            return self.walk(v, depth + 1)  # a wrapper: {"plan": {...}}, {"steps": [{...}, ...]}
        if isinstance(v, list) and v and all(isinstance(e, list) for e in v):
            return all(self._emit(key, inner, line) for inner in v)  # {"PUTIN": [["plate", "sink"], ["cup", "sink"]]}
        if v is None or isinstance(v, list):
            return self._emit(key, v or [], line)
        if is_action:
            return self._emit(key, [v] if isinstance(v, str) else [v], line)
        return True  # a scalar under a non-action key ({"task": "..."}): metadata, ignored

    def _item(self, e: Any, depth: int) -> bool:
        if isinstance(e, _Obj):
            return self.walk(e, depth + 1)
        if isinstance(e, list):
            if e and isinstance(e[0], str):  # ["WALK", "kitchen"]
                return self._emit(e[0], e[1:], self._locate(e[0]))
            return self.walk(e, depth + 1)
        if isinstance(e, str):  # "[WALK] <kitchen> (11)"
            line = self._locate(e)
            m = _ACTION_LINE.match(e)
            r = _parse_action_line(m, line, e) if m else ParseError("JSON list item is not an action", line=line or None, text=e)
            if isinstance(r, PlanError):
                return self._fail(r)
            self.steps.append(r)
            return len(self.steps) <= self.max_steps
        return self._fail(ParseError("JSON list item is not an action", step=len(self.steps), text=json.dumps(e)))


_ID_CHARS = frozenset("0123456789.")


def _json_arg(a: str) -> Tuple[str, Optional[str]]:
    """``"<cup> (12)"``, ``"cup (12)"``, ``"<cup>"``, ``"cup"`` -> (name, id text or None). By hand, in linear
    time (the regex it replaces backtracked in ~n^4 on ``"<" + 200 spaces + ">x"``). A string whose name part
    holds ``<``, ``>``, ``(`` or ``)`` is taken whole as the name, with no id, as before."""
    s = a.strip()
    raw_id: Optional[str] = None
    if s.endswith(")"):
        j = s.rfind("(")
        inner = s[j + 1 : -1].strip() if j >= 0 else ""
        if inner and set(inner) <= _ID_CHARS:
            raw_id, s = inner, s[:j].rstrip()
    if s.startswith("<"):
        s = s[1:].lstrip()
    if s.endswith(">"):
        s = s[:-1].rstrip()
    if any(c in "<>()" for c in s):
        return a, None
    return s, raw_id


_JSON_START = re.compile(r"""\{\s*["'}]|\[\s*[\[{"'\]]""")


def _parse_json(text: str, lines: _Lines, max_steps: int) -> Tuple[List[Step], Optional[PlanError], bool]:
    """(steps, error, found); found is False when no JSON value starts anywhere in the text.

    The first place that can open a JSON plan (``{"`` / ``{'`` / ``[{`` / ``[[`` / ``["``) is decoded. If it
    does not decode (malformed or truncated), that is the error: values nested inside it are not tried, so a
    truncated plan is never mistaken for its first complete piece. If it decodes but holds no step or a bad
    item, later JSON values after it are tried, and the first outcome is reported when none holds a plan."""
    first: Optional[Tuple[List[Step], Optional[PlanError]]] = None
    pos, tried = 0, 0
    while tried < _MAX_JSON_STARTS:
        m = _JSON_START.search(text, pos)
        if m is None:
            break
        tried += 1
        start = m.start()
        value, end, reason = _decode_at(text, start)
        if reason is not None:
            if first is None:
                return [], ParseError(reason, line=lines.line_of(start), text=text[start : start + 80]), True
            break
        w = _JsonWalker(text, start, lines, max_steps)
        w.walk(value)
        if w.steps and w.error is None:
            return w.steps, None, True
        if first is None:
            first = (w.steps, w.error)
        pos = max(end, start + 1)
    if first is None:
        return [], None, False
    return first[0], first[1], True


# -- entry point -----------------------------------------------------------------------------------------
def parse_plan(text: Any, max_chars: int = MAX_CHARS, max_steps: int = MAX_STEPS, actions: str = DEFAULT_ACTIONS) -> ParseResult:
    """Parse one raw planner output. Never raises for any input; errors come back in ``.error``.

    ``actions``: the vocabulary, ``extended`` (the simulator's actions and the action extensions, the default) or
    ``vh`` (the simulator's own); a bad value raises SafebealError.

    ``.steps`` holds every step read: reading stops at a syntax error (:class:`ParseError`) but not at an
    unknown action or a wrong argument count, which are reported for the first offending step;
    ``.format`` is ``"script"`` (bare action lines), ``"numbered"`` (action lines in a list),
    ``"json"`` (a JSON plan) or ``"none"`` (nothing recognised)."""
    if text is None:
        return ParseResult((), "none", EmptyPlan("no output"))
    if not isinstance(text, str):
        return ParseResult((), "none", ParseError(f"output is a {type(text).__name__}, not text"))
    if len(text) > max_chars:
        return ParseResult((), "none", PlanTooLarge(f"output has {len(text):,} characters, over the {max_chars:,} limit"))
    if not text.strip():
        return ParseResult((), "none", EmptyPlan("the output is empty"))
    token = _VOCAB.set(check_actions(actions))
    try:
        return _parse(text, max_steps)
    except (RecursionError, MemoryError, ValueError) as exc:  # pragma: no cover - defensive: the parsers bound their work
        return ParseResult((), "none", ParseError(f"output could not be parsed ({type(exc).__name__})"))
    finally:
        _VOCAB.reset(token)


def _parse(text: str, max_steps: int) -> ParseResult:
    lines = text.splitlines()
    hits = [i for i, ln in enumerate(lines) if "[" in ln and _ACTION_LINE.match(ln)]
    if hits:
        steps, err, listed = _parse_script_lines(lines, hits)
        fmt = "numbered" if listed else "script"
    else:
        steps, err, found = _parse_json(text, _Lines(text), max_steps)
        fmt = "json" if found else "none"
        if not found:
            return ParseResult((), "none", ParseError("no plan found: no '[ACTION] <object>' line and no JSON plan",
                                                      line=1, text=text.strip()[:80]))
    if len(steps) > max_steps:
        return ParseResult(tuple(steps[:max_steps]), fmt, PlanTooLarge(f"plan has over {max_steps} steps", step=max_steps))
    if err is None:
        err = _check_vocab(steps)
    if err is None and not steps:
        err = EmptyPlan("the output holds no action")
    return ParseResult(tuple(steps), fmt, err)


_CONFIDENCE = re.compile(r"(?i:conf(?:idence)?+)\s*+[:=]?+\s*+(\d{1,3}+(?:\.\d{1,6}+)?+)(%?+)")


def confidence_value(raw: str, percent: bool = False) -> Optional[float]:
    """A written confidence as a number in [0, 1]: ``0.9`` -> 0.9, ``85%`` or ``85`` -> 0.85; None out of range."""
    try:
        v = float(raw)
    except ValueError:
        return None
    if percent or v > 1:
        v = v / 100.0
    return round(v, 6) if 0.0 <= v <= 1.0 else None


def step_confidences(text: Optional[str], steps: Sequence[Step]) -> List[Optional[float]]:
    """The confidence written on each step's line of ``text`` (one value or None per step, in step order).

    The documented form (``templates/confidence.txt``) is ``[ACTION] <name> (id) # confidence: 0.9``; lenient,
    it also reads ``(confidence: 0.9)``, ``[conf 85%]``, ``confidence=90`` (over 1: a percentage). A step with no
    readable confidence on its line, or from a format without lines of its own (JSON), gets None."""
    if not text or not steps:
        return [None] * len(steps)
    lines = text.splitlines()
    counts: Dict[int, int] = {}
    for s in steps:
        counts[s.source_line] = counts.get(s.source_line, 0) + 1
    out: List[Optional[float]] = []
    for s in steps:
        v = None
        if 0 < s.source_line <= len(lines) and counts[s.source_line] == 1:  # one step per line only
            m = _CONFIDENCE.search(lines[s.source_line - 1][:1000])
            if m:
                v = confidence_value(m.group(1), bool(m.group(2)))
        out.append(v)
    return out
