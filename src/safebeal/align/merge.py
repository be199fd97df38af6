"""Merge a trained LoRA adapter into its base model and save a plain transformers model.

    python -m safebeal.align.merge --base MODEL --adapter OUT/adapter --out OUT [--dtype float32] [--pad-token-id N]

Under DeepSpeed ZeRO-3, loading the base model inside the training processes goes through
``deepspeed.zero.Init`` (transformers sees the ZeRO-3 config the trainer registered): loaded on rank 0 alone it
waits for the other ranks forever, and loaded on every rank it yields empty partitioned tensors. So after a
distributed run the merge runs here, in one fresh process with no distributed state and no ZeRO config
(:func:`merge_in_subprocess`); a single-process run merges in process (:func:`merge_adapter`).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

#: environment variables of torchrun / accelerate / DeepSpeed that would make the merge process join the job
_DIST_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK", "MASTER_ADDR",
             "MASTER_PORT", "TORCHELASTIC_RUN_ID", "CROSS_RANK", "CROSS_SIZE")


def merge_adapter(base: str, adapter: str | Path, out: str | Path, dtype: str = "float32",
                  trust_remote_code: bool = False, pad_token_id: Optional[int] = None) -> None:
    from peft import PeftModel

    from safebeal.align.loading import load_model

    model = load_model(base, dtype, trust_remote_code)
    merged = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
    if pad_token_id is not None:
        merged.config.pad_token_id = pad_token_id
    merged.save_pretrained(str(out))


def clean_env() -> dict:
    """This process's environment without the distributed launch variables (and accelerate's own)."""
    return {k: v for k, v in os.environ.items() if k not in _DIST_ENV and not k.startswith("ACCELERATE_")}


def merge_in_subprocess(base: str, adapter: str | Path, out: str | Path, dtype: str = "float32",
                        trust_remote_code: bool = False, pad_token_id: Optional[int] = None) -> None:
    cmd = [sys.executable, "-m", "safebeal.align.merge", "--base", base, "--adapter", str(adapter), "--out", str(out),
           "--dtype", dtype]
    if trust_remote_code:
        cmd.append("--trust-remote-code")
    if pad_token_id is not None:
        cmd += ["--pad-token-id", str(pad_token_id)]
    res = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True)
    if res.returncode != 0:
        from safebeal.align.loading import TrainError

        tail = (res.stderr or res.stdout).strip().splitlines()[-1:] or ["no output"]
        raise TrainError(f"merging the adapter into {base!r} failed: {tail[0]}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Merge a LoRA adapter into its base model.")
    ap.add_argument("--base", required=True)
    ap.add_argument("--adapter", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--trust-remote-code", action="store_true")
    ap.add_argument("--pad-token-id", type=int, default=None)
    a = ap.parse_args(argv)
    merge_adapter(a.base, a.adapter, a.out, a.dtype, a.trust_remote_code, a.pad_token_id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
