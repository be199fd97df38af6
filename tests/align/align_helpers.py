"""Shared pieces of the alignment tests."""

import os
import shutil
import subprocess

import pytest

#: accelerate config: DeepSpeed ZeRO-3 on 2 CPU ranks (the slow multi-rank tests of test_cli and test_recipe)
ZERO3_CPU = """compute_environment: LOCAL_MACHINE
deepspeed_config:
  zero_stage: 3
  zero3_init_flag: true
  zero3_save_16bit_model: true
  offload_optimizer_device: none
  offload_param_device: none
distributed_type: DEEPSPEED
mixed_precision: 'no'
num_machines: 1
num_processes: 2
machine_rank: 0
use_cpu: true
rdzv_backend: static
same_network: true
main_training_function: main
"""


def launch_zero3(tmp_path, args, timeout):
    """``accelerate launch -m safebeal.train ARGS`` under :data:`ZERO3_CPU` (skipped without deepspeed or the
    ``accelerate`` launcher); the finished process."""
    pytest.importorskip("deepspeed")
    accelerate = shutil.which("accelerate")
    if accelerate is None:
        pytest.skip("accelerate launcher not installed")
    cfg = tmp_path / "zero3_cpu.yaml"
    cfg.write_text(ZERO3_CPU)
    cmd = [accelerate, "launch", "--config_file", str(cfg), "-m", "safebeal.train", *args]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "DS_ACCELERATOR": "cpu"}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
