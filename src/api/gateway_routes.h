// /openai/v1/: the inference gateway in front of every endpoint (docs/endpoints.md, "The
// gateway"): chat completions, completions and the project's models, with a project token as
// the API key and the endpoint's name as the model.
#pragma once

#include <functional>
#include <memory>

#include "api/queue_wakeups.h"
#include "api/router.h"
#include "api/services.h"
#include "endpoints/gateway_metrics.h"
#include "endpoints/load_board.h"
#include "endpoints/recent_requests.h"
#include "endpoints/routing_table.h"
#include "http/upstream.h"

namespace tf::api {

// Requests go on to replicas over `upstreams`' pooled connections; each is counted in `metrics`
// and `recent`. A request waiting in an endpoint's queue is woken through `wakeups` when a
// request at that endpoint ends. A request that has to wait in an endpoint's queue calls
// `wake_controller`, so that the autoscaler sees it now (a start from zero, a scale-out, a warm
// replica promoted) rather than at the next tick.
void AddGatewayRoutes(Router& router, Services& services, endpoints::RoutingTable& routes,
                      endpoints::LoadBoard& load, QueueWakeups& wakeups,
                      endpoints::GatewayMetrics& metrics, endpoints::RecentRequests& recent,
                      std::shared_ptr<http::UpstreamPool> upstreams,
                      std::function<void()> wake_controller);

}  // namespace tf::api
