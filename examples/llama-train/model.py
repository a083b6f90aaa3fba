"""A Llama decoder as Hugging Face transformers defines LlamaForCausalLM, in plain PyTorch.

Module and parameter names are transformers' own, so state_dict() keys are the names a Hugging
Face checkpoint uses (model.layers.0.self_attn.q_proj.weight, ..., lm_head.weight). Per layer:
RMSNorm, q/k/v projections, rotary embedding ("rotate half" over the head dimension), causal
grouped-query attention (each key/value head serves num_heads / num_kv_heads query heads),
output projection, residual; RMSNorm, SwiGLU MLP (down(silu(gate(x)) * up(x))), residual. Then
the final RMSNorm and the LM head, tied to the embedding when the config says so. No biases, no
dropout.
"""

import dataclasses
import math

import torch
import torch.nn.functional as F
from torch import nn


@dataclasses.dataclass
class LlamaConfig:
    vocab_size: int
    hidden_size: int = 128
    intermediate_size: int = 384
    num_layers: int = 4
    num_heads: int = 4
    num_kv_heads: int = 2
    max_position_embeddings: int = 128
    rms_norm_eps: float = 1e-5
    rope_theta: float = 10000.0
    tie_word_embeddings: bool = False
    initializer_range: float = 0.02

    def __post_init__(self):
        if self.hidden_size % self.num_heads:
            raise ValueError(f"hidden_size ({self.hidden_size}) is not a multiple of num_heads "
                             f"({self.num_heads})")
        if self.num_heads % self.num_kv_heads:
            raise ValueError(f"num_kv_heads ({self.num_kv_heads}) does not divide num_heads "
                             f"({self.num_heads})")
        if self.head_dim % 2:
            raise ValueError(f"the head dimension ({self.head_dim}) must be even for rotary "
                             "embeddings")

    @classmethod
    def from_hyperparameters(cls, hp, vocab_size):
        """The model the training hyperparameters (job_env.DEFAULTS) describe."""
        return cls(vocab_size=vocab_size, hidden_size=hp["hidden_size"],
                   intermediate_size=hp["intermediate_size"], num_layers=hp["num_layers"],
                   num_heads=hp["num_heads"], num_kv_heads=hp["num_kv_heads"],
                   max_position_embeddings=hp["seq_len"], rms_norm_eps=hp["rms_norm_eps"],
                   rope_theta=hp["rope_theta"], tie_word_embeddings=hp["tie_word_embeddings"])

    @property
    def head_dim(self):
        return self.hidden_size // self.num_heads


class RMSNorm(nn.Module):
    def __init__(self, size, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(size))
        self.eps = eps

    def forward(self, x):
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(x.dtype)


def rotary_tables(config, seq_len):
    """cos and sin, each [seq_len, head_dim]: position p, frequency i in both halves."""
    d = config.head_dim
    inv_freq = 1.0 / (config.rope_theta ** (torch.arange(0, d, 2, dtype=torch.int64).float() / d))
    freqs = torch.outer(torch.arange(seq_len, dtype=torch.float32), inv_freq)  # [seq, d/2]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.q_proj = nn.Linear(c.hidden_size, c.num_heads * c.head_dim, bias=False)
        self.k_proj = nn.Linear(c.hidden_size, c.num_kv_heads * c.head_dim, bias=False)
        self.v_proj = nn.Linear(c.hidden_size, c.num_kv_heads * c.head_dim, bias=False)
        self.o_proj = nn.Linear(c.num_heads * c.head_dim, c.hidden_size, bias=False)

    def forward(self, x, cos, sin, mask):
        b, s, _ = x.shape
        c = self.c
        q = self.q_proj(x).view(b, s, c.num_heads, c.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, c.num_kv_heads, c.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, c.num_kv_heads, c.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin  # [b, heads, s, head_dim]
        k = k * cos + rotate_half(k) * sin
        group = c.num_heads // c.num_kv_heads
        k = k.repeat_interleave(group, dim=1)  # query head h reads key/value head h // group
        v = v.repeat_interleave(group, dim=1)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(c.head_dim) + mask  # [b, heads, s, s]
        probs = torch.softmax(scores.float(), dim=-1).to(q.dtype)
        out = (probs @ v).transpose(1, 2).reshape(b, s, c.num_heads * c.head_dim)
        return self.o_proj(out)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gate_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.up_proj = nn.Linear(c.hidden_size, c.intermediate_size, bias=False)
        self.down_proj = nn.Linear(c.intermediate_size, c.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.input_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.self_attn = Attention(c)
        self.post_attention_layernorm = RMSNorm(c.hidden_size, c.rms_norm_eps)
        self.mlp = MLP(c)

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed_tokens = nn.Embedding(c.vocab_size, c.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(c) for _ in range(c.num_layers))
        self.norm = RMSNorm(c.hidden_size, c.rms_norm_eps)


class LlamaForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = LlamaModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        if config.tie_word_embeddings:
            self.lm_head.weight = self.model.embed_tokens.weight
        self.apply(self._init_weights)

    def _init_weights(self, module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=self.config.initializer_range)

    def forward(self, ids):
        """Logits [batch, seq, vocab] for ids [batch, seq] at positions 0..seq-1."""
        s = ids.shape[1]
        if s > self.config.max_position_embeddings:
            raise ValueError(f"{s} tokens is more than max_position_embeddings "
                             f"({self.config.max_position_embeddings})")
        cos, sin = rotary_tables(self.config, s)
        mask = torch.full((s, s), float("-inf")).triu(1)
        x = self.model.embed_tokens(ids)
        for layer in self.model.layers:
            x = layer(x, cos, sin, mask)
        return self.lm_head(self.model.norm(x))

    def hf_state_dict(self):
        """The tensors of a Hugging Face checkpoint: lm_head.weight left out when tied."""
        state = self.state_dict()
        if self.config.tie_word_embeddings:
            state.pop("lm_head.weight")
        return state
