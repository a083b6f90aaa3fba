// The price and accelerator catalog: what each instance type or reseller offer costs, what
// its accelerators can do, and the shapes of well-known models. Loaded from CSV files at run
// time (see catalog_files.h for where they are found); nothing in the code holds a price.
//
// Four kinds of table, each told apart by its header (docs/cost.md lists the columns):
// accelerators, offers (instance types and reseller SKUs with their prices), usage prices
// (storage, transfer) and model shapes. A Catalog is immutable once loaded; share it freely.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::cost {

enum class Fp8Support { kNo, kYes, kConfigurable, kUnknown };

struct Accelerator {
  std::string name;                   // "H100", "A100-80GB"
  std::optional<double> bf16_tflops;  // peak dense BF16/FP16 TFLOP/s
  std::optional<double> fp8_tflops;   // peak dense FP8 TFLOP/s
  Fp8Support fp8 = Fp8Support::kUnknown;
  std::optional<double> memory_gib;
  std::optional<double> bandwidth_gbs;  // memory bandwidth, GB/s
  std::string notes, source;
};

struct Offer {
  std::string provider;       // "aws", "lambda"
  std::string region;         // "us-east-1"; empty when the offer has no region
  std::string instance_type;  // "p5.48xlarge", "gpu_8x_h100_sxm5"
  std::string accelerator;    // an Accelerator name
  int accelerator_count = 0;
  std::optional<double> accelerator_memory_gib, vcpus, memory_gib, network_gbps;
  std::optional<int> efa_interfaces;
  std::optional<double> on_demand;  // USD per instance-hour
  std::string on_demand_date;
  // The list price before a price change, and when it stopped applying (seconds since 1970):
  // a bill dated after that still charging it is stale.
  std::optional<double> previous_on_demand;
  int64_t previous_until = 0;
  std::string previous_label;                 // "pre-June-2025"
  std::optional<double> spot_low, spot_high;  // observed USD per instance-hour
  std::string spot_observed;
  std::string source;
  std::string origin;  // "file:line" the row came from

  bool efa_capable() const { return efa_interfaces.value_or(0) > 0; }
  // An instance price divided by the accelerators it buys (the price itself if none).
  double PerAccelerator(double instance_price) const {
    return accelerator_count > 0 ? instance_price / accelerator_count : instance_price;
  }
};

struct UsagePrice {
  std::string provider, region;
  std::string usage_type;  // without region prefix: "EBS:VolumeUsage.gp3"
  std::string unit;        // "GB-Mo", "GB", "Hrs"
  double usd_per_unit = 0;
  std::string price_date, source;
};

struct ModelShape {
  std::string name;           // "Llama-2-70B"
  double nominal_params = 0;  // 70e9: the size in its name
  double params = 0;          // 68.98e9
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0;
  std::string source;
};

class Catalog {
 public:
  // The table kinds a file can hold.
  enum class Kind { kAccelerators, kOffers, kUsagePrices, kModels };

  // Reads one CSV table and adds its rows. A row for the same offer (provider, instance type,
  // region), accelerator, usage price or model as an earlier one replaces it. With
  // `replacing`, a table of a kind not yet in the set first drops every row of that kind loaded
  // before, and adds the kind to the set (how --catalog replaces the default tables). Errors
  // name the file, line and column.
  Status LoadFile(const std::string& path, std::set<Kind>* replacing = nullptr);
  // The same from text; `name` stands for the file in messages.
  Status LoadText(std::string_view text, const std::string& name,
                  std::set<Kind>* replacing = nullptr);

  const std::vector<Accelerator>& accelerators() const { return accelerators_; }
  const std::vector<Offer>& offers() const { return offers_; }
  const std::vector<UsagePrice>& usage_prices() const { return usage_prices_; }
  const std::vector<ModelShape>& models() const { return models_; }
  // Every file loaded, in order.
  const std::vector<std::string>& files() const { return files_; }

  // Case-insensitive exact name; nullptr if none.
  const Accelerator* FindAccelerator(std::string_view name) const;
  // The accelerators `query` names: an exact (case-insensitive) match, else every name that
  // starts with it ("A100" gives A100-40GB and A100-80GB).
  std::vector<const Accelerator*> MatchAccelerators(std::string_view query) const;
  // One accelerator for a planner: exact or a unique prefix; otherwise an InvalidArgument that
  // lists the choices.
  Result<const Accelerator*> ResolveAccelerator(std::string_view query) const;
  const Offer* FindOffer(std::string_view provider, std::string_view instance_type,
                         std::string_view region) const;
  // Offers of an accelerator (exact name), in catalog order.
  std::vector<const Offer*> OffersOf(std::string_view accelerator) const;
  const UsagePrice* FindUsagePrice(std::string_view provider, std::string_view region,
                                   std::string_view usage_type) const;
  // By name (case-insensitive), or the first model whose nominal size is within 3% of
  // `params`; nullptr if none.
  const ModelShape* FindModel(std::string_view name) const;
  const ModelShape* FindModelBySize(double params) const;

 private:
  friend class CatalogParser;
  std::vector<Accelerator> accelerators_;
  std::vector<Offer> offers_;
  std::vector<UsagePrice> usage_prices_;
  std::vector<ModelShape> models_;
  std::vector<std::string> files_;
};

std::string_view KindName(Catalog::Kind kind);
std::string_view Fp8SupportName(Fp8Support s);

}  // namespace tf::cost
