"""A byte-level BPE tokenizer, trained at start and saved as a Hugging Face tokenizer.json.

It is the GPT-2 kind: text is split into pieces by GPT-2's pattern (the ByteLevel pre-tokenizer
with its own regex), each piece's UTF-8 bytes start as one token per byte, and merges are applied
by rank, the leftmost pair first among equal ranks. One added token, <|endoftext|>, separates
documents and is the model's BOS and EOS; the post-processor puts it before every encoded text.
Encoding here is what the tokenizers library (and tensorfleet's engine) do with the exported
tokenizer.json, so the ids the model was trained on are the ids it is served with.

Ids: 0-255 are the bytes, then one id per new token from the merges, then <|endoftext|>.
"""

import collections
import re
import unicodedata

END_OF_TEXT = "<|endoftext|>"

# The White_Space property (what \s means to the tokenizers library's regex engine).
_WHITE_SPACE = [(0x09, 0x0D), (0x20, 0x20), (0x85, 0x85), (0xA0, 0xA0), (0x1680, 0x1680),
                (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F), (0x205F, 0x205F),
                (0x3000, 0x3000)]


def _byte_chars():
    """GPT-2's byte -> character table: printable Latin-1 bytes stand for themselves, the other
    bytes for U+0100 onwards, in byte order."""
    table, extra = [], 0
    for b in range(256):
        if 0x21 <= b <= 0x7E or 0xA1 <= b <= 0xAC or 0xAE <= b <= 0xFF:
            table.append(chr(b))
        else:
            table.append(chr(256 + extra))
            extra += 1
    return table


BYTE_CHARS = _byte_chars()


def _ranges(predicate):
    """The code points for which predicate(category) holds, as [(first, last)]."""
    out = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        if predicate(unicodedata.category(chr(cp))):
            if out and out[-1][1] == cp - 1:
                out[-1] = (out[-1][0], cp)
            else:
                out.append((cp, cp))
    return out


def _class_body(ranges):
    return "".join("\\U%08x-\\U%08x" % r if r[0] != r[1] else "\\U%08x" % r[0] for r in ranges)


def _gpt2_pattern():
    r"""GPT-2's pattern, 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+,
    with \p{L}, \p{N} and \s spelled out as character classes (Python's re has no \p{...}, and
    its \s is not exactly White_Space)."""
    letters = _class_body(_ranges(lambda c: c.startswith("L")))
    numbers = _class_body(_ranges(lambda c: c.startswith("N")))
    space = _class_body(_WHITE_SPACE)
    return re.compile(
        "'s|'t|'re|'ve|'m|'ll|'d"
        f"| ?[{letters}]+| ?[{numbers}]+| ?[^{space}{letters}{numbers}]+"
        f"|[{space}]+(?![^{space}])|[{space}]+")


_PATTERN = None


def split_words(text):
    """The pieces GPT-2's pattern splits text into (together exactly the text)."""
    global _PATTERN
    if _PATTERN is None:
        _PATTERN = _gpt2_pattern()
    return _PATTERN.findall(text)


class Tokenizer:
    """Byte-level BPE over `merges`, a list of (left id, right id) pairs in rank order."""

    def __init__(self, merges):
        self.merges = [tuple(m) for m in merges]
        self.token_bytes = [bytes([b]) for b in range(256)]
        by_bytes = {t: i for i, t in enumerate(self.token_bytes)}
        self._rank = {}  # (left, right) -> (rank, merged id)
        for rank, (a, b) in enumerate(self.merges):
            if not (0 <= a < len(self.token_bytes) and 0 <= b < len(self.token_bytes)):
                raise ValueError(f"merge {rank} ({a}, {b}) uses an id not defined before it")
            merged = self.token_bytes[a] + self.token_bytes[b]
            if merged not in by_bytes:
                by_bytes[merged] = len(self.token_bytes)
                self.token_bytes.append(merged)
            self._rank.setdefault((a, b), (rank, by_bytes[merged]))
        self.eot_id = len(self.token_bytes)
        self.vocab_size = self.eot_id + 1
        self._cache = {}

    @classmethod
    def from_json(cls, spec):
        """The tokenizer of a tokenizer.json that to_json wrote."""
        vocab = spec["model"]["vocab"]
        pairs = (m.split(" ") if isinstance(m, str) else m for m in spec["model"]["merges"])
        return cls([(vocab[a], vocab[b]) for a, b in pairs])

    def _encode_word(self, word):
        ids = self._cache.get(word)
        if ids is not None:
            return ids
        ids = list(word.encode("utf-8"))
        while len(ids) > 1:
            best = None  # (rank, position, merged id)
            for i in range(len(ids) - 1):
                r = self._rank.get((ids[i], ids[i + 1]))
                if r is not None and (best is None or r[0] < best[0]):
                    best = (r[0], i, r[1])
            if best is None:
                break
            _, i, merged = best
            ids[i:i + 2] = [merged]
        self._cache[word] = ids
        return ids

    def encode(self, text, add_special_tokens=False):
        """The ids of text; with add_special_tokens, <|endoftext|> first (the BOS)."""
        ids = [self.eot_id] if add_special_tokens else []
        for n, part in enumerate(text.split(END_OF_TEXT)):
            if n > 0:
                ids.append(self.eot_id)
            for word in split_words(part):
                ids.extend(self._encode_word(word))
        return ids

    def decode(self, ids):
        out = b"".join(END_OF_TEXT.encode() if i == self.eot_id else self.token_bytes[i]
                       for i in ids)
        return out.decode("utf-8", errors="replace")

    def token_string(self, i):
        """The vocabulary string of id i ("Ġthe" for b" the")."""
        if i == self.eot_id:
            return END_OF_TEXT
        return "".join(BYTE_CHARS[b] for b in self.token_bytes[i])

    def to_json(self):
        """tokenizer.json as the tokenizers library writes it for this kind of tokenizer."""
        vocab = {self.token_string(i): i for i in range(self.vocab_size)}
        merges = [f"{self.token_string(a)} {self.token_string(b)}" for a, b in self.merges]
        byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                      "use_regex": True}
        return {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [{"id": self.eot_id, "content": END_OF_TEXT, "single_word": False,
                              "lstrip": False, "rstrip": False, "normalized": False,
                              "special": True}],
            "normalizer": None,
            "pre_tokenizer": byte_level,
            "post_processor": {
                "type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": END_OF_TEXT, "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": END_OF_TEXT, "type_id": 0}},
                         {"Sequence": {"id": "A", "type_id": 0}},
                         {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {END_OF_TEXT: {"id": END_OF_TEXT, "ids": [self.eot_id],
                                                 "tokens": [END_OF_TEXT]}},
            },
            "decoder": byte_level,
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": vocab, "merges": merges},
        }


def train(texts, num_merges):
    """Learns up to num_merges merges from texts: each time the adjacent pair seen most often
    within words (ties: the smallest ids), until no pair occurs twice. Deterministic."""
    counts = collections.Counter()
    for text in texts:
        counts.update(split_words(text))
    words = [list(w.encode("utf-8")) for w in counts]
    freq = list(counts.values())
    pairs = collections.Counter()
    where = collections.defaultdict(set)  # pair -> words that held it (possibly no longer)
    for n, w in enumerate(words):
        for p in zip(w, w[1:]):
            pairs[p] += freq[n]
            where[p].add(n)

    merges, known = [], {bytes([b]): b for b in range(256)}
    token_bytes = [bytes([b]) for b in range(256)]
    while len(merges) < num_merges and pairs:
        best, count = max(pairs.items(), key=lambda kv: (kv[1], -kv[0][0], -kv[0][1]))
        if count < 2:
            break
        merged_bytes = token_bytes[best[0]] + token_bytes[best[1]]
        if merged_bytes not in known:
            known[merged_bytes] = len(token_bytes)
            token_bytes.append(merged_bytes)
        new_id = known[merged_bytes]
        merges.append(best)
        for n in sorted(where.pop(best)):
            w = words[n]
            for p in zip(w, w[1:]):
                pairs[p] -= freq[n]
                if pairs[p] <= 0:
                    del pairs[p]
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(new_id)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            words[n] = out
            for p in zip(out, out[1:]):
                pairs[p] += freq[n]
                where[p].add(n)
    return Tokenizer(merges)

