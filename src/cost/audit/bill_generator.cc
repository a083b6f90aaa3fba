#include "cost/audit/bill_generator.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "cost/audit/bill_rows.h"
#include "cost/numbers.h"

namespace tf::cost {
namespace {

std::string Id(const char* prefix, uint64_t seed, uint64_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  uint64_t v = SplitMix64(seed * 1000003 + n);
  std::string out = prefix;
  out += '0';
  for (int i = 0; i < 16; ++i) out += kDigits[(v >> (4 * i)) & 15];
  return out;
}

struct Instance {
  std::string id;
  const Offer* offer = nullptr;
  bool spot = false;
  double rate = 0;  // billed per hour
  double list = 0;  // catalog on-demand
  std::string zone, cluster;
  bool efa = false;     // an EFA interface attached (inventory)
  bool grouped = true;  // a cluster instance in its cluster's placement group (inventory)
  bool plain = true;    // no anomaly planted on it: free to corrupt
  std::string usage_type, operation, description;
  std::vector<int> duplicate_hours;  // hours billed twice
  int mismatch_hour = -1;            // hour whose cost is not rate x usage
  double hours = 0;                  // billed, for the invoice and the metering report
  double up_share = 1;               // of its billed hours, the share metering saw it up
  double busy_share = 1;             // of its up hours, the share its ranks used
  std::string volume;
  // What the reseller's invoice says of it, where an anomaly is planted there.
  double invoice_markup = 1;             // invoice rate over the list price
  const Offer* invoiced_type = nullptr;  // another type named on the invoice
  double extra_invoice_hours = 0;        // hours invoiced beyond those billed
};

struct Storage {
  std::string id, resource_id, zone;
  double gb = 0;
  int64_t start_time = 0;  // snapshots
  bool attached = true;
};

class Generator {
 public:
  Generator(const GeneratorOptions& o, const Catalog& c, ByteSink* bill, std::ostream* invoice,
            std::ostream* inventory, std::ostream* metering)
      : opt_(o),
        catalog_(c),
        bill_(bill),
        invoice_(invoice),
        inventory_(inventory),
        metering_(metering) {}

  Result<GeneratedBill> Run() {
    auto start = ParseUtcTime(opt_.period + "-01");
    if (!start || opt_.period.size() != 7) {
      return InvalidArgument("--period '" + opt_.period + "' is not a month (YYYY-MM)");
    }
    if (opt_.rows < 100) return InvalidArgument("--rows must be at least 100");
    start_ = *start;
    int year = std::stoi(opt_.period.substr(0, 4)), month = std::stoi(opt_.period.substr(5, 2));
    end_ = DaysFromCivil(month == 12 ? year + 1 : year, month == 12 ? 1 : month + 1, 1) * 86400;
    TF_RETURN_IF_ERROR(CheckOutputs());
    TF_RETURN_IF_ERROR(BuildFleet());
    TF_RETURN_IF_ERROR(PlantAnomalies());
    TF_RETURN_IF_ERROR(WriteBill());
    if (invoice_) WriteInvoice();
    if (inventory_) WriteInventory();
    if (metering_) WriteMetering();
    return std::move(result_);
  }

 private:
  bool Wants(Check c) const {
    return std::find(opt_.anomalies.begin(), opt_.anomalies.end(), c) != opt_.anomalies.end();
  }

  Status CheckOutputs() const {
    for (Check c : opt_.anomalies) {
      bool needs_inventory = c == Check::kClusterNoEfa || c == Check::kClusterNoPlacementGroup ||
                             c == Check::kUnattachedVolume || c == Check::kOldSnapshot;
      const bool needs_invoice = c == Check::kSpotResold || c == Check::kInvoiceMarkup ||
                                 c == Check::kInvoiceTypeMismatch ||
                                 c == Check::kInvoiceHoursNotRun ||
                                 c == Check::kInvoiceUnverifiable;
      if (needs_invoice && !invoice_) {
        return InvalidArgument("planting " + std::string(CheckName(c)) +
                               " needs an invoice to write (--invoice)");
      }
      if ((c == Check::kBilledNotRunning || c == Check::kBilledIdle) && !metering_) {
        return InvalidArgument("planting " + std::string(CheckName(c)) +
                               " needs a metering report to write (--metering)");
      }
      if (needs_inventory && !inventory_) {
        return InvalidArgument("planting " + std::string(CheckName(c)) +
                               " needs an inventory to write (--instances)");
      }
    }
    return OkStatus();
  }

  Status BuildFleet() {
    std::vector<const Offer*> offers, efa;
    for (const auto& o : catalog_.offers()) {
      if (o.provider != "aws" || o.region != "us-east-1" || !o.on_demand) continue;
      offers.push_back(&o);
      if (o.efa_capable() && o.accelerator_count >= 8) efa.push_back(&o);
    }
    if (offers.empty()) return InvalidArgument("the catalog has no aws us-east-1 on-demand prices");
    // Cluster A: the EFA type with the most interfaces that had a previous list price (so that
    // a stale price can be planted on it); cluster B: another EFA type.
    std::stable_sort(efa.begin(), efa.end(), [](const Offer* a, const Offer* b) {
      if (a->previous_on_demand.has_value() != b->previous_on_demand.has_value()) {
        return a->previous_on_demand.has_value();
      }
      return a->efa_interfaces.value_or(0) > b->efa_interfaces.value_or(0);
    });
    if (efa.size() < 2) return InvalidArgument("the catalog has fewer than two 8-GPU EFA types");
    cluster_a_ = efa[0];
    cluster_b_ = efa[1];

    int64_t period_hours = (end_ - start_) / 3600;
    hours_ = std::clamp<int64_t>(opt_.rows / 16, 24, period_hours);
    int64_t count =
        std::max<int64_t>(16, static_cast<int64_t>(std::ceil(opt_.rows / (hours_ * 1.02))));
    for (int64_t i = 0; i < count; ++i) {
      Instance in;
      in.id = Id("i-", opt_.seed, static_cast<uint64_t>(i));
      if (i < 8) {
        in.offer = i < 4 ? cluster_a_ : cluster_b_;
        in.cluster = i < 4 ? "train-a" : "train-b";
        in.zone = i < 4 ? "us-east-1a" : "us-east-1c";
        in.efa = true;
      } else {
        in.offer = offers[static_cast<size_t>(i - 8) % offers.size()];
        in.zone = std::string("us-east-1") + static_cast<char>('a' + i % 6);
        const Offer* o = in.offer;
        in.spot = i % 4 == 1 && o->spot_low && *o->spot_high <= 0.6 * *o->on_demand;
      }
      const Offer& o = *in.offer;
      in.list = *o.on_demand;
      if (in.spot) {
        in.rate = *o.spot_low + (*o.spot_high - *o.spot_low) * static_cast<double>(i % 7) / 6;
        in.usage_type = "SpotUsage:" + o.instance_type;
        in.operation = "RunInstances:SV001";
        in.description = "$" + FormatFixed(in.rate, 4) + " per Linux/UNIX Spot Instance-hour";
      } else {
        in.rate = in.list;
        in.usage_type = "BoxUsage:" + o.instance_type;
        in.operation = "RunInstances";
      }
      if (i % 4 == 0) {
        Storage v{Id("vol-", opt_.seed, static_cast<uint64_t>(i)), "", in.zone,
                  100.0 + static_cast<double>(i % 10) * 50};
        v.resource_id = v.id;
        in.volume = v.id;
        volumes_.push_back(v);
      }
      if (i % 8 == 0) {
        Storage s{Id("snap-", opt_.seed, static_cast<uint64_t>(i)), "", "", 50};
        s.resource_id = "arn:aws:ec2:us-east-1:210987654321:snapshot/" + s.id;
        s.start_time = start_ - int64_t{10} * 86400;
        snapshots_.push_back(s);
      }
      fleet_.push_back(std::move(in));
    }
    volume_price_ = catalog_.FindUsagePrice("aws", "us-east-1", "EBS:VolumeUsage.gp3");
    snapshot_price_ = catalog_.FindUsagePrice("aws", "us-east-1", "EBS:SnapshotUsage");
    transfer_price_ = catalog_.FindUsagePrice("aws", "us-east-1", "DataTransfer-Regional-Bytes");
    return OkStatus();
  }

  // The first plain, non-cluster instance that `want` accepts.
  Instance* Pick(const std::function<bool(const Instance&)>& want) {
    for (auto& in : fleet_) {
      if (in.plain && in.cluster.empty() && want(in)) return &in;
    }
    return nullptr;
  }

  void Plant(Check c, std::string subject, std::vector<int64_t> lines = {}) {
    result_.planted.push_back({c, std::move(subject), std::move(lines)});
  }

  Status PlantAnomalies() {
    auto too_small = [](Check c) {
      return InvalidArgument("cannot plant " + std::string(CheckName(c)) +
                             ": too few instances in a bill this small, or no catalog price");
    };
    if (Wants(Check::kStalePrice)) {
      if (!cluster_a_->previous_on_demand) return too_small(Check::kStalePrice);
      for (auto& in : fleet_) {
        if (in.offer != cluster_a_ || in.spot) continue;
        in.rate = *cluster_a_->previous_on_demand;
        in.plain = false;
      }
      Plant(Check::kStalePrice, cluster_a_->instance_type + " in us-east-1");
    }
    if (Wants(Check::kRateAboveCatalog)) {
      Instance* t = Pick([&](const Instance& in) {
        return !in.spot && in.offer != cluster_a_ && in.offer != cluster_b_;
      });
      if (!t) return too_small(Check::kRateAboveCatalog);
      const Offer* type = t->offer;
      for (auto& in : fleet_) {
        if (in.offer != type || in.spot) continue;
        in.rate = in.list * 1.3;
        in.plain = false;
      }
      Plant(Check::kRateAboveCatalog, type->instance_type + " in us-east-1");
    }
    if (Wants(Check::kSpotResold)) {
      Instance* s = Pick([](const Instance& in) { return in.spot; });
      if (!s) return too_small(Check::kSpotResold);
      s->plain = false;
      resold_ = s;
      Plant(Check::kSpotResold, s->id);
    }
    if (Wants(Check::kHoursExceedClock)) {
      Instance* d = Pick([](const Instance& in) { return !in.spot; });
      if (!d || hours_ < 8) return too_small(Check::kHoursExceedClock);
      d->plain = false;
      d->duplicate_hours = {2, 3, 4};
      Plant(Check::kHoursExceedClock, d->id);
    }
    if (Wants(Check::kCostMismatch)) {
      Instance* m = Pick([](const Instance& in) { return !in.spot; });
      if (!m || hours_ < 8) return too_small(Check::kCostMismatch);
      m->plain = false;
      m->mismatch_hour = 5;
      Plant(Check::kCostMismatch, m->id);
    }
    if (Wants(Check::kClusterZones)) {
      fleet_[7].zone = "us-east-1d";
      Plant(Check::kClusterZones, "train-b");
    }
    if (Wants(Check::kClusterNoEfa)) {
      fleet_[3].efa = false;
      Plant(Check::kClusterNoEfa, "train-a");
    }
    if (Wants(Check::kClusterNoPlacementGroup)) {
      fleet_[5].grouped = false;
      Plant(Check::kClusterNoPlacementGroup, "train-b");
    }
    if (Wants(Check::kBilledNotRunning)) {
      Instance* n = Pick([](const Instance&) { return true; });
      if (!n) return too_small(Check::kBilledNotRunning);
      n->plain = false;
      n->up_share = 0.6;
      Plant(Check::kBilledNotRunning, n->id);
    }
    if (Wants(Check::kBilledIdle)) {
      Instance* n = Pick([](const Instance&) { return true; });
      if (!n) return too_small(Check::kBilledIdle);
      n->plain = false;
      n->busy_share = 0.1;
      Plant(Check::kBilledIdle, n->id);
    }
    if (Wants(Check::kUnattachedVolume)) {
      if (!volume_price_) return too_small(Check::kUnattachedVolume);
      Storage v{Id("vol-", opt_.seed, 999999), "", "us-east-1b", 500};
      v.resource_id = v.id;
      v.attached = false;
      volumes_.push_back(v);
      Plant(Check::kUnattachedVolume, v.id);
    }
    if (Wants(Check::kOldSnapshot)) {
      if (!snapshot_price_) return too_small(Check::kOldSnapshot);
      Storage s{Id("snap-", opt_.seed, 999999), "", "", 200};
      s.resource_id = "arn:aws:ec2:us-east-1:210987654321:snapshot/" + s.id;
      s.start_time = start_ - int64_t{400} * 86400;
      snapshots_.push_back(s);
      Plant(Check::kOldSnapshot, s.id);
    }
    return PlantInInvoice(too_small);
  }

  // An on-demand instance for an anomaly of the invoice alone: a plain one, else one whose
  // anomalies are the bill's, inventory's or metering's (the invoice's checks do not see them).
  Instance* PickForInvoice() {
    if (Instance* in = Pick([](const Instance& in) { return !in.spot; })) return in;
    for (auto& in : fleet_) {
      const bool invoiced_plainly =
          in.invoice_markup == 1 && !in.invoiced_type && in.extra_invoice_hours == 0;
      if (!in.spot && &in != resold_ && invoiced_plainly) return &in;
    }
    return nullptr;
  }

  // Anomalies of the reseller's invoice alone; the bill stays as it is.
  Status PlantInInvoice(const std::function<Status(Check)>& too_small) {
    if (Wants(Check::kInvoiceMarkup)) {
      Instance* m = PickForInvoice();
      if (!m) return too_small(Check::kInvoiceMarkup);
      m->plain = false;
      m->invoice_markup = 1.5;
      Plant(Check::kInvoiceMarkup, m->id);
    }
    if (Wants(Check::kInvoiceTypeMismatch)) {
      Instance* m = PickForInvoice();
      const Offer* dearer = nullptr;  // the cheapest type dearer than the one that ran
      for (const Offer& o : catalog_.offers()) {
        if (!m || o.provider != "aws" || o.region != "us-east-1" || !o.on_demand) continue;
        if (*o.on_demand > m->list && (!dearer || *o.on_demand < *dearer->on_demand)) dearer = &o;
      }
      if (!m || !dearer) return too_small(Check::kInvoiceTypeMismatch);
      m->plain = false;
      m->invoiced_type = dearer;
      Plant(Check::kInvoiceTypeMismatch, m->id);
    }
    if (Wants(Check::kInvoiceHoursNotRun)) {
      Instance* m = PickForInvoice();
      if (!m) return too_small(Check::kInvoiceHoursNotRun);
      m->plain = false;
      m->extra_invoice_hours = 48;
      Plant(Check::kInvoiceHoursNotRun, m->id);
    }
    if (Wants(Check::kInvoiceUnverifiable)) {
      Plant(Check::kInvoiceUnverifiable, "1 invoiced resource");
    }
    return OkStatus();
  }

  // Appends a row unless the bill is full; returns its line, or 0 when full.
  int64_t Emit(BillRow& row, bool corruptible) {
    if (result_.rows >= opt_.rows) return 0;
    int64_t line = result_.rows + 2;  // line 1 is the header
    if (corruptible && opt_.malformed > 0 && line >= next_corrupt_ &&
        static_cast<int64_t>(result_.malformed_lines.size()) < opt_.malformed) {
      row.corrupt = 1 + static_cast<int>(result_.malformed_lines.size() % 3);
      result_.malformed_lines.push_back(line);
      next_corrupt_ += opt_.rows / (opt_.malformed + 1);
    }
    writer_->Append(row, &buffer_);
    row.corrupt = 0;
    ++result_.rows;
    if (buffer_.size() > (1 << 20)) {
      if (pending_.ok()) pending_ = bill_->Write(buffer_);
      buffer_.clear();
    }
    return line;
  }

  void DailyRows(int64_t t) {
    int64_t day_end = t + 86400;
    double month_fraction = 86400.0 / static_cast<double>(end_ - start_);
    BillRow row;
    row.start = t;
    row.end = day_end;
    row.unit = "GB-Mo";
    if (volume_price_) {
      row.usage_type = "EBS:VolumeUsage.gp3";
      row.operation = "CreateVolume-Gp3";
      row.family = "Storage";
      row.description = "$0.08 per GB-month of General Purpose (gp3) provisioned storage";
      for (const auto& v : volumes_) {
        row.zone = v.zone;
        row.resource_id = v.resource_id;
        row.usage = v.gb * month_fraction;
        row.rate = row.public_rate = volume_price_->usd_per_unit;
        row.cost = row.usage * row.rate;
        Emit(row, false);
      }
    }
    if (snapshot_price_) {
      row.usage_type = "EBS:SnapshotUsage";
      row.operation = "CreateSnapshot";
      row.family = "Storage Snapshot";
      row.description = "$0.05 per GB-Month of snapshot data stored";
      row.zone = "";
      for (const auto& s : snapshots_) {
        row.resource_id = s.resource_id;
        row.usage = s.gb * month_fraction;
        row.rate = row.public_rate = snapshot_price_->usd_per_unit;
        row.cost = row.usage * row.rate;
        Emit(row, false);
      }
    }
    if (transfer_price_) {
      row.usage_type = "DataTransfer-Regional-Bytes";
      row.operation = "InterZone-In";
      row.family = "Data Transfer";
      row.description = "$0.010 per GB - regional data transfer - in/out/between EC2 AZs";
      row.unit = "GB";
      for (size_t i = 0; i < 8 && i < fleet_.size(); ++i) {
        row.zone = fleet_[i].zone;
        row.resource_id = fleet_[i].id;
        row.cluster = fleet_[i].cluster;
        row.usage = 200.0 + static_cast<double>(i % 5) * 37;
        row.rate = row.public_rate = transfer_price_->usd_per_unit;
        row.cost = row.usage * row.rate;
        Emit(row, false);
      }
    }
  }

  Status WriteBill() {
    writer_ = std::make_unique<BillRowWriter>(opt_.cur2, start_, end_);
    TF_RETURN_IF_ERROR(bill_->Write(writer_->header()));
    next_corrupt_ = opt_.malformed > 0 ? 2 + opt_.rows / (opt_.malformed + 1) : 0;
    std::vector<std::string> descriptions;
    for (const auto& in : fleet_) {
      descriptions.push_back(in.spot ? in.description
                                     : "$" + FormatFixed(in.rate, 4) + " per On Demand Linux " +
                                           in.offer->instance_type + " Instance Hour");
    }
    std::vector<int64_t> duplicate_lines, mismatch_lines;
    for (int64_t h = 0; result_.rows < opt_.rows; ++h) {
      int64_t t = start_ + h * 3600;
      if (h % 24 == 0) DailyRows(t);
      BillRow row;
      row.start = t;
      row.end = t + 3600;
      row.family = "Compute Instance";
      row.unit = "Hrs";
      for (size_t i = 0; i < fleet_.size() && result_.rows < opt_.rows; ++i) {
        Instance& in = fleet_[i];
        row.usage_type = in.usage_type;
        row.operation = in.operation;
        row.zone = in.zone;
        row.resource_id = in.id;
        row.instance_type = in.offer->instance_type;
        row.term = in.spot ? "Spot" : "OnDemand";
        row.cluster = in.cluster;
        row.description = descriptions[i];
        row.public_rate = in.list;
        // Per-second billing: an instance started part-way through its first hour.
        row.usage = h == 0 ? 1.0 - static_cast<double>(i % 4) * 0.25 : 1.0;
        row.rate = in.rate;
        row.cost = row.usage * row.rate;
        bool mismatch = h == in.mismatch_hour;
        if (mismatch) row.cost *= 1.5;
        int64_t line = Emit(row, in.plain && h > 0);
        if (line == 0) break;
        billed_until_ = row.end;
        in.hours += row.usage;
        if (mismatch) mismatch_lines.push_back(line);
        for (int d : in.duplicate_hours) {
          if (d != h) continue;
          int64_t dup = Emit(row, false);
          if (dup == 0) break;
          in.hours += row.usage;
          duplicate_lines.push_back(dup);
        }
      }
    }
    for (auto& p : result_.planted) {
      if (p.check == Check::kHoursExceedClock) p.lines = duplicate_lines;
      if (p.check == Check::kCostMismatch) p.lines = mismatch_lines;
    }
    if (!buffer_.empty()) TF_RETURN_IF_ERROR(bill_->Write(buffer_));
    return pending_;
  }

  void WriteInvoice() {
    *invoice_ << "invoice_line,resource_id,instance_type,region,period_start,period_end,hours,"
                 "rate_usd_per_hour,amount_usd,description\n";
    int n = 0;
    // One line, and the money the check should find at stake on it, from the figures as written.
    auto line = [&](const std::string& id, const Offer& type, double hours, double rate) {
      const std::string hours_text = FormatFixed(hours, 4), rate_text = FormatFixed(rate, 6);
      const double amount = std::round(hours * rate * 100) / 100;
      *invoice_ << ++n << "," << id << "," << type.instance_type << ",us-east-1,"
                << FormatUtcTime(start_) << "," << FormatUtcTime(end_) << "," << hours_text << ","
                << rate_text << "," << FormatFixed(amount, 2) << ",GPU capacity "
                << type.accelerator << "\n";
      return std::pair{std::stod(hours_text), std::stod(rate_text)};
    };
    for (const auto& in : fleet_) {
      if (in.hours <= 0) continue;
      // The reseller passes on-demand capacity at list and adds 20% to what spot costs it;
      // the planted cases bill spot capacity at the on-demand list price, on-demand capacity
      // above list, a dearer type than ran, or hours that did not run.
      const Offer& type = in.invoiced_type ? *in.invoiced_type : *in.offer;
      double rate = &in == resold_     ? in.list
                    : in.spot          ? in.rate * 1.2
                    : in.invoiced_type ? *in.invoiced_type->on_demand
                                       : in.list * in.invoice_markup;
      auto [hours, written_rate] = line(in.id, type, in.hours + in.extra_invoice_hours, rate);
      for (auto& p : result_.planted) {
        if (p.subject != in.id) continue;
        if (p.check == Check::kInvoiceMarkup) p.usd_at_stake = hours * (written_rate - in.list);
        if (p.check == Check::kInvoiceTypeMismatch) {
          p.usd_at_stake = hours * (*in.invoiced_type->on_demand - in.list);
        }
        if (p.check == Check::kInvoiceHoursNotRun) {
          p.usd_at_stake = in.extra_invoice_hours * written_rate;
        }
      }
    }
    if (Wants(Check::kInvoiceUnverifiable)) {
      // A resource the reseller invoices that the bill and the inventory never saw.
      auto [hours, rate] =
          line(Id("i-", opt_.seed, 999998), *fleet_.back().offer, 100, fleet_.back().list);
      for (auto& p : result_.planted) {
        if (p.check == Check::kInvoiceUnverifiable) {
          p.usd_at_stake = std::round(hours * rate * 100) / 100;
        }
      }
    }
  }

  // What `tensorfleet cost report --by node --json` would say had every instance been a worker
  // labelled with its instance id: up for the hours it was billed (the duplicated hours are
  // hours-exceed-clock's to find) and busy for all of them, but where an anomaly is planted.
  void WriteMetering() {
    using Json = nlohmann::json;
    Json nodes = Json::array();
    for (size_t i = 0; i < fleet_.size(); ++i) {
      const Instance& in = fleet_[i];
      if (in.hours <= 0) continue;
      double up = in.hours * 3600 * in.up_share, used = up * in.busy_share;
      nodes.push_back({{"node_id", "node-" + std::to_string(i)},
                       {"instance_id", in.id},
                       {"epoch", 1},
                       {"price_per_hour", in.rate},
                       {"spot", in.spot},
                       {"up_seconds", up},
                       {"used_share_seconds", used},
                       {"idle_seconds", up - used}});
    }
    Json doc = {{"by", "node"},
                {"project", ""},
                {"window",
                 {{"since", FormatUtcTime(start_)},
                  {"until", FormatUtcTime(billed_until_)},
                  {"since_ms", start_ * 1000},
                  {"until_ms", billed_until_ * 1000}}},
                {"rows", Json::array()},
                {"idle", {{"key", "idle"}, {"nodes", std::move(nodes)}}},
                {"unreadable", Json::array()}};
    *metering_ << doc.dump(1) << "\n";
  }

  void WriteInventory() {
    using Json = nlohmann::json;
    Json instances = Json::array();
    for (const auto& in : fleet_) {
      Json i = {{"InstanceId", in.id},
                {"InstanceType", in.offer->instance_type},
                {"Placement", {{"AvailabilityZone", in.zone}, {"GroupName", ""}}},
                {"NetworkInterfaces", Json::array()},
                {"Tags", Json::array()},
                {"BlockDeviceMappings", Json::array()}};
      if (in.spot) i["InstanceLifecycle"] = "spot";
      if (!in.cluster.empty()) {
        if (in.grouped) i["Placement"]["GroupName"] = "pg-" + in.cluster;
        i["Tags"].push_back({{"Key", "cluster"}, {"Value", in.cluster}});
      }
      int efa = in.efa ? in.offer->efa_interfaces.value_or(0) : 0;
      i["NetworkInterfaces"].push_back({{"InterfaceType", efa > 0 ? "efa" : "interface"}});
      if (!in.volume.empty()) {
        i["BlockDeviceMappings"].push_back(
            {{"DeviceName", "/dev/sdf"}, {"Ebs", {{"VolumeId", in.volume}}}});
      }
      instances.push_back(std::move(i));
    }
    Json volumes = Json::array();
    for (const auto& v : volumes_) {
      volumes.push_back({{"VolumeId", v.id},
                         {"Size", v.gb},
                         {"AvailabilityZone", v.zone},
                         {"State", v.attached ? "in-use" : "available"}});
    }
    Json snapshots = Json::array();
    for (const auto& s : snapshots_) {
      snapshots.push_back(
          {{"SnapshotId", s.id}, {"VolumeSize", s.gb}, {"StartTime", FormatUtcTime(s.start_time)}});
    }
    Json doc = {{"Reservations", Json::array({{{"Instances", instances}}})},
                {"Volumes", volumes},
                {"Snapshots", snapshots}};
    *inventory_ << doc.dump(1) << "\n";
  }

  const GeneratorOptions& opt_;
  const Catalog& catalog_;
  ByteSink* bill_;
  std::ostream* invoice_;
  std::ostream* inventory_;
  std::ostream* metering_;
  int64_t start_ = 0, end_ = 0, hours_ = 0;
  int64_t billed_until_ = 0;  // the end of the last instance hour written
  const Offer* cluster_a_ = nullptr;
  const Offer* cluster_b_ = nullptr;
  const UsagePrice* volume_price_ = nullptr;
  const UsagePrice* snapshot_price_ = nullptr;
  const UsagePrice* transfer_price_ = nullptr;
  std::vector<Instance> fleet_;
  std::vector<Storage> volumes_, snapshots_;
  const Instance* resold_ = nullptr;
  std::unique_ptr<BillRowWriter> writer_;
  std::string buffer_;
  Status pending_;
  int64_t next_corrupt_ = 0;
  GeneratedBill result_;
};

}  // namespace

Result<GeneratedBill> GenerateBill(const GeneratorOptions& options, const Catalog& catalog,
                                   ByteSink* bill, std::ostream* invoice, std::ostream* inventory,
                                   std::ostream* metering) {
  return Generator(options, catalog, bill, invoice, inventory, metering).Run();
}

}  // namespace tf::cost
