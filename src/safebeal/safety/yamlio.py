"""YAML loading that keeps line numbers, so that errors can point at file and line (``yaml.safe_load`` rules).

Hardened: files over :data:`MAX_YAML_BYTES` are refused, anchors/aliases (``&a`` / ``*a``, the "billion laughs"
expansion: 841 bytes took 89 s and 2.2 GB) are refused, and nesting deeper than Python's recursion limit is an
error, never a crash."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from safebeal.capped import MAX_YAML_BYTES  # noqa: F401 - rule and object files are a few KB; larger ones are refused
from safebeal.errors import SafebealError

LINE_KEY = "__line__"


class YamlError(SafebealError):
    def __init__(self, path: str, line: int | None, message: str, rule_id: str | None = None):
        self.path, self.line, self.rule_id = path, line, rule_id
        where = f"{path}:{line}" if line else str(path)
        who = f" (rule {rule_id})" if rule_id else ""
        super().__init__(f"{where}{who}: {message}")


class _LineLoader(yaml.SafeLoader):
    """A SafeLoader that records each mapping's 1-based start line under ``__line__``.

    Booleans follow YAML 1.2: only ``true``/``false``. YAML 1.1 would read the simulator's state and relation
    names ``ON``, ``OFF``, ``YES``, ``NO`` as booleans, so ``state: ON`` stays the string ``"ON"`` here.
    """


_LineLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_LineLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _construct_mapping(loader: _LineLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    mapping = yaml.SafeLoader.construct_mapping(loader, node, deep=True)
    mapping[LINE_KEY] = node.start_mark.line + 1
    return mapping


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def _compose_node(self: _LineLoader, parent: Any, index: Any) -> Any:
    if self.check_event(yaml.AliasEvent):
        mark = self.peek_event().start_mark
        raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed in safebeal YAML; write the value out", mark)
    event = self.peek_event()
    if getattr(event, "anchor", None) is not None:
        raise yaml.composer.ComposerError(None, None, "anchors (&name) are not allowed in safebeal YAML", event.start_mark)
    return yaml.composer.Composer.compose_node(self, parent, index)


_LineLoader.compose_node = _compose_node  # type: ignore[method-assign]


def load_yaml_with_lines(path: Path | str) -> Any:
    from safebeal.capped import CappedReadError, read_capped_text

    p = Path(path)
    try:
        text = read_capped_text(p, MAX_YAML_BYTES)  # at most the cap, from a device too (/dev/zero)
    except CappedReadError as exc:
        raise YamlError(str(p), None, exc.reason) from None
    return loads_yaml_with_lines(text, str(p))


def loads_yaml_with_lines(text: str, source: str) -> Any:
    try:
        return yaml.load(text, Loader=_LineLoader)  # noqa: S506 - _LineLoader is a SafeLoader
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise YamlError(source, line, f"malformed YAML: {getattr(exc, 'problem', exc)}") from None
    except RecursionError:
        raise YamlError(source, None, "malformed YAML: nested too deeply") from None


def strip_lines(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: strip_lines(v) for k, v in obj.items() if k != LINE_KEY}
    if isinstance(obj, list):
        return [strip_lines(v) for v in obj]
    return obj


def line_of(obj: Any) -> int | None:
    return obj.get(LINE_KEY) if isinstance(obj, dict) else None
