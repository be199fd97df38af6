"""One directory per run: config.json, samples.jsonl (streamed, resumable), summary.json, report.html.

Guarantees (see ``docs/reliability.md``): one writer at a time (an ``fcntl.flock`` on ``.lock`` in the run
directory, released by the kernel when the process dies, so a kill leaves no stale lock); every appended record
is fsync'd before the run counts it; a cut-off last record is dropped and a valid one missing its newline is
completed on resume; a record seen twice counts once; config.json and summary.json are replaced atomically.
"""

from __future__ import annotations

import errno
import json
import os
import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

from safebeal.bench.records import Episode
from safebeal.capped import MAX_DATA_BYTES, CappedReadError, read_capped
from safebeal.errors import SafebealError

LOCK_NAME = ".lock"
#: config.json's sampling settings (``bench --sample --seed --category --task --epochs``): a resume must match them
SAMPLING_KEYS = ("sample", "seed", "categories", "tasks", "epochs")
RUN_FILES = {"config.json", "samples.jsonl", "summary.json", "report.html", "leaderboard.png", "violations_by_category.png",
             "violations_by_kind.png", LOCK_NAME}  #: what a run writes (other files make --out "not a run" unless config.json is a run's)
MAX_SAMPLES_BYTES = 8 * MAX_DATA_BYTES  #: the largest samples.jsonl a run reads back (4 GB)
#: lock file descriptors held by this process (closed in forked evaluation workers, see runner._init_worker)
HELD_LOCK_FDS: Set[int] = set()


class RunDirError(SafebealError):
    pass


def package_versions() -> Dict[str, str]:
    out = {"python": platform.python_version()}
    for pkg in ("safebeal", "virtualhome-eval", "rouge", "transformers", "torch", "trl", "peft", "openai", "vllm"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    return out


def read_config_file(path: Path) -> Dict[str, Any]:
    """A run's config.json as a dict; a missing, unreadable, corrupt or non-object file is a :class:`RunDirError`."""
    try:
        raw = read_capped(path, MAX_DATA_BYTES, what="config.json")
    except CappedReadError as exc:
        if "not found" in exc.reason:
            raise RunDirError(f"{path}: not a run directory (no config.json)") from None
        raise RunDirError(str(exc)) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise RunDirError(f"{path}: corrupt config.json: not UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise RunDirError(f"{path}:{exc.lineno}: corrupt config.json: {exc.msg}") from None
    except RecursionError:
        raise RunDirError(f"{path}: corrupt config.json: nested too deeply") from None
    if not isinstance(data, dict):
        raise RunDirError(f"{path}: corrupt config.json: expected a JSON object, got a {type(data).__name__}")
    planners = data.get("planners", [])
    if not isinstance(planners, list) or not all(isinstance(p, str) for p in planners):
        raise RunDirError(f"{path}: corrupt config.json: 'planners' must be a list of names")
    return data


def write_run_file(path: Path | str, data: str | bytes, hint: str = "") -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it, then rename it over ``path``: a reader sees the
    previous file or the whole new one, never a part. A failed write (disk full, I/O error) removes the temporary
    file, leaves the previous ``path`` as it was and is a :class:`RunDirError` naming the file (``hint`` appended)."""
    from safebeal.atomic import atomic_write as write

    write(path, data, hint, RunDirError)


def _no_credentials(text: str) -> str:
    """``text`` without the userinfo (``user:secret@``) of any URL in it: config.json and summary.json never
    record credentials, wherever they came from (``OPENAI_BASE_URL``, ``base_url=`` in a spec, ``--backend``)."""
    from safebeal.planners.backends.retry import strip_userinfo

    return strip_userinfo(text)


class RunDir:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.samples = self.path / "samples.jsonl"
        self.duplicates = 0  #: records skipped by the last load() because their (planner, task) came earlier
        self._lock_fd: Optional[int] = None

    # -- the writer's lock -----------------------------------------------------------------------------
    def lock(self) -> None:
        """Become the only writer of this run directory, or raise :class:`RunDirError` naming the holder."""
        import fcntl

        if self._lock_fd is not None:
            return
        p = self.path / LOCK_NAME
        try:
            fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise RunDirError(f"{self.path}: cannot create its lock file: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = os.read(fd, 64).decode("ascii", "replace").strip()
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EACCES, errno.EAGAIN):
                who = f" (pid {holder})" if holder.isdigit() else ""
                raise RunDirError(f"{self.path}: another safebeal process{who} is writing this run directory; "
                                  "wait for it to finish or use another --out") from None
            raise RunDirError(f"{self.path}: cannot lock: {exc.strerror or exc}") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock_fd = fd
        HELD_LOCK_FDS.add(fd)

    def unlock(self) -> None:
        if self._lock_fd is not None:
            HELD_LOCK_FDS.discard(self._lock_fd)
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = None

    def __enter__(self) -> "RunDir":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.unlock()

    # -- setting up ------------------------------------------------------------------------------------
    def is_run(self) -> bool:
        """Whether the directory holds a safebeal run (a config.json object with 'dataset' and 'planners')."""
        try:
            cfg = json.loads(read_capped(self.path / "config.json", MAX_DATA_BYTES))
        except (CappedReadError, ValueError, RecursionError):
            return False
        return isinstance(cfg, dict) and "dataset" in cfg and "planners" in cfg

    def _make_dir(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise RunDirError(f"--out {self.path}: is a file, not a directory")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise RunDirError(f"--out {self.path}: a parent of it is a file, not a directory") from None
        except NotADirectoryError:
            raise RunDirError(f"--out {self.path}: a parent of it is a file, not a directory") from None
        except OSError as exc:
            raise RunDirError(f"--out {self.path}: cannot create the directory: {exc.strerror or exc}") from None

    def prepare(self, config: Dict[str, Any], resume: bool, overwrite: bool = False) -> Dict[str, Any]:
        """Create or reopen the run directory and take its lock; returns the config written to config.json
        (on resume, its planners are the union of the old and the new ones)."""
        self._make_dir()
        cfg_path = self.path / "config.json"
        others = [p.name for p in self.path.iterdir() if p.name not in RUN_FILES and not p.name.startswith(".")]
        if (others or cfg_path.exists()) and not self.is_run() and not overwrite:
            if resume and cfg_path.exists():
                read_config_file(cfg_path)  # names what is wrong with it
            shown = ", ".join(sorted(others)[:3]) + (", ..." if len(others) > 3 else "")
            raise RunDirError(f"--out {self.path}: not empty and not a safebeal run directory ({shown or 'config.json'}); "
                              "choose another --out, or pass --overwrite to write into it anyway")
        self.lock()
        try:
            if self.samples.exists() and self.samples.stat().st_size > 0 and not (resume or overwrite):
                raise RunDirError(f"{self.path} already holds samples.jsonl: pass --resume to continue it or --overwrite to start again")
            if resume and cfg_path.exists():
                old = read_config_file(cfg_path)
                for key in ("dataset", "rules_digest", "strict"):
                    if old.get(key) != config.get(key):
                        raise RunDirError(f"{cfg_path}: cannot resume: {key} was {old.get(key)!r}, now {config.get(key)!r}")
                for key in SAMPLING_KEYS:  # which tasks, and how often: a resume takes the same ones
                    if key in old and old[key] != config.get(key) and (key != "seed" or old.get("sample") != "first"):
                        raise RunDirError(f"{cfg_path}: cannot resume: {key} was {old[key]!r}, now {config.get(key)!r} "
                                          "(pass the run's sampling flags again)")
                merged = list(old.get("planners", [])) + [p for p in config.get("planners", []) if p not in old.get("planners", [])]
                config = {**config, "planners": merged,
                          "planner_configs": {**(old.get("planner_configs") or {}), **config.get("planner_configs", {})},
                          "planner_specs": {**(old.get("planner_specs") or {}), **config.get("planner_specs", {})}}
                self.repair_tail()
            if overwrite and self.samples.exists():
                self.samples.unlink()
            text = _no_credentials(json.dumps(config, indent=1, sort_keys=True))
            write_run_file(cfg_path, text + "\n")
            config = json.loads(text)  # what the run records (and its report shows) is what config.json holds
        except BaseException:
            self.unlock()
            raise
        return config

    def repair_tail(self) -> None:
        """Make samples.jsonl end at a record boundary: a valid last record missing its newline gets one; a cut-off
        last record (a process killed mid-write) is removed (it is re-done)."""
        if not self.samples.exists():
            return
        with open(self.samples, "r+b") as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return
            # find the start of the last line without reading the whole file
            pos, tail = size, b""
            while pos > 0 and b"\n" not in tail:
                step = min(65536, pos)
                pos -= step
                f.seek(pos)
                tail = f.read(step) + tail
            cut = tail.rfind(b"\n")
            start = pos + cut + 1 if cut >= 0 else 0
            last = tail[cut + 1 :] if cut >= 0 else tail
            try:
                Episode.model_validate_json(last)
                f.seek(size)
                f.write(b"\n")
            except ValueError:
                f.truncate(start)
            f.flush()
            os.fsync(f.fileno())

    # -- reading ---------------------------------------------------------------------------------------
    def load(self) -> List[Episode]:
        """Read samples.jsonl. A corrupted line is an error naming its line number; a truncated *last* line
        (a run killed mid-write) is ignored (and cut off when the writer holds the lock); a record whose
        (planner, task) came earlier in the file is skipped and counted in :attr:`duplicates`."""
        self.duplicates = 0
        if not self.samples.exists():
            return []
        try:
            raw = read_capped(self.samples, MAX_SAMPLES_BYTES, what="samples file")
        except CappedReadError as exc:
            raise RunDirError(str(exc)) from None
        lines = raw.split(b"\n")
        episodes: List[Episode] = []
        seen: Set[Tuple[str, str]] = set()
        good_bytes = 0
        for i, line in enumerate(lines, start=1):
            is_last = i == len(lines)
            if not line.strip():
                good_bytes += len(line) + (0 if is_last else 1)
                continue
            try:
                ep = Episode.model_validate_json(line)
            except ValueError as exc:
                if is_last:  # no trailing newline: the write was interrupted
                    if self._lock_fd is not None:
                        with open(self.samples, "r+b") as f:
                            f.truncate(good_bytes)
                    break
                msg = str(exc).splitlines()[0][:200]
                raise RunDirError(f"{self.samples}:{i}: corrupted record ({msg}); fix or delete that line") from None
            good_bytes += len(line) + 1
            if ep.key in seen:
                self.duplicates += 1
                continue
            seen.add(ep.key)
            episodes.append(ep)
        return episodes

    def done_keys(self) -> Set[Tuple[str, str]]:
        return {e.key for e in self.load()}

    # -- writing ---------------------------------------------------------------------------------------
    def drop_failed_generations(self) -> int:
        """Remove the records whose generation failed (``bench --retry-failed``), so that a resume regenerates
        them; the file is replaced atomically. Returns how many were removed. Needs the writer's lock."""
        if self._lock_fd is None:
            raise RunDirError(f"{self.path}: take the lock before rewriting samples.jsonl")
        episodes = self.load()
        keep = [e for e in episodes if e.generation_error is None and e.raw_output is not None]
        if len(keep) != len(episodes) or self.duplicates:
            write_run_file(self.samples, "".join(e.model_dump_json() + "\n" for e in keep))
        return len(episodes) - len(keep)

    def append(self, episodes: Iterable[Episode]) -> None:
        self.append_lines(e.model_dump_json() for e in episodes)

    def append_lines(self, lines: Iterable[str]) -> None:
        """Append serialised episodes, one JSON object per line, flushed to disk before returning. A failed write
        (disk full, I/O error) is a :class:`RunDirError`; what was written before stays, a cut-off last record
        is removed on ``--resume``."""
        try:
            with open(self.samples, "a", encoding="utf-8") as f:
                for line in lines:
                    f.write(line + "\n")
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise RunDirError(f"{self.samples}: cannot write: {exc.strerror or exc}; the records written before are kept, "
                              "free space and continue with --resume") from None

    def write_json(self, name: str, data: Any, hint: str = "") -> Path:
        p = self.path / name
        write_run_file(p, _no_credentials(json.dumps(data, indent=1, sort_keys=False)) + "\n", hint)
        return p


def read_config(run_dir: Path | str) -> Dict[str, Any]:
    """A run directory's config.json; missing, corrupt, non-object or without 'dataset': :class:`RunDirError`."""
    p = Path(run_dir) / "config.json"
    if not Path(run_dir).is_dir():
        raise RunDirError(f"{run_dir}: not a run directory (no such directory)")
    config = read_config_file(p)
    if not isinstance(config.get("dataset"), str):
        raise RunDirError(f"{p}: corrupt config.json: no 'dataset' name")
    return config
