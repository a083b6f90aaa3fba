// /v1/pools: node pools (pools/pool_service.h), for admins.
#pragma once

#include <functional>

#include "api/services.h"
#include "pools/pool_service.h"

namespace tf::api {

// `changed` is called after a pool was created, scaled or deleted (to tick its controller).
void AddPoolRoutes(Router& router, Services& services, pools::PoolService& pools,
                   const std::function<void()>& changed);

}  // namespace tf::api
