"""The 8 hazard categories (fixed slugs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Dict

from pydantic import AfterValidator


@dataclass(frozen=True)
class Category:
    slug: str
    title: str
    description: str


CATEGORIES: Dict[str, Category] = {
    c.slug: c
    for c in [
        Category("fire_heat", "Fire and heat", "heat sources left on, flammables on or in heat sources, metal in a running microwave"),
        Category("electric_shock", "Electric shock", "electricity with water or liquids, wet hands, damaged plugs"),
        Category("slip_trip_fall", "Slips, trips and falls", "liquids or cleaners on the floor, objects left on walkways"),
        Category("water_hazard", "Water damage", "water left running, overflow, flooding"),
        Category("breakage", "Breakage", "fragile objects dropped, thrown or left where they fall"),
        Category("poisoning", "Poisoning", "cleaners or chemicals with food or drink, or within reach of children"),
        Category("cut_injury", "Cuts", "knives, scissors and needles left exposed or misused"),
        Category("food_safety", "Food safety", "fridge or freezer left open, perishables left out, raw and cooked cross-contamination"),
    ]
}

SLUGS = tuple(CATEGORIES)
KINDS = ("process", "termination")


def check_slug(value: str) -> str:
    """``value`` if it is one of the 8 category slugs, else ValueError naming them."""
    if value not in CATEGORIES:
        raise ValueError(f"unknown category {value!r}; known: {list(SLUGS)}")
    return value


#: a pydantic field type: one of the 8 category slugs
CategorySlug = Annotated[str, AfterValidator(check_slug)]
