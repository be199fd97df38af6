"""The adversarial-LLM pair source: a red-teaming prompt on any backend asks for a plausible plan that keeps the
safe plan's first actions and then creates a hazard of a drawn category; each output is judged like any unsafe plan
(:class:`safebeal.align.pair_judge.PairMaker`). Templates: ``align/templates/adversarial_{system,user}.txt``."""

from __future__ import annotations

from functools import lru_cache
from typing import Dict, List, Protocol, Sequence, Tuple

from safebeal.align.pair_judge import JudgeSettings, PairMaker, PlanResult, SafePlan, parse_plan_lines, plan_rng, \
    prompt_task, run_plan
from safebeal.planners.prompts import actions_block, completion_text, objects_block
from safebeal.resources import PACKAGE_DATA
from safebeal.safety.taxonomy import CATEGORIES, SLUGS
from safebeal.scene import SceneEnv, ScriptSyntaxError

TEMPLATES = PACKAGE_DATA / "align" / "templates"


#: the hazard attributes whose objects the adversarial prompt lists for each category
CATEGORY_ATTRS = {
    "fire_heat": ("heat_source", "flammable", "metal"),
    "electric_shock": ("electrical", "water_source"),
    "slip_trip_fall": ("liquid",),
    "water_hazard": ("water_source",),
    "breakage": ("fragile",),
    "poisoning": ("toxic", "food_container", "cold_storage"),
    "cut_injury": ("sharp",),
    "food_safety": ("cold_storage", "perishable"),
}


@lru_cache(maxsize=None)
def _template(name: str) -> str:
    return (TEMPLATES / f"{name}.txt").read_text()


class LLMSettings(JudgeSettings, Protocol):
    """What the LLM source reads of a build's settings (a :class:`safebeal.align.pairs.BuildConfig` has them)."""

    seed: int
    llm_per_plan: int


def adversarial_messages(plan: SafePlan, category: str, keep: int, kb, how: str = "task") -> List[Dict[str, str]]:
    """The red-teaming prompt: the task, the objects the pair's prompt lists (and, among them, those relevant to
    ``category``), and the safe plan. Only listed objects are offered: an unsafe plan that uses an object the pair's
    prompt does not list is rejected (``unlisted_object``), since it would teach "never use unlisted objects"."""
    state = SceneEnv(plan.scene).reset()
    task = prompt_task(plan, how=how)
    attrs = set(CATEGORY_ATTRS[category])
    relevant = [f"<{c}> ({i})" for c, i in task.objects
                if state.node(i) is not None and attrs & kb.attrs(c, state.node(i).properties)]
    cat = CATEGORIES[category]
    user = _template("adversarial_user").format(
        task=plan.task.instruction, description=plan.task.description, objects=objects_block(task),
        hazard_objects=("Objects relevant to this hazard: " + ", ".join(relevant)) if relevant else "",
        actions=actions_block(), safe_plan=completion_text([str(ln) for ln in plan.lines]), keep=keep,
        category=cat.title, category_description=cat.description,
    )
    return [{"role": "system", "content": _template("adversarial_system").strip()}, {"role": "user", "content": user}]


def llm_pairs(plans: Sequence[SafePlan], backend_spec: str, det, cfg: LLMSettings,
              results: Dict[str, PlanResult]) -> None:
    """One batch of adversarial prompts (``llm_per_plan`` per safe plan); each output is judged like any unsafe plan."""
    from safebeal.planners.backends import BACKENDS

    backend = BACKENDS.create(backend_spec) if isinstance(backend_spec, str) else backend_spec
    source = f"llm:{getattr(backend, 'name', 'backend')}"
    jobs: List[Tuple[SafePlan, List[Dict[str, str]]]] = []
    for plan in plans:
        rng = plan_rng(cfg.seed, plan.key, "llm")
        for _ in range(cfg.llm_per_plan):
            category = rng.choice(SLUGS)
            keep = rng.randint(1, max(1, len(plan.lines) - 1))
            jobs.append((plan, adversarial_messages(plan, category, keep, det.rules.kb, cfg.prompt_objects)))
    if not jobs:
        return
    gens = backend.generate([m for _, m in jobs], max_new_tokens=512, temperature=0.0)
    for (plan, _), gen in zip(jobs, gens):
        res = results[plan.key]
        if not gen.text:
            res.tried[source] += 1
            res.rejections[(source, "llm_no_output")] += 1
            continue
        try:
            lines = parse_plan_lines(gen.text.splitlines(), source=f"{plan.key} {source}")
        except ScriptSyntaxError:
            res.tried[source] += 1
            res.rejections[(source, "unsafe_unparseable")] += 1
            continue
        traj = run_plan(plan.scene, plan.lines)
        maker = PairMaker(plan, traj, det, cfg, res)
        maker.seen |= {tuple(p.rejected.split("\n")) for p in res.pairs}
        maker.offer(lines, source)
