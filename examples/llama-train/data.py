"""The training text and the order it is read in.

The corpus is a set of documents: by default the fortunes of Debian's `fortunes` package
(/usr/share/games/fortunes/: plain text files without an extension, entries separated by lines
holding only "%"), or the files named by the `corpus` hyperparameter in the same format. They are
tokenized into one stream, each document preceded by <|endoftext|>, and cut into windows of
seq_len + 1 tokens.

The order is a pure function of (seed, sample index): epoch e reads the windows in the
permutation drawn from numpy's generator seeded with (seed, e). Step s of a run with global batch
B reads samples [s*B, (s+1)*B) when the batch size never changed; the checkpoint keeps the next
sample index (the cursor), so a resumed run reads exactly what an uninterrupted one would.
"""

import hashlib
import os

import numpy as np
import torch

FORTUNES_DIR = "/usr/share/games/fortunes"


class CorpusError(Exception):
    pass


def _corpus_files(path):
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        raise CorpusError(f"corpus {path}: no such file or directory")
    files = []
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        # fortune(6)'s index files are name.dat; name.u8 are links to name.
        if name.startswith(".") or "." in name or os.path.islink(full) or not os.path.isfile(full):
            continue
        files.append(full)
    if not files:
        raise CorpusError(f"corpus {path}: holds no text files (names without an extension)")
    return files


def read_documents(corpus):
    """The documents of `corpus` (a file or directory; "" for the fortunes), in file order."""
    path = corpus or FORTUNES_DIR
    if not corpus and not os.path.isdir(path):
        raise CorpusError(f"{FORTUNES_DIR} is missing: install Debian's `fortunes` package "
                          "or set the `corpus` hyperparameter to a text file or directory")
    docs = []
    for name in _corpus_files(path):
        with open(name, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
        entry = []
        for line in text.splitlines():
            if line == "%":
                docs.append("\n".join(entry).strip("\n"))
                entry = []
            else:
                entry.append(line)
        docs.append("\n".join(entry).strip("\n"))
    docs = [d for d in docs if d.strip()]
    if not docs:
        raise CorpusError(f"corpus {path}: no text in it")
    return docs


def token_stream(docs, tokenizer):
    """All documents as one array of ids, each after <|endoftext|>."""
    ids = []
    for d in docs:
        ids.extend(tokenizer.encode(d, add_special_tokens=True))
    return np.asarray(ids, dtype=np.int64)


def stream_digest(stream):
    return hashlib.sha256(stream.tobytes()).hexdigest()


class Windows:
    """Training samples: windows of seq_len + 1 tokens (inputs and the next tokens) over the
    stream, read in a seeded order per epoch."""

    def __init__(self, stream, seq_len, seed):
        self.count = (len(stream) - 1) // seq_len
        if self.count < 1:
            raise CorpusError(f"the corpus has {len(stream)} tokens, fewer than seq_len + 1 "
                              f"({seq_len + 1})")
        self.stream, self.seq_len, self.seed = stream, seq_len, seed
        self._epoch, self._order = -1, None

    def _window(self, sample):
        epoch, index = divmod(sample, self.count)
        if epoch != self._epoch:
            self._order = np.random.default_rng([self.seed, epoch]).permutation(self.count)
            self._epoch = epoch
        start = int(self._order[index]) * self.seq_len
        return self.stream[start:start + self.seq_len + 1]

    def batch(self, first, size):
        """Samples [first, first + size) as (inputs, targets), each [size, seq_len]."""
        rows = np.stack([self._window(s) for s in range(first, first + size)])
        t = torch.from_numpy(rows)
        return t[:, :-1], t[:, 1:]
