"""PyTorch DataLoader throughput over the same samples two ways (bench/run_dataset_bench.sh):
loose files, one a sample, and a tensorfleet dataset through tensorfleet_data. Prints one line
per run: samples/s and MB/s. Needs /usr/bin/python3 (torch) and PYTHONPATH=build/python.

    dataset_loader_bench.py files DIR WORKERS
    dataset_loader_bench.py tensorfleet NAME WORKERS CACHE_DIR
    dataset_loader_bench.py tensorfleet-batched NAME WORKERS CACHE_DIR

tensorfleet-batched: the dataset yields whole batches of 64 as (data, offsets) tensors
(batched=True, the DataLoader's batch_size=None); the same samples and batch size. With workers
its line also says how the batches reached the main process (through the dataset's shared slots,
or the ordinary way).
"""
import os
import sys
import time

import torch.utils.data


class LooseFiles(torch.utils.data.Dataset):
    def __init__(self, root):
        self.paths = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs)

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            return f.read()


def keep_bytes(batch):
    return batch  # a list of bytes objects: no tensor conversion in either run


def run(kind, dataset, workers):
    if kind == "tensorfleet-batched":
        loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=workers)
    else:
        loader = torch.utils.data.DataLoader(dataset, batch_size=64, num_workers=workers,
                                             collate_fn=keep_bytes,
                                             shuffle=(kind == "files"))
    start = time.perf_counter()
    samples = nbytes = 0
    for batch in loader:
        if kind == "tensorfleet-batched":
            data, offsets = batch
            samples += len(offsets) - 1
            nbytes += data.numel()
            continue
        samples += len(batch)
        nbytes += sum(len(b) for b in batch)
    seconds = time.perf_counter() - start
    handoff = getattr(dataset, "handoff", None) if workers else None
    print("%-19s workers=%d: %d samples, %.1f MB in %.2f s: %.0f samples/s, %.1f MB/s%s"
          % (kind, workers, samples, nbytes / 1e6, seconds, samples / seconds,
             nbytes / 1e6 / seconds,
             "" if handoff is None else " (batches shared %(shared)d, fallbacks %(fallbacks)d)"
             % handoff), flush=True)


def main():
    kind, target, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if kind == "files":
        run(kind, LooseFiles(target), workers)
    else:
        import tensorfleet_data
        ds = tensorfleet_data.Dataset(target, batch_size=64, cache_dir=sys.argv[4],
                                      batched=(kind == "tensorfleet-batched"))
        run(kind, ds, workers)


if __name__ == "__main__":
    main()
