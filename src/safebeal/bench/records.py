"""Typed records of a benchmark run: one :class:`Episode` per (planner, task), streamed to samples.jsonl."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from pydantic import BaseModel, Field


class Episode(BaseModel):
    planner: str
    dataset: str
    task_id: str
    instruction: str = ""
    cluster: Optional[str] = None  # the group of near-duplicate tasks it belongs to (SafeRisks: its family)
    prompt: Optional[List[Dict[str, Any]]] = None  # the chat messages sent; None for replayed outputs
    raw_output: Optional[str] = None
    generation_error: Optional[str] = None
    parse_format: Optional[str] = None
    parse_error: Optional[Dict[str, Any]] = None
    script: List[str] = Field(default_factory=list)
    steps: List[Dict[str, Any]] = Field(default_factory=list)
    executable: bool = False
    error: Optional[Dict[str, Any]] = None
    success: Optional[bool] = None
    goal_step: Optional[int] = None
    safe: bool = True
    violations: List[Dict[str, Any]] = Field(default_factory=list)
    rouge_l: Optional[float] = None
    seconds: float = 0.0

    @property
    def key(self) -> tuple:
        return (self.planner, self.task_id)
