// The bill against tensorfleet's own metering: for each EC2 instance that a node names with its
// `instance_id` label, the instance-hours billed inside the metering report's window against
// the hours the node was up there and the share of them its ranks used. Checks
// billed-not-running and billed-idle (docs/cost.md, "Bill audit"). Internal to the audit.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "cost/audit/audit_checks.h"
#include "cost/audit/bill_scan.h"
#include "cost/audit/cur_reader.h"

namespace tf::cost {

// What the metering report says of one instance, over every node period labelled with it.
struct MeteredInstance {
  double up_seconds = 0;
  double used_share_seconds = 0;   // Σ share × seconds of the ranks on it
  double idle_seconds = 0;         // Σ per period max(0, up − used)
  std::vector<std::string> nodes;  // node ids, in report order, without repeats
};

// The JSON of `tensorfleet cost report --by node --json` (GET /v1/cost/report), whole fleet.
struct MeteringReport {
  std::string file;
  int64_t since = 0, until = 0;                      // the window, seconds since 1970
  std::map<std::string, MeteredInstance> instances;  // by instance id
  int64_t unlabelled_periods = 0;                    // node periods without instance_id
};

// InvalidArgument naming the file and the field ("m.json: idle.nodes[2].up_seconds: expected
// a number") for anything that is not such a report; NotFound when the file cannot be opened.
Result<MeteringReport> LoadMeteringReport(const std::string& path);
Result<MeteringReport> ParseMeteringReport(std::string_view text, const std::string& name);

// Instance usage rows clipped to the metering window, per resource id: a row partly inside
// counts for the part of its interval inside. Undated rows are left out.
class WindowHours {
 public:
  struct Totals {
    double hours = 0, usd = 0;
    Evidence rows;  // rows with hours inside the window
  };

  WindowHours(int64_t since, int64_t until, size_t evidence_rows)
      : since_(since), until_(until), evidence_rows_(evidence_rows) {}

  void Add(const CurRow& row);
  const StringMap<Totals>& resources() const { return resources_; }

 private:
  int64_t since_, until_;
  size_t evidence_rows_;
  StringMap<Totals> resources_;
};

// billed-not-running and billed-idle for the instances in both the bill and `metering`; GPU
// instances billed in the window but absent from the metering are listed in *skipped (counted,
// not guessed). Without a metering report (null) both checks go to *skipped with the reason.
void MeteringFindings(const CheckContext& ctx, const MeteringReport* metering,
                      const WindowHours* window, std::vector<Finding>* out,
                      std::vector<std::string>* skipped);

}  // namespace tf::cost
