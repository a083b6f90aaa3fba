#include "cost/planning/plan_pricing.h"

#include <strings.h>

#include <algorithm>

namespace tf::cost {

std::vector<OfferPrice> PricedOffers(const Catalog& catalog, const std::string& accelerator,
                                     const std::string& provider, bool spot, int gpus,
                                     int one_node_below) {
  std::vector<OfferPrice> out;
  for (const Offer* o : catalog.OffersOf(accelerator)) {
    if (!provider.empty() && strcasecmp(o->provider.c_str(), provider.c_str()) != 0) continue;
    int count = o->accelerator_count;
    bool whole = gpus >= count ? gpus % count == 0 : count % gpus == 0;
    if (!whole || (gpus > count && gpus < one_node_below)) continue;
    if (spot && o->spot_low) {
      out.push_back({o, o->PerAccelerator(*o->spot_low), o->PerAccelerator(*o->spot_high)});
    } else if (!spot && o->on_demand) {
      double p = o->PerAccelerator(*o->on_demand);
      out.push_back({o, p, p});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const OfferPrice& a, const OfferPrice& b) {
    return a.usd_per_gpu_hour < b.usd_per_gpu_hour;
  });
  return out;
}

std::optional<double> BytesPerElement(const std::string& dtype) {
  std::string d = dtype;
  for (auto& c : d) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (d == "fp32" || d == "float32") return 4;
  if (d == "bf16" || d == "fp16" || d == "float16" || d == "bfloat16") return 2;
  if (d == "fp8" || d == "int8") return 1;
  if (d == "int4" || d == "fp4") return 0.5;
  return std::nullopt;
}

}  // namespace tf::cost
