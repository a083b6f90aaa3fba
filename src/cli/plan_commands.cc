// `tensorfleet plan train|serve`: what a training run or a deployment needs and costs, before
// anything runs. Offline: the catalog is the only input.
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/cost_flags.h"
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

// The model's shape: --model, else the catalog's model of this nominal size; flags override.
struct ShapeFlags {
  std::string model;
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0;

  void Add(CLI::App* cmd, bool serving) {
    cmd->add_option("--model", model, "Take the shape from this catalog model (Llama-2-70B, ...)");
    cmd->add_option("--layers", layers, "Transformer layers (overrides the catalog shape)");
    if (serving) {
      cmd->add_option("--kv-heads", kv_heads, "Key/value heads (GQA), overrides the shape");
      cmd->add_option("--head-dim", head_dim, "Dimension of one attention head");
    } else {
      cmd->add_option("--hidden", hidden, "Hidden size (overrides the catalog shape)");
    }
    cmd->add_option("--heads", heads, "Attention heads (overrides the catalog shape)");
  }

  // Fills the shape into *out; returns the name of where it came from ("" if nowhere).
  Result<cost::ModelShape> Resolve(const cost::Catalog& catalog, double params) const {
    cost::ModelShape shape;
    if (!model.empty()) {
      const cost::ModelShape* m = catalog.FindModel(model);
      if (!m) {
        std::string names;
        for (const auto& x : catalog.models()) names += (names.empty() ? "" : ", ") + x.name;
        return InvalidArgument("unknown --model '" + model + "'; the catalog knows: " + names);
      }
      shape = *m;
    } else if (const cost::ModelShape* m = catalog.FindModelBySize(params)) {
      shape = *m;
    }
    bool overridden = false;
    for (auto [flag, field] : {std::pair{layers, &shape.layers},
                               {hidden, &shape.hidden},
                               {heads, &shape.heads},
                               {kv_heads, &shape.kv_heads},
                               {head_dim, &shape.head_dim}}) {
      if (flag > 0) {
        *field = flag;
        overridden = true;
      }
    }
    if (overridden) shape.name = shape.name.empty() ? "flags" : shape.name + " + flags";
    return shape;
  }
};

struct PlanTrainFlags {
  cost::CatalogOptions catalog;
  cost::TrainInput in;  // the flags set directly; the callback fills in the rest
  std::string params;   // "70B", "1.5T", "7e9"
  std::string tokens;   // "2T", "300B"
  std::string recompute = "selective";
  ShapeFlags shape;
  bool spot = false;               // lead with spot prices
  std::optional<double> achieved;  // --achieved-tflops
};

struct PlanServeFlags {
  cost::CatalogOptions catalog;
  cost::ServeInput in;  // the flags set directly; the callback fills in the rest
  std::string params;   // "70B", "8B"
  ShapeFlags shape;
};

Result<double> Count(const std::string& flag, const std::string& value) {
  auto v = cost::ParseCount(value);
  if (!v.ok()) return v.status().WithContext(flag);
  return *v;
}

Json PricesJson(const std::vector<cost::OfferPrice>& prices, double gpu_hours) {
  Json out = Json::array();
  for (const auto& p : prices) {
    out.push_back({{"provider", p.offer->provider},
                   {"instance_type", p.offer->instance_type},
                   {"region", p.offer->region},
                   {"usd_per_gpu_hour", p.usd_per_gpu_hour},
                   {"usd_per_gpu_hour_high", p.usd_per_gpu_hour_high},
                   {"total_usd", p.usd_per_gpu_hour * gpu_hours},
                   {"total_usd_high", p.usd_per_gpu_hour_high * gpu_hours},
                   {"price_date", p.offer->spot_low && p.usd_per_gpu_hour_high != p.usd_per_gpu_hour
                                      ? p.offer->spot_observed
                                      : p.offer->on_demand_date},
                   {"source", p.offer->source}});
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
  std::map<const cost::Offer*, const cost::OfferPrice*> spot;
  for (const auto& p : plan.spot) spot[p.offer] = &p;
  Table t({"provider", "instance", "region", "per GPU-hour", "on-demand total", "spot total"});
  auto spot_cell = [&](const cost::Offer* o) -> std::string {
    auto it = spot.find(o);
    if (it == spot.end()) return "-";
    std::string low = cost::FormatUsd(it->second->usd_per_gpu_hour * plan.gpu_hours);
    if (it->second->usd_per_gpu_hour_high == it->second->usd_per_gpu_hour) return low;
    return low + " - " + cost::FormatUsd(it->second->usd_per_gpu_hour_high * plan.gpu_hours);
  };
  std::vector<const cost::OfferPrice*> rows;
  if (spot_first) {
    for (const auto& p : plan.spot) rows.push_back(&p);
  } else {
    for (const auto& p : plan.on_demand) rows.push_back(&p);
  }
  for (const auto* p : rows) {
    const cost::Offer* o = p->offer;
    std::optional<double> od = o->on_demand;
    t.Add({o->provider, o->instance_type, o->region.empty() ? "-" : o->region,
           od ? Price(o->PerAccelerator(*od), 3) : "-",
           od ? cost::FormatUsd(o->PerAccelerator(*od) * plan.gpu_hours) : "-", spot_cell(o)});
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
              {"on_demand", PricesJson(plan.on_demand, plan.gpu_hours)},
              {"spot", PricesJson(plan.spot, plan.gpu_hours)},
              {"model_shape", in.shape_name},
              {"usable_gib_per_gpu", plan.usable_bytes_per_gpu / kGiB},
              {"layouts", Json::array()},
              {"recommended", plan.recommended ? LayoutJson(*plan.recommended) : Json(nullptr)},
              {"warnings", plan.warnings},
              {"possible", plan.possible()},
              {"refusals", plan.refusals}};
    if (!plan.possible()) j["on_demand"] = j["spot"] = Json::array();
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
  t.push_back({"utilisation", "MFU " + Pct(plan.mfu) + " (hardware FLOPs " + Pct(plan.hfu) + ")"});
  t.push_back({"wall-clock", FormatFixed(plan.days(), 1) + " days"});
  t.push_back({"GPU-hours", cost::FormatGrouped(plan.gpu_hours)});
  if (plan.possible() && !plan.on_demand.empty()) {
    const auto& best = plan.on_demand[0];
    t.push_back({"on-demand", cost::FormatUsd(best.usd_per_gpu_hour * plan.gpu_hours) + " at " +
                                  best.offer->provider + " " + best.offer->instance_type + " (" +
                                  Price(best.usd_per_gpu_hour, 3) + "/GPU-hour)"});
  }
  if (plan.possible() && !plan.spot.empty()) {
    const auto& best = plan.spot[0];
    t.push_back({"spot", cost::FormatUsd(best.usd_per_gpu_hour * plan.gpu_hours) + " at " +
                             best.offer->provider + " " + best.offer->instance_type +
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
      out.push_back({{"provider", p.offer->provider},
                     {"instance_type", p.offer->instance_type},
                     {"usd_per_gpu_hour", p.usd_per_gpu_hour},
                     {"usd_per_million_tokens", plan.UsdPerMillionTokens(p, in.gpus)}});
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
    t.push_back({"on-demand", Price(plan.UsdPerMillionTokens(p, in.gpus), 3) +
                                  " per million tokens at " + p.offer->provider + " " +
                                  p.offer->instance_type + " (" + Price(p.usd_per_gpu_hour, 3) +
                                  "/GPU-hour)"});
  }
  if (plan.possible() && !plan.spot.empty()) {
    const auto& p = plan.spot[0];
    t.push_back({"spot", Price(plan.UsdPerMillionTokens(p, in.gpus), 3) +
                             " per million tokens at " + p.offer->provider + " " +
                             p.offer->instance_type});
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
    cmd->add_option("--gpu", f->in.gpu, "Accelerator from the catalog: H100, A100-80GB, ...")
        ->required();
    cmd->add_option("--gpus", f->in.gpus, "Number of GPUs")->required();
    cmd->add_option("--mfu", f->in.mfu, "Model FLOPs utilisation, 0-1 (default 0.4)");
    cmd->add_option("--achieved-tflops", f->achieved,
                    "Hardware TFLOP/s per GPU instead of --mfu (as papers report throughput)");
    cmd->add_option("--recompute", f->recompute, "Activation recomputation: none, selective, full")
        ->check(CLI::IsMember({"none", "selective", "full"}));
    cmd->add_flag("--fp8", f->in.fp8, "Train in FP8: use the FP8 peak");
    cmd->add_flag("--spot", f->spot, "Lead with spot prices");
    cmd->add_option("--provider", f->in.provider, "Price only this provider's offers");
    cmd->add_option("--seq-len", f->in.seq_len, "Tokens per sequence (default 4096)");
    cmd->add_option("--micro-batch", f->in.micro_batch, "Sequences per GPU per step (default 1)");
    f->shape.Add(cmd, false);
    AddCatalogFlags(cmd, &f->catalog);
    AddJsonFlag(cmd, conn);
    RunExitCode(cmd, exit_code, [&conn, f]() -> Result<int> {
      TF_ASSIGN_OR_RETURN(cost::Catalog catalog, cost::LoadCatalog(f->catalog));
      auto n = Count("--params", f->params);
      auto d = Count("--tokens", f->tokens);
      TF_RETURN_IF_ERROR(n.status());
      TF_RETURN_IF_ERROR(d.status());
      cost::TrainInput in = f->in;
      in.params = *n;
      in.tokens = *d;
      in.achieved_tflops = f->achieved;
      in.recompute = f->recompute == "none"   ? cost::Recompute::kNone
                     : f->recompute == "full" ? cost::Recompute::kFull
                                              : cost::Recompute::kSelective;
      TF_ASSIGN_OR_RETURN(cost::ModelShape shape, f->shape.Resolve(catalog, in.params));
      in.dims = {shape.layers, shape.hidden, shape.heads};
      in.shape_name = shape.name;
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
}

}  // namespace tf::cli
