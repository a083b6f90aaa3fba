// The planners as tables of published runs: the GPU-hours and days they report fall out of
// 6 x N x D at the MFU each run implies, and the memory formulas give the ZeRO paper's figures.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cost/numbers.h"
#include "cost/planning/serve_plan.h"
#include "cost/planning/train_plan.h"
#include "cost_test_util.h"

namespace tf::testing {
namespace {

using cost::kGiB;

// The MFU a published run implies: model FLOPs / (GPU-seconds x peak).
double ImpliedMfu(double params, double tokens, double gpu_hours, double peak_tflops) {
  return 6 * params * tokens / (gpu_hours * 3600 * peak_tflops * 1e12);
}

struct PublishedRun {
  const char* name;
  double params, tokens;
  const char* gpu;
  double gpu_hours;
  double mfu_low, mfu_high;  // where the implied MFU must land
};

TEST(CostPlanTrain, ReproducesPublishedGpuHours) {
  cost::Catalog catalog = ShippedCatalog();
  // Llama 2 paper, Table 2 (2T tokens on A100-80GB); Llama 3.1 model card (15.6T tokens, H100).
  const PublishedRun runs[] = {
      {"Llama-2-7B", 7e9, 2e12, "A100-80GB", 184320, 0.35, 0.50},
      {"Llama-2-13B", 13e9, 2e12, "A100-80GB", 368640, 0.35, 0.50},
      {"Llama-2-34B", 34e9, 2e12, "A100-80GB", 1038336, 0.30, 0.50},
      {"Llama-2-70B", 70e9, 2e12, "A100-80GB", 1720320, 0.40, 0.50},
      {"Llama-3.1-405B", 405e9, 15.6e12, "H100", 30.84e6, 0.30, 0.45},
  };
  for (const auto& run : runs) {
    double peak = *catalog.FindAccelerator(run.gpu)->bf16_tflops;
    double mfu = ImpliedMfu(run.params, run.tokens, run.gpu_hours, peak);
    // Llama 2 70B: 8.4e23 FLOPs / (1,720,320 h x 3600 s x 312e12 FLOP/s) = 0.434723.
    std::cout << run.name << ": implied MFU " << cost::FormatFixed(mfu * 100, 2) << "%\n";
    EXPECT_GT(mfu, run.mfu_low) << run.name;
    EXPECT_LT(mfu, run.mfu_high) << run.name;

    cost::TrainInput in;
    in.params = run.params;
    in.tokens = run.tokens;
    in.gpu = run.gpu;
    in.gpus = 2048;
    in.mfu = mfu;
    in.goodput = 1;  // the implied MFU already counts every hour the run held the GPUs
    auto plan = cost::PlanTraining(in, catalog);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_NEAR(plan->gpu_hours, run.gpu_hours, run.gpu_hours * 1e-9) << run.name;
    // GPU-hours do not depend on how many GPUs share them.
    in.gpus = 512;
    EXPECT_NEAR(cost::PlanTraining(in, catalog)->gpu_hours, run.gpu_hours, run.gpu_hours * 1e-9);
  }
  // The figure at a rounded MFU, as a user would type it: within 0.1%.
  cost::TrainInput in{
      .params = 70e9, .tokens = 2e12, .gpu = "A100-80GB", .gpus = 2048, .mfu = 0.4347};
  in.goodput = 1;
  EXPECT_NEAR(cost::PlanTraining(in, catalog)->gpu_hours, 1720320, 1720320 * 1e-3);
}

TEST(CostPlanTrain, Gpt3On1024A100sTakes34Days) {
  cost::Catalog catalog = ShippedCatalog();
  // Narayanan et al. 2021: 140 TFLOP/s per A100 of hardware work, with full recomputation
  // (8 N D), so MFU = 140 x 6/8 / 312 = 33.65%; time = 8 x 300e9 x 175e9 / (1024 x 140e12).
  double mfu = 140.0 * 6 / 8 / 312;
  EXPECT_NEAR(mfu, 0.3365, 1e-4);
  cost::TrainInput in;
  in.params = 175e9;
  in.tokens = 300e9;
  in.gpu = "A100-80GB";
  in.gpus = 1024;
  in.achieved_tflops = 140;
  in.recompute = cost::Recompute::kFull;
  in.goodput = 1;  // their estimate is of training steps alone
  auto plan = cost::PlanTraining(in, catalog);
  ASSERT_TRUE(plan.ok());
  EXPECT_NEAR(plan->mfu, mfu, 1e-9);
  EXPECT_NEAR(plan->hfu, 140.0 / 312, 1e-9);
  EXPECT_NEAR(plan->days(), 33.9, 0.05);
  EXPECT_NEAR(plan->flops, 3.15e23, 1e20);
  // The same MFU given directly gives the same days.
  in.achieved_tflops.reset();
  in.mfu = mfu;
  EXPECT_NEAR(cost::PlanTraining(in, catalog)->days(), 33.9, 0.05);
}

// The Llama 3 paper reports 38-43% MFU for Llama 3.1 405B and more than 90% effective training
// time; at the default goodput (0.9) the published 30.84M H100-hours lie inside that MFU range.
TEST(CostPlanTrain, GoodputReproducesLlama31AtItsReportedMfu) {
  cost::Catalog catalog = ShippedCatalog();
  cost::TrainInput in{.params = 405e9, .tokens = 15.6e12, .gpu = "H100", .gpus = 16384};
  EXPECT_EQ(in.goodput, 0.9);
  in.mfu = 0.38;
  auto slow = cost::PlanTraining(in, catalog);
  in.mfu = 0.43;
  auto fast = cost::PlanTraining(in, catalog);
  ASSERT_TRUE(slow.ok() && fast.ok());
  EXPECT_GE(slow->gpu_hours, 30.84e6);
  EXPECT_LE(fast->gpu_hours, 30.84e6);
  // Without goodput the same MFU range misses the published figure by 9-25%.
  in.goodput = 1;
  in.mfu = 0.38;
  EXPECT_LT(cost::PlanTraining(in, catalog)->gpu_hours, 30.84e6 * 0.92);
  // Goodput stretches time and GPU-hours alike.
  EXPECT_NEAR(slow->gpu_hours * 0.9, cost::PlanTraining(in, catalog)->gpu_hours, 1);
}

TEST(CostPlanTrain, RejectsImpossibleInput) {
  cost::Catalog catalog = ShippedCatalog();
  cost::TrainInput in{.params = 7e9, .tokens = 1e12, .gpu = "A100-80GB", .gpus = 8, .mfu = 0.4};
  in.mfu = 1.5;
  EXPECT_FALSE(cost::PlanTraining(in, catalog).ok());
  in.mfu = 0.4;
  in.fp8 = true;  // Ampere has no FP8
  auto fp8 = cost::PlanTraining(in, catalog);
  ASSERT_FALSE(fp8.ok());
  EXPECT_NE(fp8.status().message().find("no FP8"), std::string::npos);
  in.fp8 = false;
  in.achieved_tflops = 400;  // above the 312 peak
  EXPECT_FALSE(cost::PlanTraining(in, catalog).ok());
  in.achieved_tflops.reset();
  in.goodput = 0;
  EXPECT_NE(cost::PlanTraining(in, catalog).status().message().find("--goodput"),
            std::string::npos);
  in.goodput = 0.9;
  in.gpu = "A100";  // two A100s in the catalog
  EXPECT_NE(cost::PlanTraining(in, catalog).status().message().find("ambiguous"),
            std::string::npos);
}

TEST(CostTrainMemory, ZeroPaperFigure1) {
  // Rajbhandari et al. 2019, Figure 1: 7.5B parameters, 64 data-parallel GPUs.
  struct Row {
    int stage;
    double gb;
  };
  for (auto [stage, gb] : {Row{0, 120}, Row{1, 31.4}, Row{2, 16.6}, Row{3, 1.9}}) {
    EXPECT_NEAR(cost::ModelStateBytes(7.5e9, 64, stage) / 1e9, gb, 0.05) << "ZeRO-" << stage;
  }
  // Their 13B worked example: 208, 54.4, 28.8, 3.25 GB.
  for (auto [stage, gb] : {Row{0, 208}, Row{1, 54.4}, Row{2, 28.8}, Row{3, 3.25}}) {
    EXPECT_NEAR(cost::ModelStateBytes(13e9, 64, stage) / 1e9, gb, 0.05) << "ZeRO-" << stage;
  }
}

TEST(CostTrainMemory, ActivationsFollowKorthikanti) {
  cost::TrainMemoryInput in;
  in.dims = {80, 8192, 64};
  in.seq_len = 4096;
  in.micro_batch = 1;
  double sbh = 4096.0 * 8192;
  in.recompute = cost::Recompute::kSelective;
  EXPECT_DOUBLE_EQ(cost::ActivationBytes(in, 1), sbh * 80 * 34);
  EXPECT_DOUBLE_EQ(cost::ActivationBytes(in, 8), sbh * 80 * 34 / 8);
  in.recompute = cost::Recompute::kNone;
  EXPECT_DOUBLE_EQ(cost::ActivationBytes(in, 1), sbh * 80 * (34 + 5.0 * 64 * 4096 / 8192));
  in.recompute = cost::Recompute::kFull;
  EXPECT_DOUBLE_EQ(cost::ActivationBytes(in, 2), sbh * (2 * 80 + 34 + 5.0 * 64 * 4096 / 8192) / 2);
  in.dims = {};
  EXPECT_EQ(cost::ActivationBytes(in, 1), 0);
}

TEST(CostTrainMemory, RecommendsALayoutOrWarns) {
  cost::Catalog catalog = ShippedCatalog();
  cost::TrainInput in{.params = 70e9, .tokens = 2e12, .gpu = "A100-80GB", .gpus = 256, .mfu = 0.4};
  in.dims = {80, 8192, 64};
  auto plan = cost::PlanTraining(in, catalog);
  ASSERT_TRUE(plan.ok());
  ASSERT_TRUE(plan->recommended);
  const auto& r = *plan->recommended;
  EXPECT_TRUE(r.fits);
  EXPECT_EQ(r.tensor * r.pipeline * r.data, 256);
  EXPECT_LE(r.total_bytes(), 80 * kGiB * 0.9);
  // Nothing smaller in model parallelism fits.
  for (const auto& l : plan->layouts) {
    if (l.tensor * l.pipeline < r.tensor * r.pipeline) {
      EXPECT_FALSE(l.fits);
    }
  }
  EXPECT_TRUE(plan->warnings.empty()) << plan->warnings[0];

  // 70B on 8 A10Gs: 70e9 x 16 B / 8 = 140 GB per GPU even with ZeRO-3.
  in.gpu = "A10G";
  in.gpus = 8;
  plan = cost::PlanTraining(in, catalog);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->recommended);
  EXPECT_FALSE(plan->possible());
  ASSERT_FALSE(plan->refusals.empty());
  EXPECT_NE(plan->refusals.back().find("cannot fit"), std::string::npos);
}

// A 16,384-GPU run of Llama 3.1 405B plans tensor parallelism 4 inside a machine: machines of
// one GPU (the cheapest per GPU-hour) cannot hold that layout and must not price it.
TEST(CostPlanPricing, OnlyMachinesThatHoldTheRecommendedLayout) {
  cost::Catalog catalog = ShippedCatalog();
  cost::TrainInput in{.params = 405e9, .tokens = 15.6e12, .gpu = "H100", .gpus = 16384, .mfu = 0.4};
  in.dims = {126, 16384, 128};
  auto plan = cost::PlanTraining(in, catalog);
  ASSERT_TRUE(plan.ok());
  ASSERT_TRUE(plan->recommended);
  int tensor = plan->recommended->tensor;
  EXPECT_EQ(tensor, 4);
  ASSERT_FALSE(plan->on_demand.empty());
  bool catalog_has_single_gpu_h100 = false;
  for (const cost::Offer* o : catalog.OffersOf("H100")) {
    catalog_has_single_gpu_h100 |= o->accelerator_count == 1 && o->on_demand.has_value();
  }
  EXPECT_TRUE(catalog_has_single_gpu_h100);  // or this test proves nothing
  for (const auto* prices : {&plan->on_demand, &plan->spot}) {
    for (const auto& p : *prices) {
      EXPECT_EQ(p.offer->accelerator_count % tensor, 0) << p.offer->instance_type;
      EXPECT_EQ(p.instances * p.offer->accelerator_count, 16384) << p.offer->instance_type;
      EXPECT_EQ(p.idle_gpus(), 0);
    }
  }
  // The same run with tensor 1 (a small model) may use single-GPU machines.
  cost::TrainInput small{.params = 1e9, .tokens = 1e12, .gpu = "H100", .gpus = 16, .mfu = 0.4};
  small.dims = {16, 2048, 16};
  auto small_plan = cost::PlanTraining(small, catalog);
  ASSERT_TRUE(small_plan.ok());
  EXPECT_EQ(small_plan->recommended->tensor, 1);
  bool single = false;
  for (const auto& p : small_plan->on_demand) single |= p.offer->accelerator_count == 1;
  EXPECT_TRUE(single);
}

// Fewer GPUs than a machine pay for the whole machine, unless the rest is shared.
TEST(CostPlanPricing, WholeMachinesUnlessShared) {
  cost::Catalog catalog = ShippedCatalog();
  cost::PricingQuery q{.accelerator = "L4", .gpus = 2, .tensor = 2};
  auto whole = cost::PricedOffers(catalog, q);
  ASSERT_FALSE(whole.empty());
  for (const auto& p : whole) {
    EXPECT_EQ(p.billed_gpus, std::max(2, p.offer->accelerator_count)) << p.offer->instance_type;
    EXPECT_EQ(p.usd_per_hour(), p.usd_per_gpu_hour * p.billed_gpus);
  }
  for (size_t i = 1; i < whole.size(); ++i) {
    EXPECT_LE(whole[i - 1].usd_per_hour(), whole[i].usd_per_hour());  // cheapest run first
  }
  const auto& four = *std::find_if(whole.begin(), whole.end(), [](const cost::OfferPrice& p) {
    return p.offer->accelerator_count == 4;
  });
  EXPECT_EQ(four.idle_gpus(), 2);
  EXPECT_DOUBLE_EQ(four.usd_per_hour(), *four.offer->on_demand);  // the instance's price

  q.share = true;
  for (const auto& p : cost::PricedOffers(catalog, q)) {
    EXPECT_EQ(p.billed_gpus, 2);
    EXPECT_EQ(p.idle_gpus(), 0);
  }

  // The serving planner prices per million tokens at what is billed.
  cost::ServeInput serve{.params = 8e9,
                         .gpu = "L4",
                         .gpus = 2,
                         .context = 4096,
                         .concurrency = 4,
                         .layers = 32,
                         .kv_heads = 8,
                         .head_dim = 128};
  auto plan = cost::PlanServing(serve, catalog);
  ASSERT_TRUE(plan.ok() && plan->possible());
  const auto& cheapest = plan->on_demand[0];
  EXPECT_GT(cheapest.billed_gpus, 2);
  EXPECT_NEAR(
      plan->UsdPerMillionTokens(cheapest),
      cheapest.usd_per_gpu_hour * cheapest.billed_gpus / (plan->tokens_per_second * 3600) * 1e6,
      1e-9);
  serve.share = true;
  auto shared = cost::PlanServing(serve, catalog);
  EXPECT_EQ(shared->on_demand[0].billed_gpus, 2);
  EXPECT_LT(shared->UsdPerMillionTokens(shared->on_demand[0]), plan->UsdPerMillionTokens(cheapest));
}

constexpr const char* kZ1 =
    "accelerator,bf16_dense_tflops,fp8_dense_tflops,fp8_supported,memory_gib,"
    "memory_bandwidth_gbps,notes,source\n"
    "Z1,100,,no,80,2000,,test\n";

// Spot is quoted as the headline only where it is below on-demand.
TEST(CostPlanPricing, SpotHeadlineOnlyBelowOnDemand) {
  cost::Catalog catalog;
  ASSERT_TRUE(catalog.LoadText(kZ1, "accelerators.csv").ok());
  std::string offers =
      "provider,region,instance_type,accelerator,accelerator_count,on_demand_usd_per_hour,"
      "spot_usd_per_hour_low,spot_usd_per_hour_high\n"
      "cheap,,z1-8,Z1,8,16,20,24\n"   // spot above its own on-demand
      "dear,,z1-8b,Z1,8,40,18,30\n";  // spot below its own, above the cheapest on-demand
  Status loaded = catalog.LoadText(offers, "offers.csv");
  ASSERT_TRUE(loaded.ok()) << loaded.ToString();
  cost::PricingQuery q{.accelerator = "Z1", .gpus = 8, .tensor = 8};
  auto on_demand = cost::PricedOffers(catalog, q);
  q.spot = true;
  auto spot = cost::PricedOffers(catalog, q);
  ASSERT_EQ(on_demand.size(), 2u);
  ASSERT_EQ(spot.size(), 2u);
  EXPECT_EQ(cost::SpotBelowOnDemand(on_demand, spot), nullptr);
  on_demand.erase(on_demand.begin());  // without the cheap offer, dear's spot (18) is below 40
  ASSERT_NE(cost::SpotBelowOnDemand(on_demand, spot), nullptr);
  EXPECT_EQ(cost::SpotBelowOnDemand(on_demand, spot)->offer->provider, "dear");

  TempDir tmp;
  std::string dir = tmp.path().string();
  WriteFile(dir + "/accelerators.csv", kZ1);
  WriteFile(dir + "/offers.csv", offers);
  auto run = RunWithShippedCatalog({"plan", "train", "--params", "1B", "--tokens", "20B", "--gpu",
                                    "Z1", "--gpus", "8", "--catalog-extra", dir});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("on-demand"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("  spot "), std::string::npos) << run.output;
}

cost::ServeInput Llama70B(const char* gpu, int gpus, const char* dtype) {
  cost::ServeInput in;
  in.params = 70e9;
  in.dtype = dtype;
  in.gpu = gpu;
  in.gpus = gpus;
  in.context = 4096;
  in.concurrency = 16;
  in.layers = 80;
  in.kv_heads = 8;
  in.head_dim = 128;
  in.heads = 64;
  return in;
}

TEST(CostPlanServe, KvCacheAndRoofline) {
  cost::Catalog catalog = ShippedCatalog();
  // 70B GQA-8 in BF16: 2 x 80 x 8 x 128 x 2 B = 320 KiB per token, 1,342,177,280 B per
  // 4096-token sequence.
  auto plan = cost::PlanServing(Llama70B("H100", 4, "bf16"), catalog);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->possible());
  EXPECT_EQ(plan->kv_bytes_per_token, 327680);
  EXPECT_EQ(plan->kv_bytes, 1342177280.0 * 16);
  EXPECT_EQ(plan->weight_bytes, 140e9);
  // Roofline: 4 x 3.35 TB/s over weights plus 16 sequences' KV cache per step, 16 tokens a step.
  EXPECT_NEAR(plan->tokens_per_second, 16 * 4 * 3350e9 / (140e9 + 16 * 1342177280.0), 1e-6);
  EXPECT_NEAR(plan->tokens_per_second_single, 4 * 3350e9 / (140e9 + 1342177280.0), 1e-6);
  ASSERT_FALSE(plan->on_demand.empty());
  const auto& cheapest = plan->on_demand[0];
  // Four GPUs in tensor parallel need one machine: the catalog's H100 machines hold 1 or 8, so
  // the whole 8-GPU machine is paid for.
  EXPECT_EQ(cheapest.billed_gpus, 8);
  EXPECT_NEAR(plan->UsdPerMillionTokens(cheapest),
              cheapest.usd_per_gpu_hour * 8 / (plan->tokens_per_second * 3600) * 1e6, 1e-12);

  // Llama-2-7B (32 layers, 32 KV heads) in FP16, 2048 tokens: 1.07 GB per sequence.
  cost::ServeInput small{.params = 7e9,
                         .gpu = "L4",
                         .gpus = 1,
                         .context = 2048,
                         .concurrency = 1,
                         .layers = 32,
                         .kv_heads = 32,
                         .head_dim = 128};
  EXPECT_EQ(cost::PlanServing(small, catalog)->kv_bytes, 1073741824.0);
}

TEST(CostPlanServe, RefusesImpossiblePlansWithTheReason) {
  cost::Catalog catalog = ShippedCatalog();
  auto fp8 = cost::PlanServing(Llama70B("A10G", 4, "fp8"), catalog);
  ASSERT_TRUE(fp8.ok());
  ASSERT_FALSE(fp8->possible());
  EXPECT_NE(fp8->refusals[0].find("A10G has no FP8 support"), std::string::npos);

  auto bf16 = cost::PlanServing(Llama70B("A10G", 4, "bf16"), catalog);
  ASSERT_FALSE(bf16->possible());
  EXPECT_NE(bf16->refusals[0].find("the weights do not fit"), std::string::npos);

  // Weights fit on 2 x H100 (130 GiB of 144 usable) but not 16 long sequences.
  auto kv = Llama70B("H100", 2, "bf16");
  kv.context = 32768;
  auto plan = cost::PlanServing(kv, catalog);
  ASSERT_FALSE(plan->possible());
  EXPECT_NE(plan->refusals[0].find("the KV cache does not fit"), std::string::npos);
  EXPECT_NE(plan->refusals[0].find("at most 1 such sequences fit"), std::string::npos)
      << plan->refusals[0];

  auto unknown = Llama70B("H100", 4, "fp6");
  EXPECT_FALSE(cost::PlanServing(unknown, catalog).ok());
}

TEST(CostPlanCli, TrainAndServe) {
  auto train = RunWithShippedCatalog({"plan", "train", "--params", "70B", "--tokens", "2T", "--gpu",
                                      "A100-80GB", "--gpus", "2048", "--mfu", "0.4347233",
                                      "--goodput", "1", "--json"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  auto j = nlohmann::json::parse(train.output);
  EXPECT_NEAR(j["gpu_hours"].get<double>(), 1720320, 100);
  EXPECT_EQ(j["model_shape"], "Llama-2-70B");
  EXPECT_TRUE(j["recommended"].is_object());

  auto human = RunWithShippedCatalog({"plan", "train", "--params", "70B", "--tokens", "2T", "--gpu",
                                      "A100-80GB", "--gpus", "2048", "--mfu", "0.4347233",
                                      "--goodput", "1"});
  EXPECT_EQ(human.exit_code, 0);
  EXPECT_NE(human.output.find("GPU-hours    1,720,320"), std::string::npos) << human.output;
  EXPECT_NE(human.output.find("recommended:"), std::string::npos);

  auto refused =
      RunWithShippedCatalog({"plan", "serve", "--params", "70B", "--dtype", "fp8", "--gpu", "A10G",
                             "--gpus", "4", "--context", "4096", "--concurrency", "16"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.output.find("cannot serve: A10G has no FP8 support"), std::string::npos)
      << refused.output;

  // A run that cannot fit is refused as a serving plan is: exit 1, the reason, no costs.
  auto too_big = RunWithShippedCatalog(
      {"plan", "train", "--params", "405B", "--tokens", "15T", "--gpu", "A10G", "--gpus", "1"});
  EXPECT_EQ(too_big.exit_code, 1) << too_big.output;
  EXPECT_NE(too_big.output.find("cannot train: cannot fit: no layout of 1 x A10G"),
            std::string::npos)
      << too_big.output;
  EXPECT_EQ(too_big.output.find("Cost at each offer"), std::string::npos) << too_big.output;
  auto too_big_json = RunWithShippedCatalog({"plan", "train", "--params", "405B", "--tokens", "15T",
                                             "--gpu", "A10G", "--gpus", "1", "--json"});
  EXPECT_EQ(too_big_json.exit_code, 1);
  auto refusal = nlohmann::json::parse(too_big_json.output, nullptr, false);
  ASSERT_TRUE(refusal.is_object()) << too_big_json.output;
  EXPECT_EQ(refusal["possible"], false);
  EXPECT_TRUE(refusal["on_demand"].empty());

  // The run's cost at a whole machine, named as such, and --share prices only its GPUs.
  auto partial = RunWithShippedCatalog(
      {"plan", "serve", "--params", "8B", "--gpu", "L4", "--gpus", "2", "--concurrency", "4"});
  EXPECT_EQ(partial.exit_code, 0) << partial.output;
  EXPECT_NE(partial.output.find("a whole 4-GPU machine for 2; --share if other work uses the rest"),
            std::string::npos)
      << partial.output;
  auto shared = RunWithShippedCatalog({"plan", "serve", "--params", "8B", "--gpu", "L4", "--gpus",
                                       "2", "--concurrency", "4", "--share"});
  EXPECT_EQ(shared.output.find("a whole"), std::string::npos) << shared.output;

  auto bad = RunWithShippedCatalog(
      {"plan", "train", "--params", "lots", "--tokens", "1T", "--gpu", "H100", "--gpus", "8"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("--params: 'lots' is not a positive count"), std::string::npos)
      << bad.output;
}

}  // namespace
}  // namespace tf::testing
