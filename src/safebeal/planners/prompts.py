"""Prompt building from the template files in ``planners/templates/`` (read by :mod:`safebeal.planners.texts`).

Two prompt styles (``template=``), each a pair of files:

- ``default``: ``system.txt`` (the format rules) + ``user.txt`` (task, description, objects one per line, the
  action vocabulary, an optional example): the SafePlan-Bench prompt for instruction-following LLMs;
- ``compact``: no system message + ``compact.txt`` (the task and its relevant objects with ids on one line, as
  they are written in plans: ``<stove> (5)``): for small models trained from scratch on this project's data
  (``experiments/small_scale``), whose context is short and which never see the vocabulary spelled out.

Every template is filled with ``str.format`` from the same fields (``task``, ``description``, ``observation``,
``objects``, ``objects_inline``, ``actions``, ``goal``, ``example``); a template uses the ones it needs.

``observation`` is the task's initial scene as the planner sees it (:mod:`safebeal.planners.observation`): the
listed objects with their properties, states and locations, and the agent's room, in the ``full`` form for the
default style and the ``compact`` form for the compact one. An example plan carries its own observation, in
the same form, and writes its ids as the instructions ask (``(319)``, not ActivityPrograms' ``(1.319)``).
``goal`` is empty unless ``show_goal=True`` and the task has a symbolic goal (``goal.txt``, in virtualhome-eval's
wording: node goals, edge goals, action goals).

A task whose dataset measures refusals (``meta["refusal_prompt"]``: ``saferisks-explicit``) adds ``refusal.txt`` to
the system message: the structured refusal, a first line ``[REFUSE] <reason>`` instead of a plan, which
:func:`safebeal.bench.requests.refusal_signal` reads (signal ``action``; a refusal phrase is the fallback). Other
datasets' prompts are unchanged.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from safebeal.datasets.base import Task
from safebeal.errors import SafebealError
from safebeal.planners.observation import observe
from safebeal.planners.texts import read_template
from safebeal.scene.actions import ACTION_ARITY
from safebeal.scene.extensions import DEFAULT_ACTIONS, check_actions, extensions

#: the actions offered to planners (the vocabulary minus aliases and rarely meaningful ones)
PROMPT_ACTIONS = [a for a in sorted(ACTION_ARITY) if a not in ("LOOKAT_SHORT", "LOOKAT_MEDIUM", "LOOKAT_LONG")]


#: prompt style -> (system template or None, user template); see the module docstring
PROMPT_TEMPLATES: Dict[str, Tuple[Optional[str], str]] = {
    "default": ("system", "user"),
    "compact": (None, "compact"),
}
#: prompt style -> the observation form it shows
OBSERVATION_FORMS: Dict[str, str] = {"default": "full", "compact": "compact"}


def objects_block(task: Task) -> str:
    return "\n".join(f"{name}, {i}" for name, i in task.objects)


def objects_inline(task: Task) -> str:
    """The objects on one line, written as plans write them: ``<kitchen> (11) <stove> (5)``."""
    return " ".join(f"<{name}> ({i})" for name, i in task.objects)


def actions_block(actions: str = DEFAULT_ACTIONS) -> str:
    """The action vocabulary as the prompt lists it: ``WALK (1), ...``; with the extensions on (``extended``, the
    default) followed by the extended actions, each with its arguments and what it does."""
    base = ", ".join(f"{a} ({ACTION_ARITY[a]})" for a in PROMPT_ACTIONS)
    if check_actions(actions) == "vh":
        return base
    ext = extensions()
    extra = "; ".join(f"{spec.signature()}: {spec.summary}" for spec in ext.actions.values())
    return f"{base}. Extended actions: {extra}"


def observation_text(task: Task, form: str = "full") -> str:
    """The task's initial scene as its planner sees it (see :mod:`safebeal.planners.observation`)."""

    if task.scene is None and not task.objects:
        return ""
    return observe(task.get_scene() if task.scene is not None else None, task.objects).render(form)


def reference_lines(reference: Optional[str]) -> List[str]:
    """A reference plan in the format the instructions ask for: ``[ACTION] <name> (id)`` per line."""
    from safebeal.scene.script import parse_script

    if not reference:
        return []
    return [str(ln) for ln in parse_script(reference, "reference plan")]


def example_block(example: Optional[Task], form: str = "full") -> str:
    if example is None:
        return ""
    return read_template("example").format(task=example.instruction, observation=observation_text(example, form),
                                           objects=objects_block(example),
                                           plan=completion_text(reference_lines(example.reference)))


def goal_block(task: Task) -> str:
    """The task's symbolic goal as virtualhome-eval's action-sequencing prompt states it ("" without one)."""
    from safebeal.datasets.goals import GoalSpec

    goal = task.get_goal() if task.goal is not None else None
    if not isinstance(goal, GoalSpec):
        return ""
    name = dict((i, n) for n, i in task.objects)
    scene = task.get_scene() if task.scene is not None else None

    def ref(i: int) -> str:
        n = name.get(i) or (scene.node(i).class_name if scene is not None and scene.node(i) is not None else "object")
        return f"<{n}> ({i})"

    nodes = "\n".join(f"{ref(i)} is {s}" for i, s in goal.nodes)
    edges = "\n".join(f"{ref(f)} is {r} to {ref(t)}" for f, r, t in goal.edges)
    if goal.actions:
        acts = "The following action(s) should be included:\n" + "\n".join(a.replace("|", " or ") for a in goal.actions)
    else:
        acts = "There is no action requirement."
    return read_template("goal").format(node_goals=nodes, edge_goals=edges, action_goals=acts)


def prompt_style(name: str) -> Tuple[Optional[str], str]:
    """(system template, user template) of a prompt style; SafebealError naming the known ones."""
    try:
        return PROMPT_TEMPLATES[name]
    except KeyError:
        raise SafebealError(f"unknown prompt template {name!r}; known: {', '.join(PROMPT_TEMPLATES)}") from None


def build_messages(task: Task, example: Optional[Task] = None, safety_prompt: bool = False,
                   template: str = "default", show_goal: bool = False, actions: str = DEFAULT_ACTIONS) -> List[Dict[str, str]]:
    """Chat messages for one task: system prompt (+ safety reminder), then the task with the observation of
    its scene, the action vocabulary, the goal (``show_goal``) and an optional example. ``template`` picks the
    prompt style (``default`` or ``compact``, see the module docstring); the safety reminder is the system
    message of either style."""
    system_name, user_name = prompt_style(template)
    if task.prompt is not None:  # datasets with their own prompt (WorldModel)
        system = read_template("safety").strip() if safety_prompt else ""
        msgs = [{"role": "system", "content": system}] if system else []
        return msgs + [{"role": "user", "content": task.prompt}]
    user_text = read_template(user_name)
    if example is not None and "{example}" not in user_text:
        raise SafebealError(f"prompt template {template!r} has no place for an example: use it with zero-shot")
    parts = [read_template(system_name).strip()] if system_name else []
    if safety_prompt:
        parts.append(read_template("safety").strip())
    if task.meta.get("refusal_prompt"):  # a dataset of requests that may be refused: the structured refusal
        parts.append(read_template("refusal").strip())
    form = OBSERVATION_FORMS[template]
    goal = goal_block(task) if show_goal else ""
    if goal and "{goal}" not in user_text:
        raise SafebealError(f"prompt template {template!r} has no place for the goal: use it without show_goal")
    user = user_text.format(
        task=task.instruction,
        description=task.description,
        observation=observation_text(task, form),
        objects=objects_block(task),
        objects_inline=objects_inline(task),
        actions=actions_block(actions),
        goal=goal,
        example=example_block(example, form),
    )
    msgs = [{"role": "system", "content": "\n\n".join(parts)}] if parts else []
    return msgs + [{"role": "user", "content": user}]


def completion_text(script_lines: List[str]) -> str:
    """How a plan is written as a model completion (training targets use the same form)."""
    return "\n".join(script_lines)
