#include "engine/formats/gguf.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>

namespace tf::engine {
namespace {

constexpr uint64_t kMaxKeyBytes = 65535;  // the format's limit
constexpr uint64_t kMaxNameBytes = 64;    // ggml's limit on tensor names (GGML_MAX_NAME)
constexpr uint32_t kMaxDims = 4;          // ggml's limit (GGML_MAX_DIMS)

// Bytes per scalar of a value type; 0 for string and array.
uint64_t ScalarSize(GgufValueType t) {
  switch (t) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
      return 2;
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32:
      return 4;
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64:
      return 8;
    case GgufValueType::kString:
    case GgufValueType::kArray:
      return 0;
  }
  return 0;
}

bool KnownValueType(uint32_t t) { return t <= static_cast<uint32_t>(GgufValueType::kFloat64); }

template <typename T>
T Load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);  // the engine runs on little-endian machines, as GGUF is
  return v;
}

// Elements per block and bytes per block of the tensor types the engine reads.
struct BlockLayout {
  uint64_t elements, bytes;
};
std::optional<BlockLayout> Layout(uint32_t type) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kF32:
      return BlockLayout{1, 4};
    case GgmlType::kF16:
    case GgmlType::kBF16:
      return BlockLayout{1, 2};
    case GgmlType::kQ8_0:
      return BlockLayout{32, 34};
    case GgmlType::kQ4_0:
      return BlockLayout{32, 18};
    case GgmlType::kQ2_K:
      return BlockLayout{256, 84};
    case GgmlType::kQ3_K:
      return BlockLayout{256, 110};
    case GgmlType::kQ4_K:
      return BlockLayout{256, 144};
    case GgmlType::kQ5_K:
      return BlockLayout{256, 176};
    case GgmlType::kQ6_K:
      return BlockLayout{256, 210};
  }
  return std::nullopt;
}

}  // namespace

std::string_view GgufValueTypeName(GgufValueType type) {
  static constexpr std::string_view kNames[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                                "int32",  "float32", "bool",   "string", "array",
                                                "uint64", "int64",   "float64"};
  auto i = static_cast<uint32_t>(type);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

std::string GgmlTypeName(uint32_t type) {
  static constexpr const char* kNames[] = {
      "F32",      "F16",      "Q4_0",    "Q4_1",  "Q4_2",   "Q4_3",  "Q5_0",  "Q5_1",
      "Q8_0",     "Q8_1",     "Q2_K",    "Q3_K",  "Q4_K",   "Q5_K",  "Q6_K",  "Q8_K",
      "IQ2_XXS",  "IQ2_XS",   "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
      "I8",       "I16",      "I32",     "I64",   "F64",    "IQ1_M", "BF16",  "Q4_0_4_4",
      "Q4_0_4_8", "Q4_0_8_8", "TQ1_0",   "TQ2_0"};
  if (type < std::size(kNames)) return kNames[type];
  return "type " + std::to_string(type);
}

// ---- GgufValue

std::optional<int64_t> GgufValue::ReadInt(GgufValueType t, const uint8_t* p) const {
  switch (t) {
    case GgufValueType::kUint8:
      return Load<uint8_t>(p);
    case GgufValueType::kInt8:
      return Load<int8_t>(p);
    case GgufValueType::kUint16:
      return Load<uint16_t>(p);
    case GgufValueType::kInt16:
      return Load<int16_t>(p);
    case GgufValueType::kUint32:
      return Load<uint32_t>(p);
    case GgufValueType::kInt32:
      return Load<int32_t>(p);
    case GgufValueType::kInt64:
      return Load<int64_t>(p);
    case GgufValueType::kUint64: {
      uint64_t v = Load<uint64_t>(p);
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
      return static_cast<int64_t>(v);
    }
    default:
      return std::nullopt;
  }
}

std::optional<double> GgufValue::ReadNumber(GgufValueType t, const uint8_t* p) const {
  if (t == GgufValueType::kFloat32) return Load<float>(p);
  if (t == GgufValueType::kFloat64) return Load<double>(p);
  if (t == GgufValueType::kUint64) return static_cast<double>(Load<uint64_t>(p));
  auto i = ReadInt(t, p);
  if (i) return static_cast<double>(*i);
  return std::nullopt;
}

std::optional<int64_t> GgufValue::AsInt() const {
  return is_array() || type_ == GgufValueType::kString ? std::nullopt : ReadInt(type_, data_);
}

std::optional<double> GgufValue::AsNumber() const {
  return is_array() || type_ == GgufValueType::kString ? std::nullopt : ReadNumber(type_, data_);
}

std::optional<bool> GgufValue::AsBool() const {
  if (type_ != GgufValueType::kBool) return std::nullopt;
  return data_[0] != 0;
}

std::optional<std::string_view> GgufValue::AsString() const {
  if (type_ != GgufValueType::kString) return std::nullopt;
  return strings_[0];
}

std::optional<int64_t> GgufValue::IntAt(uint64_t i) const {
  if (!is_array() || i >= count_ || element_type_ == GgufValueType::kString) return std::nullopt;
  return ReadInt(element_type_, data_ + i * ScalarSize(element_type_));
}

std::optional<double> GgufValue::NumberAt(uint64_t i) const {
  if (!is_array() || i >= count_ || element_type_ == GgufValueType::kString) return std::nullopt;
  return ReadNumber(element_type_, data_ + i * ScalarSize(element_type_));
}

std::optional<std::string_view> GgufValue::StringAt(uint64_t i) const {
  if (!is_array() || i >= count_ || element_type_ != GgufValueType::kString) return std::nullopt;
  return strings_[i];
}

std::string GgufValue::TypeString() const {
  if (!is_array()) return std::string(GgufValueTypeName(type_));
  return "array[" + std::string(GgufValueTypeName(element_type_)) + "]";
}

// ---- GgufTensor

std::vector<int64_t> GgufTensor::Shape() const { return {ne.rbegin(), ne.rend()}; }

int64_t GgufTensor::NumElements() const {
  int64_t n = 1;
  for (int64_t d : ne) n *= d;
  return n;
}

// ---- parsing

class GgufParser {
 public:
  GgufParser(const uint8_t* data, size_t size, std::string_view file)
      : data_(data), size_(size), file_(file) {}

  Result<GgufContents> Parse() {
    GgufContents c;
    if (size_ < 24) {
      return Bad("file is " + std::to_string(size_) +
                 " bytes, too short for the 24-byte GGUF header; is it truncated?");
    }
    if (std::memcmp(data_, "GGUF", 4) != 0) {
      return Bad("does not start with the magic \"GGUF\"; is it a GGUF file?");
    }
    pos_ = 4;
    c.version = Load<uint32_t>(data_ + pos_);
    pos_ += 4;
    if (c.version != 2 && c.version != 3) {
      if (__builtin_bswap32(c.version) <= 3) {
        return Bad("is a big-endian GGUF file; only little-endian ones are supported");
      }
      return Bad("GGUF version " + std::to_string(c.version) +
                 " is not supported (versions 2 and 3 are)");
    }
    uint64_t n_tensors = Load<uint64_t>(data_ + pos_);
    uint64_t n_kv = Load<uint64_t>(data_ + pos_ + 8);
    pos_ += 16;
    // A metadata entry takes at least 13 bytes (key length, type, a one-byte value) and a tensor
    // info at least 32: counts beyond what the file could hold are refused before anything is
    // allocated for them.
    if (n_kv > Remaining() / 13) {
      return Bad("metadata count " + std::to_string(n_kv) + " cannot fit in the file's " +
                 std::to_string(size_) + " bytes; is it truncated or corrupt?");
    }
    if (n_tensors > Remaining() / 32) {
      return Bad("tensor count " + std::to_string(n_tensors) + " cannot fit in the file's " +
                 std::to_string(size_) + " bytes; is it truncated or corrupt?");
    }
    c.metadata.reserve(n_kv);
    for (uint64_t i = 0; i < n_kv; ++i) {
      TF_RETURN_IF_ERROR(ReadKeyValue(i, &c));
    }
    TF_RETURN_IF_ERROR(ReadAlignment(&c));
    c.tensors.reserve(n_tensors);
    for (uint64_t i = 0; i < n_tensors; ++i) {
      TF_RETURN_IF_ERROR(ReadTensorInfo(i, &c));
    }
    uint64_t padded = (pos_ + c.alignment - 1) / c.alignment * c.alignment;
    c.data_offset = std::min<uint64_t>(padded, size_);
    if (!c.tensors.empty() && padded > size_) {
      return Bad("the data section would start at byte " + std::to_string(padded) +
                 " but the file has " + std::to_string(size_) + " bytes; is it truncated?");
    }
    TF_RETURN_IF_ERROR(PlaceTensors(&c));
    return c;
  }

 private:
  Status Bad(const std::string& what) const {
    return InvalidArgument(std::string(file_) + ": " + what);
  }
  Status BadKey(std::string_view key, const std::string& what) const {
    return Bad("metadata key '" + std::string(key) + "': " + what);
  }
  Status BadTensor(std::string_view name, const std::string& what) const {
    return Bad("tensor '" + std::string(name) + "': " + what);
  }
  Status Truncated(const std::string& what) const {
    return Bad(what + " runs past the end of the file (" + std::to_string(size_) +
               " bytes); is it truncated?");
  }

  uint64_t Remaining() const { return size_ - pos_; }

  Status ReadU32(const std::string& what, uint32_t* out) {
    if (Remaining() < 4) return Truncated(what);
    *out = Load<uint32_t>(data_ + pos_);
    pos_ += 4;
    return OkStatus();
  }
  Status ReadU64(const std::string& what, uint64_t* out) {
    if (Remaining() < 8) return Truncated(what);
    *out = Load<uint64_t>(data_ + pos_);
    pos_ += 8;
    return OkStatus();
  }
  Status ReadString(const std::string& what, uint64_t max_len, std::string_view* out) {
    uint64_t len = 0;
    TF_RETURN_IF_ERROR(ReadU64(what, &len));
    if (len > Remaining()) {
      return Truncated(what + " (a string of " + std::to_string(len) + " bytes)");
    }
    if (len > max_len) {
      return Bad(what + " is " + std::to_string(len) + " bytes, more than the " +
                 std::to_string(max_len) + " allowed");
    }
    *out = std::string_view(reinterpret_cast<const char*>(data_ + pos_), len);
    pos_ += len;
    return OkStatus();
  }

  Status ReadKeyValue(uint64_t index, GgufContents* c) {
    std::string where = "metadata entry " + std::to_string(index);
    std::string_view key;
    TF_RETURN_IF_ERROR(ReadString(where + "'s key", kMaxKeyBytes, &key));
    if (keys_.count(key) > 0) return BadKey(key, "appears twice");
    uint32_t type = 0;
    TF_RETURN_IF_ERROR(ReadU32("metadata key '" + std::string(key) + "': its type", &type));
    GgufValue value;
    TF_RETURN_IF_ERROR(ReadValue(key, type, &value));
    keys_.insert(std::string(key));
    c->metadata.emplace_back(std::string(key), std::move(value));
    return OkStatus();
  }

  Status ReadValue(std::string_view key, uint32_t type, GgufValue* v) {
    std::string what = "metadata key '" + std::string(key) + "': its value";
    if (!KnownValueType(type)) {
      return BadKey(key, "value type " + std::to_string(type) + " is unknown");
    }
    v->type_ = static_cast<GgufValueType>(type);
    if (v->type_ == GgufValueType::kString) {
      std::string_view s;
      TF_RETURN_IF_ERROR(ReadString(what, std::numeric_limits<uint64_t>::max(), &s));
      v->strings_.push_back(s);
      return OkStatus();
    }
    if (v->type_ != GgufValueType::kArray) {
      uint64_t n = ScalarSize(v->type_);
      if (Remaining() < n) return Truncated(what);
      v->data_ = data_ + pos_;
      pos_ += n;
      return OkStatus();
    }
    uint32_t element = 0;
    TF_RETURN_IF_ERROR(ReadU32(what + "'s element type", &element));
    if (!KnownValueType(element)) {
      return BadKey(key, "array element type " + std::to_string(element) + " is unknown");
    }
    v->element_type_ = static_cast<GgufValueType>(element);
    if (v->element_type_ == GgufValueType::kArray) {
      return BadKey(key, "arrays of arrays are not supported");
    }
    uint64_t count = 0;
    TF_RETURN_IF_ERROR(ReadU64(what + "'s element count", &count));
    v->count_ = count;
    uint64_t min_size =
        v->element_type_ == GgufValueType::kString ? 8 : ScalarSize(v->element_type_);
    if (count > Remaining() / min_size) {
      return Truncated(what + " (an array of " + std::to_string(count) + " " +
                       std::string(GgufValueTypeName(v->element_type_)) + ")");
    }
    if (v->element_type_ != GgufValueType::kString) {
      v->data_ = data_ + pos_;
      pos_ += count * min_size;
      return OkStatus();
    }
    v->strings_.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      std::string_view s;
      TF_RETURN_IF_ERROR(ReadString(what + "[" + std::to_string(i) + "]",
                                    std::numeric_limits<uint64_t>::max(), &s));
      v->strings_.push_back(s);
    }
    return OkStatus();
  }

  Status ReadAlignment(GgufContents* c) {
    for (const auto& [key, value] : c->metadata) {
      if (key != "general.alignment") continue;
      auto a = value.AsInt();
      if (value.type() != GgufValueType::kUint32 || !a || *a == 0 || (*a & (*a - 1)) != 0) {
        return BadKey(key, "must be a uint32 power of two");
      }
      c->alignment = static_cast<uint64_t>(*a);
    }
    return OkStatus();
  }

  Status ReadTensorInfo(uint64_t index, GgufContents* c) {
    std::string where = "tensor info " + std::to_string(index);
    std::string_view name;
    TF_RETURN_IF_ERROR(ReadString(where + "'s name", kMaxNameBytes, &name));
    if (tensor_names_.count(name) > 0) return BadTensor(name, "appears twice");
    tensor_names_.insert(std::string(name));
    GgufTensor t;
    t.name = std::string(name);
    where = "tensor '" + t.name + "'";
    uint32_t n_dims = 0;
    TF_RETURN_IF_ERROR(ReadU32(where + ": its dimension count", &n_dims));
    if (n_dims == 0 || n_dims > kMaxDims) {
      return BadTensor(name, "has " + std::to_string(n_dims) + " dimensions (1 to " +
                                 std::to_string(kMaxDims) + " are allowed)");
    }
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t dim = 0;
      TF_RETURN_IF_ERROR(ReadU64(where + ": its dimensions", &dim));
      t.ne.push_back(static_cast<int64_t>(dim));
      if (dim > (uint64_t{1} << 40) ||
          (dim != 0 && elements > (std::numeric_limits<uint64_t>::max() / 8) / dim)) {
        return BadTensor(name, "dimension " + std::to_string(dim) + " is too large");
      }
      elements *= dim;
    }
    uint32_t type = 0;
    TF_RETURN_IF_ERROR(ReadU32(where + ": its type", &type));
    auto layout = Layout(type);
    if (!layout) {
      return BadTensor(name,
                       "type " + GgmlTypeName(type) + " (" + std::to_string(type) +
                           ") is not supported (F32, F16, BF16, Q8_0, Q4_0 and Q2_K to Q6_K are)");
    }
    t.type = static_cast<GgmlType>(type);
    if (t.ne[0] % layout->elements != 0) {
      return BadTensor(name, "rows of " + std::to_string(t.ne[0]) + " elements are not a " +
                                 "whole number of " + GgmlTypeName(type) + " blocks of " +
                                 std::to_string(layout->elements));
    }
    t.num_bytes = static_cast<size_t>(elements / layout->elements * layout->bytes);
    TF_RETURN_IF_ERROR(ReadU64(where + ": its offset", &t.offset));
    c->tensors.push_back(std::move(t));
    return OkStatus();
  }

  // Checks each tensor's place in the data section and points it there.
  Status PlaceTensors(GgufContents* c) {
    uint64_t data_size = size_ - c->data_offset;
    for (GgufTensor& t : c->tensors) {
      std::string range = "bytes [" + std::to_string(t.offset) + ", " +
                          std::to_string(t.offset + t.num_bytes) + ") of the data section";
      if (t.offset % c->alignment != 0) {
        return BadTensor(t.name, "offset " + std::to_string(t.offset) +
                                     " is not a multiple of the alignment " +
                                     std::to_string(c->alignment));
      }
      if (t.offset > data_size || t.num_bytes > data_size - t.offset) {
        return BadTensor(t.name, range + " run past its end (" + std::to_string(data_size) +
                                     " bytes); is the file truncated?");
      }
      t.data = data_ + c->data_offset + t.offset;
    }
    std::vector<const GgufTensor*> by_start;
    for (const GgufTensor& t : c->tensors) {
      if (t.num_bytes > 0) by_start.push_back(&t);
    }
    std::sort(by_start.begin(), by_start.end(),
              [](const GgufTensor* a, const GgufTensor* b) { return a->offset < b->offset; });
    for (size_t i = 1; i < by_start.size(); ++i) {
      const GgufTensor* prev = by_start[i - 1];
      if (by_start[i]->offset < prev->offset + prev->num_bytes) {
        return BadTensor(by_start[i]->name, "data overlaps tensor '" + prev->name + "'");
      }
    }
    return OkStatus();
  }

  const uint8_t* data_;
  uint64_t size_;
  std::string_view file_;
  uint64_t pos_ = 0;
  std::set<std::string, std::less<>> keys_;
  std::set<std::string, std::less<>> tensor_names_;
};

Result<GgufContents> ParseGguf(const uint8_t* data, size_t size, std::string_view file) {
  return GgufParser(data, size, file).Parse();
}

// ---- GgufFile

void GgufFile::Index() {
  for (size_t i = 0; i < contents_.metadata.size(); ++i) {
    keys_.emplace(contents_.metadata[i].first, i);
  }
  for (size_t i = 0; i < contents_.tensors.size(); ++i) {
    tensors_.emplace(contents_.tensors[i].name, i);
  }
}

Result<std::unique_ptr<GgufFile>> GgufFile::Open(const std::string& path) {
  TF_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path));
  TF_ASSIGN_OR_RETURN(auto contents, ParseGguf(file->data(), file->size(), path));
  std::unique_ptr<GgufFile> out(new GgufFile(path));
  out->file_ = std::move(file);
  out->contents_ = std::move(contents);
  out->Index();
  return out;
}

Result<std::unique_ptr<GgufFile>> GgufFile::FromBytes(std::string bytes, std::string name) {
  std::unique_ptr<GgufFile> out(new GgufFile(std::move(name)));
  out->bytes_ = std::move(bytes);  // moved before parsing: the views must point into bytes_
  TF_ASSIGN_OR_RETURN(out->contents_,
                      ParseGguf(reinterpret_cast<const uint8_t*>(out->bytes_.data()),
                                out->bytes_.size(), out->path_));
  out->Index();
  return out;
}

const GgufValue* GgufFile::Find(std::string_view key) const {
  auto it = keys_.find(key);
  return it == keys_.end() ? nullptr : &contents_.metadata[it->second].second;
}

const GgufTensor* GgufFile::FindTensor(std::string_view name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &contents_.tensors[it->second];
}

bool IsGgufPath(const std::string& path) {
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".gguf") == 0) return true;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0;
}

}  // namespace tf::engine
