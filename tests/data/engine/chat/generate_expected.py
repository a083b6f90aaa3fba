#!/usr/bin/python3
"""Writes expected.jsonl: every template here over every conversation in conversations.json,
with add_generation_prompt false and true, rendered the way transformers' apply_chat_template
renders (jinja2's ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and loop
controls; raise_exception, strftime_now and a tojson that keeps non-ASCII text).

Run by hand after changing a template or a conversation (needs Debian's python3-jinja2):
    /usr/bin/python3 tests/data/engine/chat/generate_expected.py
The tests only read its output. strftime_now is frozen at NOW so the output is stable.
"""
import datetime
import json
import os

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))
NOW = datetime.datetime(2026, 11, 30, 6, 0, tzinfo=datetime.timezone.utc)
TEMPLATES = {
    # file: (bos_token, eos_token) of the family's tokenizer
    "llama3.jinja": ("<|begin_of_text|>", "<|eot_id|>"),
    "llama31.jinja": ("<|begin_of_text|>", "<|eot_id|>"),
    "qwen2.jinja": ("", "<|im_end|>"),
    "mistral.jinja": ("<s>", "</s>"),
    "features.jinja": ("<s>", "</s>"),
    "whitespace.jinja": ("<s>", "</s>"),
}


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)
    return env


def main():
    env = environment()
    with open(os.path.join(HERE, "conversations.json"), encoding="utf-8") as f:
        conversations = json.load(f)
    lines = []
    for name, (bos, eos) in TEMPLATES.items():
        with open(os.path.join(HERE, name), encoding="utf-8", newline="") as f:
            template = env.from_string(f.read())
        for conv in conversations:
            for add_generation_prompt in (False, True):
                case = {"template": name, "conversation": conv["name"],
                        "add_generation_prompt": add_generation_prompt,
                        "bos_token": bos, "eos_token": eos}
                try:
                    variables = {"messages": conv["messages"], "tools": None, "documents": None,
                                 "add_generation_prompt": add_generation_prompt,
                                 "bos_token": bos, "eos_token": eos}
                    variables.update(conv.get("vars", {}))
                    case["rendered"] = template.render(**variables)
                except jinja2.exceptions.TemplateError as e:
                    case["error"] = str(e)
                lines.append(json.dumps(case, ensure_ascii=False))
    with open(os.path.join(HERE, "expected.jsonl"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} cases")


if __name__ == "__main__":
    main()
