"""Decoding constrained to the action-script grammar (``hf:...,grammar=actions``).

A plan is lines of ``[ACTION]``, ``[ACTION] <name> (id)`` or ``[ACTION] <name> (id) <name> (id)``, each ended by a
newline. :class:`ActionGrammar` is the finite automaton of such lines over what one prompt offers: the actions named
in it as ``[ACTION]`` (all known actions if it names none; arities from the simulator and its extensions) and the
objects it names as ``<name> (id)`` (its observation, object list and example). A parse failure cannot happen, so
a study measures what a model plans rather than how often it breaks the format (issue 17, study v2 B); hallucinated
objects remain possible only among the names the prompt itself shows.

:class:`GrammarLogitsProcessor` applies it in ``transformers``' ``generate``: per batch row, it follows the tokens
generated so far through the automaton and masks every token whose text would leave it. End of sequence is allowed
only at a line start, after at least one line. Token texts come from decoding each id after a fixed anchor, so
SentencePiece's leading-space marks are handled; tokens whose text is not plain ASCII are never allowed. The tokens
allowed in a state are computed once per state (the states recur: every line starts in the same one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, Mapping, Optional, Sequence, Tuple

#: what the constrained decoding allows; part of the response cache's key (``hf`` identity), so that outputs decoded
#: under an older automaton are not replayed. 2: EOS may follow a complete line without its newline.
VERSION = 2
GRAMMARS = ("actions",)
_OBJ = re.compile(r"<([A-Za-z0-9_\-]+)> \((\d+)\)")
_ACT = re.compile(r"\[([A-Z_]+)\]")

# automaton states: (segment, position in it, allowed arities as a bit set, args done, lines done > 0)
# segment "act": inside "[NAME] " ... reading the action name from the action trie node ``pos``;
# segment "obj": reading "<name> (id)" from the object trie node ``pos``;
# segment "sep": after an argument, the next char is " " (another argument) or "\n"
State = Tuple[str, int, int, int, bool]
START: State = ("line", 0, 0, 0, False)


class _Trie:
    """A character trie over a set of strings: node ids, children, and which nodes end a string (with a value)."""

    def __init__(self, words: Mapping[str, Any]):
        self.children: List[Dict[str, int]] = [{}]
        self.value: List[Any] = [None]
        for w, v in words.items():
            n = 0
            for ch in w:
                nxt = self.children[n].get(ch)
                if nxt is None:
                    nxt = len(self.children)
                    self.children[n][ch] = nxt
                    self.children.append({})
                    self.value.append(None)
                n = nxt
            self.value[n] = v


@dataclass
class ActionGrammar:
    """The plan lines one prompt allows. ``actions``: name -> allowed arities; ``objects``: ((name, id), ...)."""

    actions: Mapping[str, Tuple[int, ...]]
    objects: Tuple[Tuple[str, int], ...]
    _acts: _Trie = field(init=False, repr=False)
    _objs: _Trie = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.actions:
            raise ValueError("an action grammar needs at least one action")
        # an action name ends at "]": the trie holds "NAME]" so the node after "]" carries the arities
        self._acts = _Trie({f"{a}]": tuple(sorted(set(ar))) for a, ar in self.actions.items()})
        self._objs = _Trie({f"<{n}> ({i})": True for n, i in self.objects})

    @classmethod
    def from_prompt(cls, text: str) -> "ActionGrammar":
        from safebeal.scene.actions import ACTION_ARITY
        from safebeal.scene.extensions import all_arities

        known = all_arities()  # base actions and the extensions (THROW takes 1 or 2 arguments)
        named = [a for a in dict.fromkeys(_ACT.findall(text)) if a in known]
        acts = {a: known[a] for a in (named or list(ACTION_ARITY))}
        objs = tuple(dict.fromkeys((n, int(i)) for n, i in _OBJ.findall(text)))
        if not objs:  # nothing to name: only actions without arguments can be written
            acts = {a: tuple(x for x in ar if x == 0) for a, ar in acts.items()}
            acts = {a: ar for a, ar in acts.items() if ar}
        return cls(acts, objs)

    # -- the automaton --------------------------------------------------------------------------------------
    def step(self, state: State, ch: str) -> Optional[State]:
        """The state after reading ``ch``, or None if no allowed line continues that way."""
        seg, pos, arity, done, lines = state
        if seg == "line":
            return ("act", 0, 0, 0, lines) if ch == "[" else None
        if seg == "act":
            nxt = self._acts.children[pos].get(ch)
            if nxt is None:
                return None
            ar = self._acts.value[nxt]
            if ar is None:
                return ("act", nxt, 0, 0, lines)
            # "NAME]" read: encode the allowed arities in ``arity`` as a bit set
            return ("sep", 0, sum(1 << a for a in ar), 0, lines)
        if seg == "sep":  # after "]" or after an argument
            can_end = bool(arity & (1 << done))
            can_more = any(arity & (1 << a) for a in range(done + 1, 3))
            if ch == "\n" and can_end:
                return ("line", 0, 0, 0, True)
            if ch == " " and can_more:
                return ("obj", 0, arity, done, lines)
            return None
        if seg == "obj":
            nxt = self._objs.children[pos].get(ch)
            if nxt is None:
                return None
            if self._objs.value[nxt] is not None:  # "<name> (id)" read: every object string ends with ")"
                return ("sep", 0, arity, done + 1, lines)
            return ("obj", nxt, arity, done, lines)
        return None

    def first_chars(self, state: State) -> FrozenSet[str]:
        seg, pos, arity, done, _ = state
        if seg == "line":
            return frozenset("[")
        if seg == "act":
            return frozenset(self._acts.children[pos])
        if seg == "obj":
            return frozenset(self._objs.children[pos])
        out = set()
        if arity & (1 << done):
            out.add("\n")
        if any(arity & (1 << a) for a in range(done + 1, 3)):
            out.add(" ")
        return frozenset(out)

    def walk(self, state: Optional[State], text: str) -> Optional[State]:
        for ch in text:
            if state is None:
                return None
            state = self.step(state, ch)
        return state

    def can_stop(self, state: Optional[State]) -> bool:
        """Whether the text read so far is a whole plan: at least one line, each complete; the last line's newline
        is optional (training completions end ``... (94)`` then EOS, so EOS must be allowed right after the last
        object of a line, not only after a newline)."""
        if state is None:
            return False
        seg, _pos, arity, done, lines = state
        if seg == "line":
            return bool(lines)
        return seg == "sep" and bool(arity & (1 << done))

    def accepts(self, text: str) -> bool:
        """Whether ``text`` is a whole plan of this grammar (at least one line; a final newline optional)."""
        st = self.walk(START, text if text.endswith("\n") else text + "\n")
        return self.can_stop(st)


def token_texts(tokenizer: Any) -> List[str]:
    """The text each token id adds when it follows other text (decoded after a fixed anchor token)."""
    vocab = len(tokenizer)
    anchor_ids = tokenizer.encode("a", add_special_tokens=False)[-1:] or [0]
    base = tokenizer.decode(anchor_ids, skip_special_tokens=False)
    special = set(getattr(tokenizer, "all_special_ids", []) or [])
    out = []
    for i in range(vocab):
        if i in special:
            out.append("")
            continue
        s = tokenizer.decode(anchor_ids + [i], skip_special_tokens=False)
        out.append(s[len(base):] if s.startswith(base) else tokenizer.decode([i], skip_special_tokens=False))
    return out


class GrammarLogitsProcessor:
    """A ``transformers`` logits processor that keeps every row of a batch inside its own :class:`ActionGrammar`."""

    def __init__(self, grammars: Sequence[ActionGrammar], tokenizer: Any, prompt_length: int,
                 texts: Optional[List[str]] = None):
        self.grammars = list(grammars)
        self.prompt_length = int(prompt_length)
        self.texts = texts if texts is not None else token_texts(tokenizer)
        self.eos = tokenizer.eos_token_id
        self.by_first: Dict[str, List[int]] = {}
        for i, t in enumerate(self.texts):
            if t and t.isascii():
                self.by_first.setdefault(t[0], []).append(i)
        self.states: List[Optional[State]] = [START for _ in self.grammars]
        self._memo: List[Dict[State, List[int]]] = [{} for _ in self.grammars]

    def allowed(self, row: int, state: Optional[State]) -> List[int]:
        if state is None:
            return [self.eos] if self.eos is not None else []
        memo = self._memo[row]
        if state not in memo:
            g = self.grammars[row]
            ids = [i for ch in g.first_chars(state) for i in self.by_first.get(ch, ()) if g.walk(state, self.texts[i]) is not None]
            if g.can_stop(state) and self.eos is not None:
                ids.append(self.eos)
            memo[state] = ids or ([self.eos] if self.eos is not None else [])
        return memo[state]

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        n = input_ids.shape[1]
        if n > self.prompt_length:  # follow the token chosen last
            for r in range(len(self.grammars)):
                tok = int(input_ids[r, -1])
                st = self.states[r]
                if st is not None and tok != self.eos:
                    self.states[r] = self.grammars[r].walk(st, self.texts[tok])
        mask = torch.full_like(scores, float("-inf"))
        for r in range(len(self.grammars)):
            ids = self.allowed(r, self.states[r])
            if ids:
                mask[r, ids] = 0.0
        return scores + mask


__all__ = ["ActionGrammar", "GRAMMARS", "GrammarLogitsProcessor", "START", "VERSION", "token_texts"]
