// /v1/budgets: a project's budgets with where they stand, and the alerts they fired
// (docs/api.md, docs/cost.md "Budgets"). A project token acts on its own project; an admin
// token may name another with ?project=NAME, or every project with ?all=true.
#pragma once

#include <functional>

#include "api/router.h"
#include "api/services.h"
#include "cost/budgets/budget_service.h"

namespace tf::api {

// `changed` is called after a budget is created or replaced (to evaluate it soon).
void AddBudgetRoutes(Router& router, Services& services, cost::BudgetService& budgets,
                     std::function<void()> changed);

}  // namespace tf::api
