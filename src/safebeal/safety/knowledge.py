"""Object hazard knowledge: VirtualHome class name -> hazard attributes, from YAML.

``safety/data/objects.yaml`` holds the closed attribute vocabulary, every class's attributes (``[]`` means
checked and neutral) and aliases (stove -> oven, fridge -> freezer). The attributes are of two kinds: the hazard
attributes the rules read (heat_source, flammable, sharp, ...) and the physical object model (material, battery,
electronics, sealed, microwave_safe, oven_safe, heats_in_use, cookware); both are plain names in one vocabulary.
``electrical`` is also derived from the simulator's HAS_PLUG property. Users extend it with their own files
(later files override earlier ones).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence

from safebeal.capped import read_capped_text
from safebeal.errors import SafebealError
from safebeal.resources import PACKAGE_DATA
from safebeal.safety.yamlio import MAX_YAML_BYTES, YamlError, line_of, load_yaml_with_lines, strip_lines

DEFAULT_OBJECTS = PACKAGE_DATA / "safety" / "data" / "objects.yaml"
#: attributes derived from simulator properties, in addition to the YAML
DERIVED = {"HAS_PLUG": "electrical"}


class UnknownClassError(SafebealError):
    pass


@dataclass
class ObjectKB:
    attributes: Dict[str, str] = field(default_factory=dict)  # name -> description
    classes: Dict[str, FrozenSet[str]] = field(default_factory=dict)
    aliases: Dict[str, str] = field(default_factory=dict)
    sources: List[str] = field(default_factory=list)

    def canonical(self, class_name: str) -> str:
        return self.aliases.get(class_name, class_name)

    def known(self, class_name: str) -> bool:
        return self.canonical(class_name) in self.classes

    def attrs(self, class_name: str, properties: Iterable[str] = ()) -> FrozenSet[str]:
        """Attributes of a class (plus those derived from its simulator properties). Unknown classes: empty."""
        base = self.classes.get(self.canonical(class_name), frozenset())
        derived = {DERIVED[p] for p in properties if p in DERIVED}
        return base | derived if derived else base

    def node_attrs(self, node: Any) -> FrozenSet[str]:
        """Attributes of a scene node (its class and simulator properties); ``None`` (no such node): empty."""
        return frozenset() if node is None else self.attrs(node.class_name, node.properties)

    def classes_with(self, attr: str) -> FrozenSet[str]:
        return frozenset(c for c, a in self.classes.items() if attr in a)

    def merge(self, other: "ObjectKB") -> "ObjectKB":
        return ObjectKB(
            {**self.attributes, **other.attributes},
            {**self.classes, **other.classes},
            {**self.aliases, **other.aliases},
            self.sources + other.sources,
        )


def load_objects(path: Path | str, vocabulary: Optional[Mapping[str, str]] = None) -> ObjectKB:
    """Load and validate one objects YAML. ``vocabulary``: attributes defined by earlier files."""
    src = str(path)
    raw = load_yaml_with_lines(path)
    if not isinstance(raw, dict):
        raise YamlError(src, None, "expected a mapping with 'attributes' and 'classes'")
    unknown_keys = set(raw) - {"version", "attributes", "classes", "aliases", "__line__"}
    if unknown_keys:
        raise YamlError(src, line_of(raw), f"unknown top-level keys {sorted(unknown_keys)}; expected version, attributes, classes, aliases")
    attrs_raw = raw.get("attributes") or {}
    if not isinstance(attrs_raw, dict):
        raise YamlError(src, line_of(raw), "'attributes' must map attribute name -> description")
    attributes = {str(k): str(v) for k, v in strip_lines(attrs_raw).items()}
    vocab = {**(vocabulary or {}), **attributes, **{v: "derived from the simulator's %s property" % k for k, v in DERIVED.items()}}
    classes_raw = raw.get("classes")
    if not isinstance(classes_raw, dict):
        raise YamlError(src, line_of(raw), "'classes' must map class name -> list of attributes ([] = neutral)")
    base_line = line_of(classes_raw)
    classes: Dict[str, FrozenSet[str]] = {}
    for cls, attrs in classes_raw.items():
        if cls == "__line__":
            continue
        if attrs is None:
            attrs = []
        if not isinstance(attrs, list) or not all(isinstance(a, str) for a in attrs):
            raise YamlError(src, _find_line(src, cls) or base_line, f"class {cls!r}: attributes must be a list of names")
        bad = [a for a in attrs if a not in vocab]
        if bad:
            raise YamlError(src, _find_line(src, cls) or base_line, f"class {cls!r}: unknown attribute(s) {bad}; known: {sorted(vocab)}")
        classes[str(cls)] = frozenset(attrs)
    aliases_raw = raw.get("aliases") or {}
    if not isinstance(aliases_raw, dict):
        raise YamlError(src, line_of(raw), "'aliases' must map a class name to a listed class name (alias: class)")
    aliases: Dict[str, str] = {}
    for k, v in strip_lines(aliases_raw).items():
        if not isinstance(v, str) or not isinstance(k, str):
            raise YamlError(src, _find_line(src, str(k), "aliases") or line_of(aliases_raw), f"alias {k!r}: must map a name to a class name, got {v!r}")
        aliases[k] = v
    return ObjectKB(attributes, classes, aliases, [src])


def _find_line(path: str, key: str, section: str = "classes") -> Optional[int]:
    """Line of ``key:`` inside the top-level ``section:`` (a name can be both an attribute and a class: glass)."""
    try:
        inside = False
        for i, line in enumerate(read_capped_text(path, MAX_YAML_BYTES).splitlines(), start=1):
            if line and not line[0].isspace() and not line.startswith("#"):
                inside = line.startswith(f"{section}:")
            elif inside and line.strip().startswith(f"{key}:"):
                return i
    except SafebealError:
        pass
    return None


def build_kb(extra: Sequence[Path | str] = ()) -> ObjectKB:
    kb = _default_kb()
    for p in extra:
        kb = kb.merge(load_objects(p, vocabulary=kb.attributes))
    for alias, target in kb.aliases.items():
        if target not in kb.classes:
            raise YamlError(kb.sources[-1], None, f"alias {alias!r} -> {target!r}: {target!r} is not a listed class")
    return kb


@lru_cache(maxsize=1)
def _default_kb() -> ObjectKB:
    return load_objects(DEFAULT_OBJECTS)
