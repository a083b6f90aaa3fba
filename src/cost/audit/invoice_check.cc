// The reseller invoice against public prices, the bill and the inventory (invoice_check.h).
#include "cost/audit/invoice_check.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "base/ascii.h"
#include "cost/audit/audit_checks.h"
#include "cost/audit/invoice.h"
#include "cost/numbers.h"

namespace tf::cost {
namespace {

// An invoice line, kept: the reader's views last only until its next line.
struct Line {
  RowRef ref;
  std::string resource_id, instance_type, region, description;
  double hours = 0, rate = 0, amount = 0;
  int64_t start = 0, end = 0;
};

// What the bill and the inventory say of an invoiced resource.
struct Ran {
  const ResourceTotals* billed = nullptr;
  const InventoryInstance* instance = nullptr;
  std::string type;    // the instance type that ran ("" if neither says)
  std::string source;  // "the bill" or "the inventory"
  std::string region;
};

Ran WhatRan(const CheckContext& ctx, const std::string& resource_id) {
  Ran ran;
  auto r = ctx.scan.resources().find(resource_id);
  if (r != ctx.scan.resources().end() && r->second.hours > 0) ran.billed = &r->second;
  ran.instance = ctx.inventory.FindInstance(resource_id);
  if (ran.billed && !ran.billed->instance_type.empty()) {
    ran.type = ran.billed->instance_type;
    ran.source = "the bill";
    ran.region = ran.billed->region;
  } else if (ran.instance && !ran.instance->type.empty()) {
    ran.type = ran.instance->type;
    ran.source = "the inventory";
  }
  if (ran.region.empty() && ran.instance) ran.region = RegionOfZone(ran.instance->zone);
  return ran;
}

// The public on-demand price of `o` in force at `when` (seconds; 0: today's).
double ListPrice(const Offer& o, int64_t when) {
  if (o.previous_on_demand && when != 0 && when < o.previous_until) return *o.previous_on_demand;
  return *o.on_demand;
}

// The catalog's AWS on-demand offer of an instance type, or nullptr.
const Offer* AwsOffer(const Catalog& catalog, const std::string& type, const std::string& region) {
  const Offer* o = catalog.FindOffer("aws", type, region);
  return o && o->on_demand ? o : nullptr;
}

// An accelerator of the catalog named as a word in `text` ("GPU capacity H100"), the longest
// such name; nullptr if none.
const Accelerator* AcceleratorNamedIn(const Catalog& catalog, std::string_view text) {
  const std::string lower = AsciiLower(text);
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  const Accelerator* best = nullptr;
  for (const Accelerator& a : catalog.accelerators()) {
    const std::string name = AsciiLower(a.name);
    for (size_t at = lower.find(name); at != std::string::npos; at = lower.find(name, at + 1)) {
      size_t after = at + name.size();
      bool word = (at == 0 || !word_char(lower[at - 1])) &&
                  (after == lower.size() || !word_char(lower[after]));
      if (word && (!best || a.name.size() > best->name.size())) best = &a;
    }
  }
  return best;
}

// The share of a resource's billed hours within [start, end) (0: open): 1 without a period or
// when its rows are undated, else the part of its billed spans inside the period.
double ShareInPeriod(const ResourceTotals& r, int64_t start, int64_t end) {
  if ((start == 0 && end == 0) || r.billed_spans.empty() || r.undated) return 1;
  const int64_t from = start == 0 ? std::numeric_limits<int64_t>::min() : start;
  const int64_t to = end == 0 ? std::numeric_limits<int64_t>::max() : end;
  double total = 0, inside = 0;
  for (const auto& [s, e] : r.billed_spans) {
    total += static_cast<double>(e - s);
    inside += static_cast<double>(std::max<int64_t>(0, std::min(e, to) - std::max(s, from)));
  }
  return total > 0 ? inside / total : 1;
}

std::string PerGpuHour(double usd_per_hour, const Offer* o) {
  if (!o || o->accelerator_count <= 1) return "";
  return " ($" + FormatFixed(o->PerAccelerator(usd_per_hour), 3) + " per GPU-hour)";
}

std::string Percent(double fraction) { return FormatFixed(fraction * 100, 1) + "%"; }

// A finding being built per resource from its lines.
struct PerResource {
  Finding finding;
  double hours = 0, amount = 0, list_usd = 0;
  explicit PerResource(Check c) : finding(c, "") {}
};

class InvoiceAudit {
 public:
  InvoiceAudit(const CheckContext& ctx, const std::string& path, ProblemLog* problems,
               AuditReport::InvoiceSummary* summary)
      : ctx_(ctx), path_(path), problems_(problems), summary_(summary) {
    for (const Offer& o : ctx.catalog.offers()) known_types_.insert(o.instance_type);
  }

  // The checks that need only the line; false when the line is left out of the others.
  bool Admit(const Line& l) {
    if (!l.instance_type.empty() && !known_types_.count(l.instance_type)) {
      problems_->BadValue(path_, l.ref.line, "instance_type", l.instance_type,
                          "an instance type the catalog knows (add it with --catalog-extra)");
      return false;
    }
    const int64_t bill_from = ctx_.scan.earliest_start(), bill_to = ctx_.scan.latest_end();
    if (bill_from != 0 && ((l.end != 0 && l.end <= bill_from) || l.start >= bill_to)) {
      problems_->Add(path_, l.ref.line, "period_start",
                     "the line's period is outside the bill's usage, which runs from " +
                         FormatUtcTime(bill_from) + " to " + FormatUtcTime(bill_to));
      return false;
    }
    return true;
  }

  void Add(const Line& l) {
    const Ran ran = WhatRan(ctx_, l.resource_id);
    Summarize(l, ran);
    Arithmetic(l);
    if (!ran.billed && !ran.instance) {
      Unverifiable(l);
      return;
    }
    Resource& r = resources_[l.resource_id];
    r.ran = ran;
    r.hours += l.hours;
    r.amount += l.amount;
    r.rated_usd += l.hours * l.rate;
    r.lines.push_back(l.ref);
    r.first_start = l.start == 0 || r.undated_line ? 0 : std::min(r.first_start, l.start);
    r.last_end = l.end == 0 || r.undated_line ? 0 : std::max(r.last_end, l.end);
    r.undated_line = r.undated_line || l.start == 0 || l.end == 0;
    if (SpotResold(l, ran)) return;
    if (TypeMismatch(l, ran)) return;
    Markup(l, ran);
  }

  void Finish(std::vector<Finding>* out) {
    HoursNotRun();
    for (auto* group : {&resold_, &markups_, &mismatches_, &not_run_}) {
      for (auto& [id, x] : *group) out->push_back(std::move(x.finding));
    }
    if (unverifiable_.evidence_total > 0) out->push_back(std::move(unverifiable_));
    if (mismatch_.total > 0) {
      Finding f{Check::kCostMismatch, "invoice amount_usd"};
      f.usd_at_stake = std::fabs(mismatch_usd_);
      f.message = std::to_string(mismatch_.total) +
                  (mismatch_.total == 1 ? " invoice line" : " invoice lines") +
                  " whose amount is not hours x rate; net " + FormatUsd(mismatch_usd_) +
                  (mismatch_usd_ >= 0 ? " overcharged" : " undercharged");
      ctx_.AddEvidence(mismatch_, &f);
      out->push_back(std::move(f));
    }
  }

 private:
  struct Resource {
    Ran ran;
    double hours = 0, amount = 0;
    double rated_usd = 0;  // hours x rate, line by line
    std::vector<RowRef> lines;
    int64_t first_start = std::numeric_limits<int64_t>::max(), last_end = 0;
    bool undated_line = false;  // a line without a period: the whole bill counts
  };

  void AddRow(Finding& f, RowRef ref) const {
    f.evidence_total += 1;
    if (f.evidence.size() < ctx_.options.evidence_rows) f.evidence.push_back(ctx_.Where(ref));
  }

  // The instance type a line bills: its own, else the one that ran.
  static std::string InvoicedType(const Line& l, const Ran& ran) {
    return l.instance_type.empty() ? ran.type : l.instance_type;
  }

  std::string RegionOf(const Line& l, const Ran& ran) const {
    if (!l.region.empty()) return l.region;
    return ran.region.empty() ? "us-east-1" : ran.region;
  }

  void Summarize(const Line& l, const Ran& ran) {
    summary_->lines += 1;
    summary_->hours += l.hours;
    summary_->invoiced_usd += l.amount;
    const Offer* o = AwsOffer(ctx_.catalog, InvoicedType(l, ran), RegionOf(l, ran));
    if (o) {
      summary_->priced_usd += l.amount;
      summary_->list_usd += l.hours * ListPrice(*o, l.start);
    }
  }

  void Arithmetic(const Line& l) {
    double diff = l.amount - l.hours * l.rate;
    if (std::fabs(diff) > std::max(0.01, 1e-6 * std::fabs(l.amount))) {
      mismatch_.Add(l.ref, ctx_.options.evidence_rows);
      mismatch_usd_ += diff;
    }
  }

  void Unverifiable(const Line& l) {
    unverifiable_.usd_at_stake += l.amount;
    if (unverifiable_ids_.insert(l.resource_id).second) {
      unverifiable_.evidence.push_back(ctx_.Where(l.ref) + " (" + l.resource_id + ")");
      unverifiable_.evidence_total += 1;
    }
    const size_t n = unverifiable_ids_.size();
    unverifiable_.subject =
        std::to_string(n) + (n == 1 ? " invoiced resource" : " invoiced resources");
    unverifiable_.message = unverifiable_.subject +
                            " in neither the bill nor the inventory: what ran cannot be "
                            "checked (ask the reseller for their resource ids in its bill)";
  }

  // A resource that ran as spot (all its bill hours SpotUsage or term Spot, or the inventory's
  // lifecycle) invoiced at or near the on-demand list price. True when it was.
  bool SpotResold(const Line& l, const Ran& ran) {
    const ResourceTotals* billed = ran.billed;
    bool spot = (billed && billed->spot_hours >= 0.99 * billed->hours) ||
                (ran.instance && ran.instance->spot);
    if (!spot) return false;
    const std::string type = InvoicedType(l, ran);
    const Offer* o = AwsOffer(ctx_.catalog, type, RegionOf(l, ran));
    if (!o || l.rate < *o->on_demand * (1 - ctx_.options.threshold)) return false;
    // What the capacity cost: the spot rate the bill shows, else the catalog's spot high; and
    // never more than the catalog's spot high, for a bill whose spot rate is itself inflated
    // (a finding of its own, from the bill alone).
    double spot_rate = billed && billed->spot_hours > 0 ? billed->spot_usd / billed->spot_hours
                       : o->spot_high                   ? *o->spot_high
                                                        : 0;
    if (o->spot_high) spot_rate = std::min(spot_rate, *o->spot_high);
    PerResource& x = resold_.try_emplace(l.resource_id, Check::kSpotResold).first->second;
    x.finding.subject = l.resource_id;
    x.hours += l.hours;
    x.amount += l.amount;
    x.finding.usd_at_stake += l.hours * (l.rate - spot_rate);
    AddRow(x.finding, l.ref);
    if (billed && billed->spot_hours > 0 && x.finding.evidence_total == 1) {
      x.finding.evidence.push_back(ctx_.Where(billed->first_spot));
    }
    x.finding.message =
        type + " ran as spot" + (spot_rate > 0 ? " (" + PerHour(spot_rate) + ")" : std::string()) +
        " but the invoice bills " + FormatFixed(x.hours, 1) + " h at " +
        PerHour(x.amount / x.hours) + ", the on-demand list price being " + PerHour(*o->on_demand);
    return true;
  }

  // True when the finding puts the line's whole excess over what ran at stake (a GPU named in
  // the description): then it is not a markup too. A named instance type puts the difference
  // of list prices at stake, and the markup over the named type's price is a finding of its own.
  bool TypeMismatch(const Line& l, const Ran& ran) {
    if (ran.type.empty()) return false;
    const std::string region = RegionOf(l, ran);
    const Offer* ran_offer = AwsOffer(ctx_.catalog, ran.type, region);
    std::string claim;  // what the invoice says it bills
    double at_stake = 0;
    bool whole_excess = false;
    if (!l.instance_type.empty()) {
      if (l.instance_type == ran.type) return false;
      const Offer* invoiced = AwsOffer(ctx_.catalog, l.instance_type, region);
      claim = l.instance_type + (invoiced ? " (" + std::to_string(invoiced->accelerator_count) +
                                                "x " + invoiced->accelerator + ")"
                                          : "");
      if (invoiced && ran_offer) {
        at_stake =
            l.hours * std::max(0.0, ListPrice(*invoiced, l.start) - ListPrice(*ran_offer, l.start));
      }
    } else {
      const Accelerator* named = AcceleratorNamedIn(ctx_.catalog, l.description);
      if (!named || !ran_offer || named->name == ran_offer->accelerator) return false;
      claim = named->name + " capacity (\"" + l.description + "\")";
      at_stake = l.hours * std::max(0.0, l.rate - ListPrice(*ran_offer, l.start));
      whole_excess = true;
    }
    PerResource& x =
        mismatches_.try_emplace(l.resource_id, Check::kInvoiceTypeMismatch).first->second;
    x.finding.subject = l.resource_id;
    x.hours += l.hours;
    x.finding.usd_at_stake += at_stake;
    AddRow(x.finding, l.ref);
    std::string ran_what =
        ran.type + (ran_offer ? " (" + std::to_string(ran_offer->accelerator_count) + "x " +
                                    ran_offer->accelerator + ")"
                              : "");
    x.finding.message = "the invoice bills " + FormatFixed(x.hours, 1) + " h of " + claim +
                        ", but " + ran.source + " shows " + ran_what + " ran";
    return whole_excess;
  }

  void Markup(const Line& l, const Ran& ran) {
    const std::string type = InvoicedType(l, ran);
    const Offer* o = AwsOffer(ctx_.catalog, type, RegionOf(l, ran));
    if (!o || l.hours <= 0) return;
    const double list = ListPrice(*o, l.start);
    if (l.rate <= list * (1 + ctx_.options.markup_threshold)) {
      summary_->within_threshold_lines += 1;
      summary_->within_threshold_usd += l.amount;
      return;
    }
    PerResource& x = markups_.try_emplace(l.resource_id, Check::kInvoiceMarkup).first->second;
    x.finding.subject = l.resource_id;
    x.hours += l.hours;
    x.amount += l.hours * l.rate;
    x.list_usd += l.hours * list;
    x.finding.usd_at_stake += l.hours * (l.rate - list);
    AddRow(x.finding, l.ref);
    const double rate = x.amount / x.hours, list_rate = x.list_usd / x.hours;
    std::string message = type + " invoiced at " + PerHour(rate) + PerGpuHour(rate, o) + " for " +
                          FormatFixed(x.hours, 1) + " h, against the public on-demand " +
                          PerHour(list_rate) + PerGpuHour(list_rate, o) + ": " +
                          Percent(rate / list_rate - 1) + " markup";
    const ResourceTotals* billed = ran.billed;
    if (billed && (billed->spot_hours > 0 || billed->savings_plan_hours > 0)) {
      const double paid = billed->effective_usd / billed->hours;
      const char* how = billed->spot_hours >= billed->savings_plan_hours ? "spot" : "Savings Plan";
      message += "; the bill shows the reseller paid " + PerHour(paid) + " for it (" + how +
                 "): a margin of " + Percent(rate / paid - 1);
      if (x.finding.evidence_total == 1) {
        x.finding.evidence.push_back(ctx_.Where(billed->spot_hours >= billed->savings_plan_hours
                                                    ? billed->first_spot
                                                    : billed->first_savings_plan));
      }
    }
    x.finding.message = message;
  }

  // Per resource in the bill: hours invoiced over its lines' periods against the hours the bill
  // shows in them; and the reseller's cost of those hours for the summary.
  void HoursNotRun() {
    for (auto& [id, r] : resources_) {
      if (!r.ran.billed) continue;
      const ResourceTotals& billed = *r.ran.billed;
      const int64_t from = r.undated_line ? 0 : r.first_start;
      const int64_t to = r.undated_line ? 0 : r.last_end;
      const double share = ShareInPeriod(billed, from, to);
      const double billed_hours = billed.hours * share;
      summary_->costed_usd += r.amount;
      summary_->reseller_cost_usd += billed.effective_usd * share;
      const double excess = r.hours - billed_hours;
      if (excess <= std::max(ctx_.options.invoice_hours_min,
                             ctx_.options.invoice_hours_tolerance * billed_hours)) {
        continue;
      }
      PerResource& x = not_run_.try_emplace(id, Check::kInvoiceHoursNotRun).first->second;
      x.finding.subject = id;
      const double rate = r.hours > 0 ? r.rated_usd / r.hours : 0;
      x.finding.usd_at_stake = excess * rate;
      for (RowRef ref : r.lines) AddRow(x.finding, ref);
      if (x.finding.evidence.size() < ctx_.options.evidence_rows) {
        x.finding.evidence.push_back(ctx_.Where(billed.first));
      }
      x.finding.message = "the invoice bills " + FormatFixed(r.hours, 1) + " h" +
                          (from != 0 ? " from " + FormatUtcTime(from) + " to " + FormatUtcTime(to)
                                     : std::string()) +
                          " but the bill shows " + FormatFixed(billed_hours, 1) +
                          " h of it running then: " + FormatFixed(excess, 1) + " h at " +
                          PerHour(rate) + " did not run";
    }
  }

  const CheckContext& ctx_;
  const std::string& path_;
  ProblemLog* problems_;
  AuditReport::InvoiceSummary* summary_;
  std::set<std::string> known_types_;
  std::map<std::string, Resource> resources_;
  std::map<std::string, PerResource> resold_, markups_, mismatches_, not_run_;
  Finding unverifiable_{Check::kInvoiceUnverifiable, ""};
  std::set<std::string> unverifiable_ids_;
  Evidence mismatch_;
  double mismatch_usd_ = 0;
};

}  // namespace

Status AuditInvoice(const std::string& path, uint32_t file_index, const CheckContext& ctx,
                    ProblemLog* problems, std::vector<Finding>* out,
                    AuditReport::InvoiceSummary* summary) {
  TF_ASSIGN_OR_RETURN(auto source, OpenFileSource(path));
  TF_ASSIGN_OR_RETURN(auto reader, InvoiceReader::Open(std::move(source), path, problems));
  summary->present = true;
  InvoiceAudit audit(ctx, path, problems, summary);
  InvoiceRow row;
  while (true) {
    TF_ASSIGN_OR_RETURN(bool more, reader->Next(&row));
    if (!more) break;
    Line l{RowRef{file_index, row.line},
           std::string(row.resource_id),
           std::string(row.instance_type),
           std::string(row.region),
           std::string(row.description),
           row.hours,
           row.rate,
           row.amount,
           row.period_start,
           row.period_end};
    if (audit.Admit(l)) audit.Add(l);
  }
  audit.Finish(out);
  return OkStatus();
}

}  // namespace tf::cost
