// GGUF tensor data to float32: F32, F16, BF16, and ggml's Q8_0 and Q4_0 blocks.
//
// Q8_0: blocks of 32 elements, an F16 scale d then 32 int8 q; x = d * q.
// Q4_0: blocks of 32 elements, an F16 scale d then 16 bytes; byte j holds element j in its low
// nibble and element j + 16 in its high one; x = d * (nibble - 8).
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/gguf.h"

namespace tf::engine {

// Converts n elements (a multiple of the type's block size) of `type` at src to float32 at dst.
void DequantizeGguf(GgmlType type, const uint8_t* src, size_t n, float* dst);

// Bytes that n elements of `type` take (n a multiple of its block size).
size_t GgufRowBytes(GgmlType type, size_t n);

}  // namespace tf::engine
