// Stopping a long-running command (server, worker, engine serve) on SIGINT or SIGTERM.
#pragma once

namespace tf {

// Blocks SIGINT and SIGTERM in this thread and every thread started after it, so that
// WaitForStopSignal() receives them. Call before starting any thread.
void BlockStopSignals();
// Waits for SIGINT or SIGTERM; returns its number.
int WaitForStopSignal();
// Sends this process SIGTERM, so that a thread blocked in WaitForStopSignal() wakes: for a
// background step (loading a model) that fails before anything else would stop the process.
void RaiseStopSignal();

}  // namespace tf
