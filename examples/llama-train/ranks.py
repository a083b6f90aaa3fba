"""Training on several processes with torch.distributed over gloo (CPU), and the stop signal.

With WORLD_SIZE 1 (or unset) every helper here works without a process group, so the script
runs the same code alone. With more, the ranks start the group from torchrun's variables
(MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), rank 0 decides the start state and sends it to
the others, and every rank agrees after each step whether to stop, so that a SIGTERM seen by
any of them stops them all at the same step.
"""

import os
import signal
import sys

import torch
import torch.distributed as dist


class StopSignal:
    """Set by SIGTERM or SIGINT; the training loop looks at it between steps."""

    def __init__(self):
        self.name = None
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._handle)

    def _handle(self, signum, frame):
        self.name = self.name or signal.Signals(signum).name

    def is_set(self):
        return self.name is not None


class Ranks:
    def __init__(self, distributed):
        self.rank = distributed.rank
        self.world_size = distributed.world_size
        if self.world_size > 1:
            dist.init_process_group("gloo", init_method="env://", rank=self.rank,
                                    world_size=self.world_size)

    @property
    def is_main(self):
        return self.rank == 0

    def broadcast(self, value):
        """Rank 0's value (any picklable object), on every rank."""
        if self.world_size == 1:
            return value
        box = [value]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def any(self, flag):
        """Whether flag is true on some rank."""
        if self.world_size == 1:
            return flag
        t = torch.tensor([1 if flag else 0], dtype=torch.int32)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        return bool(t.item())

    def mean(self, value):
        """The mean over the ranks of a float."""
        if self.world_size == 1:
            return value
        t = torch.tensor([value], dtype=torch.float64)
        dist.all_reduce(t)
        return t.item() / self.world_size

    def exit(self, code):
        """Ends the process with `code`. With several ranks the process group is not torn down:
        in torch 1.13, freeing a gloo group while its worker threads still release Python
        tensors deadlocks on the GIL, so once the output is flushed the process leaves with
        os._exit (files it wrote are already closed and synced)."""
        if self.world_size > 1:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        sys.exit(code)
