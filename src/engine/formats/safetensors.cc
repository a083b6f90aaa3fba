#include "engine/formats/safetensors.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

namespace tf::engine {
namespace {

using Json = nlohmann::json;

// Headers of real checkpoints are a few hundred KiB; refuse absurd lengths before allocating.
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

Status Bad(std::string_view file, const std::string& what) {
  return InvalidArgument(std::string(file) + ": " + what);
}

Status BadTensor(std::string_view file, const std::string& tensor, const std::string& what) {
  return InvalidArgument(std::string(file) + ": tensor '" + tensor + "': " + what);
}

// A JSON number that is a non-negative integer, as uint64.
bool AsUnsigned(const Json& j, uint64_t* out) {
  if (j.is_number_unsigned()) {
    *out = j.get<uint64_t>();
    return true;
  }
  if (j.is_number_integer() && j.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(j.get<int64_t>());
    return true;
  }
  return false;
}

Result<TensorView> ParseEntry(std::string_view file, const std::string& name, const Json& entry,
                              const uint8_t* data_section, uint64_t data_size) {
  if (!entry.is_object()) return BadTensor(file, name, "header entry is not an object");
  auto dtype_it = entry.find("dtype");
  if (dtype_it == entry.end() || !dtype_it->is_string()) {
    return BadTensor(file, name, "missing string field 'dtype'");
  }
  auto dtype = DTypeFromName(dtype_it->get<std::string>());
  if (!dtype) {
    return BadTensor(
        file, name,
        "dtype '" + dtype_it->get<std::string>() + "' is not supported (F32, F16 and BF16 are)");
  }
  TensorView t;
  t.name = name;
  t.dtype = *dtype;
  auto shape_it = entry.find("shape");
  if (shape_it == entry.end() || !shape_it->is_array()) {
    return BadTensor(file, name, "missing array field 'shape'");
  }
  uint64_t elements = 1;
  for (const Json& d : *shape_it) {
    uint64_t dim;
    if (!AsUnsigned(d, &dim) || dim > uint64_t{std::numeric_limits<int64_t>::max()}) {
      return BadTensor(file, name,
                       "shape " + shape_it->dump() +
                           " has a dimension that is not a "
                           "non-negative integer");
    }
    if (dim != 0 && elements > (std::numeric_limits<uint64_t>::max() / 8) / dim) {
      return BadTensor(file, name, "shape " + shape_it->dump() + " is too large");
    }
    elements *= dim;
    t.shape.push_back(static_cast<int64_t>(dim));
  }
  auto offsets_it = entry.find("data_offsets");
  uint64_t begin, end;
  if (offsets_it == entry.end() || !offsets_it->is_array() || offsets_it->size() != 2 ||
      !AsUnsigned((*offsets_it)[0], &begin) || !AsUnsigned((*offsets_it)[1], &end)) {
    return BadTensor(file, name, "'data_offsets' must be two non-negative integers");
  }
  std::string offsets = "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "]";
  if (begin > end) return BadTensor(file, name, offsets + " end before they begin");
  if (end > data_size) {
    return BadTensor(file, name,
                     offsets + " run past the end of the data section (" +
                         std::to_string(data_size) + " bytes); is the file truncated?");
  }
  uint64_t expected = elements * DTypeSize(t.dtype);
  if (end - begin != expected) {
    return BadTensor(file, name,
                     offsets + " hold " + std::to_string(end - begin) + " bytes but " +
                         std::string(DTypeName(t.dtype)) + " " + t.ShapeString() + " needs " +
                         std::to_string(expected));
  }
  t.data = data_section + begin;
  t.num_bytes = static_cast<size_t>(expected);
  return t;
}

}  // namespace

int64_t TensorView::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string TensorView::ShapeString() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Result<std::vector<TensorView>> ParseSafetensors(const uint8_t* data, size_t size,
                                                 std::string_view file) {
  if (size < 8) {
    return Bad(file, "file is " + std::to_string(size) +
                         " bytes, too short for the 8-byte header length; is it truncated?");
  }
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | data[i];
  if (header_len > size - 8) {
    return Bad(file, "header length " + std::to_string(header_len) +
                         " runs past the end of the file (" + std::to_string(size) +
                         " bytes); is it truncated or not a safetensors file?");
  }
  if (header_len > kMaxHeaderBytes) {
    return Bad(file, "header length " + std::to_string(header_len) + " exceeds the limit of " +
                         std::to_string(kMaxHeaderBytes) + " bytes");
  }
  const char* header_begin = reinterpret_cast<const char*>(data + 8);
  Json header = Json::parse(header_begin, header_begin + header_len, nullptr,
                            /*allow_exceptions=*/false);
  if (header.is_discarded()) return Bad(file, "header is not valid JSON");
  if (!header.is_object()) return Bad(file, "header is not a JSON object");

  const uint8_t* data_section = data + 8 + header_len;
  uint64_t data_size = size - 8 - header_len;
  std::vector<TensorView> tensors;
  tensors.reserve(header.size());
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    TF_ASSIGN_OR_RETURN(TensorView t, ParseEntry(file, name, entry, data_section, data_size));
    tensors.push_back(std::move(t));
  }
  // Overlap: sort a copy by start and compare neighbours (empty tensors overlap nothing).
  std::vector<const TensorView*> by_start;
  for (const TensorView& t : tensors) {
    if (t.num_bytes > 0) by_start.push_back(&t);
  }
  std::sort(by_start.begin(), by_start.end(),
            [](const TensorView* a, const TensorView* b) { return a->data < b->data; });
  for (size_t i = 1; i < by_start.size(); ++i) {
    const TensorView* prev = by_start[i - 1];
    if (by_start[i]->data < prev->data + prev->num_bytes) {
      return BadTensor(file, by_start[i]->name, "data overlaps tensor '" + prev->name + "'");
    }
  }
  return tensors;
}

SafetensorsFile::SafetensorsFile(std::unique_ptr<MappedFile> file, std::vector<TensorView> tensors)
    : file_(std::move(file)), tensors_(std::move(tensors)) {
  for (size_t i = 0; i < tensors_.size(); ++i) index_.emplace(tensors_[i].name, i);
}

Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(const std::string& path) {
  TF_ASSIGN_OR_RETURN(auto file, MappedFile::Open(path));
  TF_ASSIGN_OR_RETURN(auto tensors, ParseSafetensors(file->data(), file->size(), path));
  return std::unique_ptr<SafetensorsFile>(new SafetensorsFile(std::move(file), std::move(tensors)));
}

const TensorView* SafetensorsFile::Find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace tf::engine
