// What the kernel says about a process: /proc/<pid>/stat, enough to tell a process the worker
// started from another one that has since been given the same pid, and a pidfd to wait on any
// process's end.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/status.h"

namespace tf::worker {

struct ProcStat {
  pid_t pid = 0;
  char state = '?';         // field 3: R, S, D, Z (zombie), ...
  pid_t pgrp = 0;           // field 5
  pid_t session = 0;        // field 6
  uint64_t start_time = 0;  // field 22: clock ticks after boot; with the pid, names one process
};

// Parses the content of a stat file. kInvalidArgument if it is not one (the command name in
// field 2 may hold spaces and parentheses; fields are read after its last ')').
Result<ProcStat> ParseProcStat(std::string_view text);

// Reads /proc/<pid>/stat: nullopt if no such process exists (it may be a zombie: see state).
Result<std::optional<ProcStat>> ReadProcStat(pid_t pid);

// A pidfd for `pid` (O_CLOEXEC; poll it for POLLIN: readable once the process has ended, whoever
// its parent is), or -1 with errno set. Linux 5.3 or later.
int PidfdOpen(pid_t pid);

}  // namespace tf::worker
