"""What the job reads from its environment: tensorfleet's job contract, torchrun's variables,
and the hyperparameters.

Hyperparameters come from the defaults below, then the JSON object in
TENSORFLEET_HYPERPARAMETERS, then NAME=VALUE arguments on the command line (for standalone
runs). A value must have its default's type (an integer where the default is one; numbers for
floats; true/false for booleans; strings given as JSON or, on the command line, as they are).
"""

import json

DEFAULTS = {
    # Training
    "steps": 300,
    "batch_size": 8,         # sequences per step, over all ranks together
    "seq_len": 128,          # tokens per sequence; also the exported context length
    "lr": 3e-3,              # AdamW's peak learning rate
    "warmup_steps": 20,      # linear warm-up, then cosine decay to lr / 10 at `steps`
    "weight_decay": 0.01,
    "grad_clip": 1.0,        # largest gradient norm (0: no clipping)
    "seed": 1234,
    "checkpoint_every": 50,  # steps between checkpoints (one is also written at the end)
    "log_every": 10,         # steps between loss reports
    "slow_step_ms": 0,       # sleep after each step, so that tests can interrupt a run
    "threads": 0,            # torch's intra-op threads (0: torch's default)
    # Data and tokenizer
    "corpus": "",            # a text file or directory in fortune format ("": the fortunes)
    "bpe_merges": 256,       # merges learned by the tokenizer (vocabulary: 256 + merges + 1)
    # Model (Llama)
    "hidden_size": 128,
    "intermediate_size": 384,
    "num_layers": 4,
    "num_heads": 4,
    "num_kv_heads": 2,
    "rope_theta": 10000.0,
    "rms_norm_eps": 1e-5,
    "tie_word_embeddings": False,
}

# Hyperparameters that fix the model's shape, its tokens and the order it reads them in: a
# checkpoint written with other values cannot be resumed.
FIXED_BY_CHECKPOINT = ("seed", "seq_len", "bpe_merges", "hidden_size", "intermediate_size",
                       "num_layers", "num_heads", "num_kv_heads", "rope_theta", "rms_norm_eps",
                       "tie_word_embeddings")


class ConfigError(Exception):
    pass


_KINDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _convert(name, value, from_text):
    default = DEFAULTS[name]
    kind = _KINDS[type(default)]
    if from_text and not isinstance(default, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise ConfigError(f"hyperparameter {name}: '{value}' is not {kind}") from None
    ok = {
        bool: lambda v: isinstance(v, bool),
        int: lambda v: isinstance(v, int) and not isinstance(v, bool),
        float: lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        str: lambda v: isinstance(v, str),
    }[type(default)](value)
    if not ok:
        raise ConfigError(f"hyperparameter {name}: {json.dumps(value)} is not {kind}")
    if isinstance(default, float):
        value = float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        raise ConfigError(f"hyperparameter {name}: {value} is negative")
    return value


def hyperparameters(environ, argv):
    hp = dict(DEFAULTS)
    given = []
    text = environ.get("TENSORFLEET_HYPERPARAMETERS", "").strip()
    if text:
        try:
            obj = json.loads(text)
        except ValueError as e:
            raise ConfigError(f"TENSORFLEET_HYPERPARAMETERS is not JSON: {e}") from None
        if not isinstance(obj, dict):
            raise ConfigError("TENSORFLEET_HYPERPARAMETERS must be a JSON object")
        given += [(k, v, False) for k, v in obj.items()]
    for arg in argv:
        name, eq, value = arg.partition("=")
        if not eq:
            raise ConfigError(f"argument '{arg}': expected NAME=VALUE")
        given.append((name, value, True))
    for name, value, from_text in given:
        if name not in DEFAULTS:
            raise ConfigError(f"unknown hyperparameter '{name}' (known: {', '.join(DEFAULTS)})")
        hp[name] = _convert(name, value, from_text)
    for name in ("steps", "batch_size", "seq_len", "checkpoint_every", "log_every",
                 "hidden_size", "num_layers", "num_heads", "num_kv_heads"):
        if hp[name] < 1:
            raise ConfigError(f"hyperparameter {name} must be at least 1, not {hp[name]}")
    return hp


class Distributed:
    """This process's place among the ranks (torchrun's variables; one rank without them)."""

    def __init__(self, environ):
        try:
            self.world_size = int(environ.get("WORLD_SIZE", "1"))
            self.rank = int(environ.get("RANK", "0"))
        except ValueError:
            raise ConfigError("WORLD_SIZE and RANK must be integers") from None
        if self.world_size < 1 or not 0 <= self.rank < self.world_size:
            raise ConfigError(f"RANK {self.rank} is not within WORLD_SIZE {self.world_size}")
        if self.world_size > 1:
            for name in ("MASTER_ADDR", "MASTER_PORT"):
                if not environ.get(name):
                    raise ConfigError(f"WORLD_SIZE is {self.world_size} but {name} is not set")


class Paths:
    def __init__(self, environ):
        self.checkpoint_dir = environ.get("TENSORFLEET_CHECKPOINT_DIR") or "checkpoints"
        self.output_dir = environ.get("TENSORFLEET_OUTPUT_DIR") or "output"
        self.metrics_file = environ.get("TENSORFLEET_METRICS_FILE") or None


def describe_job(environ):
    """"job NAME (ID), attempt N" under tensorfleet, or "standalone run"."""
    if "TENSORFLEET_JOB_ID" not in environ:
        return "standalone run"
    return (f"job {environ.get('TENSORFLEET_JOB_NAME', '?')} ({environ['TENSORFLEET_JOB_ID']}), "
            f"attempt {environ.get('TENSORFLEET_ATTEMPT', '?')}")
