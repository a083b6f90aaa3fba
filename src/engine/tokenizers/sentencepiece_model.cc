#include "engine/tokenizers/sentencepiece_model.h"

#include <cstring>

namespace tf::engine {
namespace {

// Reads protocol-buffer wire format: (field, wire type) keys followed by their values.
class ProtoReader {
 public:
  explicit ProtoReader(std::string_view data) : data_(data) {}

  bool done() const { return pos_ >= data_.size(); }
  bool failed() const { return failed_; }

  // The next key; false at the end or on malformed input (then failed()).
  bool Next(uint32_t* field, uint32_t* wire_type) {
    if (done()) return false;
    uint64_t key;
    if (!Varint(&key)) return false;
    *field = static_cast<uint32_t>(key >> 3);
    *wire_type = static_cast<uint32_t>(key & 7);
    return true;
  }

  bool Varint(uint64_t* out) {
    *out = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (done()) return Fail();
      uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      *out |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return true;
    }
    return Fail();
  }

  bool Bytes(std::string_view* out) {
    uint64_t n;
    if (!Varint(&n) || n > data_.size() - pos_) return Fail();
    *out = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }

  bool Fixed32(uint32_t* out) {
    if (data_.size() - pos_ < 4) return Fail();
    std::memcpy(out, data_.data() + pos_, 4);  // little-endian, as the hosts we build for
    pos_ += 4;
    return true;
  }

  bool Skip(uint32_t wire_type) {
    uint64_t v;
    std::string_view s;
    uint32_t f;
    switch (wire_type) {
      case 0:
        return Varint(&v);
      case 1:
        if (data_.size() - pos_ < 8) return Fail();
        pos_ += 8;
        return true;
      case 2:
        return Bytes(&s);
      case 5:
        return Fixed32(&f);
      default:
        return Fail();  // groups (3, 4) are not used by this format
    }
  }

 private:
  bool Fail() {
    failed_ = true;
    return false;
  }
  std::string_view data_;
  size_t pos_ = 0;
  bool failed_ = false;
};

// Calls on_field(reader, field, wire_type) for each field of the message in `data`; on_field
// reads the value or returns false to have it skipped. False if the message is malformed.
template <typename F>
bool ForEachField(std::string_view data, F on_field) {
  ProtoReader r(data);
  uint32_t field, wire;
  while (r.Next(&field, &wire)) {
    if (!on_field(r, field, wire) && !r.failed() && !r.Skip(wire)) return false;
    if (r.failed()) return false;
  }
  return !r.failed();
}

bool ReadBool(ProtoReader& r, bool* out) {
  uint64_t v;
  if (!r.Varint(&v)) return false;
  *out = v != 0;
  return true;
}

bool ReadInt(ProtoReader& r, int32_t* out) {
  uint64_t v;
  if (!r.Varint(&v)) return false;
  *out = static_cast<int32_t>(v);  // negative int32s are 10-byte varints; truncation restores them
  return true;
}

}  // namespace

Result<SentencePieceModel> ParseSentencePieceModel(std::string_view bytes, std::string_view file) {
  SentencePieceModel m;
  std::string problem;
  auto piece = [&](ProtoReader& r, uint32_t field, uint32_t wire) {
    SentencePieceModel::Piece p;
    std::string_view body;
    if (wire != 2 || !r.Bytes(&body)) return false;
    bool ok = ForEachField(body, [&](ProtoReader& pr, uint32_t f, uint32_t w) {
      std::string_view s;
      uint32_t bits;
      int32_t type;
      if (f == 1 && w == 2 && pr.Bytes(&s)) return p.text.assign(s), true;
      if (f == 2 && w == 5 && pr.Fixed32(&bits)) return std::memcpy(&p.score, &bits, 4), true;
      if (f == 3 && w == 0 && ReadInt(pr, &type)) {
        if (type < 1 || type > 6) problem = "piece type " + std::to_string(type) + " is unknown";
        p.type = static_cast<SentencePieceModel::PieceType>(type);
        return true;
      }
      return false;
    });
    if (!ok) problem = "piece " + std::to_string(m.pieces.size()) + " is malformed";
    m.pieces.push_back(std::move(p));
    return true;
  };
  auto trainer = [&](ProtoReader& r, uint32_t f, uint32_t w) {
    int32_t v;
    if (w != 0) return false;
    if (f == 3 && ReadInt(r, &v)) return m.model_type = v, true;
    if (f == 24) return ReadBool(r, &m.treat_whitespace_as_suffix);
    if (f == 35) return ReadBool(r, &m.byte_fallback);
    if (f == 40) return ReadInt(r, &m.unk_id);
    if (f == 41) return ReadInt(r, &m.bos_id);
    if (f == 42) return ReadInt(r, &m.eos_id);
    return false;
  };
  auto normalizer = [&](ProtoReader& r, uint32_t f, uint32_t w) {
    std::string_view s;
    if (f == 1 && w == 2 && r.Bytes(&s)) return m.normalizer_name.assign(s), true;
    if (f == 2 && w == 2 && r.Bytes(&s)) return m.precompiled_charsmap.assign(s), true;
    if (f == 3 && w == 0) return ReadBool(r, &m.add_dummy_prefix);
    if (f == 4 && w == 0) return ReadBool(r, &m.remove_extra_whitespaces);
    if (f == 5 && w == 0) return ReadBool(r, &m.escape_whitespaces);
    return false;
  };
  bool ok = ForEachField(bytes, [&](ProtoReader& r, uint32_t field, uint32_t wire) {
    if (field == 1) return piece(r, field, wire);
    std::string_view body;
    if ((field == 2 || field == 3) && wire == 2 && r.Bytes(&body)) {
      bool sub = field == 2 ? ForEachField(body, trainer) : ForEachField(body, normalizer);
      if (!sub) problem = field == 2 ? "trainer_spec is malformed" : "normalizer_spec is malformed";
      return true;
    }
    return false;
  });
  if (!ok && problem.empty()) problem = "not a SentencePiece model (malformed protocol buffer)";
  if (problem.empty() && m.pieces.empty()) problem = "has no pieces";
  if (!problem.empty()) return InvalidArgument(std::string(file) + ": " + problem);
  return m;
}

}  // namespace tf::engine
