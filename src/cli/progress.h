// A one-line progress display for long transfers: drawn on stderr, only when it is a terminal
// and the transfer is large enough to be worth watching.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tf::cli {

// "12.3 MiB", "980 B"
std::string FormatBytes(uint64_t bytes);
// "12.3 MiB in 1.2 s (10.2 MiB/s)"
std::string FormatTransfer(uint64_t bytes, std::chrono::steady_clock::duration elapsed);

// Where a progress line is drawn, and whether it is drawn at all.
struct ProgressOutput {
  std::FILE* stream = nullptr;
  bool terminal = false;  // drawn only on a terminal: a log or a pipe gets no \r-lines
  // stderr, drawn when it is a terminal.
  static ProgressOutput Stderr();
};

class Progress {
 public:
  static constexpr uint64_t kMinBytes = 8 << 20;

  // `total` 0: unknown until set_total (a stream from a pipe), when the line shows what has gone
  // by so far instead of a bar.
  Progress(std::string label, uint64_t total, ProgressOutput output = ProgressOutput::Stderr());
  ~Progress() { Finish(); }

  void set_total(uint64_t total) { total_ = total; }
  // Counts `bytes` more; redraws at most ten times a second.
  void Add(uint64_t bytes);
  // Clears the line, if one was drawn. Called by the destructor too.
  void Finish();

  uint64_t done() const { return done_; }
  std::chrono::steady_clock::duration elapsed() const {
    return std::chrono::steady_clock::now() - start_;
  }

 private:
  void Draw();

  const std::string label_;
  uint64_t total_;
  uint64_t done_ = 0;
  std::FILE* const stream_;
  const bool enabled_;
  bool drawn_ = false;
  const std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace tf::cli
