// Reading .safetensors checkpoints: an 8-byte little-endian header length, a JSON header that
// maps each tensor name to {dtype, shape, data_offsets}, then the tensors' bytes. The format is
// described in docs/engine.md.
//
// Everything in the header is validated before any tensor is used: the header lies inside the
// file; each tensor has a supported dtype (F32, F16, BF16), a shape of non-negative dimensions,
// data_offsets [begin, end] inside the data section whose length equals the shape's byte size;
// no two tensors overlap. Errors are InvalidArgument with a message that names the file and,
// where one is at fault, the tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "engine/dtype.h"
#include "engine/formats/mapped_file.h"

namespace tf::engine {

struct TensorView {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // into the file's bytes; any alignment
  size_t num_bytes = 0;

  int64_t NumElements() const;
  // "[1024, 64]"
  std::string ShapeString() const;
};

// Parses and validates the safetensors bytes data[0, size). `file_name` only goes into error
// messages. The views point into `data`. The "__metadata__" entry is skipped.
Result<std::vector<TensorView>> ParseSafetensors(const uint8_t* data, size_t size,
                                                 std::string_view file_name);

// A mapped, validated .safetensors file. Thread-compatible; views live as long as the file.
class SafetensorsFile {
 public:
  static Result<std::unique_ptr<SafetensorsFile>> Open(const std::string& path);

  const std::string& path() const { return file_->path(); }
  // The mapping the tensors' bytes lie in.
  const MappedFile* mapping() const { return file_.get(); }
  const std::vector<TensorView>& tensors() const { return tensors_; }
  // The tensor named `name`, or null.
  const TensorView* Find(std::string_view name) const;

 private:
  SafetensorsFile(std::unique_ptr<MappedFile> file, std::vector<TensorView> tensors);

  std::unique_ptr<MappedFile> file_;
  std::vector<TensorView> tensors_;
  std::map<std::string, size_t, std::less<>> index_;  // name -> position in tensors_
};

}  // namespace tf::engine
