"""Loading a script that is not a package module (``benchmarks/*.py``) in a test."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(path: Path, name: str = "") -> ModuleType:
    """The module of the script at ``path`` (relative paths: from the repository root), executed once per call."""
    path = path if path.is_absolute() else ROOT / path
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
