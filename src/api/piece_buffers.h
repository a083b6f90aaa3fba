// Buffers for the pieces of streamed request bodies, kept from one request to the next.
//
// An upload reads its body into pieces of up to kPumpPieceBytes (api/body_pump.h). A buffer
// that large, allocated for each request, comes from the system and goes back to it when freed
// (jemalloc and glibc's malloc both hand allocations of megabytes straight back), so every
// request paid a page fault and the kernel's zeroing for each 4 KiB of it: with 8 MiB parts, a
// fifth of the server's CPU in a multipart upload. A buffer kept here keeps its pages.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/mutex.h"

namespace tf::api {

class PieceBuffers {
 public:
  // Buffers smaller than this are not worth keeping.
  static constexpr size_t kMinKeptBytes = size_t{1} << 20;

  // Keeps at most `max_kept_bytes` of buffers' capacity.
  explicit PieceBuffers(size_t max_kept_bytes) : max_kept_bytes_(max_kept_bytes) {}
  PieceBuffers(const PieceBuffers&) = delete;
  PieceBuffers& operator=(const PieceBuffers&) = delete;

  // A buffer given back earlier (the one given back last, its pages the likeliest to be in the
  // cache), with its capacity and any size; an empty string when none is kept.
  std::string Take();
  // Keeps `buffer` for a later Take, unless it is smaller than kMinKeptBytes or keeping it
  // would pass max_kept_bytes; frees it otherwise.
  void Give(std::string buffer);
  // The capacity of the buffers kept now.
  size_t kept_bytes() const;

 private:
  const size_t max_kept_bytes_;
  mutable Mutex mu_;
  std::vector<std::string> kept_ GUARDED_BY(mu_);
  size_t kept_bytes_ GUARDED_BY(mu_) = 0;
};

// The server's buffers for request bodies: up to kKeptBodyBufferBytes, enough for 8 uploads
// of large objects, or 16 parts of 8 MiB, at once.
inline constexpr size_t kKeptBodyBufferBytes = size_t{128} << 20;
PieceBuffers& BodyPieceBuffers();

// Pieces borrowed from a PieceBuffers: each taken on its first use, and given back by
// GiveBack. Destroyed without GiveBack (a request's coroutine dropped while a write of a piece
// may still run), they are freed with the object that owns them instead, as plain strings are.
class BorrowedPieces {
 public:
  explicit BorrowedPieces(PieceBuffers& buffers) : buffers_(buffers) {}
  BorrowedPieces(const BorrowedPieces&) = delete;
  BorrowedPieces& operator=(const BorrowedPieces&) = delete;

  std::string& operator[](size_t i) {
    if (!taken_[i]) {
      pieces_[i] = buffers_.Take();
      taken_[i] = true;
    }
    return pieces_[i];
  }
  // Call only once nothing uses the pieces any more.
  void GiveBack() {
    for (size_t i = 0; i < 2; ++i) {
      if (taken_[i]) buffers_.Give(std::move(pieces_[i]));
      taken_[i] = false;
    }
  }

 private:
  PieceBuffers& buffers_;
  std::string pieces_[2];
  bool taken_[2] = {false, false};
};

}  // namespace tf::api
