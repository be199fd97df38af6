"""The prompt texts of the planners: the template files in ``planners/templates/`` (templates are data, not code).

:func:`read_template` reads one by name (``system`` -> ``templates/system.txt``), once per process. The prompts
(:mod:`safebeal.planners.prompts`), the observations (:mod:`safebeal.planners.observation`) and the wrapping
planners (agent, replanning, confidence, CLMASP) all read their texts here.
"""

from __future__ import annotations

from functools import lru_cache

from safebeal.resources import PACKAGE_DATA

TEMPLATES = PACKAGE_DATA / "planners" / "templates"


@lru_cache(maxsize=None)
def read_template(name: str) -> str:
    return (TEMPLATES / f"{name}.txt").read_text()
