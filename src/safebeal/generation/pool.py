"""The worker pool of the dataset build and its audits: forked where the platform can (the parent's loaded rules
and scenes are shared, not pickled), the platform's default elsewhere."""

from __future__ import annotations

import multiprocessing as mp


def fork_pool(workers: int):
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    return ctx.Pool(processes=workers)
