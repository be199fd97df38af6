"""``transcript``: the recorded turns of step-by-step agents served back, turn by turn.

    safebeal bench --planner 'shield:planner=react,mode=block' --backend transcript:path=runs/react/samples.jsonl

Reads a run's ``samples.jsonl`` (or any JSON lines of samples with ``turns``) and answers each prompt with the
output recorded for the turn whose prompt (the turn's user message) is the same, so a ``react`` or ``act`` run is
replayed without a model: exactly, while the episode sees what it saw when recorded, and up to the first turn whose
prompt differs (other rules under a shield, another simulator), which is then a recorded generation error naming
it. ``planner=LABEL`` takes the turns of one planner of the run (default: every planner's; one prompt recorded
with two different outputs is an error naming both samples).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from safebeal.jsonl import iter_jsonl
from safebeal.planners.backends.base import BACKENDS, Backend
from safebeal.planners.backends.records import BackendError, Generation, Prompt


def _load(path: Path, planner: Optional[str]) -> Dict[str, Tuple[str, str]]:
    """``{turn prompt: (output, where)}`` from the samples' turns."""
    if not path.is_file():
        raise BackendError(f"transcript: no such file: {path}")
    out: Dict[str, Tuple[str, str]] = {}
    for where, rec in iter_jsonl(path, BackendError):
        if planner is not None and rec.get("planner") != planner:
            continue
        turns = rec.get("turns")
        if turns is None:
            continue
        if not isinstance(turns, list):
            raise BackendError(f"{where}: 'turns' is not a list")
        for t in turns:
            prompt, text = (t.get("prompt"), t.get("output")) if isinstance(t, dict) else (None, None)
            if not isinstance(prompt, str) or not isinstance(text, str):
                continue  # a failed generation: nothing to serve
            seen = out.get(prompt)
            if seen is not None and seen[0] != text:
                raise BackendError(f"{where}: a turn's prompt was answered differently in {seen[1]}; "
                                   "choose one planner with transcript:planner=LABEL")
            out.setdefault(prompt, (text, f"{where} ({rec.get('planner')}, {rec.get('task_id')})"))
    if not out:
        raise BackendError(f"transcript: {path} holds no agent turns" + (f" of planner {planner!r}" if planner else ""))
    return out


@BACKENDS.register("transcript", help="recorded agent turns served back: transcript:path=RUN/samples.jsonl"
                                      "[,planner=LABEL]")
class TranscriptBackend(Backend):
    name = "transcript"
    cacheable = False  # the file is the record

    def __init__(self, path: Optional[str] = None, planner: Optional[str] = None, arg: Optional[str] = None):
        path = path or arg
        if not path:
            raise BackendError("transcript: name the samples file: transcript:path=RUN/samples.jsonl")
        self.path = str(path)
        self.planner = planner
        self.turns = _load(Path(path), planner)
        self._init_settings()

    def config(self) -> Dict[str, Any]:
        return {"path": self.path, "planner": self.planner, "turns": len(self.turns)}

    def spec(self) -> str:
        return f"transcript:path={self.path}" + (f",planner={self.planner}" if self.planner else "")

    def _generate(self, prompts: List[Prompt], **settings: Any) -> List[Generation]:
        out = []
        for p in prompts:
            got = self.turns.get(p[-1]["content"])
            if got is None:
                text = p[-1]["content"]
                first = text.splitlines()[0][:80] if text else ""
                turn = re.search(r"Turn (\d+) of", text)
                where = f"{first}; turn {turn.group(1)}" if turn else first
                out.append(Generation(None, f"transcript: no recorded turn has this prompt ({where}): the episode "
                                            "left the recorded one", 0.0, 1))
            else:
                out.append(Generation(got[0], None, 0.0, 1))
        return out
