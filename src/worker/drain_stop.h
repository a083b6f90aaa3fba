// When a service stops on a draining node. A job with a drain grace (an endpoint's replica,
// replaced by its owner first) serves on while its node drains and then has `grace` to stop
// before the drain's deadline. When the deadline is nearer than twice that grace (a short spot
// notice, a drain with a deadline of seconds), it serves for the first half of what is left
// and has the second half to stop: stopping at once would leave nothing serving while its
// replacement starts, and stopping at the deadline would leave it no time to finish requests.
#pragma once

#include <algorithm>
#include <chrono>

namespace tf::worker {

struct DrainStop {
  std::chrono::milliseconds serve_for{0};    // from now until it is asked to stop
  std::chrono::milliseconds stop_within{0};  // from then until it is killed
};

// `remaining`: from now to the drain's deadline; `grace`: the job's drain grace (above 0).
inline DrainStop ServiceDrainStop(std::chrono::milliseconds remaining,
                                  std::chrono::milliseconds grace) {
  remaining = std::max(remaining, std::chrono::milliseconds(0));
  const std::chrono::milliseconds window = std::min(grace, remaining / 2);
  return {remaining - window, window};
}

}  // namespace tf::worker
