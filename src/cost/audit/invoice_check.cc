// The reseller invoice against the bill and inventory: spot capacity resold at on-demand
// rates, and invoice lines whose amount is not hours x rate.
#include "cost/audit/invoice_check.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "cost/audit/audit_checks.h"
#include "cost/audit/invoice.h"
#include "cost/numbers.h"

namespace tf::cost {

Status AuditInvoice(const std::string& path, uint32_t file_index, const CheckContext& ctx,
                    ProblemLog* problems, std::vector<Finding>* out) {
  TF_ASSIGN_OR_RETURN(auto source, OpenFileSource(path));
  TF_ASSIGN_OR_RETURN(auto reader, InvoiceReader::Open(std::move(source), path, problems));
  struct Resold {
    Finding finding{Check::kSpotResold, ""};
    double hours = 0, billed = 0, list = 0, spot_rate = 0;
    std::string type;
  };
  std::map<std::string, Resold> resold;
  Evidence mismatch;
  double mismatch_usd = 0;
  InvoiceRow row;
  while (true) {
    TF_ASSIGN_OR_RETURN(bool more, reader->Next(&row));
    if (!more) break;
    RowRef ref{file_index, row.line};
    double diff = row.amount - row.hours * row.rate;
    if (std::fabs(diff) > std::max(0.01, 1e-6 * std::fabs(row.amount))) {
      mismatch.Add(ref, ctx.options.evidence_rows);
      mismatch_usd += diff;
    }
    // Was this resource spot? The bill says so with SpotUsage rows; EC2 with its lifecycle.
    auto r = ctx.scan.resources().find(row.resource_id);
    const ResourceTotals* billed = r == ctx.scan.resources().end() ? nullptr : &r->second;
    const InventoryInstance* inst = ctx.inventory.FindInstance(row.resource_id);
    bool spot = (billed && billed->hours > 0 && billed->spot_hours >= 0.99 * billed->hours) ||
                (inst && inst->spot);
    if (!spot) continue;
    std::string type(row.instance_type);
    if (type.empty() && billed) type = billed->instance_type;
    if (type.empty() && inst) type = inst->type;
    std::string region(row.region);
    if (region.empty() && billed) region = billed->region;
    if (region.empty() && inst) region = std::string(RegionOfZone(inst->zone));
    if (region.empty()) region = "us-east-1";
    const Offer* o = ctx.catalog.FindOffer("aws", type, region);
    if (!o || !o->on_demand) continue;
    if (row.rate < *o->on_demand * (1 - ctx.options.threshold)) continue;
    // What the capacity cost: the spot rate the bill shows, else the catalog's spot high; and
    // never more than the catalog's spot high, for a bill whose spot rate is itself inflated
    // (that is a finding of its own, from the bill alone).
    double spot_rate = billed && billed->spot_hours > 0 ? billed->spot_usd / billed->spot_hours
                       : o->spot_high                   ? *o->spot_high
                                                        : 0;
    if (o->spot_high) spot_rate = std::min(spot_rate, *o->spot_high);
    Resold& x = resold[std::string(row.resource_id)];
    x.finding.subject = row.resource_id;
    x.hours += row.hours;
    x.billed += row.amount;
    x.list = *o->on_demand;
    x.spot_rate = spot_rate;
    x.type = type;
    x.finding.usd_at_stake += row.hours * (row.rate - spot_rate);
    x.finding.evidence_total += 1;
    if (x.finding.evidence.size() < ctx.options.evidence_rows) {
      x.finding.evidence.push_back(ctx.Where(ref));
    }
    if (billed && billed->spot_hours > 0 && x.finding.evidence_total == 1) {
      x.finding.evidence.push_back(ctx.Where(billed->first_spot));
    }
  }
  for (auto& [id, x] : resold) {
    x.finding.message = x.type + " ran as spot" +
                        (x.spot_rate > 0 ? " (" + PerHour(x.spot_rate) + ")" : std::string()) +
                        " but the invoice bills " + FormatFixed(x.hours, 1) + " h at " +
                        PerHour(x.billed / x.hours) + ", the on-demand list price being " +
                        PerHour(x.list);
    out->push_back(std::move(x.finding));
  }
  if (mismatch.total > 0) {
    Finding f{Check::kCostMismatch, "invoice amount_usd"};
    f.usd_at_stake = std::fabs(mismatch_usd);
    f.message = std::to_string(mismatch.total) +
                (mismatch.total == 1 ? " invoice line" : " invoice lines") +
                " whose amount is not hours x " + "rate; net " + FormatUsd(mismatch_usd) +
                (mismatch_usd >= 0 ? " overcharged" : " undercharged");
    ctx.AddEvidence(mismatch, &f);
    out->push_back(std::move(f));
  }
  return OkStatus();
}

}  // namespace tf::cost
