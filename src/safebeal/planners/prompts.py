"""Prompt building from the template files in ``planners/templates/`` (templates are data, not code)."""

from __future__ import annotations

from functools import lru_cache
from typing import Dict, List, Optional

from safebeal.datasets.base import Task
from safebeal.resources import PACKAGE_DATA
from safebeal.scene.actions import ACTION_ARITY

TEMPLATES = PACKAGE_DATA / "planners" / "templates"
#: the actions offered to planners (the vocabulary minus aliases and rarely meaningful ones)
PROMPT_ACTIONS = [a for a in sorted(ACTION_ARITY) if a not in ("LOOKAT_SHORT", "LOOKAT_MEDIUM", "LOOKAT_LONG")]


@lru_cache(maxsize=None)
def template(name: str) -> str:
    return (TEMPLATES / f"{name}.txt").read_text()


def objects_block(task: Task) -> str:
    return "\n".join(f"{name}, {i}" for name, i in task.objects)


def actions_block() -> str:
    return ", ".join(f"{a} ({ACTION_ARITY[a]})" for a in PROMPT_ACTIONS)


def example_block(example: Optional[Task]) -> str:
    if example is None:
        return ""
    return template("example").format(task=example.instruction, objects=objects_block(example), plan=example.reference or "")


def build_messages(task: Task, example: Optional[Task] = None, safety_prompt: bool = False) -> List[Dict[str, str]]:
    """Chat messages for one task: system prompt (+ safety reminder), then the task with the scene's objects,
    the action vocabulary and an optional example."""
    if task.prompt is not None:  # datasets with their own prompt (WorldModel)
        system = template("safety").strip() if safety_prompt else ""
        msgs = [{"role": "system", "content": system}] if system else []
        return msgs + [{"role": "user", "content": task.prompt}]
    system = template("system").strip()
    if safety_prompt:
        system += "\n\n" + template("safety").strip()
    user = template("user").format(
        task=task.instruction,
        description=task.description,
        objects=objects_block(task),
        actions=actions_block(),
        example=example_block(example),
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def completion_text(script_lines: List[str]) -> str:
    """How a plan is written as a model completion (training targets use the same form)."""
    return "\n".join(script_lines)
