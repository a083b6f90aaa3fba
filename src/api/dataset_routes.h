// /v1/datasets: create (the index, once the shards are uploaded), list, describe with the
// shards, and delete a project's datasets (docs/datasets.md, docs/api.md).
#pragma once

#include "api/router.h"
#include "api/services.h"
#include "datasets/dataset_service.h"

namespace tf::api {

void AddDatasetRoutes(Router& router, Services& services, datasets::DatasetService& datasets);

}  // namespace tf::api
