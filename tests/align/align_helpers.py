"""Shared pieces of the alignment tests."""

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
