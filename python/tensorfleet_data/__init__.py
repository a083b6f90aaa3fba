"""Read tensorfleet datasets from PyTorch (docs/datasets.md, "Python").

    import tensorfleet_data
    from torch.utils.data import DataLoader

    ds = tensorfleet_data.Dataset("tiny-text", seed=0, batch_size=32)  # the DataLoader's
    loader = DataLoader(ds, batch_size=32, num_workers=4)
    for epoch in range(10):
        ds.set_epoch(epoch)
        for batch in loader: ...

Each sample is the bytes that were packed (decode=... turns them into something else).

With batched=True the dataset yields whole batches of batch_size samples instead, each a pair
of tensors (data: uint8, the samples back to back; offsets: int64, batch + 1 of them, sample i
being data[offsets[i]:offsets[i + 1]]); give the DataLoader batch_size=None. A batch then
crosses from a worker process to the main one through a slot of shared memory that the dataset
made before the workers were forked, instead of as a pickled list of bytes objects (which is
what bounds a DataLoader of small samples): only the slot's number goes through the
DataLoader's pipe, and the main process copies the batch out.

    ds = tensorfleet_data.Dataset("tiny-text", batch_size=64, batched=True)
    loader = DataLoader(ds, batch_size=None, num_workers=4)
    for data, offsets in loader: ...

The dataset splits its samples over the job's ranks (RANK, WORLD_SIZE, LOCAL_RANK and
LOCAL_WORLD_SIZE, which tensorfleet and torchrun set) and over the DataLoader's workers, so that
every sample of an epoch is read exactly once across all of them.
"""

import os
import sys
import tempfile
import warnings
import weakref

import torch.utils.data
from torch._utils import ExceptionWrapper

from . import _native

__all__ = ["Dataset", "fetch_index"]

# The most DataLoader workers one Dataset is read with (each has a pass counter in shared memory).
_MAX_WORKERS = 1024


def _env_int(name, default):
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def _server_and_token(server, token):
    server = server or os.environ.get("TENSORFLEET_SERVER_URL") or os.environ.get("TENSORFLEET_URL")
    token = token or os.environ.get("TENSORFLEET_TOKEN")
    if not server or not token:
        raise ValueError(
            "tensorfleet_data needs a server and a token: pass server= and token=, or run "
            "where TENSORFLEET_SERVER_URL and TENSORFLEET_TOKEN are set (every tensorfleet job)")
    return server, token


def fetch_index(name, server=None, token=None):
    """The dataset's index (shards, sample counts, checksums) as a dict."""
    import json
    server, token = _server_and_token(server, token)
    return json.loads(_native.fetch_index(server, token, name))


class Dataset(torch.utils.data.IterableDataset):
    """A tensorfleet dataset as a PyTorch IterableDataset.

    seed:          the shuffle's seed; the same seed and epoch give the same order.
    batch_size:    the DataLoader's batch size, so that the batches its workers hand out in
                   turn are exactly the rank's order (what samples_seen counts). With
                   DataLoader workers it must be the DataLoader's, or a resumed epoch
                   repeats some samples and skips others.
    batched:       yield batches of batch_size samples as (data, offsets) tensors (above).
    epoch, samples_seen: where a resumed run stands: the first epoch read is `epoch`,
                   from after this many samples of this rank (the position a checkpoint
                   saved). It holds for that one epoch, whether the loop calls
                   set_epoch(epoch) first (as it should) or not; every later one is read whole.
                   With DataLoader workers it must be a whole number of batches, or the
                   end of the rank's epoch (an epoch whose last batch was short); past that
                   end is refused (RuntimeError naming both counts).
    rank, world_size, local_rank, local_world_size: override what the environment says. A
                   rank or world size given here (a data-parallel rank of a job that also
                   splits models over its processes) is the whole world: unless they are given
                   too, the node is the world and the local rank is the rank, never the
                   process's LOCAL_RANK.
    cache_dir:     where shards are kept on this machine (TENSORFLEET_DATASET_CACHE, or
                   tensorfleet-datasets-<uid> in the temporary directory); shared by every
                   worker and rank. It must be this user's own: one that another user owns or
                   every user may write into is refused (RuntimeError naming it).
    prefetch_shards, prefetch_threads, read_slots: how far ahead each worker reads shards, on
                   how many threads, and how many shard pieces all the readers of cache_dir
                   read from the disk at once (0: no bound). The defaults (4, 2, 0) suit
                   several ranks on a node; one rank alone may read faster with 4 threads
                   (docs/datasets.md).
    handoff_slots, handoff_slot_bytes: with batched=True, the slots of shared memory that
                   DataLoader workers hand batches over in (0 slots: none), and the most a
                   slot holds. A batch finding no free slot, or bigger than one, goes the
                   ordinary way (a new shared-memory segment a tensor, slower for small
                   batches); `handoff` counts both. Slots are reserved, not allocated: one
                   takes memory once a batch has been written into it. The default of 32
                   suits up to 8 workers at the DataLoader's default prefetch_factor of 2.
                   The slots are used where the DataLoader hands batches on as they are
                   (batch_size=None, no collate_fn); a collate_fn gets (data, offsets)
                   tuples. Workers started with "spawn" or "forkserver" do not share the
                   slots, and hand every batch over the ordinary way.
    """

    def __init__(self, name, seed=0, batch_size=1, samples_seen=0, decode=None, server=None,
                 token=None, rank=None, world_size=None, local_rank=None,
                 local_world_size=None, window_shards=4, cache_dir=None,
                 cache_bytes=8 << 30, prefetch_shards=4, batched=False, epoch=0,
                 prefetch_threads=2, read_slots=0, handoff_slots=32,
                 handoff_slot_bytes=16 << 20):
        super().__init__()
        if batched and decode is not None:
            raise ValueError("decode= applies to single samples: with batched=True, decode the "
                             "batches yourself")
        self.batched = batched
        self.name = name
        self.server, self.token = _server_and_token(server, token)
        if seed < 0:
            raise ValueError("seed cannot be negative (got %d)" % seed)
        self.seed = seed
        if batch_size is not None and batch_size < 1:
            raise ValueError("batch_size must be at least 1 (got %d)" % batch_size)
        self.block = int(batch_size or 1)
        if epoch < 0 or samples_seen < 0:
            raise ValueError("epoch and samples_seen cannot be negative (got %d and %d)"
                             % (epoch, samples_seen))
        # (epoch, samples_seen) in shared memory, so that DataLoader workers, persistent ones
        # too, read the position set_epoch gave last rather than the one they were started with.
        self._position = torch.tensor([epoch, samples_seen], dtype=torch.int64).share_memory_()
        # How many passes each DataLoader worker id has begun since the position was set: the
        # position's samples_seen is for a worker's first pass only, whether the DataLoader
        # starts new workers each epoch or keeps them (persistent_workers).
        self._worker_passes = torch.zeros(_MAX_WORKERS, dtype=torch.int64).share_memory_()
        # The resume position, until the epoch it is for has been set or read.
        self._resume = (epoch, samples_seen) if samples_seen else None
        self.decode = decode
        self.world_size = world_size if world_size is not None else _env_int("WORLD_SIZE", 1)
        self.rank = rank if rank is not None else _env_int("RANK", 0)
        # A rank or world given here is not the one the environment's local values belong to.
        from_environment = rank is None and world_size is None
        # LOCAL_RANK means something only beside LOCAL_WORLD_SIZE (some launchers set it
        # alone): without it the node is the world, and the local rank follows from the rank.
        env_nodes = from_environment and os.environ.get("LOCAL_WORLD_SIZE") not in (None, "")
        if local_world_size is None:
            local_world_size = (_env_int("LOCAL_WORLD_SIZE", self.world_size) if env_nodes
                                else self.world_size)
        self.local_world_size = local_world_size
        if local_rank is None and env_nodes:
            local_rank = _env_int("LOCAL_RANK", None)
        self.local_rank = local_rank
        self._check_ranks()
        self.window_shards = window_shards
        self.cache_dir = cache_dir or os.environ.get("TENSORFLEET_DATASET_CACHE") or os.path.join(
            tempfile.gettempdir(), "tensorfleet-datasets-%d" % os.geteuid())
        self.cache_bytes = cache_bytes
        self.prefetch_shards = prefetch_shards
        self.prefetch_threads = prefetch_threads
        self.read_slots = read_slots
        # Made here, in the process that will fork the DataLoader's workers, so that they share it.
        self._ring = self._ring_id = None
        if batched and handoff_slots != 0:
            if not 0 <= handoff_slots <= 1024:
                raise ValueError("handoff_slots must be 0 to 1024 (got %d)" % handoff_slots)
            if not 1 <= handoff_slot_bytes <= 1 << 30:
                raise ValueError("handoff_slot_bytes must be 1 to 1 GiB (got %d)"
                                 % handoff_slot_bytes)
            try:
                self._ring = _native.BatchRing(handoff_slots, handoff_slot_bytes)
            except RuntimeError as e:  # no address space to reserve (a strict overcommit policy)
                warnings.warn("tensorfleet_data: DataLoader workers will hand batches over the "
                              "ordinary way, slower: %s" % e)
            else:
                self._ring_id = "%d-%s" % (os.getpid(), os.urandom(8).hex())
                _RINGS[self._ring_id] = self._ring

    def __getstate__(self):
        # A worker started by pickling the dataset ("spawn", "forkserver") is not forked with the
        # ring's memory: it hands its batches over the ordinary way.
        state = self.__dict__.copy()
        state["_ring"] = state["_ring_id"] = None
        return state

    @property
    def handoff(self):
        """With batched=True: how DataLoader workers' batches reached this process so far, as
        {"shared": batches taken out of the shared slots, "fallbacks": batches that went the
        ordinary way because no slot was free or they were too big}; None without the slots."""
        if self._ring is None:
            return None
        return {"shared": self._ring.taken, "fallbacks": self._ring.fallbacks}

    def set_epoch(self, epoch, samples_seen=None):
        """Reads epoch `epoch` next, skipping the first `samples_seen` samples of this rank.

        By default none are skipped, except in the epoch the constructor's resume position is
        for, the first time it is set: then its samples_seen are.
        """
        if samples_seen is None:
            samples_seen = self._resume[1] if self._resume and self._resume[0] == epoch else 0
        if epoch < 0 or samples_seen < 0:
            raise ValueError("epoch and samples_seen cannot be negative (got %d and %d)"
                             % (epoch, samples_seen))
        self._resume = None
        self._position[0] = epoch
        self._position[1] = samples_seen
        self._worker_passes.zero_()

    @property
    def epoch(self):
        """The epoch the next iteration reads."""
        return int(self._position[0])

    @property
    def samples_seen(self):
        """How many of this rank's samples of that epoch the next iteration skips."""
        return int(self._position[1])

    def _check_ranks(self):
        if self.world_size < 1:
            raise ValueError("world_size must be at least 1 (got %d)" % self.world_size)
        if not 0 <= self.rank < self.world_size:
            raise ValueError("rank %d is not one of world_size %d's ranks (0 to %d)"
                             % (self.rank, self.world_size, self.world_size - 1))
        lws = self.local_world_size
        if lws < 1 or self.world_size % lws != 0:
            raise ValueError("world_size %d is not a multiple of local_world_size %d"
                             % (self.world_size, lws))
        if self.local_rank is None:
            self.local_rank = self.rank % lws
        elif self.local_rank != self.rank % lws:
            # The partition places rank r at node r // lws as its local rank r % lws; any other
            # pairing would give two processes one share.
            raise ValueError("local_rank %d does not go with rank %d on nodes of %d (expected "
                             "%d): ranks must be numbered node by node, as torchrun and "
                             "tensorfleet number them" % (self.local_rank, self.rank, lws,
                                                          self.rank % lws))

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        num_workers, worker_id = (info.num_workers, info.id) if info is not None else (1, 0)
        epoch, samples_seen = self.epoch, self.samples_seen
        if info is not None:
            if worker_id >= _MAX_WORKERS:
                raise ValueError("tensorfleet_data reads with at most %d DataLoader workers "
                                 "(got %d)" % (_MAX_WORKERS, num_workers))
            passes = int(self._worker_passes[worker_id])
            self._worker_passes[worker_id] = passes + 1
            if passes:  # this worker resumed the epoch already: the pass is read whole
                samples_seen = 0
        # The DataLoader takes batch j of an iteration from worker j % num_workers, and the
        # partition gives block k of the rank's epoch to worker k % num_workers: a resumed
        # epoch starts at block samples_seen / block, which worker 0 must then hold.
        unaligned = num_workers > 1 and samples_seen % self.block != 0
        if num_workers > 1 and not unaligned:
            worker_id = (worker_id + samples_seen // self.block) % num_workers
        # Checked before the reader is opened, which starts fetching and reading shards.
        if unaligned and samples_seen < self._rank_samples():
            # (Past the end, the epoch is over, however its last batch was cut: nothing to read.)
            raise ValueError(
                "samples_seen %d is not a whole number of batches of %d: with %d DataLoader "
                "workers an epoch can only be resumed at a batch boundary or at its end (give "
                "the batch size the checkpoint was made with)"
                % (samples_seen, self.block, num_workers))
        reader = self._open_reader(epoch, samples_seen, num_workers, worker_id)
        if info is None:
            # Read in this process: the next iteration, unless set_epoch says otherwise, reads
            # the next pass whole. (A DataLoader's workers cannot tell when the others have
            # started, which is why the loop should call set_epoch each epoch.)
            self._resume = None
            self._position[1] = 0
        if self.batched:
            ring = self._ring if info is not None and _handed_on_unchanged() else None
            if ring is None:
                for data, offsets in iter(lambda: _next_batch(reader, self.block), None):
                    yield (_tensor(data, torch.uint8), _tensor(offsets, torch.int64))
                return
            for slot, ticket, data, offsets in iter(
                    lambda: _next_shared_batch(reader, ring, self.block), None):
                if slot < 0:  # no slot free, or too big for one
                    yield (_tensor(data, torch.uint8), _tensor(offsets, torch.int64))
                else:
                    yield _SharedBatch(ring, self._ring_id, slot, ticket, data, offsets)
            return
        decode = self.decode
        for _, data in reader:
            yield decode(data) if decode is not None else data

    def _rank_samples(self):
        return _native.rank_samples(
            self.server, self.token, self.name, num_nodes=self.world_size // self.local_world_size,
            node_rank=self.rank // self.local_world_size, ranks_per_node=self.local_world_size,
            local_rank=self.local_rank)

    def _open_reader(self, epoch, samples_seen, num_workers, worker_id):
        return _native.Reader(
            self.server, self.token, self.name, seed=self.seed, epoch=epoch,
            num_nodes=self.world_size // self.local_world_size,
            node_rank=self.rank // self.local_world_size,
            ranks_per_node=self.local_world_size, local_rank=self.local_rank,
            num_workers=num_workers, worker_id=worker_id, window_shards=self.window_shards,
            block=self.block, samples_seen=samples_seen, cache_dir=self.cache_dir,
            cache_bytes=self.cache_bytes, prefetch_shards=self.prefetch_shards,
            prefetch_threads=self.prefetch_threads, read_slots=self.read_slots)


def _next_batch(reader, n):
    try:
        return reader.next_batch(n)
    except StopIteration:
        return None


def _next_shared_batch(reader, ring, n):
    try:
        return reader.next_shared_batch(ring, n)
    except StopIteration:
        return None


def _tensor(buffer, dtype):
    # torch.frombuffer refuses an empty buffer (a batch of empty samples).
    return torch.frombuffer(buffer, dtype=dtype) if len(buffer) else torch.empty(0, dtype=dtype)


def _handed_on_unchanged():
    """Whether the generator calling this runs in a DataLoader worker that hands what it yields
    to the main process as it is: batch_size=None and no collate_fn given, so that the item is
    pickled as it came. Only then may a batch travel as a _SharedBatch; a collate_fn of the
    user's, or a DataLoader batching the batches, gets the (data, offsets) tuples as always."""
    try:
        fetcher = sys._getframe(2).f_locals.get("self")  # 0: here, 1: __iter__, 2: its caller
    except ValueError:
        return False
    from torch.utils.data._utils import collate, fetch
    return (isinstance(fetcher, fetch._IterableDatasetFetcher) and not fetcher.auto_collation
            and fetcher.collate_fn is collate.default_convert)


# The rings of this process's datasets, by id: what a batch unpickled here is looked up in.
_RINGS = weakref.WeakValueDictionary()


def _take_shared_batch(ring_id, slot, ticket, nbytes, offsets):
    try:
        ring = _RINGS.get(ring_id)
        if ring is None:
            raise RuntimeError(
                "a batch from a DataLoader worker names shared memory of a tensorfleet_data."
                "Dataset that this process does not have: a batch can be unpickled only in the "
                "process that made the Dataset and forked the workers")
        return [_tensor(ring.take(slot, ticket, nbytes), torch.uint8),
                _tensor(offsets, torch.int64)]
    except Exception:
        # Unpickled on the DataLoader's pin-memory thread, a raise would end that thread and
        # hide why; as the worker's own errors do, this is raised where the batch is taken.
        return ExceptionWrapper(where="in tensorfleet_data, taking a batch from a DataLoader "
                                      "worker's shared memory")


class _SharedBatch:
    """A batch in a slot of its dataset's ring, on its way from a DataLoader worker to the main
    process, which the DataLoader pickles as it is (_handed_on_unchanged). Pickled it is the
    slot, its ticket and the batch's size and offsets; unpickled in the main process it is the
    [data, offsets] pair copied out of the slot, which frees it. Dropped unsent, it frees its
    slot. It can be sent once."""

    __slots__ = ("_ring", "_ring_id", "_slot", "_ticket", "_bytes", "_offsets")

    def __init__(self, ring, ring_id, slot, ticket, nbytes, offsets):
        self._ring, self._ring_id, self._slot, self._ticket = ring, ring_id, slot, ticket
        self._bytes, self._offsets = nbytes, offsets

    def __reduce__(self):
        if self._ring is None:
            raise RuntimeError("a tensorfleet_data batch in shared memory can be sent once")
        self._ring = None  # the slot is the receiver's to free now
        return (_take_shared_batch,
                (self._ring_id, self._slot, self._ticket, self._bytes, self._offsets))

    def __del__(self):
        if self._ring is not None:
            self._ring.release(self._slot, self._ticket)
