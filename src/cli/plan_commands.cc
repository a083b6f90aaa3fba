// `tensorfleet plan train|serve`: what a training run or a deployment needs and costs, before
// anything runs (`plan check`, a verdict on a quote, is in plan_check_command.cc). Offline: the
// catalog is the only input.
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/cost_flags.h"
#include "cli/plan_flags.h"
#include "cli/table.h"
#include "cost/numbers.h"
#include "cost/planning/serve_plan.h"
#include "cost/planning/train_plan.h"

namespace tf::cli {
namespace {

using cost::FormatFixed;
using cost::kGiB;

std::string Pct(double fraction) { return FormatFixed(fraction * 100, 1) + "%"; }
std::string GiB(double bytes) { return FormatFixed(bytes / kGiB, 1); }

struct PlanTrainFlags {
  TrainingFlags training;
  std::string params;  // "70B", "1.5T", "7e9"
  std::string tokens;  // "2T", "300B"
  bool spot = false;   // lead with spot prices
};

struct PlanServeFlags {
  cost::CatalogOptions catalog;
  cost::ServeInput in;  // the flags set directly; the callback fills in the rest
  std::string params;   // "70B", "8B"
  ShapeFlags shape;
};

Json PricesJson(const std::vector<cost::OfferPrice>& prices, const cost::TrainPlan& plan) {
  Json out = Json::array();
  for (const auto& p : prices) {
    Json j = OfferPriceJson(p);
    j["total_usd"] = plan.Usd(p);
    j["total_usd_high"] = plan.UsdHigh(p);
    j["price_date"] = p.offer->spot_low && p.usd_per_gpu_hour_high != p.usd_per_gpu_hour
                          ? p.offer->spot_observed
                          : p.offer->on_demand_date;
    out.push_back(j);
  }
  return out;
}

Json LayoutJson(const cost::MemoryLayout& l) {
  return {{"tensor", l.tensor},
          {"pipeline", l.pipeline},
          {"data", l.data},
          {"zero_stage", l.zero_stage},
          {"model_state_gib", l.model_state_bytes / kGiB},
          {"activation_gib", l.activation_bytes / kGiB},
          {"total_gib", l.total_bytes() / kGiB},
          {"fits", l.fits}};
}

std::string LayoutName(const cost::MemoryLayout& l) {
  std::string zero =
      l.zero_stage == 0 ? "plain data parallel" : "ZeRO-" + std::to_string(l.zero_stage);
  return "tensor " + std::to_string(l.tensor) + " x pipeline " + std::to_string(l.pipeline) +
         " x data " + std::to_string(l.data) + ", " + zero;
}

void PrintCosts(const cost::TrainPlan& plan, bool spot_first) {
  // One row per offer: on-demand total, and the spot range where the offer has spot prices.
  std::map<const cost::Offer*, const cost::OfferPrice*> on_demand, spot;
  for (const auto& p : plan.on_demand) on_demand[p.offer] = &p;
  for (const auto& p : plan.spot) spot[p.offer] = &p;
  auto total = [&](const std::map<const cost::Offer*, const cost::OfferPrice*>& prices,
                   const cost::Offer* o) -> std::string {
    auto it = prices.find(o);
    if (it == prices.end()) return "-";
    std::string low = cost::FormatUsd(plan.Usd(*it->second));
    if (it->second->usd_per_gpu_hour_high == it->second->usd_per_gpu_hour) return low;
    return low + " - " + cost::FormatUsd(plan.UsdHigh(*it->second));
  };
  Table t({"provider", "instance", "region", "machines", "per GPU-hour", "on-demand total",
           "spot total"});
  for (const auto& p : spot_first ? plan.spot : plan.on_demand) {
    const cost::Offer* o = p.offer;
    std::string machines =
        std::to_string(p.instances) + " x " + std::to_string(o->accelerator_count) + " GPUs" +
        (p.idle_gpus() > 0 ? " (" + std::to_string(p.idle_gpus()) + " idle)" : "");
    t.Add({o->provider, o->instance_type, o->region.empty() ? "-" : o->region, machines,
           o->on_demand ? Price(o->PerAccelerator(*o->on_demand), 3) : "-", total(on_demand, o),
           total(spot, o)});
  }
  t.Print(std::cout);
}

// 1 when the run cannot be done as asked (the reasons on stderr, and no costs), else 0.
int ShowTrain(const cost::TrainInput& in, const cost::TrainPlan& plan, bool spot, bool json) {
  if (json) {
    Json j = {{"accelerator", plan.accelerator->name},
              {"gpus", in.gpus},
              {"params", in.params},
              {"tokens", in.tokens},
              {"flops", plan.flops},
              {"peak_flops_per_gpu", plan.peak_flops_per_gpu},
              {"mfu", plan.mfu},
              {"hfu", plan.hfu},
              {"wall_clock_seconds", plan.seconds},
              {"wall_clock_days", plan.days()},
              {"gpu_hours", plan.gpu_hours},
              {"goodput", plan.goodput},
              {"on_demand", PricesJson(plan.on_demand, plan)},
              {"spot", PricesJson(plan.spot, plan)},
              {"model_shape", in.shape_name},
              {"usable_gib_per_gpu", plan.usable_bytes_per_gpu / kGiB},
              {"layouts", Json::array()},
              {"recommended", plan.recommended ? LayoutJson(*plan.recommended) : Json(nullptr)},
              {"warnings", plan.warnings},
              {"possible", plan.possible()},
              {"refusals", plan.refusals}};
    for (const auto& l : plan.layouts) j["layouts"].push_back(LayoutJson(l));
    PrintJson(j);
    return plan.possible() ? 0 : 1;
  }
  const auto& a = *plan.accelerator;
  std::cout << "Training " << cost::FormatShort(in.params) << " parameters on "
            << cost::FormatShort(in.tokens) << " tokens with " << in.gpus << " x " << a.name
            << " (peak " << FormatFixed(plan.peak_flops_per_gpu / 1e12, 0) << " "
            << (in.fp8 ? "FP8" : "BF16") << " TFLOP/s each)\n";
  std::vector<std::pair<std::string, std::string>> t;
  t.push_back({"compute", cost::FormatShort(plan.flops) + " FLOPs (6 x N x D)"});
  t.push_back({"utilisation", "MFU " + Pct(plan.mfu) + " (hardware FLOPs " + Pct(plan.hfu) +
                                  "), goodput " + Pct(plan.goodput)});
  t.push_back({"wall-clock", FormatFixed(plan.days(), 1) + " days"});
  t.push_back({"GPU-hours", cost::FormatGrouped(plan.gpu_hours)});
  if (!plan.on_demand.empty()) {
    const auto& best = plan.on_demand[0];
    t.push_back({"on-demand", cost::FormatUsd(plan.Usd(best)) + " at " + OfferName(best) + " (" +
                                  Price(best.usd_per_gpu_hour, 3) + "/GPU-hour)"});
  }
  if (const cost::OfferPrice* best = cost::SpotBelowOnDemand(plan.on_demand, plan.spot)) {
    t.push_back({"spot", cost::FormatUsd(plan.Usd(*best)) + " at " + OfferName(*best) +
                             " (lowest observed; interruptions add restart and checkpoint time)"});
  }
  PrintFacts(t);
  if (plan.possible()) {
    std::cout << "\nCost at each offer (" << (spot ? "spot offers first" : "cheapest first")
              << ")\n";
    PrintCosts(plan, spot);
  }

  if (!plan.layouts.empty()) {
    std::cout << "\nMemory per GPU (" << GiB(plan.usable_bytes_per_gpu) << " GiB usable of "
              << FormatFixed(*a.memory_gib, 0) << "; model shape "
              << (in.shape_name.empty() ? "unknown" : in.shape_name) << ", sequence " << in.seq_len
              << ", micro-batch " << in.micro_batch << ")\n";
    Table m({"tensor", "pipeline", "data", "zero", "model state GiB", "activations GiB",
             "total GiB", "fits"});
    // Per (tensor, pipeline): the lowest ZeRO stage that fits, else the smallest.
    std::map<std::pair<int, int>, const cost::MemoryLayout*> best;
    std::vector<std::pair<int, int>> order;
    for (const auto& l : plan.layouts) {
      auto key = std::pair{l.tensor, l.pipeline};
      auto it = best.find(key);
      if (it == best.end()) {
        order.push_back(key);
        best[key] = &l;
      } else if (!it->second->fits && (l.fits || l.total_bytes() < it->second->total_bytes())) {
        it->second = &l;
      }
    }
    for (const auto& key : order) {
      const auto& l = *best[key];
      m.Add({std::to_string(l.tensor), std::to_string(l.pipeline), std::to_string(l.data),
             std::to_string(l.zero_stage), GiB(l.model_state_bytes), GiB(l.activation_bytes),
             GiB(l.total_bytes()), l.fits ? "yes" : "no"});
    }
    m.Print(std::cout);
    if (plan.recommended) {
      std::cout << "recommended: " << LayoutName(*plan.recommended) << " ("
                << GiB(plan.recommended->total_bytes()) << " GiB per GPU)\n";
    }
  }
  for (const auto& w : plan.warnings) std::cout << "warning: " << w << "\n";
  if (plan.possible()) return 0;
  for (const auto& r : plan.refusals) std::cerr << "cannot train: " << r << "\n";
  return 1;
}

// 1 when the plan is impossible (the reasons on stderr), else 0.
int ShowServe(const cost::ServeInput& in, const cost::ServePlan& plan, bool json) {
  auto per_million = [&](const std::vector<cost::OfferPrice>& prices) {
    Json out = Json::array();
    for (const auto& p : prices) {
      Json j = OfferPriceJson(p);
      j["usd_per_million_tokens"] = plan.UsdPerMillionTokens(p);
      out.push_back(j);
    }
    return out;
  };
  if (json) {
    Json j = {{"possible", plan.possible()},
              {"refusals", plan.refusals},
              {"warnings", plan.warnings},
              {"accelerator", plan.accelerator->name},
              {"gpus", in.gpus},
              {"model_shape", in.shape_name},
              {"weights_gib", plan.weight_bytes / kGiB},
              {"kv_cache_bytes_per_token", plan.kv_bytes_per_token},
              {"kv_cache_gib", plan.kv_bytes / kGiB},
              {"usable_gib", plan.usable_bytes / kGiB},
              {"max_concurrency", plan.max_concurrency},
              {"decode_roofline_tokens_per_second", plan.tokens_per_second},
              {"decode_roofline_tokens_per_second_single", plan.tokens_per_second_single},
              {"on_demand", per_million(plan.on_demand)},
              {"spot", per_million(plan.spot)}};
    PrintJson(j);
    return plan.possible() ? 0 : 1;
  }
  const auto& a = *plan.accelerator;
  std::cout << "Serving " << cost::FormatShort(in.params) << " parameters (" << in.dtype << ") on "
            << in.gpus << " x " << a.name << ", " << in.concurrency << " sequences of "
            << in.context << " tokens; shape "
            << (in.shape_name.empty() ? "from flags" : in.shape_name) << "\n";
  std::vector<std::pair<std::string, std::string>> t;
  t.push_back({"weights", GiB(plan.weight_bytes) + " GiB"});
  t.push_back({"KV cache", GiB(plan.kv_bytes) + " GiB (" +
                               FormatFixed(plan.kv_bytes_per_token / 1024, 0) + " KiB per token)"});
  t.push_back({"usable memory", GiB(plan.usable_bytes) + " GiB (" +
                                    std::to_string(plan.max_concurrency) +
                                    " sequences of this length fit)"});
  if (plan.possible()) {
    t.push_back({"decode roofline", FormatFixed(plan.tokens_per_second, 0) + " tokens/s in all, " +
                                        FormatFixed(plan.tokens_per_second_single, 1) +
                                        " tokens/s for one sequence alone"});
  }
  if (plan.possible() && !plan.on_demand.empty()) {
    const auto& p = plan.on_demand[0];
    t.push_back({"on-demand", Price(plan.UsdPerMillionTokens(p), 3) + " per million tokens at " +
                                  OfferName(p) + " (" + Price(p.usd_per_gpu_hour, 3) +
                                  "/GPU-hour)"});
  }
  const cost::OfferPrice* spot = cost::SpotBelowOnDemand(plan.on_demand, plan.spot);
  if (plan.possible() && spot) {
    t.push_back({"spot", Price(plan.UsdPerMillionTokens(*spot), 3) + " per million tokens at " +
                             OfferName(*spot)});
  }
  PrintFacts(t);
  for (const auto& w : plan.warnings) std::cout << "warning: " << w << "\n";
  if (plan.possible()) return 0;
  for (const auto& r : plan.refusals) std::cerr << "cannot serve: " << r << "\n";
  return 1;
}

}  // namespace

void AddPlanCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto* plan = app.add_subcommand(
      "plan", "Estimate what a training run or a deployment needs and costs (offline)");
  plan->require_subcommand(1);

  {
    auto f = std::make_shared<PlanTrainFlags>();
    auto* cmd = plan->add_subcommand(
        "train", "Compute, wall-clock time, GPU-hours, cost and memory per GPU of a training run");
    cmd->add_option("--params", f->params, "Parameters: 70B, 1.5T, 7e9")->required();
    cmd->add_option("--tokens", f->tokens, "Training tokens: 2T, 300B")->required();
    cmd->add_option("--gpu", f->training.in.gpu,
                    "Accelerator from the catalog: H100, A100-80GB, ...")
        ->required();
    cmd->add_option("--gpus", f->training.in.gpus, "Number of GPUs")->required();
    cmd->add_flag("--spot", f->spot, "Lead with spot prices");
    f->training.Add(cmd);
    AddJsonFlag(cmd, conn);
    RunExitCode(cmd, exit_code, [&conn, f]() -> Result<int> {
      TF_ASSIGN_OR_RETURN(cost::Catalog catalog, cost::LoadCatalog(f->training.catalog));
      auto n = Count("--params", f->params);
      auto d = Count("--tokens", f->tokens);
      TF_RETURN_IF_ERROR(n.status());
      TF_RETURN_IF_ERROR(d.status());
      TF_ASSIGN_OR_RETURN(cost::TrainInput in, f->training.Input(catalog, *n));
      in.tokens = *d;
      TF_ASSIGN_OR_RETURN(cost::TrainPlan result, cost::PlanTraining(in, catalog));
      return ShowTrain(in, result, f->spot, conn.json);
    });
  }

  {
    auto f = std::make_shared<PlanServeFlags>();
    auto* cmd = plan->add_subcommand(
        "serve",
        "Whether a model and its KV cache fit, the decode roofline and the cost per "
        "million tokens; refuses impossible plans with the reason");
    cmd->add_option("--params", f->params, "Parameters: 70B, 8B")->required();
    cmd->add_option("--dtype", f->in.dtype, "Weights: bf16 (default), fp16, fp8, int8, int4, fp32");
    cmd->add_option("--kv-dtype", f->in.kv_dtype, "KV cache: bf16 (default; fp8 with fp8 weights)");
    cmd->add_option("--gpu", f->in.gpu, "Accelerator from the catalog")->required();
    cmd->add_option("--gpus", f->in.gpus, "GPUs, tensor parallel (default 1)");
    cmd->add_option("--context", f->in.context,
                    "Tokens per sequence, prompt + output (default 4096)");
    cmd->add_option("--concurrency", f->in.concurrency, "Sequences decoded together (default 1)");
    cmd->add_option("--provider", f->in.provider, "Price only this provider's offers");
    cmd->add_flag("--share", f->in.share,
                  "Fewer GPUs than a machine pay for theirs only: other replicas or work use the "
                  "rest (default: the whole machine is paid for)");
    f->shape.Add(cmd, true);
    AddCatalogFlags(cmd, &f->catalog);
    AddJsonFlag(cmd, conn);
    RunExitCode(cmd, exit_code, [&conn, f]() -> Result<int> {
      TF_ASSIGN_OR_RETURN(cost::Catalog catalog, cost::LoadCatalog(f->catalog));
      cost::ServeInput in = f->in;
      TF_ASSIGN_OR_RETURN(in.params, Count("--params", f->params));
      TF_ASSIGN_OR_RETURN(cost::ModelShape shape, f->shape.Resolve(catalog, in.params));
      in.layers = shape.layers;
      in.kv_heads = shape.kv_heads;
      in.head_dim = shape.head_dim;
      in.heads = shape.heads;
      in.shape_name = shape.name;
      TF_ASSIGN_OR_RETURN(cost::ServePlan result, cost::PlanServing(in, catalog));
      return ShowServe(in, result, conn.json);
    });
  }

  AddPlanCheckCommand(plan, conn, exit_code);
}

}  // namespace tf::cli
