"""A compact on-disk cache of parsed task scenes, built on first use.

Reading a shipped ActivityPrograms graph costs a JSON parse of both graphs (about 750 KB), a schema check and the
simulator's ``EnvironmentGraph`` construction; a benchmark run did that once per task in every process. The cache
keeps each parsed initial scene as one pickle (the simulator graph and the raw dict), and small derived values
(e.g. a task's object listing) as JSON, under ``$XDG_CACHE_HOME/safebeal/scenes/<digest>/`` (``~/.cache``
when unset). The digest covers the virtualhome-eval version and the source of ``safebeal.scene`` and
``safebeal.datasets``, so any change to how scenes or listings are computed starts a new cache. Entries are
written atomically (temporary file, then rename), so concurrent workers and a killed run never leave a torn
entry; an unreadable entry is rebuilt. ``SAFEBEAL_SCENE_CACHE=0`` turns the cache off.

A cached scene is long-lived (the scene layer holds it until released) and made of tens of thousands of small
objects: :func:`cached_pickle` loads it with the cyclic garbage collector paused and then moves it out of the
collector's generations (``gc.freeze``), so the collections that later allocations trigger do not scan every
loaded scene again (in a 342-scene benchmark run the collector cost more than the unpickling itself). Freed
scenes are still freed (their refcounts drop to zero: a scene holds no reference cycle).
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import pickle
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Optional

ENV_SWITCH = "SAFEBEAL_SCENE_CACHE"


def enabled() -> bool:
    return os.environ.get(ENV_SWITCH, "1").lower() not in ("0", "false", "no", "off")


@lru_cache(maxsize=1)
def _digest() -> str:
    from importlib.metadata import PackageNotFoundError, version

    h = hashlib.sha256()
    try:
        h.update(version("virtualhome-eval").encode())
    except PackageNotFoundError:
        h.update(b"?")
    pkg = Path(__file__).resolve().parents[1]
    for sub in ("scene", "datasets"):
        for f in sorted((pkg / sub).rglob("*.py")):
            h.update(f.relative_to(pkg).as_posix().encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "safebeal" / "scenes" / _digest()


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def _write(path: Path, data: bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:  # a read-only or full disk: the cache is an optimisation, never a failure
        try:
            os.unlink(tmp)  # type: ignore[possibly-undefined]
        except (OSError, NameError):
            pass


def cached_pickle(name: str, build: Callable[[], Any]) -> Any:
    """``build()``'s value, from the cache when an entry exists (unpickled), else built and stored."""
    if not enabled():
        return build()
    path = cache_dir() / (_safe(name) + ".pkl")
    try:
        with open(path, "rb") as f:
            return _load_long_lived(f)
    except FileNotFoundError:
        pass
    except Exception:  # noqa: BLE001 - a torn or stale entry: rebuild it
        pass
    value = build()
    try:
        _write(path, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    except (pickle.PicklingError, TypeError, AttributeError):
        pass
    return value


def _load_long_lived(f: Any) -> Any:
    """``pickle.load(f)`` for a value that lives long: the collector paused while it is built, then the young
    generations collected (what was garbage before the load goes) and everything left frozen out of later
    collections (:func:`gc.freeze`)."""
    if not gc.isenabled():  # someone else manages the collector: leave it to them
        return pickle.load(f)
    gc.disable()
    try:
        value = pickle.load(f)
    finally:
        gc.enable()
    gc.collect(1)
    gc.freeze()
    return value


def cached_json(name: str, build: Callable[[], Any], decode: Optional[Callable[[Any], Any]] = None) -> Any:
    """Like :func:`cached_pickle` for small JSON values; ``decode`` turns the JSON back into the value."""
    if not enabled():
        value = build()
        return decode(value) if decode else value
    path = cache_dir() / (_safe(name) + ".json")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return decode(raw) if decode else raw
    except (OSError, ValueError):
        pass
    value = build()
    _write(path, json.dumps(value).encode("utf-8"))
    return decode(value) if decode else value


__all__ = ["ENV_SWITCH", "cache_dir", "cached_json", "cached_pickle", "enabled"]
