"""One typed registry for every pluggable thing (planner, backend, dataset, scene source, mutation, ...).

A plugin is created from a spec string ``name`` or ``name:key=value,key=value``. The spec, parsed into
``(name, kwargs)``, is what run logs record, so a run can be re-created exactly.

Where entries come from, in this order, on the first lookup (``get``, ``create``, ``names``, ``in``, iteration):

1. the entries registered with ``@REG.register(name)`` in modules already imported;
2. the registry's built-in plugin modules (``plugins``), imported;
3. the **entry points** of the registry's group, from every installed distribution (a user's own package). The
   group is derived from the kind by :func:`entry_point_group`: ``safebeal.`` + the kind's plural, spaces as
   underscores (``planner`` -> ``safebeal.planners``, ``scene source`` -> ``safebeal.scene_sources``, ``loss`` ->
   ``safebeal.losses``), so every new ``Registry`` gets its group for free. An entry point's name is the entry's
   name; its value is the factory (``my_pkg.planner:MyPlanner``, registered under the entry point's name unless
   the module registers it itself) or a module that registers the name when imported (``my_pkg.planner``).

A plugin that fails to load is a :class:`RegistryError` naming the entry point and its distribution (raised on
every lookup until it is fixed or uninstalled: never skipped); a plugin name that is already taken (by a
built-in or another distribution) is a :class:`RegistryError` naming both. Each entry records its
``origin``: ``"built-in"``, the distribution (``"my-pkg 0.1"``) it came from, or ``"module X"`` for an entry
registered by an imported module outside safebeal; ``safebeal plugins`` lists them.

    >>> from safebeal.registry import Registry
    >>> shapes = Registry("shape")
    >>> @shapes.register("square")
    ... class Square:
    ...     def __init__(self, side: float = 1.0):
    ...         self.side = side
    >>> shapes.create("square:side=2").side
    2.0
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Dict, Generic, Iterator, List, Tuple, TypeVar

from safebeal.errors import SafebealError

T = TypeVar("T")


class RegistryError(SafebealError):
    pass


def _coerce(value: str) -> Any:
    low = value.lower()
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    if low in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


TRUE_WORDS = ("true", "1", "yes", "on")
FALSE_WORDS = ("false", "0", "no", "off")


def parse_bool(value: Any, what: str) -> bool:
    """A yes/no option, from a spec (already a bool or an int), inspect's ``-T`` or code: ``true/1/yes/on`` or
    ``false/0/no/off`` in any case; anything else is a :class:`RegistryError` naming ``what``, the option."""
    if isinstance(value, bool):
        return value
    s = str(value).strip().lower()
    if s in TRUE_WORDS:
        return True
    if s in FALSE_WORDS:
        return False
    raise RegistryError(f"{what} must be true or false, got {value!r}")


def split_top_level(text: str, spec: str = "") -> list:
    """Split ``text`` at the commas outside square brackets."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise RegistryError(f"spec {spec or text!r}: ']' without its '['")
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth:
        raise RegistryError(f"spec {spec or text!r}: '[' without its ']'")
    parts.append("".join(cur))
    return parts


def parse_spec(spec: str) -> Tuple[str, Dict[str, Any]]:
    """Split ``name:key=value,key=value`` into ``(name, kwargs)``.

    A bare value after the colon (``replay:gpt-4o``) is passed as the positional ``arg`` keyword. A value in
    square brackets is taken as written, commas included, and not converted: a nested spec
    (``shield:planner=[few-shot:backend=mock,safety_prompt=true],mode=replan`` gives ``planner`` the string
    ``few-shot:backend=mock,safety_prompt=true``).
    """
    spec = spec.strip()
    if not spec:
        raise RegistryError("empty plugin spec")
    name, _, rest = spec.partition(":")
    kwargs: Dict[str, Any] = {}
    if rest:
        for part in split_top_level(rest, spec):
            if not part:
                continue
            if "=" in part:
                key, _, value = part.partition("=")
                value = value.strip()
                if value.startswith("[") and value.endswith("]"):
                    kwargs[key.strip()] = value[1:-1].strip()
                else:
                    kwargs[key.strip()] = _coerce(value)
            else:
                if "arg" in kwargs:
                    raise RegistryError(f"spec {spec!r}: more than one positional argument")
                kwargs["arg"] = part.strip()
    return name.strip(), kwargs


BUILT_IN = "built-in"

_ALL: Dict[str, "Registry[Any]"] = {}


def entry_point_group(kind: str) -> str:
    """The entry-point group of a registry of ``kind``: ``safebeal.`` + the plural, spaces as underscores
    (``planner`` -> ``safebeal.planners``, ``scene source`` -> ``safebeal.scene_sources``, ``loss`` ->
    ``safebeal.losses``, ``metric`` -> ``safebeal.metrics``)."""
    word = kind.strip().lower().replace(" ", "_").replace("-", "_")
    if word.endswith(("s", "x", "sh", "ch")):
        plural = word + "es"
    elif word.endswith("y") and word[-2:-1] not in ("a", "e", "i", "o", "u"):
        plural = word[:-1] + "ies"
    else:
        plural = word + "s"
    return f"safebeal.{plural}"


def registries() -> List["Registry[Any]"]:
    """Every registry made so far, sorted by kind (``safebeal.cli.REGISTRY_MODULES`` names the modules that make
    safebeal's own; ``safebeal plugins`` imports them first)."""
    return [_ALL[k] for k in sorted(_ALL)]


def _distribution(ep: Any) -> str:
    """``"name version"`` of the distribution that declares the entry point (``"unknown distribution"``)."""
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "unknown distribution"
    try:
        name = dist.metadata["Name"] or getattr(dist, "name", None)
    except Exception:  # noqa: BLE001 - a broken METADATA file
        name = None
    version = getattr(dist, "version", None)
    return f"{name or 'unnamed distribution'}" + (f" {version}" if version else "")


def describe_entry_point(ep: Any) -> str:
    """``entry point NAME = VALUE (group GROUP, distribution NAME VERSION)``: how errors name a plugin."""
    name, value, group = (getattr(ep, k, "?") for k in ("name", "value", "group"))
    return f"entry point {name} = {value} (group {group}, distribution {_distribution(ep)})"


def _where(factory: Any) -> str:
    mod = getattr(factory, "__module__", None) or "?"
    return f"{mod}.{getattr(factory, '__qualname__', getattr(factory, '__name__', repr(factory)))}"


@dataclass
class Entry(Generic[T]):
    name: str
    factory: Callable[..., T]
    help: str = ""
    #: where the entry comes from: ``"built-in"`` (a module of safebeal), the distribution (``"my-pkg 0.1"``) whose
    #: entry point added it, or ``"module X"`` (registered by an imported module outside safebeal)
    origin: str = BUILT_IN


@dataclass
class Registry(Generic[T]):
    """A named collection of factories of one kind. ``group`` is its entry-point group (default: derived from
    ``kind`` by :func:`entry_point_group`); see the module docstring for how plugins are found."""

    kind: str
    #: modules that register entries in this registry, imported on first lookup (so that, e.g., every built-in
    #: dataset is known without the caller importing its module)
    plugins: Tuple[str, ...] = ()
    group: str = ""
    _entries: Dict[str, Entry[T]] = field(default_factory=dict)
    _loaded: bool = False
    _origin: str = BUILT_IN  # the origin given to entries registered now (a distribution while its entry point loads)

    def __post_init__(self) -> None:
        if not self.group:
            self.group = entry_point_group(self.kind)
        _ALL.setdefault(self.kind, self)

    def _load_plugins(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        try:
            for mod in self.plugins:
                importlib.import_module(mod)
            self._load_entry_points()
        except BaseException:
            self._loaded = False  # the next lookup raises the same error again: a broken plugin is never skipped
            raise

    def entry_points(self) -> list:
        """The installed entry points of this registry's group, sorted by name."""
        from importlib.metadata import entry_points

        return sorted(entry_points(group=self.group), key=lambda ep: (ep.name, ep.value))

    def _load_entry_points(self) -> None:
        for ep in self.entry_points():
            dist = _distribution(ep)
            where = describe_entry_point(ep)
            had = self._entries.get(ep.name)
            before = set(self._entries)
            self._origin = dist
            try:
                obj = ep.load()
            except Exception as exc:  # noqa: BLE001 - any failure of a third-party import is reported, not skipped
                for name in set(self._entries) - before:  # what the failed import registered goes with it
                    del self._entries[name]
                if isinstance(exc, RegistryError):
                    raise RegistryError(f"{self.kind} plugin {where}: {exc}") from exc
                raise RegistryError(f"{self.kind} plugin {where} failed to load: {type(exc).__name__}: {exc}") from exc
            finally:
                self._origin = BUILT_IN
            entry = self._entries.get(ep.name)
            if isinstance(obj, ModuleType):
                if entry is None:
                    raise RegistryError(f"{self.kind} plugin {where}: module {obj.__name__} registers no "
                                        f"{self.kind} {ep.name!r}")
                mine = getattr(entry.factory, "__module__", None) == obj.__name__
            else:
                mine = entry is not None and entry.factory is obj
            if entry is not None and not mine:
                other = "the built-in" if entry.origin == BUILT_IN else f"the {entry.origin}"
                raise RegistryError(f"{self.kind} plugin {where}: the name {ep.name!r} collides with {other} "
                                    f"{self.kind} {ep.name!r} ({_where(entry.factory)})")
            if entry is None:
                if not callable(obj):
                    raise RegistryError(f"{self.kind} plugin {where}: {obj!r} is neither a factory nor a module")
                self._origin = dist
                try:
                    self.register(ep.name)(obj)
                finally:
                    self._origin = BUILT_IN
            elif had is entry:
                entry.origin = dist  # its module was imported before the first lookup: it is still the plugin's

    def register(self, name: str, help: str = "") -> Callable[[Callable[..., T]], Callable[..., T]]:
        def deco(factory: Callable[..., T]) -> Callable[..., T]:
            old = self._entries.get(name)
            # the same definition imported again (a module reloaded or imported under a second path) replaces
            # itself; another factory under a taken name is an error naming both
            if old is not None and old.factory is not factory and _where(old.factory) != _where(factory):
                other = "built-in" if old.origin == BUILT_IN else old.origin
                raise RegistryError(f"{self.kind} {name!r} is already registered ({other}: {_where(old.factory)}); "
                                    f"cannot register {_where(factory)} under the same name")
            doc = help or (inspect.getdoc(factory) or "").split("\n")[0]
            origin = self._origin
            if origin == BUILT_IN and not str(getattr(factory, "__module__", "")).startswith("safebeal."):
                origin = f"module {getattr(factory, '__module__', '?')}"  # registered by an imported module of its own
            self._entries[name] = Entry(name, factory, doc, origin)
            try:
                setattr(factory, "registry_name", name)
            except (AttributeError, TypeError):
                pass
            return factory

        return deco

    def names(self) -> list[str]:
        self._load_plugins()
        return sorted(self._entries)

    def __contains__(self, name: str) -> bool:
        self._load_plugins()
        return name in self._entries

    def __iter__(self) -> Iterator[Entry[T]]:
        return iter(self._entries[n] for n in self.names())

    def get(self, name: str) -> Entry[T]:
        self._load_plugins()
        try:
            return self._entries[name]
        except KeyError:
            known = ", ".join(self.names()) or "none"
            raise RegistryError(f"unknown {self.kind} {name!r}; known: {known}") from None

    def create(self, spec: str, **overrides: Any) -> T:
        name, kwargs = parse_spec(spec)
        kwargs.update(overrides)
        entry = self.get(name)
        try:
            return entry.factory(**kwargs)
        except (TypeError, ValueError) as exc:  # a missing/unknown argument, or one of the wrong type ("concurrency=abc")
            raise RegistryError(f"{self.kind} {spec!r}: {exc}") from exc
