"""One directory per run: config.json, samples.jsonl (streamed, resumable), summary.json, report.html."""

from __future__ import annotations

import json
import os
import platform
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Dict, Iterable, List, Set, Tuple

from safebeal.bench.records import Episode
from safebeal.errors import SafebealError


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


class RunDir:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.samples = self.path / "samples.jsonl"

    def prepare(self, config: Dict[str, Any], resume: bool, overwrite: bool = False) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        cfg_path = self.path / "config.json"
        if self.samples.exists() and self.samples.stat().st_size > 0 and not (resume or overwrite):
            raise RunDirError(f"{self.path} already holds samples.jsonl: pass --resume to continue it or --overwrite to start again")
        if resume and cfg_path.exists():
            old = json.loads(cfg_path.read_text())
            for key in ("dataset", "rules_digest", "strict"):
                if old.get(key) != config.get(key):
                    raise RunDirError(f"{cfg_path}: cannot resume: {key} was {old.get(key)!r}, now {config.get(key)!r}")
            config = {**config, "planners": sorted(set(old.get("planners", [])) | set(config.get("planners", [])))}
        if overwrite and self.samples.exists():
            self.samples.unlink()
        cfg_path.write_text(json.dumps(config, indent=1, sort_keys=True) + "\n")

    def load(self) -> List[Episode]:
        """Read samples.jsonl. A corrupted line is an error naming its line number; a truncated *last* line
        (a run killed mid-write) is cut off and re-done."""
        if not self.samples.exists():
            return []
        raw = self.samples.read_bytes()
        lines = raw.split(b"\n")
        episodes: List[Episode] = []
        good_bytes = 0
        for i, line in enumerate(lines, start=1):
            is_last = i == len(lines)
            if not line.strip():
                good_bytes += len(line) + (0 if is_last else 1)
                continue
            try:
                episodes.append(Episode.model_validate_json(line))
            except ValueError as exc:
                if is_last:  # no trailing newline: the write was interrupted
                    with open(self.samples, "r+b") as f:
                        f.truncate(good_bytes)
                    break
                raise RunDirError(f"{self.samples}:{i}: corrupted record ({str(exc).splitlines()[0]}); fix or delete that line") from None
            good_bytes += len(line) + 1
        return episodes

    def done_keys(self) -> Set[Tuple[str, str]]:
        return {e.key for e in self.load()}

    def append(self, episodes: Iterable[Episode]) -> None:
        self.append_lines(e.model_dump_json() for e in episodes)

    def append_lines(self, lines: Iterable[str]) -> None:
        """Append serialised episodes, one JSON object per line, flushed to disk before returning."""
        with open(self.samples, "a") as f:
            for line in lines:
                f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())

    def write_json(self, name: str, data: Any) -> Path:
        p = self.path / name
        p.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
        return p
