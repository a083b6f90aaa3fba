#include "cli/plan_flags.h"

#include "cli/cost_flags.h"
#include "cost/numbers.h"

namespace tf::cli {

void ShapeFlags::Add(CLI::App* cmd, bool serving) {
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

Result<cost::ModelShape> ShapeFlags::Resolve(const cost::Catalog& catalog, double params) const {
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

void TrainingFlags::Add(CLI::App* cmd) {
  cmd->add_option("--mfu", in.mfu,
                  "Model FLOPs utilisation over training steps, 0-1 (default 0.4)");
  cmd->add_option("--achieved-tflops", achieved,
                  "Hardware TFLOP/s per GPU instead of --mfu (as papers report throughput)");
  cmd->add_option("--goodput", in.goodput,
                  "Share of the reserved GPU time spent in training steps, the rest lost to "
                  "restarts, checkpoints and stragglers (default 0.9)");
  cmd->add_option("--recompute", recompute, "Activation recomputation: none, selective, full")
      ->check(CLI::IsMember({"none", "selective", "full"}));
  cmd->add_flag("--fp8", in.fp8, "Train in FP8: use the FP8 peak");
  cmd->add_option("--provider", in.provider, "Price only this provider's offers");
  cmd->add_flag("--share", in.share,
                "A run smaller than a machine pays for its GPUs only: other work uses the rest "
                "(default: the whole machine is paid for)");
  cmd->add_option("--seq-len", in.seq_len, "Tokens per sequence (default 4096)");
  cmd->add_option("--micro-batch", in.micro_batch, "Sequences per GPU per step (default 1)");
  shape.Add(cmd, false);
  AddCatalogFlags(cmd, &catalog);
}

Result<cost::TrainInput> TrainingFlags::Input(const cost::Catalog& catalog, double params) const {
  cost::TrainInput out = in;
  out.params = params;
  out.achieved_tflops = achieved;
  out.recompute = recompute == "none"   ? cost::Recompute::kNone
                  : recompute == "full" ? cost::Recompute::kFull
                                        : cost::Recompute::kSelective;
  TF_ASSIGN_OR_RETURN(cost::ModelShape s, shape.Resolve(catalog, params));
  out.dims = {s.layers, s.hidden, s.heads};
  out.shape_name = s.name;
  return out;
}

Result<double> Count(const std::string& flag, const std::string& value) {
  auto v = cost::ParseCount(value);
  if (!v.ok()) return v.status().WithContext(flag);
  return *v;
}

std::string OfferName(const cost::OfferPrice& p) {
  std::string name = p.offer->provider + " " + p.offer->instance_type;
  if (p.idle_gpus() > 0) {
    name += " (a whole " + std::to_string(p.billed_gpus) + "-GPU machine for " +
            std::to_string(p.used_gpus) + "; --share if other work uses the rest)";
  }
  return name;
}

Json OfferPriceJson(const cost::OfferPrice& p) {
  return {{"provider", p.offer->provider},
          {"instance_type", p.offer->instance_type},
          {"region", p.offer->region},
          {"usd_per_gpu_hour", p.usd_per_gpu_hour},
          {"usd_per_gpu_hour_high", p.usd_per_gpu_hour_high},
          {"machines", p.instances},
          {"gpus_billed", p.billed_gpus},
          {"gpus_idle", p.idle_gpus()},
          {"usd_per_hour", p.usd_per_hour()},
          {"source", p.offer->source}};
}

}  // namespace tf::cli
