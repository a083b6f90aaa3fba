// The planners as tables of published runs: the GPU-hours and days they report fall out of
// 6 x N x D at the MFU each run implies, and the memory formulas give the ZeRO paper's figures.
#include <gtest/gtest.h>

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
  EXPECT_NEAR(plan->UsdPerMillionTokens(cheapest, 4),
              cheapest.usd_per_gpu_hour * 4 / (plan->tokens_per_second * 3600) * 1e6, 1e-12);

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
  auto train =
      RunWithShippedCatalog({"plan", "train", "--params", "70B", "--tokens", "2T", "--gpu",
                             "A100-80GB", "--gpus", "2048", "--mfu", "0.4347233", "--json"});
  ASSERT_EQ(train.exit_code, 0) << train.output;
  auto j = nlohmann::json::parse(train.output);
  EXPECT_NEAR(j["gpu_hours"].get<double>(), 1720320, 100);
  EXPECT_EQ(j["model_shape"], "Llama-2-70B");
  EXPECT_TRUE(j["recommended"].is_object());

  auto human = RunWithShippedCatalog({"plan", "train", "--params", "70B", "--tokens", "2T", "--gpu",
                                      "A100-80GB", "--gpus", "2048", "--mfu", "0.4347233"});
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

  auto bad = RunWithShippedCatalog(
      {"plan", "train", "--params", "lots", "--tokens", "1T", "--gpu", "H100", "--gpus", "8"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("--params: 'lots' is not a positive count"), std::string::npos)
      << bad.output;
}

}  // namespace
}  // namespace tf::testing
