"""The training checkpoint: one file, checkpoint.pt, replaced whole.

A checkpoint is written to checkpoint.pt.tmp, flushed to disk, and renamed over checkpoint.pt,
so the name always holds a complete checkpoint and there is only ever the latest one. A crash
during the write leaves at most a .tmp file, which is never read (and which tensorfleet never
syncs); the next save replaces it.
"""

import os

import torch

FILE_NAME = "checkpoint.pt"


class CheckpointError(Exception):
    pass


def path_in(directory):
    return os.path.join(directory, FILE_NAME)


def write_atomically(path, write):
    """Calls write(file) on path + ".tmp", then fsyncs it and renames it to path."""
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        write(f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save(directory, state):
    """Writes `state` (tensors, numbers, strings, lists and dicts of them) as the checkpoint."""
    write_atomically(path_in(directory), lambda f: torch.save(state, f))


def load(directory):
    """The checkpoint in directory, or None if there is none. CheckpointError if it is there
    but cannot be read."""
    path = path_in(directory)
    if not os.path.exists(path):
        return None
    try:
        # The file is this job's own (written by save, restored by tensorfleet from the job's
        # checkpoint storage). torch 1.13's weights_only loader cannot read floats, which the
        # optimizer's state holds, so it is not used.
        state = torch.load(path, map_location="cpu")
    except Exception as e:  # torch raises many kinds for a damaged file
        raise CheckpointError(f"{path} cannot be read ({type(e).__name__}: {e}); move it away "
                              "to start from scratch") from e
    if not isinstance(state, dict) or "step" not in state:
        raise CheckpointError(f"{path} is not a checkpoint of this script (no step in it)")
    return state
