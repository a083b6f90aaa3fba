// The tensorfleet command line.
#pragma once

namespace tf::cli {

// Parses argv, runs the verb, returns the process exit code: 0 success, 1 the operation
// failed, 2 bad usage.
int Main(int argc, char** argv);

}  // namespace tf::cli
