#include "cost/planning/plan_pricing.h"

#include <strings.h>

#include <algorithm>

namespace tf::cost {
namespace {

// How the run sits on machines of `count` GPUs, or nullopt when it cannot.
std::optional<OfferPrice> Placement(const PricingQuery& q, int count) {
  if (count <= 0 || q.tensor > count) return std::nullopt;
  OfferPrice p;
  p.used_gpus = q.gpus;
  if (q.gpus >= count) {
    if (q.gpus % count != 0 || count % q.tensor != 0) return std::nullopt;
    p.instances = q.gpus / count;
    p.billed_gpus = q.gpus;
  } else if (q.share) {
    if (count % q.gpus != 0) return std::nullopt;
    p.billed_gpus = q.gpus;
  } else {
    p.billed_gpus = count;
  }
  return p;
}

}  // namespace

std::vector<OfferPrice> PricedOffers(const Catalog& catalog, const PricingQuery& query) {
  std::vector<OfferPrice> out;
  for (const Offer* o : catalog.OffersOf(query.accelerator)) {
    if (!query.provider.empty() && strcasecmp(o->provider.c_str(), query.provider.c_str()) != 0) {
      continue;
    }
    std::optional<OfferPrice> p = Placement(query, o->accelerator_count);
    if (!p) continue;
    p->offer = o;
    if (query.spot && o->spot_low) {
      p->usd_per_gpu_hour = o->PerAccelerator(*o->spot_low);
      p->usd_per_gpu_hour_high = o->PerAccelerator(*o->spot_high);
    } else if (!query.spot && o->on_demand) {
      p->usd_per_gpu_hour = p->usd_per_gpu_hour_high = o->PerAccelerator(*o->on_demand);
    } else {
      continue;
    }
    out.push_back(*p);
  }
  std::stable_sort(out.begin(), out.end(), [](const OfferPrice& a, const OfferPrice& b) {
    return a.usd_per_hour() < b.usd_per_hour();
  });
  return out;
}

const OfferPrice* SpotBelowOnDemand(const std::vector<OfferPrice>& on_demand,
                                    const std::vector<OfferPrice>& spot) {
  if (spot.empty()) return nullptr;
  if (!on_demand.empty() && spot[0].usd_per_hour() >= on_demand[0].usd_per_hour()) return nullptr;
  return &spot[0];
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
