"""Every exception class safebeal defines derives from ``SafebealError`` (the CLI prints those as one plain line,
exit 2), except the few that steer control flow inside a module and never reach a user."""

from __future__ import annotations

import importlib
from pathlib import Path

import safebeal
from safebeal.errors import SafebealError

SRC = Path(safebeal.__file__).resolve().parent

#: raised and caught inside their own module (or a BaseException that must not be caught as an error)
CONTROL_FLOW = {
    "safebeal.scene.extension_exec.ExtensionRefused",  # env.py turns it into the step's failure message
    "safebeal.planners.search.SearchFailure",  # the search planner's "no plan found", caught by the planner
    "safebeal.generation.procedural._NoVariant",
    "safebeal.bench.commands._Terminated",  # a KeyboardInterrupt: SIGTERM handled as Ctrl-C
    "safebeal.bench.evaluate.EpisodeTimeout",  # a BaseException, so that no `except Exception` swallows it
}


def _modules():
    """Every module of the package (from the files: some subpackages are namespace packages, which pkgutil skips)."""
    for path in sorted(SRC.rglob("*.py")):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if "data" in parts[:-1]:  # package data, not modules
            continue
        try:
            yield importlib.import_module(name)
        except ImportError:  # an optional extra (torch, clingo, inspect_ai, ...) that is not installed
            continue


def test_every_error_class_is_a_safebeal_error():
    found, outside = [], []
    for mod in _modules():
        for obj in vars(mod).values():
            if isinstance(obj, type) and issubclass(obj, BaseException) and obj.__module__ == mod.__name__:
                name = f"{obj.__module__}.{obj.__qualname__}"
                found.append(name)
                if not issubclass(obj, SafebealError) and name not in CONTROL_FLOW:
                    outside.append(name)
    assert outside == []
    assert "safebeal.planners.backends.retry.StatusError" in found  # (the walk reached the backends)
    assert "safebeal.safety.conditions.ConditionError" in found


def test_condition_and_status_errors_keep_their_other_bases():
    from safebeal.planners.backends.retry import StatusError
    from safebeal.safety.conditions import ConditionError

    assert issubclass(ConditionError, ValueError) and issubclass(ConditionError, SafebealError)
    e = StatusError(429, retry_after=0.5)
    assert isinstance(e, SafebealError) and (e.status_code, e.retry_after, str(e)) == (429, 0.5, "HTTP 429")
