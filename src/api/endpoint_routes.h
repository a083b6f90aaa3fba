// /v1/endpoints: a project's inference endpoints (docs/endpoints.md, docs/api.md). An endpoint
// of one project does not exist for another's token; an admin may list every project's with
// ?all=true.
#pragma once

#include <functional>

#include "api/router.h"
#include "api/services.h"
#include "endpoints/endpoint_service.h"
#include "endpoints/shared_traffic.h"

namespace tf::api {

// `changed` is called after an endpoint is created, updated, scaled or deleted (so that this
// server's gateway routes by the change at once). Describe adds the recent traffic (`traffic`:
// this server's gateway's, and the other servers' where the store is shared) and what the
// replicas cost meanwhile.
void AddEndpointRoutes(Router& router, Services& services, endpoints::EndpointService& endpoints,
                       const endpoints::TrafficView& traffic, const std::function<void()>& changed);

// The endpoint as the API shows it (the CLI's describe and ls read it).
nlohmann::json EndpointToJson(const endpoints::EndpointView& view, const std::string& project_name);

}  // namespace tf::api
