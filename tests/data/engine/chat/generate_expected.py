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
import random

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


# Random templates, seeded so the file is the same on every run: expressions mixing values,
# operators, filters, tests and methods (leaving out what jinja2 renders as a lazy generator's
# repr, which no template wants), text with whitespace around tags with - and + modifiers, and
# nested statements.
RANDOM_ATOMS = ["1", "0", "-3", "2.5", "0.1", "'ab'", "''", "'A b c'", "[1, 2, 3]", "[]",
                "['x', 'y']", "none", "true", "false", "messages", "messages[0]",
                "messages[1].content", "messages[0]['role']", "m", "{'k': 1, 'a': 'v'}",
                "(1, 'a')", "undefined_x", "ns.v"]
RANDOM_OPERATORS = ["+", "-", "*", "/", "//", "~", "==", "!=", "<", ">=", "and", "or", "in",
                    "not in"]
RANDOM_FILTERS = ["trim", "length", "upper", "lower", "tojson", "default('d')", "join(',')",
                  "first", "last", "string", "int", "list", "sort", "title", "capitalize",
                  "abs", "float", "count", "default(0, true)", "replace('a', 'Z')"]
RANDOM_TESTS = ["defined", "none", "string", "number", "mapping", "odd", "even", "true",
                "false", "integer", "float", "boolean", "undefined", "lower", "upper"]
RANDOM_POSTFIX = [".strip()", ".upper()", ".split()", ".startswith('a')", ".endswith('c')",
                  ".get('k')", "[0]", "[-1]", "[1:]", "[::-1]", ".role", "['content']",
                  ".lower()", ".title()", ".replace('a', 'z')"]
RANDOM_POSTFIX_ATOMS = ["'ab'", "''", "'A b c'", "[1, 2, 3]", "[]", "['x', 'y']", "messages",
                        "messages[0]", "messages[1].content", "messages[0]['role']", "m",
                        "(1, 'a')", "undefined_x", "ns.v"]
RANDOM_SPACES = ["", " ", "  ", "\n", "\n\n", "\t", " \n ", "\r\n", "x", "ab c", "\u00a0",
                 "\u3000y"]


def random_expression(rng, depth):
    r = rng.random()
    if depth > 2 or r < 0.3:
        return rng.choice(RANDOM_ATOMS)
    if r < 0.5:
        return (f"({random_expression(rng, depth + 1)} {rng.choice(RANDOM_OPERATORS)} "
                f"{random_expression(rng, depth + 1)})")
    if r < 0.65:
        return f"{random_expression(rng, depth + 1)} | {rng.choice(RANDOM_FILTERS)}"
    if r < 0.75:
        negation = "not " if rng.random() < 0.3 else ""
        return f"({random_expression(rng, depth + 1)} is {negation}{rng.choice(RANDOM_TESTS)})"
    if r < 0.9:  # not on number, none and dict literals, which jinja2 folds at compile time
        return rng.choice(RANDOM_POSTFIX_ATOMS) + rng.choice(RANDOM_POSTFIX)
    if r < 0.95:
        return f"(not {random_expression(rng, depth + 1)})"
    return (f"({random_expression(rng, depth + 1)} if {random_expression(rng, depth + 1)} "
            f"else {random_expression(rng, depth + 1)})")


def random_whitespace(rng, depth):
    def modifier():
        return rng.choice(["", "", "-", "+"])

    def block(statement):
        return "{%" + modifier() + " " + statement + " " + modifier() + "%}"

    out = []
    for _ in range(rng.randint(1, 6)):
        r = rng.random()
        if r < 0.45:
            out.append(rng.choice(RANDOM_SPACES))
        elif r < 0.6:
            out.append("{{" + rng.choice(["", "-"]) + " 'v' " + rng.choice(["", "-"]) + "}}")
        elif r < 0.7:
            out.append("{#" + rng.choice(["", "-"]) + " c " + rng.choice(["", "-"]) + "#}")
        elif r < 0.85 and depth < 3:
            other = block("else") + random_whitespace(rng, depth + 1) if rng.random() < 0.3 else ""
            out.append(block("if true") + random_whitespace(rng, depth + 1) + other +
                       block("endif"))
        elif depth < 3:
            out.append(block("for i in [1, 2]") + random_whitespace(rng, depth + 1) +
                       block("endfor"))
    return "".join(out)


RANDOM_STATEMENT_VALUES = ["1", "a + 1", "x ~ 'q'", "[1, 2]", "i", "loop.index", "ns.v + 1",
                           "m.role", "'s'", "b | length", "f(2)", "loop.previtem",
                           "loop.nextitem", "loop.revindex", "loop.cycle('p', 'q')"]


def random_statements(rng, depth):
    """Statements that nest: set (also of a namespace attribute and two names at once), for
    with else and an if filter, if/elif/else, break/continue inside loops, block set, output;
    the names they share show jinja2's scoping."""
    def statement():
        r = rng.random()
        if r < 0.25:
            return "{{ " + rng.choice(["a", "b", "x", "i"]) + " }}"
        if r < 0.4:
            target = rng.choice(["a", "b", "x", "i", "ns.v", "a, b"])
            value = rng.choice(RANDOM_STATEMENT_VALUES)
            if target == "a, b":
                value += ", " + rng.choice(RANDOM_STATEMENT_VALUES)
            return "{% set " + target + " = " + value + " %}"
        if r < 0.55 and depth < 3:
            iterable = rng.choice(["[1, 2, 3]", "messages", "range(2)", "[]", "'ab'", "{'k': 1}"])
            return ("{% for i in " + iterable + rng.choice(["", " if i != 2"]) + " %}" +
                    random_statements(rng, depth + 1) + rng.choice(["", "{% else %}E"]) +
                    "{% endfor %}")
        if r < 0.65 and depth < 3:
            return "{% for m in messages %}" + random_statements(rng, depth + 1) + "{% endfor %}"
        if r < 0.75 and depth < 3:
            condition = rng.choice(["a", "x is defined", "loop is defined", "i > 1", "ns.v"])
            return ("{% if " + condition + " %}" + random_statements(rng, depth + 1) +
                    "{% elif b %}B{% else %}" + random_statements(rng, depth + 1) + "{% endif %}")
        if r < 0.8:
            return rng.choice(["{% break %}", "{% continue %}"]) if depth > 0 else "."
        if r < 0.9:
            return "{{ " + rng.choice(RANDOM_STATEMENT_VALUES) + " }}"
        return "{% set c %}" + random_statements(rng, depth + 1) + "{% endset %}[{{ c }}]"

    return "".join(statement() + "," for _ in range(rng.randint(1, 4)))


def random_cases(env, count):
    rng = random.Random(20261130)
    lines = []
    for i in range(count):
        if i % 3 == 0:
            text = ("{% set ns = namespace(v=[1, 'a']) %}{% for m in messages %}{{ " +
                    random_expression(rng, 0) + " }}|{% endfor %}")
        elif i % 3 == 1:
            text = random_whitespace(rng, 0)
        else:
            text = ("{% macro f(p, q=3) %}{{ p }}-{{ q }}-{{ a }}{% endmacro %}"
                    "{% set ns = namespace(v=0) %}{% set a = 5 %}" + random_statements(rng, 0))
        case = {"template": text}
        try:
            case["rendered"] = env.from_string(text).render(
                messages=SNIPPET_MESSAGES, tools=None, documents=None,
                add_generation_prompt=True, bos_token="<s>", eos_token="</s>")
        except Exception as e:  # any error: the C++ renderer must fail too
            case["error"] = type(e).__name__
        lines.append(json.dumps(case, ensure_ascii=False))
    with open(os.path.join(HERE, "random_expected.jsonl"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines)} random templates")


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
    random_cases(env, 1200)


if __name__ == "__main__":
    main()
