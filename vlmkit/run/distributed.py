"""Data-parallel runs under torchrun: which share of the rows is this rank's, and a barrier between ranks.

torchrun sets RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT; vlmkit reads the first two through vlmkit.core.config and
leaves the rendezvous to torch.distributed (gloo, so CPU-only hosts work too). A single process never imports torch.
"""

from __future__ import annotations

from datetime import timedelta

from vlmkit.core import config
def rank_world() -> tuple[int, int]:
    return config.dist_rank_world()


def local_rank_device() -> str:
    """This rank's GPU under torchrun (cuda:LOCAL_RANK), or the CPU where there is none."""
    import torch

    return f"cuda:{config.dist_local_rank()}" if torch.cuda.is_available() else "cpu"


def barrier() -> None:
    """Wait for every rank (no-op in a single process). Long inference on one rank must not time out the others."""
    _, world = rank_world()
    if world <= 1:
        return
    import torch.distributed as dist

    if not dist.is_initialized():
        dist.init_process_group(backend="gloo", timeout=timedelta(hours=24))
    dist.barrier()
