#include "worker/proc_stat.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>

namespace tf::worker {
namespace {

// The next space-separated field of `rest`, consumed.
std::string_view NextField(std::string_view& rest) {
  size_t start = rest.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(start);
  size_t end = rest.find(' ');
  std::string_view field = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  return field;
}

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

}  // namespace

Result<ProcStat> ParseProcStat(std::string_view text) {
  ProcStat st;
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
      !ParseNumber(text.substr(0, open == 0 ? 0 : open - 1), &st.pid)) {
    return InvalidArgument("not a /proc stat line: '" + std::string(text.substr(0, 80)) + "'");
  }
  std::string_view rest = text.substr(close + 1);
  // Field 3 onwards; field n is at index n - 3.
  std::string_view fields[20];
  for (auto& f : fields) f = NextField(rest);
  if (fields[0].size() != 1 || !ParseNumber(fields[2], &st.pgrp) ||
      !ParseNumber(fields[3], &st.session) || !ParseNumber(fields[19], &st.start_time)) {
    return InvalidArgument("not a /proc stat line: '" + std::string(text.substr(0, 80)) + "'");
  }
  st.state = fields[0][0];
  return st;
}

Result<std::optional<ProcStat>> ReadProcStat(pid_t pid) {
  if (pid <= 0) return InvalidArgument("no process has pid " + std::to_string(pid));
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ESRCH) return std::optional<ProcStat>();
    return Internal("cannot open " + path + ": " + std::strerror(errno));
  }
  char buffer[1024];
  size_t size = 0;
  for (;;) {
    ssize_t n = ::read(fd, buffer + size, sizeof buffer - size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || (size += static_cast<size_t>(n)) == sizeof buffer) break;
  }
  const int read_errno = errno;
  ::close(fd);
  if (size == 0) {
    // The process ended between open and read.
    if (read_errno == ESRCH) return std::optional<ProcStat>();
    return Internal("cannot read " + path);
  }
  TF_ASSIGN_OR_RETURN(ProcStat st, ParseProcStat(std::string_view(buffer, size)));
  return std::optional<ProcStat>(st);
}

int PidfdOpen(pid_t pid) { return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)); }

}  // namespace tf::worker
