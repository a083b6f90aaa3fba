#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace tf::cli {

using Clock = std::chrono::steady_clock;

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char out[32];
  std::snprintf(out, sizeof out, unit == 0 ? "%.0f %s" : "%.1f %s", value, kUnits[unit]);
  return out;
}

std::string FormatTransfer(uint64_t bytes, Clock::duration elapsed) {
  double seconds = std::chrono::duration<double>(elapsed).count();
  char out[96];
  std::snprintf(out, sizeof out, "%s in %.1f s (%s/s)", FormatBytes(bytes).c_str(), seconds,
                FormatBytes(static_cast<uint64_t>(seconds > 0 ? bytes / seconds : 0)).c_str());
  return out;
}

ProgressOutput ProgressOutput::Stderr() {
  return ProgressOutput{.stream = stderr, .terminal = isatty(STDERR_FILENO) == 1};
}

Progress::Progress(std::string label, uint64_t total, ProgressOutput output)
    : label_(std::move(label)),
      total_(total),
      stream_(output.stream),
      enabled_(output.terminal && output.stream != nullptr),
      start_(Clock::now()),
      last_draw_(start_) {}

void Progress::Add(uint64_t bytes) {
  done_ += bytes;
  // A known total is drawn from the start if large enough; an unknown one (a pipe) once that
  // much has gone by.
  if (!enabled_ || (total_ > 0 ? total_ : done_) < kMinBytes) return;
  auto now = Clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  Draw();
}

void Progress::Draw() {
  double seconds = std::chrono::duration<double>(Clock::now() - start_).count();
  const std::string rate = FormatBytes(static_cast<uint64_t>(seconds > 0 ? done_ / seconds : 0));
  if (total_ == 0) {
    std::fprintf(stream_, "\r%-30.30s %s so far  %s/s\033[K", label_.c_str(),
                 FormatBytes(done_).c_str(), rate.c_str());
    std::fflush(stream_);
    drawn_ = true;
    return;
  }
  int percent = total_ > 0 ? static_cast<int>(100.0 * static_cast<double>(done_) / total_) : 0;
  constexpr int kWidth = 30;
  std::string bar(kWidth * percent / 100, '#');
  bar.resize(kWidth, '.');
  std::fprintf(stream_, "\r%-30.30s [%s] %3d%% %s / %s  %s/s\033[K", label_.c_str(), bar.c_str(),
               percent, FormatBytes(done_).c_str(), FormatBytes(total_).c_str(), rate.c_str());
  std::fflush(stream_);
  drawn_ = true;
}

void Progress::Finish() {
  if (!drawn_) return;
  std::fprintf(stream_, "\r\033[K");
  std::fflush(stream_);
  drawn_ = false;
}

}  // namespace tf::cli
