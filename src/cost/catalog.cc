#include "cost/catalog.h"

#include <strings.h>

#include <cmath>

namespace tf::cost {
namespace {

bool SameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && SameName(s.substr(0, prefix.size()), prefix);
}

}  // namespace

std::string_view KindName(Catalog::Kind kind) {
  switch (kind) {
    case Catalog::Kind::kAccelerators:
      return "accelerators";
    case Catalog::Kind::kOffers:
      return "offers";
    case Catalog::Kind::kUsagePrices:
      return "usage prices";
    case Catalog::Kind::kModels:
      return "model shapes";
  }
  return "?";
}

std::string_view Fp8SupportName(Fp8Support s) {
  switch (s) {
    case Fp8Support::kNo:
      return "no";
    case Fp8Support::kYes:
      return "yes";
    case Fp8Support::kConfigurable:
      return "configurable";
    case Fp8Support::kUnknown:
      return "unknown";
  }
  return "?";
}

const Accelerator* Catalog::FindAccelerator(std::string_view name) const {
  for (const auto& a : accelerators_) {
    if (SameName(a.name, name)) return &a;
  }
  return nullptr;
}

std::vector<const Accelerator*> Catalog::MatchAccelerators(std::string_view query) const {
  if (const Accelerator* exact = FindAccelerator(query)) return {exact};
  std::vector<const Accelerator*> out;
  for (const auto& a : accelerators_) {
    if (StartsWithNoCase(a.name, query)) out.push_back(&a);
  }
  return out;
}

Result<const Accelerator*> Catalog::ResolveAccelerator(std::string_view query) const {
  auto matches = MatchAccelerators(query);
  if (matches.size() == 1) return matches[0];
  std::string names;
  auto add = [&](const Accelerator& a) { names += (names.empty() ? "" : ", ") + a.name; };
  if (matches.empty()) {
    for (const auto& a : accelerators_) add(a);
    return InvalidArgument("unknown accelerator '" + std::string(query) +
                           "'; the catalog knows: " + names);
  }
  for (const auto* a : matches) add(*a);
  return InvalidArgument("'" + std::string(query) + "' is ambiguous: name one of " + names);
}

const Offer* Catalog::FindOffer(std::string_view provider, std::string_view instance_type,
                                std::string_view region) const {
  for (const auto& o : offers_) {
    if (o.instance_type == instance_type && o.region == region && SameName(o.provider, provider)) {
      return &o;
    }
  }
  return nullptr;
}

std::vector<const Offer*> Catalog::OffersOf(std::string_view accelerator) const {
  std::vector<const Offer*> out;
  for (const auto& o : offers_) {
    if (SameName(o.accelerator, accelerator)) out.push_back(&o);
  }
  return out;
}

const UsagePrice* Catalog::FindUsagePrice(std::string_view provider, std::string_view region,
                                          std::string_view usage_type) const {
  for (const auto& u : usage_prices_) {
    if (u.usage_type == usage_type && u.region == region && SameName(u.provider, provider)) {
      return &u;
    }
  }
  return nullptr;
}

const ModelShape* Catalog::FindModel(std::string_view name) const {
  for (const auto& m : models_) {
    if (SameName(m.name, name)) return &m;
  }
  return nullptr;
}

const ModelShape* Catalog::FindModelBySize(double params) const {
  for (const auto& m : models_) {
    if (std::fabs(m.nominal_params - params) <= 0.03 * m.nominal_params) return &m;
  }
  return nullptr;
}

}  // namespace tf::cost
