// The reseller invoice checked against the bill and inventory. Internal to the audit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost/audit/audit_checks.h"

namespace tf::cost {

// Reads the invoice at `path` (`file_index` is its place in ctx.files) and adds spot-resold
// findings (a resource that ran as spot, billed at or near the on-demand list price) and a
// cost-mismatch finding for lines whose amount is not hours x rate. Malformed lines go to
// `problems`; an unreadable file or a missing column is an error.
Status AuditInvoice(const std::string& path, uint32_t file_index, const CheckContext& ctx,
                    ProblemLog* problems, std::vector<Finding>* out);

}  // namespace tf::cost
