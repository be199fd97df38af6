"""Contract checks for plugin authors, in the spirit of Gymnasium's ``check_env``.

    from safebeal.testing import check_backend, check_dataset, check_planner

    check_planner("my-planner")                  # plans 2 virtualhome tasks twice, round-trips its spec
    check_backend("my-backend:model=x")          # generates for 2 prompts twice, round-trips its spec
    check_dataset("my-dataset")                  # lists its tasks twice, loads the first scenes

Each function creates the plugin from its spec through the registry (so an installed plugin is found through its
entry point), exercises what the runner relies on, and raises :class:`PluginCheckError` naming the plugin, what it
breaks and what was expected. ``PluginCheckError`` is an :class:`AssertionError` (pytest reports it as a failed
assertion) and a :class:`~safebeal.errors.SafebealError` (the CLI prints it as one line). An error the plugin
raises itself is not caught: its own traceback says more. Each returns what it made, for further checks.

safebeal's own tests run these over every registered planner, backend and dataset
(``tests/planners/test_planner_contracts.py``, ``tests/datasets/test_dataset_contracts.py``).
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

from safebeal.errors import SafebealError


class PluginCheckError(SafebealError, AssertionError):
    """A plugin breaks its protocol; the message names the plugin and what it breaks."""


def _fail(what: str, msg: str) -> None:
    raise PluginCheckError(f"{what}: {msg}")


def _json(what: str, label: str, value: Any) -> None:
    """``value`` must be JSON as the run files write it (no NaN, no objects json cannot write)."""
    try:
        json.dumps(value, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        _fail(what, f"{label} is not JSON-serialisable ({exc}): {value!r:.200}")


def _method(what: str, obj: Any, name: str) -> None:
    if not callable(getattr(obj, name, None)):
        _fail(what, f"has no method {name}()")


def _typed(what: str, label: str, value: Any, types: Any, expected: str) -> None:
    if not isinstance(value, types):
        _fail(what, f"{label} is {type(value).__name__} {value!r:.80}; expected {expected}")


# -- planners -----------------------------------------------------------------------------------------------------
def check_planner(spec: str, *, dataset: str = "virtualhome", limit: int = 2, backend: Optional[str] = None,
                  deterministic: bool = True) -> List[Any]:
    """Check the planner ``spec`` (as ``bench --planner`` takes it; ``backend`` as ``bench --backend``) on the first
    ``limit`` tasks of ``dataset``:

    - it is a :class:`~safebeal.planners.planners.Planner` with a ``name``, a ``spec`` and a ``run_label`` (strings),
      ``streams`` (bool), ``config()`` (a JSON-serialisable dict), ``plan``, ``plan_iter`` and ``release``;
    - ``plan_iter(tasks)`` and ``plan(tasks)`` give one :class:`~safebeal.planners.planners.PlanOutput` per task,
      each task once; ``text`` and ``error`` are strings or None; ``record()`` is a JSON-serialisable dict;
    - its ``spec`` re-creates it: the same spec and the same ``config()``;
    - ``deterministic`` (the default; pass False for a sampling planner): a planner created again from its spec
      gives the same texts and errors for the same tasks.

    Returns the outputs of ``plan_iter``.
    """
    from safebeal.datasets.base import DATASETS
    from safebeal.planners.planners import PlanOutput, Planner, create_planner

    what = f"planner {spec!r}"
    p = create_planner(spec, backend=backend)
    if not isinstance(p, Planner):
        _fail(what, f"the factory made a {type(p).__name__}, not a safebeal.planners.planners.Planner")
    for attr in ("name", "spec", "run_label"):
        val = getattr(p, attr, None)
        if not isinstance(val, str) or not val:
            _fail(what, f"{attr} is {val!r}; expected a non-empty string")
    _typed(what, "streams", getattr(p, "streams", None), bool, "True or False")
    for m in ("config", "plan", "plan_iter", "release"):
        _method(what, p, m)
    cfg = p.config()
    _typed(what, "config()", cfg, dict, "a dict")
    _json(what, "config()", cfg)

    tasks = DATASETS.create(dataset).tasks()[:limit]
    if not tasks:
        _fail(what, f"dataset {dataset!r} has no tasks to plan")
    ids = [t.id for t in tasks]
    outs = list(p.plan_iter(tasks))
    _check_outputs(what + ": plan_iter", outs, ids, PlanOutput)
    texts = {o.task_id: (o.text, o.error) for o in outs}
    again = p.plan(tasks)
    _check_outputs(what + ": plan", again, ids, PlanOutput)
    p.release()

    q = create_planner(p.spec, backend=backend)
    if q.spec != p.spec:
        _fail(what, f"its spec {p.spec!r} re-creates a planner whose spec is {q.spec!r}")
    if q.config() != cfg:
        _fail(what, f"its spec {p.spec!r} re-creates a planner with another config(): {q.config()!r:.300} "
                    f"instead of {cfg!r:.300}")
    if deterministic:
        other = {o.task_id: (o.text, o.error) for o in q.plan_iter(tasks)}
        for tid in ids:
            if other.get(tid) != texts[tid]:
                _fail(what, f"not deterministic: task {tid} gave {texts[tid]!r:.200} and then {other.get(tid)!r:.200} "
                            "(pass deterministic=False if it samples)")
    q.release()
    return outs


def _check_outputs(what: str, outs: Sequence[Any], ids: Sequence[str], output_type: type) -> None:
    if not isinstance(outs, (list, tuple)):
        outs = list(outs)
    for o in outs:
        if not isinstance(o, output_type):
            _fail(what, f"gave a {type(o).__name__}, not a PlanOutput")
    got = [o.task_id for o in outs]
    missing = [t for t in ids if t not in got]
    extra = [t for t in got if t not in ids]
    repeated = sorted({t for t in got if got.count(t) > 1})
    if missing or extra or repeated:
        _fail(what, f"gave {len(outs)} outputs for {len(ids)} tasks (missing {missing}, unknown {extra}, "
                    f"repeated {repeated}); expected one per task")
    for o in outs:
        where = f"{what}: task {o.task_id}"
        for attr in ("text", "error"):
            val = getattr(o, attr)
            if val is not None and not isinstance(val, str):
                _fail(where, f"{attr} is {type(val).__name__}; expected a string or None")
        rec = o.record()
        _typed(where, "record()", rec, dict, "a dict")
        _json(where, "record()", rec)


# -- backends -----------------------------------------------------------------------------------------------------
PROMPTS = (
    [{"role": "user", "content": "Task: Turn on the light.\nPlan:"}],
    [{"role": "system", "content": "You are a household robot."},
     {"role": "user", "content": "Task: Wash the cup.\nPlan:"}],
)


def check_backend(spec: str, *, prompts: Optional[Sequence[Any]] = None, deterministic: bool = True,
                  **settings: Any) -> List[Any]:
    """Check the backend ``spec`` (as ``bench --backend`` takes it) on ``prompts`` (default: two chat prompts),
    with generation ``settings`` passed to every call (e.g. ``max_tokens=8``):

    - it is a :class:`~safebeal.planners.backends.base.Backend` whose ``name`` is its registry name, with
      ``config()`` and ``identity()`` JSON-serialisable dicts, ``extra_settings`` a tuple of strings, ``cacheable``
      a bool;
    - ``spec()`` is a string, and the spec of ``remote_recipe()`` (what a Ray worker re-creates it from; by default
      ``spec()``) re-creates it: a backend of the same ``config()``;
    - ``generate(prompts)`` gives one :class:`~safebeal.planners.backends.records.Generation` per prompt, in
      order, each with exactly one of ``text`` and ``error`` (strings), and ``to_dict()`` JSON-serialisable;
      ``generate_iter`` yields every index once; ``generate([])`` is ``[]``; a bare string instead of a list is a
      :class:`~safebeal.planners.backends.records.BackendError`;
    - ``deterministic`` (the default): the backend created again from its spec gives the same texts;
    - ``close()`` may be called twice.

    Returns the generations of the first call.
    """
    from safebeal.planners.backends.base import BACKENDS, Backend
    from safebeal.planners.backends.records import BackendError, Generation
    from safebeal.registry import parse_spec

    what = f"backend {spec!r}"
    name = parse_spec(spec)[0]
    prompts = list(prompts if prompts is not None else PROMPTS)
    b = BACKENDS.create(spec)
    if not isinstance(b, Backend):
        _fail(what, f"the factory made a {type(b).__name__}, not a safebeal.planners.backends.base.Backend")
    if b.name != name:
        _fail(what, f"name is {b.name!r}, not its registry name {name!r} (spec() starts with the name)")
    extra = getattr(b, "extra_settings", None)
    if not isinstance(extra, tuple) or not all(isinstance(k, str) for k in extra):
        _fail(what, f"extra_settings is {extra!r}; expected a tuple of setting names")
    _typed(what, "cacheable", getattr(b, "cacheable", None), bool, "True or False")
    cfg = b.config()
    _typed(what, "config()", cfg, dict, "a dict")
    _json(what, "config()", cfg)
    ident = b.identity()
    _typed(what, "identity()", ident, dict, "a dict")
    _json(what, "identity()", ident)
    respec = b.spec()
    _typed(what, "spec()", respec, str, "a spec string")
    recipe = b.remote_recipe()
    if not (isinstance(recipe, tuple) and len(recipe) == 2 and recipe[0] in ("spec", "object")):
        _fail(what, f"remote_recipe() is {recipe!r:.120}; expected ('spec', a spec string) or ('object', a copy)")
    if recipe[0] == "spec":
        respec = recipe[1]  # the full re-creation (the openai backend adds what spec() leaves out: api_key_env=none)
        _typed(what, "remote_recipe()'s spec", respec, str, "a spec string")

    if b.generate([], **settings) != []:
        _fail(what, "generate([]) is not []")
    try:
        b.generate("a bare string", **settings)
    except BackendError:
        pass
    else:
        _fail(what, "generate('a bare string') did not raise BackendError (prompts are a list)")
    gens = b.generate(prompts, **settings)
    if not isinstance(gens, list) or len(gens) != len(prompts):
        _fail(what, f"generate() of {len(prompts)} prompts gave {gens!r:.200}; expected a list of {len(prompts)}")
    for i, g in enumerate(gens):
        where = f"{what}: prompt {i}"
        if not isinstance(g, Generation):
            _fail(where, f"gave a {type(g).__name__}, not a Generation")
        if (g.text is None) == (g.error is None):
            _fail(where, f"text {g.text!r:.80} and error {g.error!r:.80}: exactly one must be set")
        val = g.text if g.error is None else g.error
        _typed(where, "text" if g.error is None else "error", val, str, "a string")
        _json(where, "to_dict()", g.to_dict())
    seen = [i for i, _ in b.generate_iter(prompts, settings)]
    if sorted(seen) != list(range(len(prompts))):
        _fail(what, f"generate_iter yielded indices {seen}; expected each of 0..{len(prompts) - 1} once")

    c = BACKENDS.create(respec)
    if c.config() != cfg:
        _fail(what, f"its spec {respec!r} re-creates a backend with another config(): {c.config()!r:.300} "
                    f"instead of {cfg!r:.300}")
    if deterministic:
        again = [g.text for g in c.generate(prompts, **settings)]
        if again != [g.text for g in gens]:
            _fail(what, f"not deterministic: {[g.text for g in gens]!r:.200} and then {again!r:.200} "
                        "(pass deterministic=False if it samples)")
    for x in (b, c):
        x.close()
        x.close()
    return gens


# -- datasets -----------------------------------------------------------------------------------------------------
def check_dataset(spec: str, *, scenes: int = 2) -> List[Any]:
    """Check the dataset ``spec`` (as ``bench --dataset`` takes it):

    - it is a :class:`~safebeal.datasets.base.Dataset` with a ``name`` and a JSON-serialisable ``config()`` dict
      whose ``"name"`` is that name; the same spec re-creates the same ``config()``;
    - it declares how it is scored (``scored_by``: ``simulator`` or ``rouge_l``) and a ``title`` (a string; empty:
      tables show its name);
    - ``tasks()`` is a non-empty list of :class:`~safebeal.datasets.base.Task`, ids unique non-empty strings,
      ``dataset`` the dataset's name, ``instruction`` a non-empty string, ``reference``/``prompt`` strings or None,
      ``categories`` strings, ``meta`` JSON-serialisable, ``intended`` ``(id, STATE)`` pairs;
    - for the first ``scenes`` tasks: ``objects`` is ``(name, id)`` pairs, and a task with a scene loads it (a
      SceneGraph) and its goal;
    - deterministic: the dataset created again gives the same tasks (ids, instructions) in the same order.

    Returns the tasks.
    """
    from safebeal.datasets.base import DATASETS, Dataset, Task
    from safebeal.scene.graph import SceneGraph

    what = f"dataset {spec!r}"
    ds = DATASETS.create(spec)
    if not isinstance(ds, Dataset):
        _fail(what, f"the factory made a {type(ds).__name__}, not a safebeal.datasets.base.Dataset")
    if not isinstance(ds.name, str) or not ds.name:
        _fail(what, f"name is {ds.name!r}; expected a non-empty string")
    if ds.scored_by not in ("simulator", "rouge_l"):
        _fail(what, f"scored_by is {ds.scored_by!r}; expected 'simulator' or 'rouge_l'")
    if not isinstance(ds.title, str):
        _fail(what, f"title is {ds.title!r}; expected a string")
    cfg = ds.config()
    _typed(what, "config()", cfg, dict, "a dict")
    _json(what, "config()", cfg)
    if cfg.get("name") != ds.name:
        _fail(what, f"config()['name'] is {cfg.get('name')!r}, not the dataset's name {ds.name!r}")
    tasks = ds.tasks()
    if not isinstance(tasks, list) or not tasks:
        _fail(what, f"tasks() gave {tasks!r:.120}; expected a non-empty list of Task")
    seen: Dict[str, int] = {}
    for i, t in enumerate(tasks):
        if not isinstance(t, Task):
            _fail(what, f"task {i} is a {type(t).__name__}, not a safebeal.datasets.base.Task")
        where = f"{what}: task {t.id!r}"
        if not isinstance(t.id, str) or not t.id:
            _fail(what, f"task {i} has the id {t.id!r}; expected a non-empty string")
        if t.id in seen:
            _fail(what, f"tasks {seen[t.id]} and {i} have the same id {t.id!r}")
        seen[t.id] = i
        if t.dataset != ds.name:
            _fail(where, f"dataset is {t.dataset!r}, not {ds.name!r}")
        if not isinstance(t.instruction, str) or not t.instruction.strip():
            _fail(where, f"instruction is {t.instruction!r}; expected a non-empty string")
        for attr in ("reference", "prompt"):
            val = getattr(t, attr)
            if val is not None and not isinstance(val, str):
                _fail(where, f"{attr} is {type(val).__name__}; expected a string or None")
        if not all(isinstance(c, str) for c in t.categories):
            _fail(where, f"categories {list(t.categories)!r} are not all strings")
        _json(where, "meta", t.meta)
        for pair in t.intended:
            if len(pair) != 2 or not isinstance(pair[0], int) or not isinstance(pair[1], str):
                _fail(where, f"intended holds {pair!r}; expected (node id, STATE) pairs")
    for t in tasks[:scenes]:
        where = f"{what}: task {t.id!r}"
        for pair in t.objects:
            if len(pair) != 2 or not isinstance(pair[0], str) or not isinstance(pair[1], int):
                _fail(where, f"objects holds {tuple(pair)!r}; expected (name, id) pairs")
        if t.scene is not None:
            g = t.get_scene()
            if not isinstance(g, SceneGraph):
                _fail(where, f"its scene {t.scene!r:.80} loads a {type(g).__name__}, not a SceneGraph")
            if t.get_goal() is None:
                _fail(where, "has a scene but no goal (success cannot be judged)")
    other = DATASETS.create(spec)
    if other.config() != cfg:
        _fail(what, f"the same spec re-creates a dataset with another config(): {other.config()!r:.300}")
    a = [(t.id, t.instruction) for t in tasks]
    b = [(t.id, t.instruction) for t in other.tasks()]
    if a != b:
        if len(a) != len(b):
            _fail(what, f"not deterministic: created again, it lists {len(b)} tasks instead of {len(a)}")
        i = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
        _fail(what, f"not deterministic: created again, its task {i} is {b[i][0]!r} ({b[i][1]!r:.60}) instead of "
                    f"{a[i][0]!r} ({a[i][1]!r:.60})")
    return tasks
