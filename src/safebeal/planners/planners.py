"""Planners, behind one registry. Each turns tasks into raw model outputs (text), recorded with its spec.

- ``replay``: recorded outputs. ``replay:gpt-4o-2024-05-13`` (one of the 15 shipped models, a unique prefix
  such as ``replay:gpt-4o`` works) or ``replay:path=outputs.jsonl`` (JSON lines of ``{task_id, output}``).
- ``few-shot``: system prompt plus one random example from the ActivityPrograms training split.
- ``llm-planner``: system prompt plus the most similar training example (BM25 over title and description,
  as LLM-Planner retrieves in-context examples by task similarity).
- ``zero-shot``: system prompt only.

Generating planners take ``backend=<spec>`` (``mock``, ``openai:model=...``, ``hf:<path>``, ``vllm:...``),
``safety_prompt=true`` adds the SafePrompt reminder of the 8 hazard categories and both constraint kinds,
``confidence=true`` asks for a confidence on every step (``templates/confidence.txt``; recorded as
``Episode.step_confidence``), ``llm-planner:replan=k`` executes as it plans and re-prompts on a failed step for up to
k rounds (:mod:`safebeal.planners.replan`; recorded as ``extras["llm-planner"]``), ``show_goal=true`` appends the task's symbolic goal (node, edge and action goals, as virtualhome-eval's prompt
states them; datasets with a goal spec only), and ``template=compact`` switches to the short prompt of small models trained on this project's data (see
``safebeal.planners.prompts``; ``default`` is the SafePlan-Bench prompt).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence

from safebeal.datasets.base import Task
from safebeal.errors import SafebealError
from safebeal.jsonl import iter_jsonl
from safebeal.planners.prompts import build_messages, prompt_style
from safebeal.registry import Registry
from safebeal.resources import vh_recorded_outputs
from safebeal.scene.extensions import check_actions


@dataclass
class PlanOutput:
    """One task's raw output. The generation fields are None where the planner has none (replay)."""

    task_id: str
    text: Optional[str]
    error: Optional[str] = None
    prompt: Optional[List[Dict[str, str]]] = None
    latency_s: Optional[float] = None
    attempts: Optional[int] = None
    usage: Optional[Dict[str, int]] = None
    finish_reason: Optional[str] = None
    cache_hit: Optional[bool] = None
    settings: Optional[Dict[str, Any]] = None  #: the effective generation settings it was generated with
    #: the planner asked for a per-step confidence (``confidence=true``): the sample records ``step_confidence``,
    #: one value or None per step, even when the model wrote none
    confidence: Optional[bool] = None
    #: a step-by-step agent (``react``, ``act``: :mod:`safebeal.planners.agent`): every turn (prompt, output,
    #: action, result, ...) and the episode (why it stopped, the refusal); None for open-loop planners
    turns: Optional[List[Dict[str, Any]]] = None
    agent: Optional[Dict[str, Any]] = None
    #: each planner's own record, keyed by its kind (:attr:`Planner.name`): what a wrapper did to the output
    #: (``shield``: original plan, interventions; ``clmasp``: grounding, inserted steps) or how the planner got it
    #: (``llm-planner`` with ``replan=k``: every round); the sample's ``extras``, summarised by the planner's
    #: :meth:`Planner.summarize`
    extras: Dict[str, Dict[str, Any]] = field(default_factory=dict)

    def with_extra(self, key: str, record: Dict[str, Any]) -> "PlanOutput":
        """This output with ``record`` as planner ``key``'s entry of :attr:`extras` (an inner planner's are kept)."""
        return replace(self, extras={**self.extras, key: record})

    def record(self) -> Dict[str, Any]:
        """The fields an :class:`~safebeal.bench.records.Episode` takes from the generation (and a wrapper).
        ``confidence_requested`` is not an Episode field: the evaluation reads it (``bench.executors``)."""
        rec = {"prompt": self.prompt, "latency_s": self.latency_s, "attempts": self.attempts, "usage": self.usage,
               "finish_reason": self.finish_reason, "cache_hit": self.cache_hit, "gen_settings": self.settings}
        if self.extras:
            rec["extras"] = dict(self.extras)
        if self.confidence:
            rec["confidence_requested"] = True
        if self.turns is not None:
            rec["turns"] = self.turns
            rec["agent"] = self.agent
        return rec


class Planner:
    """What the runner needs from a planner is declared here; a planner that keeps a record of its own (a wrapper
    such as ``shield``) writes it as ``PlanOutput.extras[name]`` and declares how it is summarised
    (:meth:`summarize`) and what it changes in the evaluated episode (:meth:`evaluated`)."""

    name = "planner"
    #: whether outputs take time to produce (a model generates them): the runner streams them one by one
    streams = False
    #: the planner models the action vocabulary itself: it gets the run's ``--actions`` (``clmasp``)
    takes_actions = False
    #: the planner wraps another one, which gets the run's ``--backend`` (``shield``, ``clmasp``)
    takes_default_backend = False
    #: the run records the planner under its spec as written (``shield``)
    label_as_written = False
    #: where the summary of the planner's record goes among the summary's sections (:mod:`safebeal.bench.summary`:
    #: the rates are 0, per-step confidence 20, the agents' record 50, requests 60)
    summary_order = 100

    @classmethod
    def summarize(cls, episodes: Sequence[Any], safe: Any) -> Dict[str, Any]:
        """The summary keys of this planner's record over the ``episodes`` that carry one (``extras[name]``: read it
        with :func:`extra_of`); ``safe(episode)`` says whether an episode counts as safe in ``safe_rate``.
        Planners without a record of their own add nothing."""
        return {}

    @classmethod
    def evaluated(cls, record: Dict[str, Any], episode: Any) -> Dict[str, Any]:
        """Fields of the evaluated ``episode`` (its final plan's evaluation) that this planner's ``record``
        changes (the ``shield``: a failed step it worked around leaves the plan as written not executable)."""
        return {}

    def __init__(self) -> None:
        self.spec = self.name

    def config(self) -> Dict[str, Any]:
        return {"name": self.name}

    def plan(self, tasks: Sequence[Task]) -> List[PlanOutput]:  # pragma: no cover - abstract
        raise NotImplementedError

    def plan_iter(self, tasks: Sequence[Task], stop: Any = None) -> Iterator[PlanOutput]:
        """Outputs as they finish (any order). Once ``stop`` (a ``threading.Event``) is set, no new generation
        starts. The default yields :meth:`plan`'s outputs."""
        yield from self.plan(tasks)

    def release(self) -> None:
        """Free what the planner holds between runs (a local engine's GPU memory); it is rebuilt on next use."""


#: planner modules outside this one, imported on first lookup
PLANNER_MODULES = ("safebeal.planners.search", "safebeal.planners.shield", "safebeal.planners.clmasp",
                   "safebeal.planners.agent")
PLANNERS: Registry[Planner] = Registry("planner", plugins=PLANNER_MODULES)


def create_planner(spec: str, backend: Optional[str] = None, actions: str = "extended") -> Planner:
    """A planner from its spec; ``backend`` is the default for generating planners that name none (and for the
    planner a wrapper such as ``shield`` wraps); ``actions`` the vocabulary a generating planner's prompt lists
    (``bench --actions``). ``p.spec`` is the full spec (a generating planner's as written, + that default);
    ``p.run_label`` the name runs record it under: ``label=`` when the spec gives one, else :func:`default_label`."""
    from safebeal.registry import RegistryError, parse_spec

    name, kwargs = parse_spec(spec)
    label = kwargs.pop("label", None)
    if label is not None:
        label = str(label).strip()
        if not label:
            raise SafebealError(f"planner {spec!r}: label= is empty")
        spec = _without_key(spec, "label")
    entry = PLANNERS.get(name)
    overrides: Dict[str, Any] = {}
    generating = isinstance(entry.factory, type) and issubclass(entry.factory, GeneratingPlanner)
    if backend and generating and "backend" not in kwargs:
        overrides["backend"] = backend
    if generating and "actions" not in kwargs and actions != "extended":
        overrides["actions"] = actions  # the prompt lists the vocabulary the run simulates (--actions)
    if entry.factory.takes_actions and "actions" not in kwargs and actions != "extended":
        overrides["actions"] = actions  # a wrapper that models the actions itself (clmasp)
    if backend and entry.factory.takes_default_backend:
        overrides["default_backend"] = backend
    try:
        p = entry.factory(**{**kwargs, **overrides})
    except (TypeError, ValueError) as exc:  # a missing/unknown argument, or one of the wrong type
        raise RegistryError(f"planner {spec!r}: {exc}") from exc
    if generating:  # the spec is what the user wrote (+ the --backend default); config() has every detail
        p.spec = spec + (("," if ":" in spec else ":") + f"backend={backend}" if "backend" in overrides else "")
    elif p.label_as_written:
        p.spec = spec
    p.run_label = label or default_label(p, kwargs)
    return p


def _without_key(spec: str, key: str) -> str:
    """``spec`` without its top-level ``key=...`` argument."""
    from safebeal.registry import split_top_level

    name, _, rest = spec.partition(":")
    parts = [x for x in split_top_level(rest, spec) if x and x.partition("=")[0].strip() != key]
    return name + (":" + ",".join(parts) if parts else "")


def default_label(p: Planner, kwargs: Optional[Dict[str, Any]] = None) -> str:
    """A short name for a planner: a generating planner's name and its model (``few-shot/gpt-4o``), plus the
    planner's own options as written (``few-shot/gpt-4o:safety_prompt=true``; the backend's are left out);
    any other planner's spec (``replay:gpt-4o-2024-05-13``, ``search``)."""
    if not isinstance(p, GeneratingPlanner):
        return p.spec
    try:
        model = (p.backend.config() or {}).get("model")
    except Exception:  # noqa: BLE001 - a backend without a config: its name
        model = None
    model = str(model).rstrip("/").rsplit("/", 1)[-1] if model else getattr(p.backend, "name", "backend")
    own = set(_keys_of(type(p)) or ()) - {"backend", "backend_kwargs"}
    opts = [f"{k}={'true' if v is True else 'false' if v is False else v}" for k, v in (kwargs or {}).items()
            if k in own]
    return f"{p.name}/{model}" + (":" + ",".join(opts) if opts else "")


def planner_label(p: Planner) -> str:
    """The name a run records a planner under (its ``label=``, else its default label, else its spec)."""
    return getattr(p, "run_label", None) or p.spec


# -- replay ---------------------------------------------------------------------------------------------
def recorded_models() -> List[str]:
    return sorted(p.name[: -len("_outputs.json")] for p in vh_recorded_outputs().glob("*_outputs.json"))


def resolve_recorded_model(name: str) -> str:
    models = recorded_models()
    if name in models:
        return name
    hits = [m for m in models if m.startswith(name)]
    if len(hits) == 1:
        return hits[0]
    raise SafebealError(
        f"unknown recorded model {name!r}" + (f" (ambiguous: {hits})" if hits else "") + f"; known: {', '.join(models)}"
    )


@lru_cache(maxsize=None)
def _recorded(model: str) -> Dict[str, str]:
    data = json.loads((vh_recorded_outputs() / f"{model}_outputs.json").read_text())
    return {d["identifier"]: d["llm_output"] for d in data}


def _read_jsonl_outputs(path: Path) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for where, rec in iter_jsonl(path, SafebealError):
        if "task_id" not in rec or not isinstance(rec.get("output"), str):
            raise SafebealError(f"{where}: expected a JSON object with 'task_id' and a string 'output'")
        out[str(rec["task_id"])] = rec["output"]
    return out


@PLANNERS.register("replay", help="recorded outputs: replay:<model> (15 shipped) or replay:path=file.jsonl")
class ReplayPlanner(Planner):
    name = "replay"

    def __init__(self, arg: Optional[str] = None, model: Optional[str] = None, path: Optional[str] = None):
        super().__init__()
        if path:
            self.source = str(path)
            self.outputs = _read_jsonl_outputs(Path(path))
            self.label = Path(path).stem
        else:
            m = resolve_recorded_model(model or arg or "")
            self.source = m
            self.outputs = _recorded(m)
            self.label = m
        self.spec = f"replay:{self.label}"

    def config(self) -> Dict[str, Any]:
        return {"name": self.name, "source": self.source}

    def plan(self, tasks: Sequence[Task]) -> List[PlanOutput]:
        out = []
        for t in tasks:
            text = self.outputs.get(t.id)
            out.append(PlanOutput(t.id, text, None if text is not None else f"no recorded output for task {t.id}"))
        return out


class RecordedRunPlanner(Planner):
    """The raw outputs of one planner in an earlier run directory (``safebeal rescore``), under the same label."""

    name = "recorded-run"

    def __init__(self, label: str, episodes: Sequence[Any]):
        super().__init__()
        self.spec = label
        self.by_epoch: Dict[Any, Dict[str, Any]] = {}
        for e in episodes:
            if e.planner == label:
                self.by_epoch.setdefault(getattr(e, "epoch", None), {})[e.task_id] = e
        self.outputs = self.by_epoch.get(None) or next(iter(self.by_epoch.values()), {})

    def use_epoch(self, epoch: Any) -> None:
        """Replay the outputs of repeat ``epoch`` (a run with ``--epochs``; the runner calls this per repeat)."""
        self.outputs = self.by_epoch.get(epoch, {})

    def config(self) -> Dict[str, Any]:
        return {"name": self.name, "label": self.spec, "n": sum(len(v) for v in self.by_epoch.values())}

    def plan(self, tasks: Sequence[Task]) -> List[PlanOutput]:
        out = []
        for t in tasks:
            e = self.outputs.get(t.id)
            if e is None:
                out.append(PlanOutput(t.id, None, f"no recorded output for task {t.id}"))
                continue
            out.append(PlanOutput(t.id, e.raw_output, e.generation_error, e.prompt, e.latency_s, e.attempts, e.usage,
                                  e.finish_reason, e.cache_hit, e.gen_settings,
                                  confidence=True if e.step_confidence is not None else None,
                                  turns=_recorded_turns(e.turns), agent=e.agent, extras=_recorded_extras(e.extras)))
        return out


def _recorded_extras(extras: Dict[str, Dict[str, Any]]) -> Dict[str, Dict[str, Any]]:
    """A recorded sample's planner records that come with its output (``llm-planner``'s re-planning rounds); the
    wrappers' (``shield``, ``clmasp``) are not: rescoring evaluates the output, as it was recorded, again."""
    return {k: v for k, v in extras.items() if k == "llm-planner"}


def _field(episode: Any, key: str) -> Any:
    return episode.get(key) if isinstance(episode, dict) else getattr(episode, key, None)


def extra_of(episode: Any, key: str) -> Optional[Dict[str, Any]]:
    """Planner ``key``'s record in an episode (an Episode or its dict), or None."""
    extras = episode.get("extras") if isinstance(episode, dict) else getattr(episode, "extras", None)
    return (extras or {}).get(key)


def _recorded_turns(turns: Optional[List[Dict[str, Any]]]) -> Optional[List[Dict[str, Any]]]:
    """A recorded agent's turns, their violations cleared: the new evaluation judges the plan again."""
    return None if turns is None else [{**t, "violations": []} for t in turns]


# -- generating planners -----------------------------------------------------------------------------------
@lru_cache(maxsize=4)
def _train_examples(dataset: str = "activity-train") -> List[Task]:
    from safebeal.datasets.base import DATASETS

    return DATASETS.create(dataset).tasks()


class GeneratingPlanner(Planner):
    """A planner whose outputs a backend generates.

    Generation settings (``temperature``, ``max_tokens``/``max_new_tokens``, ``top_p``, ``stop``,
    ``reasoning_effort``) may be given here, on the backend's spec, or for the whole run
    (:meth:`set_run_settings`, the ``bench`` flags). Precedence, lowest first: the backend's defaults, the run's
    flags, the backend's spec, the planner's spec (``docs/bench.md``). ``seed`` here is the seed of the
    few-shot example choice; the generation seed is ``--seed`` or the backend's ``seed=``.
    """

    streams = True
    #: rounds of re-planning with the simulator after the first generation (``llm-planner:replan=k``); 0: one
    #: generation a sample
    replan = 0

    def __init__(self, backend: Any = None, safety_prompt: bool = False, seed: int = 0, examples: str = "activity-train",
                 max_new_tokens: Optional[int] = None, temperature: Optional[float] = None, template: str = "default",
                 show_goal: bool = False, max_tokens: Optional[int] = None, top_p: Optional[float] = None,
                 stop: Any = None, reasoning_effort: Optional[str] = None, actions: str = "extended",
                 confidence: bool = False, **backend_kwargs: Any):
        super().__init__()
        from safebeal.planners.backends import BACKENDS, Backend, normalize_settings

        prompt_style(str(template))  # an unknown template fails here, before the backend loads
        self.actions = check_actions(str(actions))  # the vocabulary the prompt lists: extended or vh
        self.template = str(template)
        self.planner_settings = normalize_settings(
            {"max_new_tokens": max_new_tokens, "max_tokens": max_tokens, "temperature": temperature, "top_p": top_p,
             "stop": stop, "reasoning_effort": reasoning_effort}, f"planner {self.name}")
        self.run_settings: Dict[str, Any] = {}
        if backend is None or (isinstance(backend, str) and not backend.strip()):
            raise SafebealError(no_backend_message(self.name))
        if backend_kwargs and not isinstance(backend, Backend):
            _check_keys(self, str(backend), backend_kwargs)
        self.backend = backend if isinstance(backend, Backend) else BACKENDS.create(str(backend), **backend_kwargs)
        self.backend.request_settings(self.settings)  # settings the backend cannot send fail here, before the run
        self.safety_prompt = bool(safety_prompt)
        self.show_goal = bool(show_goal)
        self.confidence = _flag(confidence, "confidence")
        self.seed = seed
        self.examples = examples
        bspec = getattr(self.backend, "spec", None)
        bspec = bspec() if callable(bspec) else (bspec or str(backend))
        self.spec = f"{self.name}:backend={bspec}" + (",safety_prompt=true" if self.safety_prompt else "")
        if self.show_goal:
            self.spec += ",show_goal=true"
        if self.template != "default":
            self.spec += f",template={self.template}"
        if self.actions != "extended":
            self.spec += f",actions={self.actions}"
        if self.confidence:
            self.spec += ",confidence=true"

    def set_run_settings(self, settings: Dict[str, Any]) -> None:
        """The run's generation settings (``bench --temperature ...``): below the backend's and the planner's spec."""
        from safebeal.planners.backends import normalize_settings

        self.run_settings = normalize_settings(settings or {}, "bench flags")
        self.backend.request_settings(self.settings)

    @property
    def settings(self) -> Dict[str, Any]:
        """The effective generation settings (see the class docstring for the precedence)."""
        from safebeal.planners.backends import layer_settings

        return self.backend.effective_settings(
            layer_settings(self.run_settings, self.backend.spec_settings, self.planner_settings))

    def config(self) -> Dict[str, Any]:
        return {"name": self.name, "backend": self.backend.config(), "safety_prompt": self.safety_prompt,
                "show_goal": self.show_goal, "seed": self.seed, "examples": self.examples, "template": self.template,
                "actions": self.actions, "confidence": self.confidence,
                "generation": self.backend.request_settings(self.settings)}

    def example_for(self, task: Task) -> Optional[Task]:
        return None

    def messages(self, task: Task) -> List[Dict[str, str]]:
        msgs = build_messages(task, self.example_for(task) if task.prompt is None else None, self.safety_prompt,
                              template=self.template, show_goal=self.show_goal, actions=self.actions)
        return with_confidence_request(msgs) if self.confidence else msgs

    def plan(self, tasks: Sequence[Task]) -> List[PlanOutput]:
        by_id = {o.task_id: o for o in self.plan_iter(tasks)}
        return [by_id[t.id] for t in tasks]

    def plan_iter(self, tasks: Sequence[Task], stop: Any = None) -> Iterator[PlanOutput]:
        prompts = [self.messages(t) for t in tasks]
        settings = self.settings
        sent = self.backend.request_settings(settings)
        for i, g in self.backend.generate_iter(prompts, settings, stop):
            yield PlanOutput(tasks[i].id, g.text, g.error, prompts[i], round(g.latency_s, 4), g.attempts, g.usage,
                             g.finish_reason, g.cache_hit, sent, confidence=self.confidence or None)

    def release(self) -> None:
        self.backend.release()


def _keys_of(factory: Any) -> Optional[List[str]]:
    """The keyword arguments a class or function takes (None when it takes any)."""
    import inspect

    keys: List[str] = []
    for cls in (factory.__mro__ if isinstance(factory, type) else (factory,)):
        init = cls.__init__ if isinstance(factory, type) else cls
        if isinstance(factory, type) and "__init__" not in vars(cls):
            continue
        for p in inspect.signature(init).parameters.values():
            if p.kind is p.VAR_KEYWORD:
                if not isinstance(factory, type) or cls is object:
                    return None
                continue
            if p.name not in ("self", "arg", "sleep") and p.kind is not p.VAR_POSITIONAL and p.name not in keys:
                keys.append(p.name)
        if isinstance(factory, type) and not any(p.kind is p.VAR_KEYWORD
                                                 for p in inspect.signature(init).parameters.values()):
            break
    return keys


def _check_keys(planner: "GeneratingPlanner", backend: str, extra: Dict[str, Any]) -> None:
    """Keys a generating planner passes on to its backend must be the backend's: a misspelled one
    (``few-shot:temprature=0.5``) is the planner's error, naming it and the valid keys."""
    from safebeal.planners.backends import BACKENDS
    from safebeal.registry import parse_spec

    bname = parse_spec(backend)[0]
    try:
        bkeys = _keys_of(BACKENDS.get(bname).factory)
    except SafebealError:
        return  # an unknown backend: its own error follows
    if bkeys is None:
        return
    unknown = sorted(k for k in extra if k not in bkeys)
    if unknown:
        own = [k for k in (_keys_of(type(planner)) or []) if k != "backend_kwargs"]
        raise SafebealError(f"planner {planner.name!r}: unknown key{'s' if len(unknown) > 1 else ''} "
                            f"{', '.join(repr(k) for k in unknown)}; valid keys: {', '.join(own)} "
                            f"(and the {bname} backend's: {', '.join(k for k in bkeys if k not in own)})")


def no_backend_message(planner: str) -> str:
    """The error of a generating planner given no backend (the mock is used only when named)."""
    from safebeal.planners.backends import BACKENDS

    return (f"planner {planner!r} generates its plans and has no backend: name one with --backend or "
            f"{planner}:backend=... (backends: {', '.join(BACKENDS.names())}; 'mock' echoes the prompt, for tests)")


def _flag(value: Any, name: str) -> bool:
    """A boolean planner option as the spec gives it (``true``/``false`` are parsed already; 1/0 accepted)."""
    if isinstance(value, bool):
        return value
    if value in (0, 1):
        return bool(value)
    raise SafebealError(f"{name} must be true or false, got {value!r}")


def with_confidence_request(messages: List[Dict[str, str]]) -> List[Dict[str, str]]:
    """``messages`` with the per-step confidence request (``templates/confidence.txt``) added to the system message
    (a system message is added where the prompt style has none)."""
    from safebeal.planners.texts import read_template

    ask = read_template("confidence").strip()
    msgs = [dict(m) for m in messages]
    if msgs and msgs[0]["role"] == "system":
        msgs[0]["content"] = msgs[0]["content"] + "\n\n" + ask
        return msgs
    return [{"role": "system", "content": ask}] + msgs


@PLANNERS.register("zero-shot", help="system prompt only")
class ZeroShotPlanner(GeneratingPlanner):
    name = "zero-shot"


@PLANNERS.register("few-shot", help="system prompt plus a random training example")
class FewShotPlanner(GeneratingPlanner):
    name = "few-shot"

    def example_for(self, task: Task) -> Optional[Task]:
        pool = [e for e in _train_examples(self.examples) if e.id != task.id]
        rng = random.Random(f"{self.seed}:{task.id}")  # per-task, so results do not depend on batch order
        return rng.choice(pool) if pool else None


@PLANNERS.register("llm-planner", help="system prompt plus the most similar training example (BM25); "
                                        "replan=k: execute as it plans, re-prompt on a failed step (k rounds)")
class LLMPlanner(GeneratingPlanner):
    """LLM-Planner: the most similar training example in context (BM25), and with ``replan=k`` its dynamic
    re-planning (:mod:`safebeal.planners.replan`): each plan is executed as it is generated and a failed step is
    sent back with the error and the objects observed, for up to k rounds."""

    name = "llm-planner"

    def __init__(self, *args: Any, replan: Any = 0, **kwargs: Any):
        from safebeal.planners.replan import MAX_REPLAN

        try:
            k = int(replan)
        except (TypeError, ValueError):
            raise SafebealError(f"llm-planner: replan must be a whole number of rounds, got {replan!r}") from None
        if isinstance(replan, bool) or not 0 <= k <= MAX_REPLAN or str(replan).strip() != str(k):
            raise SafebealError(f"llm-planner: replan must be 0 to {MAX_REPLAN}, got {replan!r}")
        super().__init__(*args, **kwargs)
        self.replan = k
        if k:
            self.spec += f",replan={k}"
        self._index = None

    def config(self) -> Dict[str, Any]:
        return {**super().config(), "replan": self.replan}

    def plan_iter(self, tasks: Sequence[Task], stop: Any = None) -> Iterator[PlanOutput]:
        if not self.replan:
            yield from super().plan_iter(tasks, stop)
            return
        from safebeal.planners.replan import replan_task

        by_id = {t.id: t for t in tasks}
        for out in super().plan_iter(tasks, stop):
            if stop is not None and stop.is_set():
                yield out
                continue
            text, conv, record = replan_task(by_id[out.task_id], out, out.prompt or [], self.backend,
                                             dict(self.settings), self.replan, self.actions)
            yield replace(out, text=text, error=out.error if text is None else None, prompt=conv,
                          extras={**out.extras, self.name: record})

    summary_order = 30

    @classmethod
    def summarize(cls, episodes: Sequence[Any], safe: Any) -> Dict[str, Any]:
        """``replan``: what ``replan=k`` did: plans re-prompted at least once, rounds in all, plans that failed
        first and ran to the end after re-planning."""
        recs = [extra_of(e, cls.name) or {} for e in episodes]
        rounds = [int(r.get("n_rounds") or 0) for r in recs]
        recovered = sum(1 for e, r in zip(episodes, recs) if r.get("n_rounds") and _field(e, "executable") is True)
        return {"replan": {"plans": len(episodes), "replanned": sum(1 for n in rounds if n), "rounds": sum(rounds),
                           "recovered": recovered}}

    def _bm25(self):
        if self._index is None:
            from rank_bm25 import BM25Okapi

            pool = _train_examples(self.examples)
            self._index = (BM25Okapi([_tokens(e) for e in pool]), pool)
        return self._index

    def example_for(self, task: Task) -> Optional[Task]:
        bm25, pool = self._bm25()
        if not pool:
            return None
        scores = bm25.get_scores(_tokens(task))
        order = sorted(range(len(pool)), key=lambda i: (-scores[i], pool[i].id))
        for i in order:
            if pool[i].id != task.id:
                return pool[i]
        return None


def _tokens(t: Task) -> List[str]:
    import re

    return re.findall(r"[a-z0-9]+", f"{t.instruction} {t.instruction} {t.description}".lower())
