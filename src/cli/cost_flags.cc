#include "cli/cost_flags.h"

#include <algorithm>
#include <iostream>

#include "cost/numbers.h"

namespace tf::cli {

void AddCatalogFlags(CLI::App* cmd, cost::CatalogOptions* options) {
  cmd->add_option("--catalog", options->replace,
                  "Price catalog CSV file or folder replacing the shipped tables of the same "
                  "kind (repeatable)")
      ->type_name("PATH")
      ->allow_extra_args(false);
  cmd->add_option("--catalog-extra", options->extra,
                  "CSV file or folder adding rows to the catalog, e.g. a reseller's price sheet "
                  "(repeatable; columns in docs/cost.md)")
      ->type_name("PATH")
      ->allow_extra_args(false);
}

void AddJsonFlag(CLI::App* cmd, client::Connection& conn) {
  cmd->add_flag("--json", conn.json, "Print JSON instead of tables");
}

namespace {
Json Opt(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }
}  // namespace

Json OfferJson(const cost::Offer& o) {
  Json j = {{"provider", o.provider},
            {"region", o.region},
            {"instance_type", o.instance_type},
            {"accelerator", o.accelerator},
            {"accelerator_count", o.accelerator_count},
            {"on_demand_usd_per_hour", Opt(o.on_demand)},
            {"on_demand_usd_per_gpu_hour",
             o.on_demand ? Json(o.PerAccelerator(*o.on_demand)) : Json(nullptr)},
            {"on_demand_price_date", o.on_demand_date},
            {"previous_on_demand_usd_per_hour", Opt(o.previous_on_demand)},
            {"previous_price", o.previous_label},
            {"spot_usd_per_hour_low", Opt(o.spot_low)},
            {"spot_usd_per_hour_high", Opt(o.spot_high)},
            {"spot_observed", o.spot_observed},
            {"vcpus", Opt(o.vcpus)},
            {"memory_gib", Opt(o.memory_gib)},
            {"network_gbps", Opt(o.network_gbps)},
            {"efa_interfaces", o.efa_interfaces ? Json(*o.efa_interfaces) : Json(nullptr)},
            {"source", o.source},
            {"catalog_row", o.origin}};
  return j;
}

Json AcceleratorJson(const cost::Accelerator& a) {
  return {{"name", a.name},
          {"bf16_dense_tflops", Opt(a.bf16_tflops)},
          {"fp8_dense_tflops", Opt(a.fp8_tflops)},
          {"fp8_supported", std::string(cost::Fp8SupportName(a.fp8))},
          {"memory_gib", Opt(a.memory_gib)},
          {"memory_bandwidth_gbs", Opt(a.bandwidth_gbs)},
          {"notes", a.notes},
          {"source", a.source}};
}

void PrintFacts(const std::vector<std::pair<std::string, std::string>>& facts) {
  size_t width = 0;
  for (const auto& f : facts) width = std::max(width, f.first.size());
  for (const auto& [label, value] : facts) {
    std::cout << "  " << label << std::string(width - label.size() + 2, ' ') << value << "\n";
  }
}

std::string Price(const std::optional<double>& usd, int digits) {
  if (!usd) return "-";
  return "$" + cost::FormatFixed(*usd, digits);
}

}  // namespace tf::cli
