#!/usr/bin/python3
"""Prints what the PyTorch model and the Python tokenizer make of some text, as JSON, so that
tensorfleet's engine can be checked against them (tests/example_training_test.cc).

    python3 dump_logits.py --checkpoint-dir checkpoints --prompt "Q: Why?" [--text T ...]
    python3 dump_logits.py --model output/model --prompt "Q: Why?" --out logits.json

The model comes from the training checkpoint (its weights as PyTorch holds them) or from an
exported model directory (config.json and model.safetensors). Output:

    {"prompt_ids": [...],        the prompt encoded with the BOS first, as the engine does
     "logits": [[...], ...],     [len(prompt_ids), vocab]: the logits at every position
     "encodings": [[...], ...]}  each --text encoded without special tokens
"""

import argparse
import json
import os

import torch

import checkpoint
import export
import tokenizer as bpe
from model import LlamaConfig, LlamaForCausalLM


def from_checkpoint(directory):
    state = checkpoint.load(directory)
    if state is None:
        raise SystemExit(f"error: {checkpoint.path_in(directory)} does not exist")
    tok = bpe.Tokenizer(state["merges"])
    model = LlamaForCausalLM(LlamaConfig.from_hyperparameters(state["hyperparameters"],
                                                              tok.vocab_size))
    model.load_state_dict(state["model"])
    return model, tok


def from_export(directory):
    with open(os.path.join(directory, "config.json"), encoding="utf-8") as f:
        c = json.load(f)
    with open(os.path.join(directory, "tokenizer.json"), encoding="utf-8") as f:
        spec = json.load(f)
    tok = bpe.Tokenizer.from_json(spec)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=c["vocab_size"], hidden_size=c["hidden_size"],
        intermediate_size=c["intermediate_size"], num_layers=c["num_hidden_layers"],
        num_heads=c["num_attention_heads"], num_kv_heads=c["num_key_value_heads"],
        max_position_embeddings=c["max_position_embeddings"], rms_norm_eps=c["rms_norm_eps"],
        rope_theta=c["rope_theta"], tie_word_embeddings=c["tie_word_embeddings"]))
    tensors = export.read_safetensors(os.path.join(directory, "model.safetensors"))
    state = {k: torch.from_numpy(v.copy()) for k, v in tensors.items()}
    if c["tie_word_embeddings"]:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]
    model.load_state_dict(state)
    return model, tok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--checkpoint-dir", help="a training checkpoint directory")
    source.add_argument("--model", help="an exported Hugging Face model directory")
    p.add_argument("--prompt", required=True)
    p.add_argument("--text", action="append", default=[])
    p.add_argument("--out", help="write the JSON here instead of to stdout")
    args = p.parse_args()
    model, tok = (from_checkpoint(args.checkpoint_dir) if args.checkpoint_dir
                  else from_export(args.model))
    ids = tok.encode(args.prompt, add_special_tokens=True)
    with torch.no_grad():
        logits = model(torch.tensor([ids]))[0]
    text = json.dumps({"prompt_ids": ids, "logits": logits.tolist(),
                       "encodings": [tok.encode(t) for t in args.text]})
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
