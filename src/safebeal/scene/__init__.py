"""The scene adapter: the only part of safebeal that touches the VirtualHome simulator.

- :func:`load_scene` -> :class:`SceneGraph` (cached; ``activity:<id>``, ``home:<seed>`` or a JSON path: the
  sources in :mod:`safebeal.scene.sources`; procedural homes: :mod:`safebeal.scene.homes`)
- :func:`parse_script` -> :class:`Script` of :class:`ScriptLine`
- :class:`SceneEnv` (reset / step / state / info) and :func:`execute` -> :class:`Trajectory`
- :class:`StateView`: typed read-only view of a state
"""

from safebeal.scene.actions import ACTION_ARITY, ACTIONS
from safebeal.scene.env import EpisodeOver, SceneEnv, StepResult, Trajectory, execute
from safebeal.scene.graph import NodeView, SceneGraph, SceneLoadError, clear_cache
from safebeal.scene.sources import load_scene
from safebeal.scene.script import (
    STEP_ERROR_KINDS,
    Script,
    ScriptLine,
    ScriptObject,
    ScriptSyntaxError,
    StepError,
    parse_line,
    parse_script,
)
from safebeal.scene.state import PROXIMITY_RELATIONS, StateView

__all__ = [
    "ACTIONS", "ACTION_ARITY", "EpisodeOver", "NodeView", "PROXIMITY_RELATIONS", "STEP_ERROR_KINDS",
    "SceneEnv", "SceneGraph", "SceneLoadError", "Script", "ScriptLine", "ScriptObject", "ScriptSyntaxError",
    "StateView", "StepError", "StepResult", "Trajectory", "clear_cache", "execute", "load_scene",
    "parse_line", "parse_script",
]
