#!/usr/bin/python3
"""Trains a small Llama-style language model on the fortunes and exports it for tensorfleet's
engine. Run it as a tensorfleet job (job.yaml) or alone: `python3 train.py [NAME=VALUE ...]`.

It resumes from $TENSORFLEET_CHECKPOINT_DIR/checkpoint.pt when there is one, checkpoints every
`checkpoint_every` steps and when told to stop (SIGTERM or SIGINT: the current step finishes, a
checkpoint is written, and it exits 0), reports "step=N loss=X" every `log_every` steps, and at
the end writes a Hugging Face Llama checkpoint to $TENSORFLEET_OUTPUT_DIR/model. A resumed run
ends with the same weights as one that was never interrupted. See README.md.
"""

import hashlib
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

import checkpoint
import data
import export
import job_env
import tokenizer as bpe
from model import LlamaConfig, LlamaForCausalLM
from ranks import Ranks, StopSignal


def say(text):
    print(text, flush=True)


def lr_at(hp, step):
    """The learning rate of the step that follows `step` completed ones: linear warm-up, then a
    cosine from lr down to lr / 10 at the last step."""
    if step < hp["warmup_steps"]:
        return hp["lr"] * (step + 1) / hp["warmup_steps"]
    progress = min(1.0, (step - hp["warmup_steps"]) / max(1, hp["steps"] - hp["warmup_steps"]))
    return hp["lr"] * (0.1 + 0.45 * (1 + math.cos(math.pi * progress)))


def rng_state():
    version, internal, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    return {"torch": torch.get_rng_state(),
            "python": [version, list(internal), gauss],
            "numpy": [kind, torch.from_numpy(keys.astype(np.int64)), pos, has_gauss, cached]}


def set_rng_state(s):
    torch.set_rng_state(s["torch"])
    version, internal, gauss = s["python"]
    random.setstate((version, tuple(internal), gauss))
    kind, keys, pos, has_gauss, cached = s["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, cached))


def weights_digest(model):
    h = hashlib.sha256()
    for name, t in sorted(model.hf_state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


# What save_checkpoint writes.
CHECKPOINT_KEYS = ("step", "cursor", "model", "optimizer", "rng", "merges", "corpus_digest",
                   "hyperparameters")


def start_state(hp, paths, docs):
    """Rank 0's view of where training starts: (checkpoint or None, tokenizer merges)."""
    state = checkpoint.load(paths.checkpoint_dir)
    if state is None:
        return None, bpe.train(docs, hp["bpe_merges"]).merges
    missing = [k for k in CHECKPOINT_KEYS if k not in state]
    if missing:
        raise checkpoint.CheckpointError(
            f"{checkpoint.path_in(paths.checkpoint_dir)} lacks {', '.join(missing)}: it was "
            "not written by this script")
    for name in job_env.FIXED_BY_CHECKPOINT:
        was = state["hyperparameters"].get(name)
        if was != hp[name]:
            raise checkpoint.CheckpointError(
                f"{checkpoint.path_in(paths.checkpoint_dir)} was written with {name}={was} "
                f"but this run has {name}={hp[name]}; use the same value, or move the "
                "checkpoint away to start from scratch")
    return state, state["merges"]


class Trainer:
    def __init__(self, hp, paths, ranks, stop):
        self.hp, self.paths, self.ranks, self.stop = hp, paths, ranks, stop
        if hp["batch_size"] % ranks.world_size:
            raise job_env.ConfigError(f"batch_size ({hp['batch_size']}) is not a multiple of "
                                      f"the number of ranks ({ranks.world_size})")
        # Rank 0 reads the checkpoint and learns the tokenizer; every rank starts from its view.
        docs, start = None, None
        if ranks.is_main:
            try:
                docs = data.read_documents(hp["corpus"])
                start = ("ok",) + start_state(hp, paths, docs)
            except (checkpoint.CheckpointError, data.CorpusError) as e:
                start = ("error", str(e))
        start = ranks.broadcast(start)
        if start[0] == "error":
            raise RuntimeError(start[1] if ranks.is_main else "rank 0 could not start: " +
                               start[1])
        _, state, merges = start

        self.tokenizer = bpe.Tokenizer(merges)
        docs = docs or data.read_documents(hp["corpus"])
        stream = data.token_stream(docs, self.tokenizer)
        self.corpus_digest = data.stream_digest(stream)
        self.windows = data.Windows(stream, hp["seq_len"], hp["seed"])

        random.seed(hp["seed"])
        np.random.seed(hp["seed"])
        torch.manual_seed(hp["seed"])
        self.config = LlamaConfig.from_hyperparameters(hp, self.tokenizer.vocab_size)
        self.model = LlamaForCausalLM(self.config)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=hp["lr"],
                                           betas=(0.9, 0.95), weight_decay=hp["weight_decay"])
        self.step, self.cursor = 0, 0  # steps done; the next sample to read
        if state is not None:
            self.model.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
            set_rng_state(state["rng"])
            self.step, self.cursor = state["step"], state["cursor"]
            if ranks.is_main and state["corpus_digest"] != self.corpus_digest:
                say("warning: the corpus is not the one the checkpoint was trained on; "
                    "the data order differs from an uninterrupted run")
        self.resumed = state is not None
        self.saved_step = self.step if self.resumed else -1  # the step on disk
        self.ddp = (DistributedDataParallel(self.model) if ranks.world_size > 1 else self.model)

    def describe(self):
        n = sum(p.numel() for p in self.model.parameters())
        c = self.config
        return (f"model: Llama, {n} parameters (hidden {c.hidden_size}, {c.num_layers} layers, "
                f"{c.num_heads} heads, {c.num_kv_heads} kv heads, context "
                f"{c.max_position_embeddings}); vocabulary {c.vocab_size}; "
                f"corpus {len(self.windows.stream)} tokens in {self.windows.count} windows")

    def save_checkpoint(self):
        self.saved_step = self.step
        if not self.ranks.is_main:
            return
        checkpoint.save(self.paths.checkpoint_dir, {
            "step": self.step,
            "cursor": self.cursor,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "rng": rng_state(),
            "merges": [list(m) for m in self.tokenizer.merges],
            "corpus_digest": self.corpus_digest,
            "hyperparameters": dict(self.hp),
        })

    def report_loss(self, loss):
        if not self.ranks.is_main:
            return
        say(f"step={self.step} loss={loss:.4f}")
        if self.paths.metrics_file:
            with open(self.paths.metrics_file, "a", encoding="utf-8") as f:
                f.write(json.dumps({"name": "loss", "value": round(loss, 6), "step": self.step})
                        + "\n")

    def train_step(self):
        hp, ranks = self.hp, self.ranks
        per_rank = hp["batch_size"] // ranks.world_size
        inputs, targets = self.windows.batch(self.cursor + ranks.rank * per_rank, per_rank)
        logits = self.ddp(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if hp["grad_clip"] > 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), hp["grad_clip"])
        for group in self.optimizer.param_groups:
            group["lr"] = lr_at(hp, self.step)
        self.optimizer.step()
        self.step += 1
        self.cursor += hp["batch_size"]
        return loss.item()

    def pause(self):
        """slow_step_ms of sleep, cut short by a stop signal."""
        deadline = time.monotonic() + self.hp["slow_step_ms"] / 1000
        while not self.stop.is_set() and time.monotonic() < deadline:
            time.sleep(min(0.02, max(0.0, deadline - time.monotonic())))

    def run(self):
        """Trains to `steps`; returns False if stopped by a signal first."""
        hp = self.hp
        while self.step < hp["steps"]:
            if self.ranks.any(self.stop.is_set()):
                if self.saved_step != self.step:
                    self.save_checkpoint()
                if self.ranks.is_main:
                    why = self.stop.name or "another rank"
                    say(f"{why}: interrupted at step {self.step}: checkpoint saved")
                return False
            loss = self.train_step()
            self.pause()
            if self.step % hp["log_every"] == 0 or self.step == hp["steps"]:
                self.report_loss(self.ranks.mean(loss))
            if self.step % hp["checkpoint_every"] == 0:
                self.save_checkpoint()
        if self.saved_step != self.step:
            self.save_checkpoint()
        return True


def main(argv):
    try:
        hp = job_env.hyperparameters(os.environ, argv)
        distributed = job_env.Distributed(os.environ)
    except job_env.ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
    paths = job_env.Paths(os.environ)
    stop = StopSignal()
    if hp["threads"] > 0:
        torch.set_num_threads(hp["threads"])
    try:
        ranks = Ranks(distributed)
    except RuntimeError as e:  # gloo could not reach the other ranks
        print(f"error: joining {distributed.world_size} ranks at "
              f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}: {e}", file=sys.stderr)
        sys.exit(1)
    try:
        trainer = Trainer(hp, paths, ranks, stop)
    except (job_env.ConfigError, data.CorpusError, RuntimeError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        ranks.exit(1)
    if ranks.is_main:
        say(f"llama-train: {job_env.describe_job(os.environ)}, {ranks.world_size} rank(s), "
            f"{torch.get_num_threads()} thread(s) each")
        say(trainer.describe())
        say(f"resumed from step {trainer.step}" if trainer.resumed else "starting from scratch")
    if not trainer.run():
        ranks.exit(0)
    say(f"rank {ranks.rank} final weights sha256={weights_digest(trainer.model)}")
    if ranks.is_main:
        out = export.export(trainer.model, trainer.tokenizer,
                            os.path.join(paths.output_dir, "model"))
        say(f"exported the model to {os.path.abspath(out)}")
    ranks.exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
