// Flags and output shared by the `plan` verbs (plan_commands.cc, plan_check_command.cc): the
// model's shape, the training input's flags, and how a priced offer is printed.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "client/api_client.h"
#include "cost/catalog.h"
#include "cost/catalog_files.h"
#include "cost/planning/plan_pricing.h"
#include "cost/planning/train_plan.h"

namespace tf::cli {

using Json = nlohmann::json;

// The model's shape: --model, else the catalog's model of this nominal size; flags override.
struct ShapeFlags {
  std::string model;
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0;

  void Add(CLI::App* cmd, bool serving);
  Result<cost::ModelShape> Resolve(const cost::Catalog& catalog, double params) const;
};

// What `plan train` and `plan check` share: how the run trains (MFU, goodput, recomputation,
// precision), where it is priced, and the model's shape.
struct TrainingFlags {
  cost::CatalogOptions catalog;
  cost::TrainInput in;  // the flags set directly
  std::string recompute = "selective";
  std::optional<double> achieved;  // --achieved-tflops
  ShapeFlags shape;

  // Everything but the run's size, GPUs and accelerator, which each verb adds its own way.
  void Add(CLI::App* cmd);
  // The input with the flags applied and the shape of a model of `params` resolved.
  Result<cost::TrainInput> Input(const cost::Catalog& catalog, double params) const;
};

// "--params: 'lots' is not a positive count ..."
Result<double> Count(const std::string& flag, const std::string& value);

// "aws p5.48xlarge" with, when the run leaves GPUs of a rented machine idle, "(a whole 8-GPU
// machine for 2 GPUs; --share if other work uses the rest)".
std::string OfferName(const cost::OfferPrice& p);
// The offer's JSON fields for a run: price per GPU-hour, machines, GPUs billed and idle.
Json OfferPriceJson(const cost::OfferPrice& p);

// plan check, added to the `plan` command (plan_check_command.cc).
void AddPlanCheckCommand(CLI::App* plan, client::Connection& conn, int& exit_code);

}  // namespace tf::cli
