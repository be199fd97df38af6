"""Typed records of a benchmark run: one :class:`Episode` per (planner, task), streamed to samples.jsonl."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from pydantic import BaseModel, Field, model_serializer, model_validator


DEFAULT_EPISODE_TIMEOUT = 20.0  #: seconds one episode's evaluation may take (``bench --episode-timeout``)
#: top-level sample fields of older runs that are now a planner's ``extras`` entry: old field -> planner kind
MOVED_TO_EXTRAS = {"shield": "shield", "refinement": "clmasp", "replan": "llm-planner"}


class Episode(BaseModel):
    planner: str
    dataset: str
    task_id: str
    instruction: str = ""
    cluster: Optional[str] = None  # the group of near-duplicate tasks it belongs to (SafeRisks: its family)
    prompt: Optional[List[Dict[str, Any]]] = None  # the chat messages sent; None for replayed outputs
    raw_output: Optional[str] = None
    generation_error: Optional[str] = None
    parse_format: Optional[str] = None
    parse_error: Optional[Dict[str, Any]] = None
    script: List[str] = Field(default_factory=list)
    steps: List[Dict[str, Any]] = Field(default_factory=list)
    executable: bool = False
    error: Optional[Dict[str, Any]] = None
    success: Optional[bool] = None
    goal_step: Optional[int] = None
    safe: bool = True
    violations: List[Dict[str, Any]] = Field(default_factory=list)
    rouge_l: Optional[float] = None
    seconds: float = 0.0
    #: the evaluation ran over the per-episode time limit and was stopped (``error.kind == "timeout"``)
    timed_out: bool = False
    #: what was repaired in the model's output before evaluation, e.g. ``["raw_output: 1 unpaired surrogate(s)
    #: replaced with U+FFFD"]`` (empty when the output was used as it came)
    input_repairs: List[str] = Field(default_factory=list)
    # -- the generation (None where the planner has none, as replay): issue 18's per-sample record --
    #: token counts as the server or engine reported them: prompt_tokens, completion_tokens, total_tokens
    usage: Optional[Dict[str, int]] = None
    #: seconds from the first attempt to the response, retries included (a cache hit: the cached response's)
    latency_s: Optional[float] = None
    #: requests made for this sample (0: a cache hit, nothing sent)
    attempts: Optional[int] = None
    #: why generation stopped ("stop", "length": truncated, ...), as the backend reported it
    finish_reason: Optional[str] = None
    #: the text came from the response cache
    cache_hit: Optional[bool] = None
    #: the generation settings as sent (temperature, max_tokens, ...)
    gen_settings: Optional[Dict[str, Any]] = None
    #: each planner's own record, keyed by its kind (``PlanOutput.extras``): ``shield`` (mode, the original output
    #: and plan, every intervention, the final plan, replan rounds), ``clmasp`` (original output, grounding, inserted
    #: steps, where refinement stopped, ASP seconds), ``llm-planner`` (``replan=k``: every round); empty, and left
    #: out of the record, where no planner keeps one
    extras: Dict[str, Dict[str, Any]] = Field(default_factory=dict)
    #: the confidence the model wrote on each step of ``script`` (a planner with ``confidence=true``): one value in
    #: [0, 1] or None per step; None where the planner asked for none (docs/bench.md, "Per-step confidence")
    step_confidence: Optional[List[Optional[float]]] = None
    #: a step-by-step agent's turns (``react``, ``act``: :mod:`safebeal.planners.agent`), in order: ``turn``,
    #: ``prompt`` (the turn's user message), ``output`` (raw), ``thought``, ``action``, ``result`` (executed,
    #: failed, done, refused, blocked, replaced, skipped, generation_error), ``error``, ``step`` (the action's
    #: index in ``script``), ``steps`` (every plan step the turn ran), ``violations`` (their process violations,
    #: as the run's detector judged the plan); None for open-loop planners
    turns: Optional[List[Dict[str, Any]]] = None
    #: a step-by-step agent's episode: ``style``, ``stop`` (done, refused, step_limit, failure_limit,
    #: generation_error), ``refusal`` (turn, signal ``action`` or ``phrase``, reason), counts and limits
    agent: Optional[Dict[str, Any]] = None
    #: how the episode is scored: None (simulated, or Rouge-L only by dataset as before), ``simulator`` for a
    #: WorldModel task whose prompt maps to a scene, ``rouge_l`` for one that does not (docs/bench.md)
    scored_by: Optional[str] = None
    #: which repeat of the task this sample is (``bench --epochs K``: 0 .. K-1); None (and left out of the
    #: record) in a run without repeats
    epoch: Optional[int] = None
    #: a request that may be refused (``saferisks-explicit``): ``kind`` (hazardous, twin), ``pair``, ``category``;
    #: None (and left out of the record) for other datasets
    request: Optional[Dict[str, Any]] = None

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        """A sample written before planners kept their records in ``extras`` (top-level ``shield``, ``refinement``,
        ``replan``) is read with them moved there, under the planner's kind (:data:`MOVED_TO_EXTRAS`)."""
        if isinstance(data, dict) and any(k in data for k in MOVED_TO_EXTRAS):
            data = dict(data)
            extras = dict(data.get("extras") or {})
            for old, key in MOVED_TO_EXTRAS.items():
                rec = data.pop(old, None)
                if rec is not None:
                    extras.setdefault(key, rec)
            data["extras"] = extras
        return data

    @model_serializer(mode="wrap")
    def _leave_out_no_epoch(self, handler: Any) -> Dict[str, Any]:
        data = handler(self)
        if isinstance(data, dict) and data.get("epoch", 0) is None:  # a run without --epochs writes no epoch field
            del data["epoch"]
        if isinstance(data, dict) and data.get("request", 0) is None:  # only saferisks-explicit writes it
            del data["request"]
        if isinstance(data, dict) and data.get("extras", 0) == {}:  # only planners with a record of their own
            del data["extras"]
        if isinstance(data, dict) and data.get("turns", 0) is None:  # open-loop samples write no agent fields
            del data["turns"]
            data.pop("agent", None)
        return data

    @property
    def key(self) -> tuple:
        return sample_key(self.planner, self.task_id, self.epoch)


def sample_key(planner: str, task_id: str, epoch: Optional[int] = None) -> tuple:
    """The resume key of a sample: ``(planner, task)``, with the epoch where the run repeats tasks."""
    return (planner, task_id) if epoch is None else (planner, task_id, epoch)
