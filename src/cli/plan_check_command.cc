// `tensorfleet plan check "CLAIM"`: whether a quoted training run holds at a stated MFU, by how
// much it is off in time and money, and what it would take. Offline: the catalog is the only
// input. Exit code 0 when the claim holds, 1 when it does not, 2 for a claim or flags that
// cannot be read.
#include <iostream>

#include "cli/commands.h"
#include "cli/cost_flags.h"
#include "cli/plan_flags.h"
#include "cli/table.h"
#include "cost/numbers.h"
#include "cost/planning/claim_check.h"

namespace tf::cli {
namespace {

using cost::FormatFixed;

// MFU beyond this is above what published large runs sustain (Llama 3.1 405B: 38-43%).
constexpr double kPublishedMfuCeiling = 0.6;

struct PlanCheckFlags {
  TrainingFlags training;
  std::string claim;
  double tolerance = 0.1;
  bool spot = false;
};

std::string Percent(double fraction) { return FormatFixed(fraction * 100, 1) + "%"; }
std::string TimesText(double ratio) { return FormatFixed(ratio, ratio < 10 ? 2 : 1) + "x"; }

std::string LayoutText(const cost::MemoryLayout& l) {
  return "tensor " + std::to_string(l.tensor) + " x pipeline " + std::to_string(l.pipeline) +
         " x data " + std::to_string(l.data) +
         (l.zero_stage > 0 ? ", ZeRO-" + std::to_string(l.zero_stage) : "");
}

std::string Dollars(double usd) { return "$" + cost::FormatGrouped(usd); }

std::string DaysText(double days) { return FormatFixed(days, days < 10 ? 2 : 1) + " days"; }

std::string MfuVerdict(double mfu) {
  if (mfu > 1) return "MFU " + Percent(mfu) + ", which no GPU reaches";
  if (mfu > kPublishedMfuCeiling) {
    return "MFU " + Percent(mfu) + " (beyond published large runs; Llama 3.1 405B reports 38-43%)";
  }
  return "MFU " + Percent(mfu);
}

Json VerdictJson(const cost::Claim& claim, const cost::ClaimVerdict& v) {
  const cost::TrainPlan& plan = v.plan;
  auto opt = [](const std::optional<double>& x) { return x ? Json(*x) : Json(nullptr); };
  Json j = {
      {"claim",
       {{"params", claim.params},
        {"tokens", claim.tokens},
        {"gpus", claim.gpus},
        {"accelerator", plan.accelerator->name},
        {"days", opt(claim.days)},
        {"gpu_hours", opt(claim.gpu_hours)},
        {"usd_low", opt(claim.usd_low)},
        {"usd_high", opt(claim.usd_high)}}},
      {"holds", v.holds()},
      {"possible", plan.possible()},
      {"refusals", plan.refusals},
      {"mfu", plan.mfu},
      {"goodput", plan.goodput},
      {"tolerance", v.tolerance},
      {"estimate", {{"days", plan.days()}, {"gpu_hours", plan.gpu_hours}, {"flops", plan.flops}}},
      {"recommended", plan.recommended ? Json(LayoutText(*plan.recommended)) : Json(nullptr)},
      {"priced_at", v.priced_at ? OfferPriceJson(*v.priced_at) : Json(nullptr)},
      {"time", {{"holds", v.time_holds()}, {"ratio", opt(v.time_ratio)}}},
      {"money",
       {{"holds", v.money_holds()},
        {"usd", v.priced_at ? Json(v.usd) : Json(nullptr)},
        {"ratio_to_high", opt(v.money_ratio_high)},
        {"ratio_to_low", opt(v.money_ratio_low)}}},
      {"would_take", Json::object()},
      {"warnings", plan.warnings}};
  if (v.time_ratio) {
    j["would_take"]["mfu_for_time"] = v.mfu_for_time;
    j["would_take"]["gpus_for_time"] = v.gpus_for_time;
  }
  if (v.money_ratio_high) {
    j["would_take"]["usd_per_gpu_hour_for_budget"] = v.usd_per_gpu_hour_for_budget;
    j["would_take"]["mfu_for_budget"] = v.mfu_for_budget;
    j["would_take"]["tokens_for_budget"] = v.tokens_for_budget;
  }
  return j;
}

void ShowVerdict(const cost::Claim& claim, const cost::ClaimVerdict& v, bool gpu_assumed) {
  const cost::TrainPlan& plan = v.plan;
  const std::string& gpu = plan.accelerator->name;
  std::cout << "Claim: " << cost::DescribeClaim(claim, gpu) << "\n";
  if (gpu_assumed) {
    std::cout << "(the claim names no accelerator: checked on " << gpu << "; --gpu to change)\n";
  }
  if (!plan.possible()) {
    for (const auto& r : plan.refusals) std::cout << "cannot train: " << r << "\n";
    std::cout << "\nVerdict: does NOT hold: the run does not fit on " << claim.gpus << " x " << gpu
              << "\n";
    return;
  }
  std::cout << "Estimate at MFU " << Percent(plan.mfu) << " and goodput " << Percent(plan.goodput);
  if (plan.recommended) std::cout << ", layout " << LayoutText(*plan.recommended);
  std::cout << "\n";
  if (v.priced_at) {
    std::cout << "Priced at the cheapest offer that holds it: " << OfferName(*v.priced_at) << ", "
              << Price(v.priced_at->usd_per_gpu_hour, 3) << "/GPU-hour\n";
  }
  std::cout << "\n";

  Table t({"", "claim", "estimate", "verdict"});
  auto verdict = [&](double ratio, const std::string& of) {
    return (ratio > 1 + v.tolerance ? "off: " : "holds: ") + TimesText(ratio) + " " + of;
  };
  t.Add({"time", claim.days ? DaysText(*claim.days) : "-", DaysText(plan.days()),
         claim.days && v.time_ratio ? verdict(*v.time_ratio, "the claim") : "-"});
  t.Add({"GPU-hours", claim.gpu_hours ? cost::FormatGrouped(*claim.gpu_hours) : "-",
         cost::FormatGrouped(plan.gpu_hours),
         !claim.days && v.time_ratio ? verdict(*v.time_ratio, "the claim") : "-"});
  std::string claimed_usd = "-";
  if (claim.usd_high) {
    claimed_usd = Dollars(*claim.usd_low);
    if (*claim.usd_high != *claim.usd_low) claimed_usd += " - " + Dollars(*claim.usd_high);
  }
  std::string money_verdict = "-";
  if (v.money_ratio_high) {
    money_verdict = verdict(*v.money_ratio_high, "the upper figure");
    if (*v.money_ratio_low != *v.money_ratio_high) {
      money_verdict += " (" + TimesText(*v.money_ratio_low) + " the lower)";
    }
  }
  t.Add({"cost", claimed_usd, v.priced_at ? Dollars(v.usd) : "no price in the catalog",
         money_verdict});
  t.Print(std::cout);

  std::cout << "\nVerdict: " << (v.holds() ? "holds" : "does NOT hold") << "\n";
  bool time_off = !v.time_holds(), money_off = !v.money_holds();
  if (!time_off && !money_off) return;
  std::cout << "What it would take:\n";
  if (time_off) {
    std::string target =
        claim.days ? DaysText(*claim.days) : cost::FormatGrouped(*claim.gpu_hours) + " GPU-hours";
    std::cout << "  " << target << ": " << MfuVerdict(v.mfu_for_time) << " on " << claim.gpus
              << " GPUs, or " << v.gpus_for_time << " x " << gpu << " at MFU " << Percent(plan.mfu)
              << (claim.days ? "" : " (GPU-hours do not shrink with more GPUs)") << "\n";
  }
  if (money_off && v.priced_at) {
    std::cout << "  " << Dollars(*claim.usd_high) << ": " << Price(v.usd_per_gpu_hour_for_budget, 3)
              << " per GPU-hour (the cheapest offer is " << Price(v.priced_at->usd_per_gpu_hour, 3)
              << "), or at that offer " << MfuVerdict(v.mfu_for_budget) << "\n";
    std::cout << "  " << Dollars(*claim.usd_high) << " buys "
              << cost::FormatShort(v.tokens_for_budget) << " tokens at that offer ("
              << Percent(v.tokens_for_budget / claim.tokens) << " of the "
              << cost::FormatShort(claim.tokens) << " claimed)\n";
  }
}

}  // namespace

void AddPlanCheckCommand(CLI::App* plan, client::Connection& conn, int& exit_code) {
  auto f = std::make_shared<PlanCheckFlags>();
  auto* cmd = plan->add_subcommand(
      "check",
      "Whether a quoted training run holds: \"a 70B model on 1T tokens, 256 GPUs, 30 days, "
      "$50K-$100K\" at the stated MFU; by how much it is off in time and money, and what it "
      "would take (exit 0 holds, 1 does not, 2 unreadable)");
  cmd->add_option("claim", f->claim,
                  "The quote: model size, tokens, GPUs, and days, GPU-hours or $ (a range with -)")
      ->required();
  f->training.in.gpu = "H100";
  cmd->add_option("--gpu", f->training.in.gpu,
                  "Accelerator when the claim names none (default H100)");
  cmd->add_option("--tolerance", f->tolerance,
                  "How far above the claim an estimate may be and still hold (default 0.1)");
  cmd->add_flag("--spot", f->spot, "Price at the cheapest spot offer where it is below on-demand");
  f->training.Add(cmd);
  AddJsonFlag(cmd, conn);
  cmd->callback([&conn, &exit_code, f, cmd] {
    auto run = [&]() -> Result<int> {
      TF_ASSIGN_OR_RETURN(cost::Catalog catalog, cost::LoadCatalog(f->training.catalog));
      TF_ASSIGN_OR_RETURN(cost::Claim claim, cost::ParseClaim(f->claim, catalog));
      TF_ASSIGN_OR_RETURN(cost::TrainInput in, f->training.Input(catalog, claim.params));
      TF_ASSIGN_OR_RETURN(cost::ClaimVerdict v,
                          cost::CheckClaim(claim, in, catalog, f->tolerance, f->spot));
      bool gpu_assumed = claim.gpu.empty() && cmd->count("--gpu") == 0;
      if (conn.json) {
        Json j = VerdictJson(claim, v);
        j["accelerator_assumed"] = gpu_assumed;
        PrintJson(j);
      } else {
        ShowVerdict(claim, v, gpu_assumed);
        for (const auto& w : v.plan.warnings) std::cout << "warning: " << w << "\n";
      }
      return v.holds() ? 0 : 1;
    };
    Result<int> code = run();
    exit_code = code.ok() ? *code : (Fail(code.status()), 2);
  });
}

}  // namespace tf::cli
