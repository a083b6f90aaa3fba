// `tensorfleet cost ...`: the price catalog, offers compared, bill audits and synthetic bills,
// which work offline (they read the catalog and files, never a server), and the cost report,
// which asks the server.
#include <algorithm>
#include <iostream>
#include <memory>

#include "cli/budget_commands.h"
#include "cli/commands.h"
#include "cli/cost_flags.h"
#include "cli/cost_report_command.h"
#include "cli/table.h"
#include "cost/numbers.h"

namespace tf::cli {
namespace {

struct CostCatalogFlags {
  cost::CatalogOptions catalog;
  std::string gpu;       // "": every accelerator
  std::string provider;  // "": every provider
};

struct CostCompareFlags {
  cost::CatalogOptions catalog;
  std::string gpu;
  bool spot = false;  // rank by the lowest observed spot price
};

std::string SpotRange(const cost::Offer& o) {
  if (!o.spot_low) return "-";
  if (*o.spot_low == *o.spot_high) return Price(o.spot_low);
  return Price(o.spot_low) + "-" + cost::FormatFixed(*o.spot_high, 2);
}

std::string Previous(const cost::Offer& o) {
  if (!o.previous_on_demand) return "-";
  return Price(o.previous_on_demand) + " (" + o.previous_label + ")";
}

Result<std::vector<const cost::Accelerator*>> Filter(const cost::Catalog& catalog,
                                                     const std::string& gpu) {
  std::vector<const cost::Accelerator*> out;
  if (gpu.empty()) {
    for (const auto& a : catalog.accelerators()) out.push_back(&a);
    return out;
  }
  out = catalog.MatchAccelerators(gpu);
  if (out.empty()) return catalog.ResolveAccelerator(gpu).status();
  return out;
}

bool Selected(const std::vector<const cost::Accelerator*>& gpus, const cost::Offer& o) {
  return std::any_of(gpus.begin(), gpus.end(),
                     [&](const cost::Accelerator* a) { return a->name == o.accelerator; });
}

Status ShowCatalog(const cost::Catalog& catalog, const std::string& gpu,
                   const std::string& provider, bool json) {
  TF_ASSIGN_OR_RETURN(std::vector<const cost::Accelerator*> gpus, Filter(catalog, gpu));
  std::vector<const cost::Offer*> offers;
  for (const auto& o : catalog.offers()) {
    bool accelerator_known = catalog.FindAccelerator(o.accelerator) != nullptr;
    if (!gpu.empty() && (!accelerator_known || !Selected(gpus, o))) continue;
    if (!provider.empty() && o.provider != provider) continue;
    offers.push_back(&o);
  }
  if (json) {
    Json j = {{"catalog_files", catalog.files()},
              {"accelerators", Json::array()},
              {"offers", Json::array()}};
    for (const auto* a : gpus) j["accelerators"].push_back(AcceleratorJson(*a));
    for (const auto* o : offers) j["offers"].push_back(OfferJson(*o));
    PrintJson(j);
    return OkStatus();
  }
  std::cout << "Accelerators (peak dense TFLOP/s)\n";
  Table accelerators({"name", "bf16", "fp8", "fp8 support", "memory GiB", "GB/s", "source"});
  auto num = [](const std::optional<double>& v) {
    return v ? cost::FormatFixed(*v, *v == static_cast<int64_t>(*v) ? 0 : 1) : "-";
  };
  for (const auto* a : gpus) {
    accelerators.Add({a->name, num(a->bf16_tflops), num(a->fp8_tflops),
                      std::string(cost::Fp8SupportName(a->fp8)), num(a->memory_gib),
                      num(a->bandwidth_gbs), a->source});
  }
  accelerators.Print(std::cout);
  std::cout << "\nOffers (USD per instance-hour; spot prices are observed ranges)\n";
  Table table({"provider", "region", "instance", "accelerators", "on-demand", "per GPU",
               "price date", "previous list price", "spot", "source"});
  for (const auto* o : offers) {
    table.Add({o->provider, o->region.empty() ? "-" : o->region, o->instance_type,
               std::to_string(o->accelerator_count) + "x " + o->accelerator, Price(o->on_demand),
               o->on_demand ? Price(o->PerAccelerator(*o->on_demand), 3) : "-",
               o->on_demand_date.empty() ? "-" : o->on_demand_date, Previous(*o), SpotRange(*o),
               o->source});
  }
  table.Print(std::cout);
  std::cout << "\n"
            << offers.size() << " offers from " << catalog.files().size() << " catalog files\n";
  return OkStatus();
}

// One accelerator, named as the planners name it (exact, or a unique prefix): ranking A100-40GB
// and A100-80GB together would compare unlike GPUs.
Status Compare(const cost::Catalog& catalog, const std::string& query, bool spot, bool json) {
  TF_ASSIGN_OR_RETURN(const cost::Accelerator* accelerator, catalog.ResolveAccelerator(query));
  const std::string& gpu = accelerator->name;
  std::vector<const cost::Accelerator*> gpus{accelerator};
  struct Ranked {
    const cost::Offer* offer;
    double per_gpu;
  };
  std::vector<Ranked> ranked;
  std::vector<const cost::Offer*> unpriced;
  for (const auto& o : catalog.offers()) {
    if (!Selected(gpus, o)) continue;
    std::optional<double> price = spot ? o.spot_low : o.on_demand;
    if (price) {
      ranked.push_back({&o, o.PerAccelerator(*price)});
    } else {
      unpriced.push_back(&o);
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const Ranked& a, const Ranked& b) { return a.per_gpu < b.per_gpu; });
  std::string basis = spot ? "spot (lowest observed)" : "on-demand";
  if (json) {
    Json j = {{"accelerator", gpu},
              {"basis", basis},
              {"ranked", Json::array()},
              {"not_ranked", Json::array()}};
    for (size_t i = 0; i < ranked.size(); ++i) {
      Json o = OfferJson(*ranked[i].offer);
      o["rank"] = i + 1;
      o["usd_per_gpu_hour"] = ranked[i].per_gpu;
      o["times_cheapest"] = ranked[i].per_gpu / ranked[0].per_gpu;
      j["ranked"].push_back(o);
    }
    for (const auto* o : unpriced) j["not_ranked"].push_back(OfferJson(*o));
    PrintJson(j);
    return OkStatus();
  }
  if (ranked.empty()) return NotFound("no " + basis + " price in the catalog for " + gpu);
  std::cout << gpu << " offers ranked by " << basis << " price per GPU-hour\n";
  Table table({"rank", "provider", "instance", "region", "gpus", "per GPU-hour", "x cheapest",
               "per instance-hour", spot ? "spot observed" : "price date", "source"});
  for (size_t i = 0; i < ranked.size(); ++i) {
    const cost::Offer& o = *ranked[i].offer;
    std::optional<double> instance = spot ? o.spot_low : o.on_demand;
    table.Add(
        {std::to_string(i + 1), o.provider, o.instance_type, o.region.empty() ? "-" : o.region,
         std::to_string(o.accelerator_count) + "x " + o.accelerator, Price(ranked[i].per_gpu, 3),
         cost::FormatFixed(ranked[i].per_gpu / ranked[0].per_gpu, 2), Price(instance),
         spot ? (o.spot_observed.empty() ? "-" : o.spot_observed) : o.on_demand_date, o.source});
  }
  table.Print(std::cout);
  for (const auto* o : unpriced) {
    std::cout << "not ranked (no " << basis << " price): " << o->provider << " " << o->instance_type
              << (o->region.empty() ? "" : " " + o->region) << "\n";
  }
  return OkStatus();
}

}  // namespace

void AddCostCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto* cost_cmd = app.add_subcommand(
      "cost", "Prices, offer comparison and bill audits (offline), and what jobs cost (report)");
  cost_cmd->require_subcommand(1);

  {
    auto f = std::make_shared<CostCatalogFlags>();
    auto* cmd = cost_cmd->add_subcommand(
        "catalog",
        "List accelerators and the offers that sell them, with on-demand, previous "
        "and spot prices, their dates and sources");
    cmd->add_option("--gpu", f->gpu, "Only this accelerator (H100, A100 for both A100s, ...)");
    cmd->add_option("--provider", f->provider, "Only this provider (aws, lambda, ...)");
    AddCatalogFlags(cmd, &f->catalog);
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(cost::Catalog catalog, cost::LoadCatalog(f->catalog));
      return ShowCatalog(catalog, f->gpu, f->provider, conn.json);
    });
  }

  {
    auto f = std::make_shared<CostCompareFlags>();
    auto* cmd = cost_cmd->add_subcommand(
        "compare", "Rank every offer of an accelerator by price per GPU-hour");
    cmd->add_option("gpu", f->gpu, "Accelerator: H100, H200, A100-80GB, L4, ...")->required();
    cmd->add_flag("--spot", f->spot, "Rank by the lowest observed spot price instead");
    AddCatalogFlags(cmd, &f->catalog);
    AddJsonFlag(cmd, conn);
    RunStatus(cmd, exit_code, [&conn, f] {
      TF_ASSIGN_OR_RETURN(cost::Catalog catalog, cost::LoadCatalog(f->catalog));
      return Compare(catalog, f->gpu, f->spot, conn.json);
    });
  }

  AddBillCommands(cost_cmd, conn, exit_code);
  AddBudgetCommands(cost_cmd, conn, exit_code);
  AddCostReportCommand(cost_cmd, conn, exit_code);
}

}  // namespace tf::cli
