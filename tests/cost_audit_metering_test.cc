// The bill audit against tensorfleet's own metering (billed-not-running, billed-idle): a
// generated bill of a month and a hand-built `cost report --by node --json` over its first 720
// hours, where nodes name their instances with the instance_id label.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cost/audit/audit.h"
#include "cost/audit/bill_generator.h"
#include "cost/audit/byte_sink.h"
#include "cost/metering/metering.h"
#include "cost/numbers.h"
#include "cost_test_util.h"
#include "fleet/node_info.h"

namespace tf::testing {
namespace {

using cost::Check;
using Json = nlohmann::json;

constexpr double kHour = 3600;

struct Fleet {
  std::string bill;
  std::vector<std::string> ids, types;  // in the generator's order
};

Fleet GenerateMonth(const TempDir& dir) {
  Fleet f;
  f.bill = (dir.path() / "bill.csv").string();
  std::string inventory_path = (dir.path() / "inventory.json").string();
  auto sink = cost::OpenFileSink(f.bill, false);
  EXPECT_TRUE(sink.ok());
  std::ofstream inventory(inventory_path);
  cost::GeneratorOptions options;
  options.rows = 25000;  // more than 720 hours of every instance
  auto g = cost::GenerateBill(options, ShippedCatalog(), sink->get(), nullptr, &inventory);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE((*sink)->Close().ok());
  inventory.close();
  std::ifstream in(inventory_path);
  Json doc = Json::parse(in);
  for (const auto& i : doc["Reservations"][0]["Instances"]) {
    f.ids.push_back(i["InstanceId"]);
    f.types.push_back(i["InstanceType"]);
  }
  return f;
}

struct Node {
  std::string instance_id;
  double up_hours, busy_hours;
};

// A whole-fleet report over 2026-08-01 to 2026-08-31 (720 h), one node period per node.
std::string MeteringJson(const std::vector<Node>& nodes) {
  int64_t since = *cost::ParseUtcTime("2026-08-01T00:00:00Z");
  Json lines = Json::array();
  int n = 0;
  for (const Node& node : nodes) {
    double up = node.up_hours * kHour, used = node.busy_hours * kHour;
    lines.push_back({{"node_id", "node_" + std::to_string(++n)},
                     {"instance_id", node.instance_id},
                     {"epoch", 1},
                     {"up_seconds", up},
                     {"used_share_seconds", used},
                     {"idle_seconds", std::max(0.0, up - used)},
                     {"cost", 0}});
  }
  Json doc = {{"by", "node"},
              {"window", {{"since_ms", since * 1000}, {"until_ms", (since + 720 * 3600) * 1000}}},
              {"rows", Json::array()},
              {"idle", {{"key", "idle"}, {"nodes", lines}}}};
  return doc.dump();
}

const cost::Finding* FindingFor(const cost::AuditReport& r, Check check,
                                const std::string& subject) {
  for (const auto& f : r.findings) {
    if (f.check == check && f.subject == subject) return &f;
  }
  return nullptr;
}

std::string Describe(const cost::AuditReport& r) {
  std::string out;
  for (const auto& f : r.findings) {
    out += std::string(cost::CheckName(f.check)) + " " + f.subject + ": " + f.message + "\n";
  }
  return out;
}

double ListRate(const std::string& type) {
  static const cost::Catalog catalog = ShippedCatalog();
  const cost::Offer* o = catalog.FindOffer("aws", type, "us-east-1");
  return o && o->on_demand ? *o->on_demand : 0;
}

TEST(CostAuditMetering, NotRunningIdleCleanAndUnknown) {
  TempDir dir;
  Fleet fleet = GenerateMonth(dir);
  ASSERT_GT(fleet.ids.size(), 12u);
  // Instances 0, 4 and 8 are on-demand and billed whole hours from the first: 720 h in the
  // window.
  const std::string& stopped = fleet.ids[0];
  const std::string& idle = fleet.ids[4];
  const std::string& busy = fleet.ids[8];
  std::string metering =
      WriteFile(dir.path() / "metering.json",
                MeteringJson({{stopped, 500, 500}, {idle, 720, 100}, {busy, 720, 715}}));
  cost::AuditOptions options;
  options.metering_path = metering;
  auto r = cost::RunAudit(fleet.bill, options, ShippedCatalog());
  ASSERT_TRUE(r.ok()) << r.status().ToString();

  const cost::Finding* nr = FindingFor(*r, Check::kBilledNotRunning, stopped);
  ASSERT_NE(nr, nullptr) << Describe(*r);
  EXPECT_NEAR(nr->usd_at_stake, 220 * ListRate(fleet.types[0]), 1e-6) << nr->message;
  EXPECT_NE(nr->message.find("720.00 h billed"), std::string::npos) << nr->message;
  EXPECT_NE(nr->message.find("up 500.00 h"), std::string::npos) << nr->message;
  EXPECT_EQ(nr->evidence_total, 721);  // 720 bill rows and the metering node
  EXPECT_EQ(nr->evidence.back(), metering + ": " + stopped +
                                     " is node node_1 (up 500.00 h, busy 500.00 h, idle 0.00 h)");
  EXPECT_NE(nr->evidence[0].find(fleet.bill + ":"), std::string::npos);
  EXPECT_EQ(FindingFor(*r, Check::kBilledIdle, stopped), nullptr) << Describe(*r);

  const cost::Finding* id = FindingFor(*r, Check::kBilledIdle, idle);
  ASSERT_NE(id, nullptr) << Describe(*r);
  EXPECT_NEAR(id->usd_at_stake, 620 * ListRate(fleet.types[4]), 1e-6) << id->message;
  EXPECT_NE(id->message.find("620.00 h idle"), std::string::npos) << id->message;
  EXPECT_EQ(FindingFor(*r, Check::kBilledNotRunning, idle), nullptr) << Describe(*r);

  // 5 h idle of 720 is under the 10% threshold; up as long as billed.
  EXPECT_EQ(FindingFor(*r, Check::kBilledIdle, busy), nullptr) << Describe(*r);
  EXPECT_EQ(FindingFor(*r, Check::kBilledNotRunning, busy), nullptr) << Describe(*r);
  EXPECT_EQ(r->findings.size(), 2u) << Describe(*r);

  // Every other GPU instance of the bill is counted as not checked, not guessed at.
  size_t gpus = 0;
  static const cost::Catalog catalog = ShippedCatalog();
  for (const auto& type : fleet.types) {
    const cost::Offer* o = catalog.FindOffer("aws", type, "us-east-1");
    if (o && o->accelerator_count > 0) ++gpus;
  }
  std::string expected = "billed-not-running, billed-idle: " + std::to_string(gpus - 3) +
                         " GPU instances billed from 2026-08-01T00:00:00Z to "
                         "2026-08-31T00:00:00Z not in the metering report";
  bool listed = false;
  for (const auto& s : r->skipped) listed |= s.rfind(expected, 0) == 0;
  EXPECT_TRUE(listed) << expected << "\nskipped:\n" << ::testing::PrintToString(r->skipped);
}

TEST(CostAuditMetering, ToleranceAndThresholdEdges) {
  TempDir dir;
  Fleet fleet = GenerateMonth(dir);
  const std::string& a = fleet.ids[0];
  const std::string& b = fleet.ids[4];
  // 720 h billed: the not-running tolerance is max(1 h, 2%) = 14.4 h, the idle threshold
  // max(1 h, 10%) = 72 h.
  cost::AuditOptions options;
  options.metering_path =
      WriteFile(dir.path() / "m.json", MeteringJson({{a, 706, 706}, {b, 720, 649}}));
  auto inside = cost::RunAudit(fleet.bill, options, ShippedCatalog());
  ASSERT_TRUE(inside.ok()) << inside.status().ToString();
  EXPECT_TRUE(inside->findings.empty()) << Describe(*inside);

  options.metering_path =
      WriteFile(dir.path() / "m2.json", MeteringJson({{a, 705, 705}, {b, 720, 647}}));
  auto outside = cost::RunAudit(fleet.bill, options, ShippedCatalog());
  ASSERT_TRUE(outside.ok());
  EXPECT_NE(FindingFor(*outside, Check::kBilledNotRunning, a), nullptr) << Describe(*outside);
  EXPECT_NE(FindingFor(*outside, Check::kBilledIdle, b), nullptr) << Describe(*outside);
  EXPECT_EQ(outside->findings.size(), 2u) << Describe(*outside);
}

// Metering's idle lines carry the node's instance_id label (empty without one), which the
// report's JSON passes on for the audit to match.
TEST(CostAuditMetering, IdleLinesCarryTheInstanceIdLabel) {
  std::vector<store::NodePeriod> periods;
  for (const std::string& label : {std::string("i-0abc"), std::string()}) {
    fleet::NodeInfo info;
    info.address = "10.0.0.9";
    info.price_per_hour = 2;
    if (!label.empty()) info.labels["instance_id"] = label;
    store::NodePeriod p;
    p.node_id = "node_" + std::to_string(periods.size() + 1);
    p.epoch = 1;
    p.started_at = 0;
    p.last_seen_at = 3600 * 1000;
    p.info_json = fleet::NodeInfoToJson(info).dump();
    periods.push_back(p);
  }
  cost::Metering m = cost::Meter({}, periods, 0, 7200 * 1000, 7200 * 1000);
  ASSERT_EQ(m.idle.size(), 2u) << (m.unreadable.empty() ? "" : m.unreadable[0].error);
  EXPECT_EQ(m.idle[0].instance_id, "i-0abc");
  EXPECT_EQ(m.idle[1].instance_id, "");
}

TEST(CostAuditMetering, WithoutMeteringTheChecksAreNotChecked) {
  TempDir dir;
  Fleet fleet = GenerateMonth(dir);
  auto r = cost::RunAudit(fleet.bill, {}, ShippedCatalog());
  ASSERT_TRUE(r.ok());
  bool listed = false;
  for (const auto& s : r->skipped) {
    listed |= s.rfind("billed-not-running, billed-idle: needs tensorfleet's metering", 0) == 0;
  }
  EXPECT_TRUE(listed) << ::testing::PrintToString(r->skipped);
}

TEST(CostAuditMetering, MalformedReportNamesTheFileAndField) {
  TempDir dir;
  std::string bill = WriteFile(dir.path() / "b.csv",
                               "lineItem/LineItemType,lineItem/UsageType,lineItem/UsageAmount,"
                               "lineItem/UnblendedCost\n");
  auto error = [&](const std::string& name, const std::string& text) {
    cost::AuditOptions options;
    options.metering_path = WriteFile(dir.path() / name, text);
    auto r = cost::RunAudit(bill, options, ShippedCatalog());
    EXPECT_FALSE(r.ok()) << name;
    return r.ok() ? std::string() : r.status().message();
  };
  std::string path = (dir.path() / "m.json").string();
  EXPECT_EQ(error("m.json", "[1, 2"),
            path +
                ": not a JSON object (the JSON of `tensorfleet cost report --by node --json` "
                "expected)");
  EXPECT_EQ(error("m.json", R"({"window": {"since_ms": 0, "until_ms": 3600000}, "idle": {"nodes":
      [{"node_id": "n1", "instance_id": "i-1", "up_seconds": 1, "used_share_seconds": 0,
        "idle_seconds": 1},
       {"node_id": "n2", "instance_id": "i-2", "up_seconds": "10", "used_share_seconds": 0,
        "idle_seconds": 0}]}})"),
            path + ": idle.nodes[1].up_seconds: expected a number");
  EXPECT_EQ(error("m.json", R"({"window": {"since_ms": 0}, "idle": {"nodes": []}})"),
            path + ": window.until_ms: missing");
  EXPECT_EQ(error("m.json", R"({"window": {"since_ms": 0, "until_ms": 1000}, "idle": null})")
                .find(path + ": idle: null: a single project's report has no node periods"),
            0u);
  EXPECT_EQ(error("m.json", R"({"window": {"since_ms": 0, "until_ms": 1000},
      "idle": {"nodes": [{"instance_id": "i-1"}]}})"),
            path + ": idle.nodes[0].node_id: missing");

  cost::AuditOptions options;
  options.metering_path = (dir.path() / "absent.json").string();
  auto absent = cost::RunAudit(bill, options, ShippedCatalog());
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound);
  EXPECT_NE(absent.status().message().find("absent.json"), std::string::npos);
}

}  // namespace
}  // namespace tf::testing
