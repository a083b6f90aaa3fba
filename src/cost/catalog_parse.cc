// Reading catalog tables: each CSV's header says which kind of table it is; values are
// checked and errors name the file, line and column.
#include <strings.h>

#include <algorithm>
#include <map>
#include <set>

#include "cost/audit/byte_source.h"
#include "cost/audit/csv_reader.h"
#include "cost/audit/problems.h"
#include "cost/catalog.h"
#include "cost/numbers.h"

namespace tf::cost {

// One table being read: the header's columns and the current row.
class CatalogParser {
 public:
  CatalogParser(Catalog* catalog, std::string name) : catalog_(catalog), name_(std::move(name)) {}

  Status Read(CsvReader& csv, std::set<Catalog::Kind>* replacing) {
    TF_ASSIGN_OR_RETURN(bool has_header, csv.Next());
    if (!has_header) return InvalidArgument(name_ + ": empty file, expected a header row");
    for (size_t i = 0; i < csv.fields().size(); ++i) {
      std::string h(csv.fields()[i]);
      if (i == 0 && h.rfind("\xEF\xBB\xBF", 0) == 0) h.erase(0, 3);
      columns_.emplace(h, i);
    }
    Catalog::Kind kind;
    if (Has("accelerator") && Has("bf16_dense_tflops")) {
      kind = Catalog::Kind::kAccelerators;
    } else if (Has("instance_type") && Has("accelerator")) {
      kind = Catalog::Kind::kOffers;
    } else if (Has("usage_type") && Has("usd_per_unit")) {
      kind = Catalog::Kind::kUsagePrices;
    } else if (Has("model") && Has("layers")) {
      kind = Catalog::Kind::kModels;
    } else {
      return InvalidArgument(name_ +
                             ":1: not a catalog table: the header needs accelerator + "
                             "bf16_dense_tflops, instance_type + accelerator, usage_type + "
                             "usd_per_unit, or model + layers (see docs/cost.md)");
    }
    if (replacing && replacing->insert(kind).second) Clear(kind);
    while (true) {
      TF_ASSIGN_OR_RETURN(bool more, csv.Next());
      if (!more) break;
      row_ = &csv.fields();
      line_ = csv.line();
      if (row_->size() != columns_.size()) {
        return InvalidArgument(Where(name_, line_) + ": expected " +
                               std::to_string(columns_.size()) + " fields, found " +
                               std::to_string(row_->size()));
      }
      switch (kind) {
        case Catalog::Kind::kAccelerators:
          TF_RETURN_IF_ERROR(ReadAccelerator());
          break;
        case Catalog::Kind::kOffers:
          TF_RETURN_IF_ERROR(ReadOffer());
          break;
        case Catalog::Kind::kUsagePrices:
          TF_RETURN_IF_ERROR(ReadUsagePrice());
          break;
        case Catalog::Kind::kModels:
          TF_RETURN_IF_ERROR(ReadModel());
          break;
      }
    }
    catalog_->files_.push_back(name_);
    return OkStatus();
  }

 private:
  bool Has(const std::string& column) const { return columns_.count(column) > 0; }

  std::string_view Text(const std::string& column) const {
    auto it = columns_.find(column);
    return it == columns_.end() ? std::string_view() : (*row_)[it->second];
  }

  Status Bad(const std::string& column, std::string_view value, std::string_view expected) const {
    return InvalidArgument(Where(name_, line_) + ": column " + column + ": '" + std::string(value) +
                           "' is not " + std::string(expected));
  }

  Status Required(const std::string& column, std::string* out) const {
    std::string_view v = Text(column);
    if (v.empty()) {
      return InvalidArgument(Where(name_, line_) + ": column " + column + " is empty or missing");
    }
    *out = std::string(v);
    return OkStatus();
  }

  // Blank is "not known"; anything else must be a number >= 0.
  Status Number(const std::string& column, std::optional<double>* out) const {
    std::string_view v = Text(column);
    out->reset();
    if (v.empty()) return OkStatus();
    auto n = ParseNumber(v);
    if (!n || *n < 0) return Bad(column, v, "a number >= 0");
    *out = *n;
    return OkStatus();
  }

  Status Positive(const std::string& column, double* out) const {
    std::optional<double> v;
    TF_RETURN_IF_ERROR(Number(column, &v));
    if (!v || *v <= 0) return Bad(column, Text(column), "a number > 0");
    *out = *v;
    return OkStatus();
  }

  Status ReadAccelerator() {
    cost::Accelerator a;
    TF_RETURN_IF_ERROR(Required("accelerator", &a.name));
    TF_RETURN_IF_ERROR(Number("bf16_dense_tflops", &a.bf16_tflops));
    TF_RETURN_IF_ERROR(Number("fp8_dense_tflops", &a.fp8_tflops));
    TF_RETURN_IF_ERROR(Number("memory_gib", &a.memory_gib));
    TF_RETURN_IF_ERROR(Number("memory_bandwidth_gbps", &a.bandwidth_gbs));
    std::string_view fp8 = Text("fp8_supported");
    if (fp8 == "yes") {
      a.fp8 = Fp8Support::kYes;
    } else if (fp8 == "no") {
      a.fp8 = Fp8Support::kNo;
    } else if (fp8 == "configurable") {
      a.fp8 = Fp8Support::kConfigurable;
    } else if (fp8.empty()) {
      a.fp8 = a.fp8_tflops ? Fp8Support::kYes : Fp8Support::kUnknown;
    } else {
      return Bad("fp8_supported", fp8, "yes, no or configurable");
    }
    a.notes = Text("notes");
    a.source = Text("source");
    Upsert(catalog_->accelerators_, std::move(a), [](const auto& x, const auto& y) {
      return strcasecmp(x.name.c_str(), y.name.c_str()) == 0;
    });
    return OkStatus();
  }

  Status ReadOffer() {
    cost::Offer o;
    TF_RETURN_IF_ERROR(Required("provider", &o.provider));
    TF_RETURN_IF_ERROR(Required("instance_type", &o.instance_type));
    TF_RETURN_IF_ERROR(Required("accelerator", &o.accelerator));
    o.region = Text("region");
    double count = 0;
    TF_RETURN_IF_ERROR(Positive("accelerator_count", &count));
    if (count != static_cast<int>(count) || count > 1024) {
      return Bad("accelerator_count", Text("accelerator_count"), "a whole number up to 1024");
    }
    o.accelerator_count = static_cast<int>(count);
    TF_RETURN_IF_ERROR(Number("accelerator_memory_gib", &o.accelerator_memory_gib));
    TF_RETURN_IF_ERROR(Number("vcpus", &o.vcpus));
    TF_RETURN_IF_ERROR(Number("memory_gib", &o.memory_gib));
    TF_RETURN_IF_ERROR(Number("network_gbps", &o.network_gbps));
    std::optional<double> efa;
    TF_RETURN_IF_ERROR(Number("efa_interfaces", &efa));
    if (efa) o.efa_interfaces = static_cast<int>(*efa);
    TF_RETURN_IF_ERROR(Number("on_demand_usd_per_hour", &o.on_demand));
    std::optional<double> per_gpu;
    TF_RETURN_IF_ERROR(Number("usd_per_gpu_hour", &per_gpu));
    if (!o.on_demand && per_gpu) o.on_demand = *per_gpu * o.accelerator_count;
    o.on_demand_date =
        Has("on_demand_price_date") ? Text("on_demand_price_date") : Text("price_date");
    TF_RETURN_IF_ERROR(Previous(&o));
    TF_RETURN_IF_ERROR(Number("spot_usd_per_hour_low", &o.spot_low));
    TF_RETURN_IF_ERROR(Number("spot_usd_per_hour_high", &o.spot_high));
    if (o.spot_low && !o.spot_high) o.spot_high = o.spot_low;
    if (o.spot_high && !o.spot_low) o.spot_low = o.spot_high;
    if (o.spot_low && *o.spot_low > *o.spot_high) {
      return Bad("spot_usd_per_hour_low", Text("spot_usd_per_hour_low"),
                 "at most spot_usd_per_hour_high");
    }
    o.spot_observed = Text("spot_observed");
    o.source = Text("source");
    o.origin = Where(name_, line_);
    Upsert(catalog_->offers_, std::move(o), [](const auto& x, const auto& y) {
      return x.instance_type == y.instance_type && x.region == y.region &&
             strcasecmp(x.provider.c_str(), y.provider.c_str()) == 0;
    });
    return OkStatus();
  }

  // The list price before a change: the shipped column pre_june_2025_on_demand_usd_per_hour
  // (AWS's P4/P5 cut landed in the June 2025 price list), or previous_on_demand_usd_per_hour
  // with the date it ended in previous_price_until (YYYY-MM or YYYY-MM-DD).
  Status Previous(cost::Offer* o) const {
    if (Has("pre_june_2025_on_demand_usd_per_hour")) {
      TF_RETURN_IF_ERROR(Number("pre_june_2025_on_demand_usd_per_hour", &o->previous_on_demand));
      o->previous_until = *ParseUtcTime("2025-06-01");
      o->previous_label = "pre-June-2025";
    }
    if (!Has("previous_on_demand_usd_per_hour")) return OkStatus();
    std::optional<double> previous;
    TF_RETURN_IF_ERROR(Number("previous_on_demand_usd_per_hour", &previous));
    if (!previous) return OkStatus();
    std::string until(Text("previous_price_until"));
    auto when = ParseUtcTime(until.size() == 7 ? until + "-01" : until);
    if (!when) return Bad("previous_price_until", until, "a date (YYYY-MM or YYYY-MM-DD)");
    o->previous_on_demand = previous;
    o->previous_until = *when;
    o->previous_label = "before " + until;
    return OkStatus();
  }

  Status ReadUsagePrice() {
    cost::UsagePrice u;
    TF_RETURN_IF_ERROR(Required("provider", &u.provider));
    TF_RETURN_IF_ERROR(Required("usage_type", &u.usage_type));
    u.region = Text("region");
    u.unit = Text("unit");
    std::optional<double> price;
    TF_RETURN_IF_ERROR(Number("usd_per_unit", &price));
    if (!price) return Bad("usd_per_unit", "", "a number >= 0");
    u.usd_per_unit = *price;
    u.price_date = Text("price_date");
    u.source = Text("source");
    Upsert(catalog_->usage_prices_, std::move(u), [](const auto& x, const auto& y) {
      return x.usage_type == y.usage_type && x.region == y.region && x.provider == y.provider;
    });
    return OkStatus();
  }

  Status ReadModel() {
    ModelShape m;
    TF_RETURN_IF_ERROR(Required("model", &m.name));
    auto nominal = ParseCount(Text("nominal_params"));
    if (!nominal.ok()) return Bad("nominal_params", Text("nominal_params"), "a size such as 70B");
    m.nominal_params = *nominal;
    double billions = 0, v = 0;
    TF_RETURN_IF_ERROR(Positive("params_billion", &billions));
    m.params = billions * 1e9;
    for (auto [column, field] : {std::pair{"layers", &m.layers},
                                 {"hidden_size", &m.hidden},
                                 {"attention_heads", &m.heads},
                                 {"kv_heads", &m.kv_heads},
                                 {"head_dim", &m.head_dim}}) {
      TF_RETURN_IF_ERROR(Positive(column, &v));
      *field = static_cast<int>(v);
    }
    m.source = Text("source");
    Upsert(catalog_->models_, std::move(m), [](const auto& x, const auto& y) {
      return strcasecmp(x.name.c_str(), y.name.c_str()) == 0;
    });
    return OkStatus();
  }

  template <typename T, typename Same>
  static void Upsert(std::vector<T>& rows, T row, Same same) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const T& r) { return same(r, row); });
    if (it != rows.end()) {
      *it = std::move(row);
    } else {
      rows.push_back(std::move(row));
    }
  }

  void Clear(Catalog::Kind kind) {
    switch (kind) {
      case Catalog::Kind::kAccelerators:
        catalog_->accelerators_.clear();
        break;
      case Catalog::Kind::kOffers:
        catalog_->offers_.clear();
        break;
      case Catalog::Kind::kUsagePrices:
        catalog_->usage_prices_.clear();
        break;
      case Catalog::Kind::kModels:
        catalog_->models_.clear();
        break;
    }
  }

  Catalog* catalog_;
  std::string name_;
  std::map<std::string, size_t> columns_;
  const std::vector<std::string_view>* row_ = nullptr;
  int64_t line_ = 0;
};

Status Catalog::LoadFile(const std::string& path, std::set<Kind>* replacing) {
  TF_ASSIGN_OR_RETURN(auto source, OpenFileSource(path));
  CsvReader csv(std::move(source), path, 64 * 1024);
  return CatalogParser(this, path).Read(csv, replacing);
}

Status Catalog::LoadText(std::string_view text, const std::string& name,
                         std::set<Kind>* replacing) {
  CsvReader csv(MemorySource(text), name, 64 * 1024);
  return CatalogParser(this, name).Read(csv, replacing);
}

}  // namespace tf::cost
