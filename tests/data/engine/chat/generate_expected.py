#!/usr/bin/python3
"""Writes expected.jsonl: every template here over every conversation in conversations.json,
with add_generation_prompt false and true; and snippets_expected.jsonl: each line of
snippets.txt as a template of its own over SNIPPET_MESSAGES. Both rendered the way transformers' apply_chat_template
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
NOW = datetime.datetime(2025, 3, 14, 9, 26, 53, tzinfo=datetime.timezone.utc)
TEMPLATES = {
    # file: (bos_token, eos_token) of the family's tokenizer
    "llama3.jinja": ("<|begin_of_text|>", "<|eot_id|>"),
    "llama31.jinja": ("<|begin_of_text|>", "<|eot_id|>"),
    "llama32.jinja": ("<|begin_of_text|>", "<|eot_id|>"),
    "qwen2.jinja": ("", "<|im_end|>"),
    "qwen25.jinja": ("", "<|im_end|>"),
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


SNIPPET_MESSAGES = [
    {"role": "system", "content": " Be brief. "},
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello!", "tool_calls": [
        {"function": {"name": "f", "arguments": {"b": 1, "a": [True, None, 2.5]}}}]},
]


def snippets(env):
    """One case per line of snippets.txt: the text, or the error jinja2 raised (its type, and
    its message for raise_exception's TemplateError)."""
    lines = []
    with open(os.path.join(HERE, "snippets.txt"), encoding="utf-8") as f:
        for text in f.read().split("\n"):
            if not text:
                continue
            case = {"template": text}
            try:
                case["rendered"] = env.from_string(text).render(
                    messages=SNIPPET_MESSAGES, tools=None, documents=None,
                    add_generation_prompt=True, bos_token="<s>", eos_token="</s>")
            except jinja2.exceptions.TemplateSyntaxError as e:
                case["error"] = "syntax"
            except jinja2.exceptions.UndefinedError as e:
                case["error"] = "undefined"
            except jinja2.exceptions.TemplateError as e:
                case["error"] = "raised"
                case["message"] = str(e)
            except Exception as e:  # TypeError, ZeroDivisionError, ...: an error in C++ too
                case["error"] = type(e).__name__
            lines.append(json.dumps(case, ensure_ascii=False))
    with open(os.path.join(HERE, "snippets_expected.jsonl"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} snippets")


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
    snippets(env)


if __name__ == "__main__":
    main()
