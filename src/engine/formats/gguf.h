// Reading GGUF files (llama.cpp's model format, version 3, little-endian). The layout is
// described in docs/engine.md:
//
//   "GGUF" u32 version, u64 tensor count, u64 metadata count,
//   metadata: (string key, u32 value type, value)...   strings are u64 length + bytes;
//                                                      arrays are u32 element type, u64 count,
//                                                      elements
//   tensor infos: (string name, u32 n_dims, u64 dims[n_dims] (ne0, the row length, first),
//                  u32 ggml type, u64 offset)...
//   padding to general.alignment (default 32), then the data section.
//
// Everything is validated before use: counts and lengths are bounded by the bytes that remain,
// keys and tensor names are unique, value and tensor types are known, every tensor's offset is
// aligned and its bytes (as its type and shape imply) lie inside the data section, and no two
// tensors overlap. Errors are InvalidArgument naming the file and, where one is at fault, the key
// or tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/formats/mapped_file.h"

namespace tf::engine {

enum class GgufValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// "uint32", "string", ...
std::string_view GgufValueTypeName(GgufValueType type);

// One metadata value. Scalars and arrays of scalars or strings (arrays of arrays are refused).
// Strings and array elements point into the file's bytes.
class GgufValue {
 public:
  GgufValueType type() const { return type_; }
  bool is_array() const { return type_ == GgufValueType::kArray; }
  GgufValueType element_type() const { return element_type_; }  // arrays only
  uint64_t size() const { return count_; }                      // arrays only

  // A scalar integer of any width (a uint64 above INT64_MAX is not one); else nullopt.
  std::optional<int64_t> AsInt() const;
  // A scalar integer or float, as double.
  std::optional<double> AsNumber() const;
  std::optional<bool> AsBool() const;
  std::optional<std::string_view> AsString() const;

  // Element i (< size()) of an array, as AsInt / AsNumber / AsString would read it.
  std::optional<int64_t> IntAt(uint64_t i) const;
  std::optional<double> NumberAt(uint64_t i) const;
  std::optional<std::string_view> StringAt(uint64_t i) const;

  // "uint32", "array[string]"
  std::string TypeString() const;

 private:
  friend class GgufParser;
  std::optional<int64_t> ReadInt(GgufValueType type, const uint8_t* p) const;
  std::optional<double> ReadNumber(GgufValueType type, const uint8_t* p) const;

  GgufValueType type_ = GgufValueType::kUint8;
  GgufValueType element_type_ = GgufValueType::kUint8;
  const uint8_t* data_ = nullptr;  // scalars and numeric arrays: the little-endian bytes
  uint64_t count_ = 0;
  std::vector<std::string_view> strings_;  // a string, or a string array's elements
};

// ggml's tensor types. Only those the engine reads are listed; GgmlTypeName also names others
// in errors.
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ8_0 = 8,
  kQ2_K = 10,
  kQ3_K = 11,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kBF16 = 30
};

// "F32", "Q8_0", ..., and the names of other ggml types ("Q4_K"); "type 99" for unknown ones.
std::string GgmlTypeName(uint32_t type);

struct GgufTensor {
  std::string name;
  GgmlType type = GgmlType::kF32;
  std::vector<int64_t> ne;        // ne[0] is the row length (ggml's order)
  uint64_t offset = 0;            // from the start of the data section
  const uint8_t* data = nullptr;  // into the file's bytes
  size_t num_bytes = 0;

  // The shape outermost first, as PyTorch writes it: ne reversed ([rows, row length]).
  std::vector<int64_t> Shape() const;
  int64_t NumElements() const;
};

struct GgufContents {
  uint32_t version = 3;
  uint64_t alignment = 32;
  std::vector<std::pair<std::string, GgufValue>> metadata;  // in file order
  std::vector<GgufTensor> tensors;                          // in file order
  uint64_t data_offset = 0;  // where the data section starts in the file
};

// Parses and validates GGUF bytes data[0, size). `file_name` only goes into error messages. The
// contents point into data.
Result<GgufContents> ParseGguf(const uint8_t* data, size_t size, std::string_view file_name);

// A mapped, validated GGUF file. Immutable after Open; values and tensors live as long as it.
class GgufFile {
 public:
  static Result<std::unique_ptr<GgufFile>> Open(const std::string& path);
  // The same over bytes held in memory; `name` stands for the path in messages.
  static Result<std::unique_ptr<GgufFile>> FromBytes(std::string bytes, std::string name);

  const std::string& path() const { return path_; }
  const GgufContents& contents() const { return contents_; }
  const std::vector<GgufTensor>& tensors() const { return contents_.tensors; }
  // The mapping the tensors' bytes lie in, or null for a file made FromBytes.
  const MappedFile* mapping() const { return file_.get(); }

  // The value of `key`, or null.
  const GgufValue* Find(std::string_view key) const;
  // The tensor named `name`, or null.
  const GgufTensor* FindTensor(std::string_view name) const;

 private:
  explicit GgufFile(std::string path) : path_(std::move(path)) {}
  void Index();  // fills keys_ and tensors_ from contents_

  std::string path_;
  std::unique_ptr<MappedFile> file_;  // what contents_ points into: the mapping,
  std::string bytes_;                 // or these bytes
  GgufContents contents_;
  std::map<std::string, size_t, std::less<>> keys_;     // key -> index in metadata
  std::map<std::string, size_t, std::less<>> tensors_;  // name -> index in tensors
};

// Whether `path` names a GGUF file rather than a checkpoint directory: a name ending in ".gguf"
// (existing or not, so that a missing file is reported as such), or a regular file whose first
// bytes are the magic "GGUF".
bool IsGgufPath(const std::string& path);

}  // namespace tf::engine
