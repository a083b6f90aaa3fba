// The reseller invoice checked against public prices, the bill and the inventory. Internal to
// the audit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost/audit/audit_checks.h"

namespace tf::cost {

// Reads the invoice at `path` (`file_index` is its place in ctx.files) and adds its findings:
//   - spot-resold: a resource that ran as spot, invoiced at or near the on-demand list price;
//   - invoice-markup: a line's rate above the public on-demand price of its instance type in
//     force on its dates by more than options.markup_threshold (per resource, with its lines);
//   - invoice-type-mismatch: the invoice names an instance type, or a GPU in its description,
//     other than what the bill or the inventory shows ran;
//   - invoice-hours-not-run: more hours invoiced for a resource than the bill shows in the
//     invoice's periods, beyond the tolerance;
//   - invoice-unverifiable: resources in neither the bill nor the inventory;
//   - cost-mismatch: lines whose amount is not hours x rate.
// and fills `summary`. Malformed lines, unknown instance types and periods outside the bill go
// to `problems` (and are left out of the checks); an unreadable file or a missing column is an
// error.
Status AuditInvoice(const std::string& path, uint32_t file_index, const CheckContext& ctx,
                    ProblemLog* problems, std::vector<Finding>* out,
                    AuditReport::InvoiceSummary* summary);

}  // namespace tf::cost
