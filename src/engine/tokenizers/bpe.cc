#include "engine/tokenizers/bpe.h"

#include <cstdio>
#include <queue>

#include "engine/tokenizers/unicode.h"

namespace tf::engine {

Result<BpeModel> BpeModel::Build(std::unordered_map<std::string, int32_t> vocab,
                                 const std::vector<std::pair<std::string, std::string>>& merges,
                                 Options options) {
  BpeModel m;
  int32_t limit = 0;
  for (const auto& [token, id] : vocab) {
    if (id < 0) return InvalidArgument("vocab entry '" + token + "' has a negative id");
    limit = std::max(limit, id + 1);
  }
  m.id_to_token_.resize(limit);
  m.id_used_.resize(limit);
  for (const auto& [token, id] : vocab) {
    if (m.id_used_[id]) {
      return InvalidArgument("vocab ids repeat: '" + token + "' and '" + m.id_to_token_[id] +
                             "' are both " + std::to_string(id));
    }
    m.id_to_token_[id] = token;
    m.id_used_[id] = true;
  }
  m.vocab_ = std::move(vocab);
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    auto ia = m.vocab_.find(a), ib = m.vocab_.find(b), ir = m.vocab_.find(a + b);
    if (ia == m.vocab_.end() || ib == m.vocab_.end() || ir == m.vocab_.end()) {
      return InvalidArgument("merge " + std::to_string(rank) + " ('" + a + "' '" + b +
                             "') uses a token that is not in the vocab");
    }
    // A pair listed twice keeps its first (best) rank.
    m.merges_.emplace(PairKey(ia->second, ib->second),
                      Merge{static_cast<int32_t>(rank), ir->second});
  }
  if (options.unk_token) {
    auto it = m.vocab_.find(*options.unk_token);
    if (it == m.vocab_.end()) {
      return InvalidArgument("unk_token '" + *options.unk_token + "' is not in the vocab");
    }
    m.unk_id_ = it->second;
  }
  if (options.byte_fallback) {
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      auto it = m.vocab_.find(name);
      m.byte_ids_.push_back(it == m.vocab_.end() ? -1 : it->second);
    }
  }
  m.options_ = std::move(options);
  return m;
}

bool BpeModel::HasByteTokens(std::string_view bytes) const {
  for (char b : bytes) {
    if (byte_ids_[static_cast<uint8_t>(b)] < 0) return false;
  }
  return true;
}

void BpeModel::Encode(std::string_view word, std::vector<int32_t>* ids) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    if (auto it = vocab_.find(std::string(word)); it != vocab_.end()) {
      ids->push_back(it->second);
      return;
    }
  }
  // One symbol per character, in a doubly linked list over `symbols`.
  struct Symbol {
    int32_t id;
    int32_t prev, next;  // -1 at the ends
  };
  std::vector<Symbol> symbols;
  auto add = [&](int32_t id) {
    int32_t index = static_cast<int32_t>(symbols.size());
    symbols.push_back({id, index - 1, -1});
    if (index > 0) symbols[index - 1].next = index;
  };
  bool last_unknown = false;
  for (size_t i = 0; i < word.size();) {
    size_t len = std::max<size_t>(1, Utf8SequenceLength(word.substr(i)));
    std::string_view ch = word.substr(i, len);
    i += len;
    if (auto it = vocab_.find(std::string(ch)); it != vocab_.end()) {
      add(it->second);
      last_unknown = false;
    } else if (options_.byte_fallback && HasByteTokens(ch)) {
      for (char b : ch) add(byte_ids_[static_cast<uint8_t>(b)]);
      last_unknown = false;
    } else if (unk_id_) {
      if (!(options_.fuse_unk && last_unknown)) add(*unk_id_);
      last_unknown = true;
    }  // else: unknown, and no unk_token: dropped
  }
  // Repeatedly merge the best-ranked adjacent pair, the leftmost among equals.
  struct Candidate {
    int32_t rank, left, left_id, right_id;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : left > o.left;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto consider = [&](int32_t left) {
    if (left < 0 || symbols[left].next < 0) return;
    int32_t right = symbols[left].next;
    auto it = merges_.find(PairKey(symbols[left].id, symbols[right].id));
    if (it != merges_.end()) {
      queue.push({it->second.rank, left, symbols[left].id, symbols[right].id});
    }
  };
  for (int32_t i = 0; i < static_cast<int32_t>(symbols.size()); ++i) consider(i);
  while (!queue.empty()) {
    Candidate c = queue.top();
    queue.pop();
    Symbol& left = symbols[c.left];
    if (left.id != c.left_id || left.next < 0 || symbols[left.next].id != c.right_id) continue;
    Symbol& right = symbols[left.next];
    left.id = merges_.at(PairKey(c.left_id, c.right_id)).result;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = c.left;
    right.id = -1;  // removed
    consider(left.prev);
    consider(c.left);
  }
  for (int32_t i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
    ids->push_back(symbols[i].id);
  }
}

const std::string* BpeModel::IdToToken(int32_t id) const {
  if (id < 0 || id >= id_limit() || !id_used_[id]) return nullptr;
  return &id_to_token_[id];
}

std::optional<int32_t> BpeModel::TokenToId(std::string_view token) const {
  auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

}  // namespace tf::engine
