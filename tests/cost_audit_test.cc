// The bill audit against synthetic bills with planted anomalies (every one found, with the
// rows that prove it; a clean bill gives none; malformed rows reported with their lines), and
// against small hand-written bills for the edges of each check.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cost/audit/audit.h"
#include "cost/audit/bill_generator.h"
#include "cost/audit/byte_sink.h"
#include "cost_test_util.h"

namespace tf::testing {
namespace {

using cost::Check;

struct Bill {
  std::string path, invoice, inventory, metering;
  cost::GeneratedBill generated;
};

Bill Generate(const TempDir& dir, const std::string& name, const cost::GeneratorOptions& options,
              bool gzip = false) {
  Bill b;
  b.path = (dir.path() / name).string();
  std::string flat = name;  // side files stay out of a folder of bill parts
  std::replace(flat.begin(), flat.end(), '/', '_');
  b.invoice = (dir.path() / (flat + ".invoice.csv")).string();
  b.inventory = (dir.path() / (flat + ".inventory.json")).string();
  b.metering = (dir.path() / (flat + ".metering.json")).string();
  auto sink = cost::OpenFileSink(b.path, gzip);
  EXPECT_TRUE(sink.ok());
  std::ofstream invoice(b.invoice), inventory(b.inventory), metering(b.metering);
  cost::Catalog catalog = ShippedCatalog();
  auto g = cost::GenerateBill(options, catalog, sink->get(), &invoice, &inventory, &metering);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE((*sink)->Close().ok());
  b.generated = *g;
  return b;
}

cost::AuditReport Audit(const Bill& b, bool with_side_files = true) {
  cost::AuditOptions options;
  if (with_side_files) {
    options.invoice_path = b.invoice;
    options.inventory_paths = {b.inventory};
    options.metering_path = b.metering;
  }
  options.evidence_rows = 50;
  auto report = cost::RunAudit(b.path, options, ShippedCatalog());
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return *report;
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

class CostAuditTest : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(CostAuditTest, FindsEveryPlantedAnomalyWithItsRows) {
  auto [cur2, gzip] = GetParam();
  TempDir dir;
  cost::GeneratorOptions options;
  options.rows = 20000;
  options.cur2 = cur2;
  options.anomalies = cost::AllChecks();
  Bill b = Generate(dir, gzip ? "bill.csv.gz" : "bill.csv", options, gzip);
  ASSERT_EQ(b.generated.planted.size(), cost::AllChecks().size());
  cost::AuditReport r = Audit(b);
  EXPECT_EQ(r.rows, 20000);
  EXPECT_EQ(r.problems.count(), 0);
  EXPECT_EQ(r.formats[0], cur2 ? "CUR 2.0" : "legacy CUR");
  for (const auto& planted : b.generated.planted) {
    const cost::Finding* f = FindingFor(r, planted.check, planted.subject);
    ASSERT_NE(f, nullptr) << "missed " << cost::CheckName(planted.check) << " " << planted.subject
                          << "\nfound:\n"
                          << Describe(r);
    EXPECT_GT(f->usd_at_stake, 0) << f->message;
    if (planted.usd_at_stake > 0) {
      EXPECT_NEAR(f->usd_at_stake, planted.usd_at_stake, 0.005)
          << cost::CheckName(planted.check) << ": " << f->message;
    }
    EXPECT_FALSE(f->evidence.empty());
    // Where the generator knows the exact lines, the finding names each of them.
    for (int64_t line : planted.lines) {
      std::string where = b.path + ":" + std::to_string(line);
      EXPECT_NE(std::find(f->evidence.begin(), f->evidence.end(), where), f->evidence.end())
          << where << " not among the evidence of " << cost::CheckName(f->check);
    }
  }
  // Nothing but what was planted.
  EXPECT_EQ(r.findings.size(), b.generated.planted.size()) << Describe(r);
  EXPECT_EQ(r.ExitCode(), 1);
}

INSTANTIATE_TEST_SUITE_P(Formats, CostAuditTest,
                         ::testing::Values(std::tuple{false, false}, std::tuple{true, false},
                                           std::tuple{false, true}, std::tuple{true, true}));

TEST(CostAudit, CleanBillHasNoFinding) {
  TempDir dir;
  for (bool cur2 : {false, true}) {
    cost::GeneratorOptions options;
    options.rows = 20000;
    options.cur2 = cur2;
    Bill b = Generate(dir, cur2 ? "clean2.csv" : "clean.csv", options);
    cost::AuditReport r = Audit(b);
    EXPECT_TRUE(r.findings.empty()) << Describe(r);
    EXPECT_EQ(r.ExitCode(), 0);
    EXPECT_GT(r.billed_usd, 0);
    EXPECT_TRUE(r.skipped.empty()) << r.skipped[0];
    EXPECT_FALSE(r.type_rates.empty());
    // The invoice passes on-demand capacity at list and adds 20% to spot: every line within the
    // markup threshold, and the reseller's margin that of its spot lines.
    EXPECT_TRUE(r.invoice.present);
    EXPECT_GT(r.invoice.lines, 0);
    EXPECT_EQ(r.invoice.within_threshold_lines, r.invoice.lines);
    EXPECT_GT(r.invoice.margin(), 0.0);
    EXPECT_LT(r.invoice.margin(), 0.2);
    EXPECT_LT(r.invoice.markup(), 0.0);
  }
}

TEST(CostAudit, MalformedRowsAreReportedWithTheirLines) {
  TempDir dir;
  cost::GeneratorOptions options;
  options.rows = 5000;
  options.malformed = 6;
  Bill b = Generate(dir, "bad.csv", options);
  ASSERT_EQ(b.generated.malformed_lines.size(), 6u);
  cost::AuditReport r = Audit(b);
  EXPECT_EQ(r.rows, 5000);
  EXPECT_EQ(r.good_rows, 5000 - 6);
  ASSERT_EQ(r.problems.count(), 6);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(r.problems.kept()[i].line, b.generated.malformed_lines[i]);
    EXPECT_EQ(r.problems.kept()[i].file, b.path);
  }
  EXPECT_NE(r.problems.kept()[0].message.find("'1.0.0' is not a number"), std::string::npos);
  EXPECT_EQ(r.problems.kept()[0].column, "line_item_usage_amount");
  EXPECT_NE(r.problems.kept()[1].message.find("is not a UTC date-time"), std::string::npos);
  EXPECT_NE(r.problems.kept()[2].message.find("expected 31 fields, found 30"), std::string::npos);
  EXPECT_TRUE(r.findings.empty()) << Describe(r);
  EXPECT_EQ(r.ExitCode(), 2);
}

TEST(CostAudit, ReadsAFolderOfParts) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "parts");
  cost::GeneratorOptions options;
  options.rows = 3000;
  Generate(dir, "parts/bill-00001.csv.gz", options, /*gzip=*/true);
  options.cur2 = true;  // parts of different layouts are each mapped by their own header
  options.seed = 2;
  Generate(dir, "parts/bill-00002.csv", options);
  auto r = cost::RunAudit((dir.path() / "parts").string(), {}, ShippedCatalog());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->files.size(), 2u);
  EXPECT_EQ(r->rows, 6000);
  EXPECT_TRUE(r->findings.empty()) << Describe(*r);

  // Parts that cannot be read are problems of their own; the others are audited still.
  const auto parts = dir.path() / "parts";
  std::string gz = ReadFile(parts / "bill-00001.csv.gz");
  WriteFile(parts / "bill-00003.csv.gz", gz.substr(0, gz.size() / 2));  // truncated
  WriteFile(parts / "bill-00004.csv", "");
  WriteFile(parts / "bill-00005.csv", std::string("\x01\x02\xff,\x00\x03\n", 7));
  auto rest = cost::RunAudit(parts.string(), {}, ShippedCatalog());
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(rest->files.size(), 5u);
  EXPECT_GT(rest->good_rows, 6000);  // the truncated part's rows before the cut count too
  std::string problems;
  for (const auto& p : rest->problems.kept()) problems += p.file + ": " + p.message + "\n";
  EXPECT_EQ(rest->problems.count(), 3) << problems;
  for (const char* part : {"bill-00003.csv.gz", "bill-00004.csv", "bill-00005.csv"}) {
    EXPECT_NE(problems.find(part), std::string::npos) << part << " in\n" << problems;
  }
  EXPECT_NE(problems.find("empty file"), std::string::npos) << problems;
  EXPECT_NE(problems.find("not a CSV file"), std::string::npos) << problems;
  EXPECT_NE(problems.find("the rest of this part was left out"), std::string::npos) << problems;

  // A lone file that cannot be read is an error that says why.
  auto empty = cost::RunAudit((parts / "bill-00004.csv").string(), {}, ShippedCatalog());
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty file"), std::string::npos)
      << empty.status().message();
  auto noise = cost::RunAudit((parts / "bill-00005.csv").string(), {}, ShippedCatalog());
  ASSERT_FALSE(noise.ok());
  EXPECT_NE(noise.status().message().find("not a CSV file"), std::string::npos)
      << noise.status().message();
}

// A hand-written legacy bill: columns in an unusual order, an unknown column, and rows that
// sit on each check's edge.
std::string SmallBill(const std::vector<std::string>& rows) {
  std::string text =
      "lineItem/UsageStartDate,lineItem/UsageEndDate,x/Unknown,lineItem/LineItemType,"
      "lineItem/UsageType,lineItem/ResourceId,product/instanceType,lineItem/UsageAmount,"
      "lineItem/UnblendedRate,lineItem/UnblendedCost,lineItem/AvailabilityZone\n";
  for (const auto& r : rows) text += r + "\n";
  return text;
}

cost::AuditReport AuditText(const TempDir& dir, const std::string& text, double threshold = 0.15) {
  std::string path = WriteFile(dir.path() / "small.csv", text);
  cost::AuditOptions options;
  options.threshold = threshold;
  auto r = cost::RunAudit(path, options, ShippedCatalog());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : cost::AuditReport();
}

TEST(CostAudit, RateThresholdAndStalePriceDates) {
  TempDir dir;
  const std::string h1 = "2026-08-01T00:00:00Z,2026-08-01T01:00:00Z,zz,Usage,";
  // g5.xlarge lists at $1.006: $1.15 is 14.3% above (inside 15%), $1.16 is 15.3% above.
  auto inside = AuditText(dir, SmallBill({h1 + "BoxUsage:g5.xlarge,i-1,g5.xlarge,1,1.15,1.15,"}));
  EXPECT_TRUE(inside.findings.empty()) << Describe(inside);
  auto above = AuditText(dir, SmallBill({h1 + "BoxUsage:g5.xlarge,i-1,g5.xlarge,1,1.16,1.16,"}));
  ASSERT_EQ(above.findings.size(), 1u) << Describe(above);
  EXPECT_EQ(above.findings[0].check, Check::kRateAboveCatalog);
  EXPECT_EQ(above.findings[0].subject, "g5.xlarge in us-east-1");
  EXPECT_NEAR(above.findings[0].usd_at_stake, 1.16 - 1.006, 1e-9);
  EXPECT_EQ(above.findings[0].evidence[0], dir.path().string() + "/small.csv:2");
  // A tighter threshold makes the first a finding too.
  EXPECT_EQ(AuditText(dir, SmallBill({h1 + "BoxUsage:g5.xlarge,i-1,g5.xlarge,1,1.15,1.15,"}), 0.10)
                .findings.size(),
            1u);

  // The pre-cut p5 price is stale after June 2025, and legitimate before.
  auto stale =
      AuditText(dir, SmallBill({h1 + "BoxUsage:p5.48xlarge,i-2,p5.48xlarge,1,98.32,98.32,"}));
  ASSERT_EQ(stale.findings.size(), 1u) << Describe(stale);
  EXPECT_EQ(stale.findings[0].check, Check::kStalePrice);
  EXPECT_NEAR(stale.findings[0].usd_at_stake, 98.32 - 55.04, 1e-9);
  auto before = AuditText(dir, SmallBill({"2025-05-01T00:00:00Z,2025-05-01T01:00:00Z,zz,Usage,"
                                          "BoxUsage:p5.48xlarge,i-2,p5.48xlarge,1,98.32,98.32,"}));
  EXPECT_TRUE(before.findings.empty()) << Describe(before);
  // Other regions are priced only where the catalog has them: no finding, no guess.
  auto ohio =
      AuditText(dir, SmallBill({h1 + "USE2-BoxUsage:p5.48xlarge,i-3,p5.48xlarge,1,150,150,"}));
  EXPECT_TRUE(ohio.findings.empty()) << Describe(ohio);
}

TEST(CostAudit, CostArithmeticAndHoursAgainstTheClock) {
  TempDir dir;
  // Within a cent is rounding; 2 cents off is a finding.
  auto ok = AuditText(dir, SmallBill({"2026-08-01T00:00:00Z,2026-08-01T01:00:00Z,z,Usage,"
                                      "BoxUsage:g5.xlarge,i-1,g5.xlarge,0.5,1.006,0.508,"}));
  EXPECT_TRUE(ok.findings.empty()) << Describe(ok);
  auto off = AuditText(dir, SmallBill({"2026-08-01T00:00:00Z,2026-08-01T01:00:00Z,z,Usage,"
                                       "BoxUsage:g5.xlarge,i-1,g5.xlarge,0.5,1.006,0.523,"}));
  ASSERT_EQ(off.findings.size(), 1u) << Describe(off);
  EXPECT_EQ(off.findings[0].check, Check::kCostMismatch);
  EXPECT_EQ(off.findings[0].subject, "i-1") << "the resource, not the column";

  // Hours out of order are fine; the same hour twice is billed beyond the clock.
  std::vector<std::string> rows;
  for (int h : {3, 1, 2, 0}) {
    std::string s = "2026-08-01T0" + std::to_string(h) + ":00:00Z";
    std::string e = "2026-08-01T0" + std::to_string(h + 1) + ":00:00Z";
    rows.push_back(s + "," + e + ",z,Usage,BoxUsage:g5.xlarge,i-9,g5.xlarge,1,1.006,1.006,");
  }
  auto shuffled = AuditText(dir, SmallBill(rows));
  EXPECT_TRUE(shuffled.findings.empty()) << Describe(shuffled);
  rows.push_back(rows[1]);
  auto twice = AuditText(dir, SmallBill(rows));
  ASSERT_EQ(twice.findings.size(), 1u) << Describe(twice);
  EXPECT_EQ(twice.findings[0].check, Check::kHoursExceedClock);
  EXPECT_EQ(twice.findings[0].subject, "i-9");
  EXPECT_NEAR(twice.findings[0].usd_at_stake, 1.006, 1e-9);
  // The proof is the one row billed twice, not the rows the bill merely lists out of order.
  EXPECT_EQ(twice.findings[0].evidence,
            std::vector<std::string>{dir.path().string() + "/small.csv:6"});
  EXPECT_EQ(twice.findings[0].evidence_total, 1);
  // One row claiming 2 hours inside a 1-hour interval.
  auto long_row = AuditText(dir, SmallBill({"2026-08-01T00:00:00Z,2026-08-01T01:00:00Z,z,Usage,"
                                            "BoxUsage:g5.xlarge,i-7,g5.xlarge,2,1.006,2.012,"}));
  ASSERT_EQ(long_row.findings.size(), 1u) << Describe(long_row);
  EXPECT_EQ(long_row.findings[0].evidence[0], dir.path().string() + "/small.csv:2");
}

// Spot hours charged at or above the on-demand list price are found from the bill alone, with
// what they cost beyond the catalog's highest observed spot price (g6.xlarge: on-demand
// $0.8048/h, spot observed $0.388-$0.417/h).
TEST(CostAudit, SpotChargedLikeOnDemandIsFoundWithoutAnInvoice) {
  TempDir dir;
  auto spot_rows = [](const std::string& rate) {
    std::vector<std::string> rows;
    for (int h = 0; h < 3; ++h) {
      rows.push_back(
          "2026-08-01T0" + std::to_string(h) + ":00:00Z,2026-08-01T0" + std::to_string(h + 1) +
          ":00:00Z,z,Usage,SpotUsage:g6.xlarge,i-s,g6.xlarge,1," + rate + "," + rate + ",");
    }
    return rows;
  };
  auto over = AuditText(dir, SmallBill(spot_rows("0.96576")));  // 1.2x on-demand
  ASSERT_EQ(over.findings.size(), 1u) << Describe(over);
  const cost::Finding& f = over.findings[0];
  EXPECT_EQ(f.check, Check::kSpotResold);
  EXPECT_EQ(f.subject, "g6.xlarge in us-east-1 (spot)");
  EXPECT_NEAR(f.usd_at_stake, 3 * (0.96576 - 0.417), 1e-6);
  EXPECT_EQ(f.evidence_total, 3);
  EXPECT_NE(f.message.find("at or above the on-demand list price $0.8048/h"), std::string::npos)
      << f.message;
  // Well above what spot was seen at, if below on-demand: found too.
  auto high = AuditText(dir, SmallBill(spot_rows("0.60")));
  ASSERT_EQ(high.findings.size(), 1u) << Describe(high);
  EXPECT_NE(high.findings[0].message.find("above the highest observed spot price"),
            std::string::npos)
      << high.findings[0].message;
  // At a spot price the catalog has seen: nothing.
  auto fair = AuditText(dir, SmallBill(spot_rows("0.40")));
  EXPECT_TRUE(fair.findings.empty()) << Describe(fair);

  // A reseller's invoice at on-demand for that spot instance is measured against the catalog's
  // spot price, not against the bill's own inflated one (which would put nothing at stake).
  cost::AuditOptions options;
  options.invoice_path = WriteFile(dir.path() / "invoice.csv",
                                   "resource_id,hours,rate_usd_per_hour,amount_usd\n"
                                   "i-s,3,0.8048,2.4144\n");
  auto resold = cost::RunAudit(WriteFile(dir.path() / "spot.csv", SmallBill(spot_rows("0.96576"))),
                               options, ShippedCatalog());
  ASSERT_TRUE(resold.ok()) << resold.status().ToString();
  const cost::Finding* invoiced = FindingFor(*resold, Check::kSpotResold, "i-s");
  ASSERT_NE(invoiced, nullptr) << Describe(*resold);
  EXPECT_NEAR(invoiced->usd_at_stake, 3 * (0.8048 - 0.417), 1e-6);
}

// The reseller's invoice against public prices and against what ran: each check on a bill small
// enough to work out by hand, the summary, and bad lines named with their file, line and column.
TEST(CostAudit, TheInvoiceAgainstPublicPricesAndWhatRan) {
  TempDir dir;
  const std::string day = "2026-08-01T00:00:00Z,2026-08-01T10:00:00Z,z,";
  auto row = [&](const std::string& item, const std::string& usage, const std::string& id,
                 const std::string& type, const std::string& rate, const std::string& cost,
                 const std::string& plan_cost = "") {
    return day + item + "," + usage + "," + id + "," + type + ",10," + rate + "," + cost + ",," +
           plan_cost;
  };
  std::string bill =
      "lineItem/UsageStartDate,lineItem/UsageEndDate,x/Unknown,lineItem/LineItemType,"
      "lineItem/UsageType,lineItem/ResourceId,product/instanceType,lineItem/UsageAmount,"
      "lineItem/UnblendedRate,lineItem/UnblendedCost,lineItem/AvailabilityZone,"
      "savingsPlan/SavingsPlanEffectiveCost\n" +
      row("Usage", "BoxUsage:p5.48xlarge", "i-od", "p5.48xlarge", "55.04", "550.4") + "\n" +
      row("SavingsPlanCoveredUsage", "BoxUsage:p5.48xlarge", "i-sp", "p5.48xlarge", "55.04",
          "550.4", "330") +
      "\n" + row("Usage", "BoxUsage:g6.xlarge", "i-g6", "g6.xlarge", "0.8048", "8.048") + "\n" +
      row("Usage", "BoxUsage:g6.xlarge", "i-hours", "g6.xlarge", "0.8048", "8.048") + "\n" +
      // Before AWS's June 2025 price cut p5 listed at $98.32: legitimate then.
      "2025-05-01T00:00:00Z,2025-05-01T01:00:00Z,z,Usage,BoxUsage:p5.48xlarge,i-old,"
      "p5.48xlarge,1,98.32,98.32,,\n";
  const std::string header =
      "invoice_line,resource_id,instance_type,region,period_start,period_end,hours,"
      "rate_usd_per_hour,amount_usd,description\n";
  std::string invoice =
      header +
      "1,i-od,p5.48xlarge,us-east-1,2026-08-01,2026-08-02,10,82.56,825.6,H100 capacity\n"
      "2,i-sp,p5.48xlarge,us-east-1,2026-08-01,2026-08-02,10,66.048,660.48,H100 capacity\n"
      "3,i-old,p5.48xlarge,us-east-1,2025-05-01,2025-05-02,1,98.32,98.32,H100 capacity\n"
      "4,i-g6,,us-east-1,2026-08-01,2026-08-02,10,10,100,8x H100 capacity\n"
      "5,i-hours,g6.xlarge,us-east-1,2026-08-01,2026-08-02,30,0.8048,24.144,L4 capacity\n"
      "6,i-ghost,g6.xlarge,us-east-1,2026-08-01,2026-08-02,10,0.8048,8.048,L4 capacity\n"
      "7,i-od,p5.48xlarge,us-east-1,2026-08-01,2026-08-02,-5,55.04,-275.2,negative\n"
      "8,i-od,p9.mega,us-east-1,2026-08-01,2026-08-02,1,55.04,55.04,unknown type\n"
      "9,i-od,p5.48xlarge,us-east-1,2027-01-01,2027-01-02,1,55.04,55.04,after the bill\n"
      "10,i-od,p5.48xlarge,us-east-1,yesterday,2026-08-02,1,55.04,55.04,bad date\n";
  cost::AuditOptions options;
  options.invoice_path = WriteFile(dir.path() / "invoice.csv", invoice);
  auto r = cost::RunAudit(WriteFile(dir.path() / "bill.csv", bill), options, ShippedCatalog());
  ASSERT_TRUE(r.ok()) << r.status().ToString();

  // invoice-markup: 50% over the public $55.04 on i-od; 20% over it on i-sp, whose hours the
  // reseller bought under a Savings Plan at $33/h.
  const cost::Finding* od = FindingFor(*r, Check::kInvoiceMarkup, "i-od");
  ASSERT_NE(od, nullptr) << Describe(*r);
  EXPECT_NEAR(od->usd_at_stake, 10 * (82.56 - 55.04), 1e-9);
  EXPECT_NE(od->message.find("p5.48xlarge invoiced at $82.56/h ($10.320 per GPU-hour) for 10.0 h, "
                             "against the public on-demand $55.04/h ($6.880 per GPU-hour): "
                             "50.0% markup"),
            std::string::npos)
      << od->message;
  EXPECT_EQ(od->evidence[0], options.invoice_path + ":2");
  const cost::Finding* sp = FindingFor(*r, Check::kInvoiceMarkup, "i-sp");
  ASSERT_NE(sp, nullptr) << Describe(*r);
  EXPECT_NEAR(sp->usd_at_stake, 10 * (66.048 - 55.04), 1e-9);
  EXPECT_NE(sp->message.find("the bill shows the reseller paid $33.00/h for it (Savings Plan): "
                             "a margin of 100.1%"),
            std::string::npos)
      << sp->message;
  // i-old's line is dated before the price cut: at the price in force then, no markup.
  EXPECT_EQ(FindingFor(*r, Check::kInvoiceMarkup, "i-old"), nullptr) << Describe(*r);

  // invoice-type-mismatch: H100 capacity invoiced, an L4 ran; the whole excess over the L4's
  // list price is at stake (and it is not a markup finding too).
  const cost::Finding* g6 = FindingFor(*r, Check::kInvoiceTypeMismatch, "i-g6");
  ASSERT_NE(g6, nullptr) << Describe(*r);
  EXPECT_NEAR(g6->usd_at_stake, 10 * (10 - 0.8048), 1e-9);
  EXPECT_NE(g6->message.find("H100 capacity (\"8x H100 capacity\"), but the bill shows "
                             "g6.xlarge (1x L4) ran"),
            std::string::npos)
      << g6->message;
  EXPECT_EQ(FindingFor(*r, Check::kInvoiceMarkup, "i-g6"), nullptr);

  // invoice-hours-not-run: 30 h invoiced, 10 billed.
  const cost::Finding* hours = FindingFor(*r, Check::kInvoiceHoursNotRun, "i-hours");
  ASSERT_NE(hours, nullptr) << Describe(*r);
  EXPECT_NEAR(hours->usd_at_stake, 20 * 0.8048, 1e-9);

  // invoice-unverifiable: i-ghost is in neither the bill nor an inventory.
  const cost::Finding* ghost = FindingFor(*r, Check::kInvoiceUnverifiable, "1 invoiced resource");
  ASSERT_NE(ghost, nullptr) << Describe(*r);
  EXPECT_NEAR(ghost->usd_at_stake, 8.048, 1e-9);
  EXPECT_EQ(ghost->evidence[0], options.invoice_path + ":7 (i-ghost)");
  EXPECT_EQ(r->findings.size(), 5u) << Describe(*r);

  // Bad lines, each named and left out of the checks.
  ASSERT_EQ(r->problems.count(), 4) << r->problems.kept()[0].message;
  struct Want {
    int64_t line;
    const char* column;
    const char* says;
  };
  const Want wants[] = {{8, "hours", "-5"},
                        {9, "instance_type", "p9.mega"},
                        {10, "period_start", "outside the bill's usage"},
                        {11, "period_start", "yesterday"}};
  for (size_t i = 0; i < std::size(wants); ++i) {
    const auto& p = r->problems.kept()[i];
    EXPECT_EQ(p.file, options.invoice_path);
    EXPECT_EQ(p.line, wants[i].line);
    EXPECT_EQ(p.column, wants[i].column);
    EXPECT_NE(p.message.find(wants[i].says), std::string::npos) << p.message;
  }
  EXPECT_EQ(r->ExitCode(), 2);

  // The summary: six lines checked; the public price of each line's own type on its dates; the
  // reseller's cost from the bill (the Savings Plan's effective cost for i-sp).
  const auto& s = r->invoice;
  EXPECT_TRUE(s.present);
  EXPECT_EQ(s.lines, 6);
  EXPECT_NEAR(s.invoiced_usd, 825.6 + 660.48 + 98.32 + 100 + 24.144 + 8.048, 1e-9);
  EXPECT_NEAR(s.list_usd, 550.4 + 550.4 + 98.32 + 8.048 + 30 * 0.8048 + 8.048, 1e-9);
  EXPECT_NEAR(s.reseller_cost_usd, 550.4 + 330 + 98.32 + 8.048 + 8.048, 1e-9);
  EXPECT_NEAR(s.costed_usd, 825.6 + 660.48 + 98.32 + 100 + 24.144, 1e-9);
  EXPECT_EQ(s.within_threshold_lines, 2);  // i-old and i-hours (i-ghost is not checked)

  // A tighter or looser threshold moves i-sp (20%) in and out.
  options.markup_threshold = 0.25;
  auto loose = cost::RunAudit(dir.path() / "bill.csv", options, ShippedCatalog());
  ASSERT_TRUE(loose.ok());
  EXPECT_EQ(FindingFor(*loose, Check::kInvoiceMarkup, "i-sp"), nullptr);
  EXPECT_NE(FindingFor(*loose, Check::kInvoiceMarkup, "i-od"), nullptr);
}

// A cluster split over two placement groups: the instance outside the group holding most of
// the cluster is named, with what it was billed; one group for all gives no finding.
TEST(CostAudit, ClusterSplitOverPlacementGroups) {
  TempDir dir;
  std::string bill = WriteFile(
      dir.path() / "pg.csv",
      SmallBill({"2026-08-01T00:00:00Z,2026-08-01T01:00:00Z,z,Usage,BoxUsage:g5.xlarge,i-1,"
                 "g5.xlarge,1,1.006,1.006,us-east-1a",
                 "2026-08-01T00:00:00Z,2026-08-01T01:00:00Z,z,Usage,BoxUsage:g5.xlarge,i-3,"
                 "g5.xlarge,2,1.006,2.012,us-east-1a"}));
  auto inventory = [&](const std::string& third_group) {
    std::string text = "{\"Reservations\": [{\"Instances\": [";
    for (int i = 1; i <= 3; ++i) {
      std::string group = i == 3 ? third_group : "pg-a";
      text += std::string(i > 1 ? "," : "") + "{\"InstanceId\": \"i-" + std::to_string(i) +
              "\", \"InstanceType\": \"g5.xlarge\", \"Placement\": {\"AvailabilityZone\": "
              "\"us-east-1a\", \"GroupName\": \"" +
              group + "\"}, \"Tags\": [{\"Key\": \"cluster\", \"Value\": \"c1\"}]}";
    }
    return WriteFile(dir.path() / "inv.json", text + "]}]}");
  };
  cost::AuditOptions options;
  options.inventory_paths = {inventory("pg-b")};
  auto split = cost::RunAudit(bill, options, ShippedCatalog());
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  const cost::Finding* f = FindingFor(*split, Check::kClusterNoPlacementGroup, "c1");
  ASSERT_NE(f, nullptr) << Describe(*split);
  EXPECT_NEAR(f->usd_at_stake, 2.012, 1e-9);
  EXPECT_EQ(f->evidence[0], options.inventory_paths[0] + ": i-3 (placement group pg-b)");
  EXPECT_NE(f->message.find("1 of 3 cluster instances"), std::string::npos) << f->message;

  options.inventory_paths = {inventory("pg-a")};
  auto together = cost::RunAudit(bill, options, ShippedCatalog());
  ASSERT_TRUE(together.ok());
  EXPECT_EQ(FindingFor(*together, Check::kClusterNoPlacementGroup, "c1"), nullptr)
      << Describe(*together);
}

TEST(CostAudit, BadInputIsNamed) {
  TempDir dir;
  std::string path = WriteFile(dir.path() / "nocost.csv",
                               "lineItem/LineItemType,lineItem/UsageType,lineItem/UsageAmount\n"
                               "Usage,BoxUsage:g5.xlarge,1\n");
  auto r = cost::RunAudit(path, {}, ShippedCatalog());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "missing required column(s): line_item_unblended_cost (lineItem/UnblendedCost)"),
            std::string::npos)
      << r.status().message();
  EXPECT_EQ(
      cost::RunAudit((dir.path() / "absent.csv").string(), {}, ShippedCatalog()).status().code(),
      StatusCode::kNotFound);

  cost::AuditOptions options;
  options.invoice_path = WriteFile(dir.path() / "inv.csv", "resource_id,hours\ni-1,3\n");
  std::string bill = WriteFile(dir.path() / "b.csv", SmallBill({}));
  auto inv = cost::RunAudit(bill, options, ShippedCatalog());
  ASSERT_FALSE(inv.ok());
  EXPECT_NE(
      inv.status().message().find("missing required column(s): rate_usd_per_hour, amount_usd"),
      std::string::npos)
      << inv.status().message();

  options.invoice_path.clear();
  options.inventory_paths = {WriteFile(dir.path() / "i.json", "{\"Other\": []}")};
  EXPECT_FALSE(cost::RunAudit(bill, options, ShippedCatalog()).ok());
}

TEST(CostAuditCli, ExitCodesAndJson) {
  TempDir dir;
  std::string bill = (dir.path() / "b.csv").string();
  std::string inv = (dir.path() / "inv.csv").string();
  std::string inst = (dir.path() / "inst.json").string();
  std::string meter = (dir.path() / "metering.json").string();
  auto gen = RunWithShippedCatalog({"cost", "generate-bill", "--rows", "3000", "--format", "cur2",
                                    "--out", bill, "--anomalies", "all", "--invoice", inv,
                                    "--instances", inst, "--metering", meter, "--json"});
  ASSERT_EQ(gen.exit_code, 0) << gen.output;
  auto planted = nlohmann::json::parse(gen.output)["planted"];
  EXPECT_EQ(planted.size(), cost::AllChecks().size());

  auto audit = RunWithShippedCatalog({"cost", "audit", bill, "--invoice", inv, "--instances", inst,
                                      "--metering", meter, "--json"});
  EXPECT_EQ(audit.exit_code, 1) << audit.output;
  auto j = nlohmann::json::parse(audit.output);
  EXPECT_EQ(j["findings"].size(), planted.size());
  EXPECT_EQ(j["rows"], 3000);

  auto human = RunWithShippedCatalog(
      {"cost", "audit", bill, "--invoice", inv, "--instances", inst, "--metering", meter});
  EXPECT_EQ(human.exit_code, 1);
  EXPECT_NE(human.output.find("stale-price"), std::string::npos) << human.output;
  EXPECT_NE(human.output.find("proof: " + bill + " line"), std::string::npos) << human.output;

  std::string clean = (dir.path() / "clean.csv").string();
  ASSERT_EQ(
      RunWithShippedCatalog({"cost", "generate-bill", "--rows", "3000", "--out", clean}).exit_code,
      0);
  auto ok = RunWithShippedCatalog({"cost", "audit", clean});
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("No findings."), std::string::npos);

  std::string broken = (dir.path() / "broken.csv").string();
  ASSERT_EQ(RunWithShippedCatalog(
                {"cost", "generate-bill", "--rows", "3000", "--out", broken, "--malformed", "2"})
                .exit_code,
            0);
  auto bad = RunWithShippedCatalog({"cost", "audit", broken});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("Malformed input: 2 problems"), std::string::npos) << bad.output;

  auto missing = RunWithShippedCatalog({"cost", "audit", (dir.path() / "nope.csv").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.output.find("nope.csv: no such file"), std::string::npos) << missing.output;

  auto unknown =
      RunWithShippedCatalog({"cost", "generate-bill", "--out", clean, "--anomalies", "foo"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.output.find("unknown anomaly 'foo'"), std::string::npos);
  auto needs = RunWithShippedCatalog(
      {"cost", "generate-bill", "--out", clean, "--anomalies", "spot-resold"});
  EXPECT_EQ(needs.exit_code, 1);
  EXPECT_NE(needs.output.find("needs an invoice"), std::string::npos) << needs.output;
}

}  // namespace
}  // namespace tf::testing
