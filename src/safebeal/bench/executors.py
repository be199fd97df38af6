"""Where episodes are evaluated: in this process, in worker processes (``local``) or as Ray tasks (``ray``; the
Ray executor also runs generation through the backends as Ray tasks: :meth:`RayExecutor.generation_for`).

A job is one task's outputs of one or more planners; its result is the JSON lines of their episodes. An executor
takes jobs as they come (``submit``), hands back finished results without blocking (``ready``) or all of them
(``drain``), and on an interrupt waits a short while for what is running (``drain(deadline)``) before
``shutdown``. Results are identical whatever the executor: the same function evaluates every job.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any, Dict, List, Optional, Tuple

from safebeal.bench.evaluate import detector_for, evaluate_output, normalise_text
from safebeal.bench.records import Episode
from safebeal.bench.rundir import HELD_LOCK_FDS
from safebeal.datasets.base import DATASETS, Task
from safebeal.errors import SafebealError

#: (planner label, text, generation error, the generation's record fields: prompt, usage, latency_s, ...)
Output = Tuple[str, Optional[str], Optional[str], Dict[str, Any]]
Job = Tuple[str, List[Output]]
EXECUTORS = ("local", "ray")

# -- worker side ---------------------------------------------------------------------------------------------
_TASKS: Dict[str, Task] = {}
_DET_ARGS: Tuple = ()
_TIMEOUT: Optional[float] = None
_ACTIONS: str = "extended"  # the action vocabulary episodes are simulated with (bench --actions)
PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid: int) -> None:
    """A worker must not outlive the run (a killed run left 1.4 GB workers behind): the kernel sends it SIGKILL
    when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``), and a watchdog thread exits when the parent pid
    changes (other POSIX systems, or a parent that died before the prctl)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # not Linux
        pass
    if os.getppid() != parent_pid:
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()


def _init_worker(dataset: str, det_args: Tuple, timeout: Optional[float] = None, parent_pid: Optional[int] = None,
                 actions: str = "extended") -> None:
    global _TASKS, _DET_ARGS, _TIMEOUT, _ACTIONS
    if parent_pid is not None:  # a worker process (not the in-process evaluation of --workers 1)
        _die_with_parent(parent_pid)
        # Ctrl-C reaches the whole process group: the parent decides what to keep and stops the workers itself
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        for fd in list(HELD_LOCK_FDS):  # the parent's run-directory lock, inherited by fork: not ours to hold
            try:
                os.close(fd)
            except OSError:
                pass
        HELD_LOCK_FDS.clear()
    _TASKS = {t.id: t for t in DATASETS.create(dataset).tasks()}
    _DET_ARGS = det_args
    _TIMEOUT = timeout
    _ACTIONS = actions


def dump_episode(ep: Episode) -> str:
    """``ep`` as one JSON line. Text that cannot be encoded (an unpaired surrogate that got past
    :func:`normalise_text`) is repaired and noted in ``input_repairs`` rather than failing the run."""
    try:
        return ep.model_dump_json()
    except ValueError:  # pydantic_core.PydanticSerializationError derives from ValueError
        notes: List[str] = []

        def clean(v: Any, where: str) -> Any:
            if isinstance(v, str):
                fixed, rep = normalise_text(v, where)
                notes.extend(rep)
                return fixed
            if isinstance(v, dict):
                return {clean(k, where): clean(x, where) for k, x in v.items()}
            if isinstance(v, list):
                return [clean(x, where) for x in v]
            return v

        data = {k: clean(v, k) for k, v in ep.model_dump().items()}
        data["input_repairs"] = list(dict.fromkeys(list(ep.input_repairs) + notes))
        return Episode.model_validate(data).model_dump_json()


def _eval_group(job: Job) -> List[str]:
    """Evaluate every planner's output on one task. Identical outputs are evaluated once, and outputs that compile
    to the same script are simulated and judged once (``evaluate_output(memo=...)``); each evaluation runs under
    the per-episode time limit."""
    task_id, outputs = job
    task = _TASKS[task_id]
    det = detector_for(*_DET_ARGS)
    memo: Dict[Tuple[Optional[str], Optional[str]], Episode] = {}
    runs: Dict[Any, tuple] = {}  # outputs worded differently that compile to the same script: simulated once
    out = []
    for planner, text, err, record in outputs:
        record = dict(record)
        wants_confidence = bool(record.pop("confidence_requested", False))
        ep = memo.get((text, err))
        if ep is None:
            ep = memo[(text, err)] = evaluate_output(task, planner, text, err, det, timeout=_TIMEOUT,
                                                     prompt=record.get("prompt"), actions=_ACTIONS, memo=runs)
        ep = ep.model_copy(update={"planner": planner, **record})
        if wants_confidence and ep.step_confidence is None:  # asked for, none written: one None per step
            ep = ep.model_copy(update={"step_confidence": [None] * len(ep.script)})
        if ep.extras:
            ep = with_planner_records(ep)
        if record.get("turns") is not None:
            ep = with_turn_violations(ep)
        out.append(dump_episode(ep))
    return out


def with_planner_records(ep: Episode) -> Episode:
    """``ep`` (the final plan's evaluation) with what each planner's record changes in it
    (:meth:`safebeal.planners.planners.Planner.evaluated`, looked up by the record's key)."""
    from safebeal.planners.planners import PLANNERS

    update: Dict[str, Any] = {}
    for key, record in ep.extras.items():
        if record and key in PLANNERS:
            update.update(PLANNERS.get(key).factory.evaluated(record, ep))
    return ep.model_copy(update=update) if update else ep


def with_turn_violations(ep: Episode) -> Episode:
    """A step-by-step agent's episode with each turn's ``violations``: the process violations the run's detector
    found on the plan steps that turn ran (the plan is the actions that ran, judged as any plan is). The final
    state's (termination) violations belong to no turn: they are the episode's, with ``step`` None."""
    by_step: Dict[int, List[Dict[str, Any]]] = {}
    for v in ep.violations:
        if v.get("step") is not None:
            by_step.setdefault(int(v["step"]), []).append(v)
    turns = [{**t, "violations": [v for k in (t.get("steps") or []) for v in by_step.get(int(k), [])]}
             for t in ep.turns or []]
    return ep.model_copy(update={"turns": turns})


# -- executors -------------------------------------------------------------------------------------------------
class InlineExecutor:
    """Evaluates each job as it is submitted, in this process (``--workers 1``)."""

    def __init__(self, dataset: str, det_args: Tuple, timeout: Optional[float], actions: str = "extended"):
        _init_worker(dataset, det_args, timeout, None, actions)
        self._done: List[List[str]] = []

    def submit(self, job: Job) -> None:
        self._done.append(_eval_group(job))

    def ready(self) -> List[List[str]]:
        done, self._done = self._done, []
        return done

    def drain(self, deadline: Optional[float] = None) -> List[List[str]]:
        return self.ready()

    def raise_if_failed(self) -> None:
        pass

    @property
    def pending(self) -> int:
        return 0

    def shutdown(self) -> None:
        pass


class _AsyncExecutor:
    """What the pool and the Ray executors share: results collected as they finish (``_collect``), the ready ones
    without waiting, or all of them up to a deadline."""

    def _collect(self, timeout: Optional[float], all_of_them: bool) -> List[List[str]]:  # pragma: no cover
        raise NotImplementedError

    @property
    def pending(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def ready(self) -> List[List[str]]:
        return self._collect(0, False)

    def drain(self, deadline: Optional[float] = None) -> List[List[str]]:
        if deadline is None:
            return self._collect(None, True)
        out: List[List[str]] = []
        while self.pending and time.monotonic() < deadline:
            out += self._collect(max(0.0, deadline - time.monotonic()), False)
        return out


class ProcessExecutor(_AsyncExecutor):
    """Jobs in a pool of worker processes; results come back as they finish, in any order."""

    def __init__(self, dataset: str, det_args: Tuple, timeout: Optional[float], workers: int,
                 actions: str = "extended"):
        self.pool = ProcessPoolExecutor(max_workers=workers, initializer=_init_worker,
                                        initargs=(dataset, det_args, timeout, os.getpid(), actions))
        self.futures: "set[Future]" = set()
        self.error: Optional[BaseException] = None

    def submit(self, job: Job) -> None:
        self.futures.add(self.pool.submit(_eval_group, job))

    def _collect(self, timeout: Optional[float], all_of_them: bool) -> List[List[str]]:
        if not self.futures:
            return []
        done, _ = wait(self.futures, timeout=timeout, return_when="ALL_COMPLETED" if all_of_them else FIRST_COMPLETED)
        self.futures -= done
        out = []
        for f in done:  # what finished is returned (and written) even when a worker died beside it
            exc = f.exception()
            if exc is None:
                out.append(f.result())
            elif self.error is None:
                self.error = exc
        return out

    def raise_if_failed(self) -> None:
        if self.error is not None:
            raise self.error

    @property
    def pending(self) -> int:
        return len(self.futures)

    def shutdown(self) -> None:
        if self.futures:  # interrupted: evaluations still running are stopped, not waited for
            for p in list(getattr(self.pool, "_processes", {}).values()):
                p.terminate()
        self.pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor(_AsyncExecutor):
    """Jobs as Ray tasks on the cluster at ``address`` (``ray.init(address=...)``; None starts a local one).

    Every task loads the dataset once per Ray worker process (cached in that worker) and evaluates with the
    same function as the local executor, so results are identical."""

    def __init__(self, dataset: str, det_args: Tuple, timeout: Optional[float], address: Optional[str] = None,
                 num_cpus: Optional[int] = None, actions: str = "extended"):
        try:
            import ray
        except ImportError:
            raise SafebealError("--executor ray needs the ray package: pip install safebeal[ray]") from None
        self.ray = ray
        if not ray.is_initialized():
            kwargs: Dict[str, Any] = {"address": address, "ignore_reinit_error": True, "include_dashboard": False,
                                      "log_to_driver": False}
            if address is None and num_cpus:
                kwargs["num_cpus"] = num_cpus
            try:
                ray.init(**kwargs)
            except Exception as exc:  # noqa: BLE001 - no cluster at that address, ...
                raise SafebealError(f"--executor ray: cannot connect to Ray at {address or 'a new local instance'}: "
                                    f"{exc}") from None
            self._started = True
        else:
            self._started = False
        self._remote = ray.remote(_ray_eval).options(max_retries=2)
        self._args = (dataset, det_args, timeout, actions)
        self.refs: List[Any] = []

    def submit(self, job: Job) -> None:
        self.refs.append(self._remote.remote(self._args, job))

    def generation_for(self, backend: Any) -> Any:
        """``backend``'s generation as Ray tasks on the same cluster (the runner sets it for a generating
        planner's run and removes it after)."""
        from safebeal.planners.backends.ray_remote import RayGeneration

        return RayGeneration(backend, self.ray)

    def _collect(self, timeout: Optional[float], all_of_them: bool) -> List[List[str]]:
        if not self.refs:
            return []
        n = len(self.refs) if all_of_them else 1
        done, self.refs = self.ray.wait(self.refs, num_returns=n, timeout=timeout)
        if not all_of_them and done:  # everything else that is finished too
            more, self.refs = self.ray.wait(self.refs, num_returns=len(self.refs), timeout=0)
            done += more
        return self.ray.get(done)

    def raise_if_failed(self) -> None:
        pass

    @property
    def pending(self) -> int:
        return len(self.refs)

    def shutdown(self) -> None:
        for ref in self.refs:
            try:
                self.ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001
                pass
        self.refs = []
        if self._started:
            self.ray.shutdown()


def _ray_eval(args: Tuple, job: Job) -> List[str]:
    dataset, det_args, timeout, actions = args
    if _DET_ARGS != det_args or not _TASKS or _TIMEOUT != timeout or _ACTIONS != actions \
            or not _ray_dataset_is(dataset):
        _init_worker(dataset, det_args, timeout, None, actions)
        _RAY_DATASET[0] = dataset
    return _eval_group(job)


_RAY_DATASET: List[Optional[str]] = [None]


def _ray_dataset_is(dataset: str) -> bool:
    return _RAY_DATASET[0] == dataset


def make_executor(kind: str, dataset: str, det_args: Tuple, timeout: Optional[float], workers: int,
                  address: Optional[str] = None, actions: str = "extended"):
    if kind == "ray":
        return RayExecutor(dataset, det_args, timeout, address, num_cpus=workers if workers > 1 else None,
                           actions=actions)
    if kind != "local":
        raise SafebealError(f"unknown executor {kind!r}; known: {', '.join(EXECUTORS)}")
    if workers > 1:
        return ProcessExecutor(dataset, det_args, timeout, workers, actions)
    return InlineExecutor(dataset, det_args, timeout, actions)
