// The price catalog: numbers and times as bills write them, the streaming CSV reader, loading,
// replacing and extending the catalog, and the `cost catalog` / `cost compare` verbs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cost/audit/byte_source.h"
#include "cost/audit/csv_reader.h"
#include "cost/catalog_files.h"
#include "cost/numbers.h"
#include "cost_test_util.h"

namespace tf::testing {
namespace {

using cost::CsvReader;
using Json = nlohmann::json;

TEST(CostNumbers, ParsesNumbersCountsAndTimes) {
  EXPECT_EQ(cost::ParseNumber("55.04"), 55.04);
  EXPECT_EQ(cost::ParseNumber("+1e-3"), 1e-3);
  for (const char* bad : {"", "1,5", "12a", " 1", "nan", "inf", "--1"}) {
    EXPECT_FALSE(cost::ParseNumber(bad)) << bad;
  }
  EXPECT_EQ(*cost::ParseCount("70B"), 70e9);
  EXPECT_EQ(*cost::ParseCount("1.5T"), 1.5e12);
  EXPECT_EQ(*cost::ParseCount("175e9"), 175e9);
  EXPECT_FALSE(cost::ParseCount("-3B").ok());
  EXPECT_FALSE(cost::ParseCount("B").ok());

  EXPECT_EQ(*cost::ParseUtcTime("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(*cost::ParseUtcTime("2026-08-01T00:00:00Z"), 1785542400);
  EXPECT_EQ(*cost::ParseUtcTime("2026-08-01T00:00:00.000Z"), 1785542400);
  EXPECT_EQ(*cost::ParseUtcTime("2026-08-01 00:00:00"), 1785542400);
  EXPECT_EQ(*cost::ParseUtcTime("2026-08-01T02:00:00+02:00"), 1785542400);
  EXPECT_EQ(*cost::ParseUtcTime("2026-08-01"), 1785542400);
  EXPECT_EQ(*cost::ParseUtcTime("2024-02-29T12:00Z"), 1709208000);
  for (const char* bad : {"2026-13-01", "2026-08-01T25:00:00Z", "08/01/2026", "2026-08-01T",
                          "2026-08-01T00:00:00Zjunk", ""}) {
    EXPECT_FALSE(cost::ParseUtcTime(bad)) << bad;
  }
  EXPECT_EQ(cost::FormatUtcTime(1785542400), "2026-08-01T00:00:00Z");
  EXPECT_EQ(cost::FormatUtcTime(1709208000), "2024-02-29T12:00:00Z");
  EXPECT_EQ(cost::FormatUsd(1234567.891), "$1,234,567.89");
  EXPECT_EQ(cost::FormatUsd(-5), "-$5.00");
  EXPECT_EQ(cost::FormatGrouped(1720320), "1,720,320");
}

std::vector<std::vector<std::string>> ReadAll(const std::string& text, size_t buffer,
                                              std::vector<int64_t>* lines = nullptr,
                                              Status* error = nullptr) {
  CsvReader csv(cost::MemorySource(text), "t.csv", buffer);
  std::vector<std::vector<std::string>> out;
  for (;;) {
    auto more = csv.Next();
    if (!more.ok()) {
      if (error) *error = more.status();
      break;
    }
    if (!*more) break;
    out.emplace_back(csv.fields().begin(), csv.fields().end());
    if (lines) lines->push_back(csv.line());
  }
  return out;
}

TEST(CostCsv, QuotesLineBreaksAndLineNumbers) {
  std::string text =
      "a,b,c\r\n"
      "1,\"x, y\",3\r\n"
      "\n"
      "\"multi\nline\",\"say \"\"hi\"\"\",\n"
      "last,,\"\"";
  // Every buffer size from tiny to large gives the same records: records that straddle a
  // refill are parsed again from their start.
  for (size_t buffer : {64, 80, 128, 1 << 20}) {
    std::vector<int64_t> lines;
    auto rows = ReadAll(text, buffer, &lines);
    ASSERT_EQ(rows.size(), 4u) << buffer;
    EXPECT_EQ(rows[0], (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(rows[1], (std::vector<std::string>{"1", "x, y", "3"}));
    EXPECT_EQ(rows[2], (std::vector<std::string>{"multi\nline", "say \"hi\"", ""}));
    EXPECT_EQ(rows[3], (std::vector<std::string>{"last", "", ""}));
    EXPECT_EQ(lines, (std::vector<int64_t>{1, 2, 4, 6}));
  }
}

TEST(CostCsv, PlainLinesOfEveryLengthSplitTheSameAtEveryBufferSize) {
  // Lines of 0 to 70 bytes with commas at every offset cover the 16-byte scan's edges: a
  // delimiter first or last in a block, a newline in the block after the last comma.
  std::string text;
  std::vector<std::vector<std::string>> expected;
  for (int length = 1; length <= 70; ++length) {
    std::string line;
    for (int i = 0; i < length; ++i) line += (i % 7 == 3 || i % 11 == 0) ? ',' : 'a' + i % 26;
    std::vector<std::string> fields(1);
    for (char c : line) {
      if (c == ',') {
        fields.emplace_back();
      } else {
        fields.back() += c;
      }
    }
    text += line + (length % 3 == 0 ? "\r\n" : "\n");
    expected.push_back(fields);
  }
  text.pop_back();  // the last line ends without a newline
  for (size_t buffer : {80, 97, 128, 4096}) {
    EXPECT_EQ(ReadAll(text, buffer), expected) << buffer;
  }
}

TEST(CostCsv, ErrorsNameTheLine) {
  Status error;
  auto rows = ReadAll("a,b\n1,2\n3,\"open\n4,5\n", 1 << 16, nullptr, &error);
  EXPECT_EQ(rows.size(), 2u);
  EXPECT_NE(error.message().find("t.csv:3: a quoted field is never closed"), std::string::npos)
      << error.message();

  std::string long_line = "a\n" + std::string(300, 'x') + "\n";
  ReadAll(long_line, 128, nullptr, &error);
  EXPECT_EQ(error.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(error.message().find("t.csv:2"), std::string::npos) << error.message();
}

TEST(CostCsv, ReadsGzipFilesTransparently) {
  TempDir dir;
  std::string plain = "h1,h2\n1,2\n";
  WriteFile(dir.path() / "p.csv", plain);
  std::string gz = (dir.path() / "p.csv.gz").string();
  ASSERT_EQ(std::system(("gzip -c " + (dir.path() / "p.csv").string() + " > " + gz).c_str()), 0);
  for (const auto& path : {(dir.path() / "p.csv").string(), gz}) {
    auto src = cost::OpenFileSource(path);
    ASSERT_TRUE(src.ok()) << src.status().ToString();
    CsvReader csv(std::move(src).value(), path);
    ASSERT_TRUE(*csv.Next());
    ASSERT_TRUE(*csv.Next());
    EXPECT_EQ(csv.fields()[1], "2");
    EXPECT_FALSE(*csv.Next());
  }
  WriteFile(dir.path() / "bad.csv.gz", std::string("\x1f\x8b\x08\x00garbage", 12));
  auto src = cost::OpenFileSource((dir.path() / "bad.csv.gz").string());
  ASSERT_TRUE(src.ok());
  CsvReader csv(std::move(src).value(), "bad.csv.gz");
  auto r = csv.Next();
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(cost::OpenFileSource("/nonexistent/x.csv").status().code(), StatusCode::kNotFound);
}

TEST(CostCatalog, ShippedCatalogHasDatedSourcedPrices) {
  cost::Catalog catalog = ShippedCatalog();
  const cost::Offer* p5 = catalog.FindOffer("aws", "p5.48xlarge", "us-east-1");
  ASSERT_NE(p5, nullptr);
  EXPECT_EQ(p5->accelerator, "H100");
  EXPECT_EQ(p5->accelerator_count, 8);
  EXPECT_DOUBLE_EQ(*p5->on_demand, 55.04);
  EXPECT_DOUBLE_EQ(*p5->previous_on_demand, 98.32);
  EXPECT_EQ(p5->previous_until, *cost::ParseUtcTime("2025-06-01"));
  EXPECT_EQ(p5->efa_interfaces, 32);
  EXPECT_FALSE(p5->source.empty());
  EXPECT_EQ(p5->on_demand_date, "2026-07");
  // No us-east-1 on-demand SKU: the price is unknown, not zero.
  EXPECT_FALSE(catalog.FindOffer("aws", "p5e.48xlarge", "us-east-1")->on_demand);

  const cost::Accelerator* a10g = catalog.FindAccelerator("a10g");
  ASSERT_NE(a10g, nullptr);
  EXPECT_EQ(a10g->fp8, cost::Fp8Support::kNo);
  EXPECT_EQ(catalog.MatchAccelerators("A100").size(), 2u);
  EXPECT_FALSE(catalog.ResolveAccelerator("A100").ok());
  EXPECT_EQ((*catalog.ResolveAccelerator("A100-80"))->name, "A100-80GB");
  EXPECT_EQ(catalog.FindModelBySize(70e9)->layers, 80);
  EXPECT_EQ(catalog.FindModel("gpt-3-175b")->hidden, 12288);

  // Every offer's accelerator is in the accelerator table, and every price has a source.
  for (const auto& o : catalog.offers()) {
    EXPECT_NE(catalog.FindAccelerator(o.accelerator), nullptr) << o.origin;
    if (o.on_demand) {
      EXPECT_FALSE(o.source.empty()) << o.origin;
      EXPECT_FALSE(o.on_demand_date.empty()) << o.origin;
    }
  }
}

TEST(CostCatalog, ExtraRowsOverrideAndReplaceDropsDefaults) {
  TempDir dir;
  std::string sheet = WriteFile(dir.path() / "reseller.csv",
                                "provider,instance_type,accelerator,accelerator_count,"
                                "usd_per_gpu_hour,price_date,source\n"
                                "acme,h100x8,H100,8,2.50,2026-10,acme price sheet\n"
                                "aws,p5.48xlarge,H100,8,7.00,2026-10,negotiated\n");
  setenv("TENSORFLEET_CATALOG", ShippedCatalogDir().c_str(), 1);
  auto extended = cost::LoadCatalog({{}, {sheet}});
  ASSERT_TRUE(extended.ok()) << extended.status().ToString();
  const cost::Offer* acme = extended->FindOffer("acme", "h100x8", "");
  ASSERT_NE(acme, nullptr);
  EXPECT_DOUBLE_EQ(*acme->on_demand, 20.0);  // 8 x $2.50
  // The extra row has no region, so it does not replace the us-east-1 row.
  EXPECT_DOUBLE_EQ(*extended->FindOffer("aws", "p5.48xlarge", "us-east-1")->on_demand, 55.04);
  EXPECT_NE(extended->FindOffer("aws", "p5.48xlarge", ""), nullptr);

  auto replaced = cost::LoadCatalog({{sheet}, {}});
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ(replaced->offers().size(), 2u);               // the default offers are gone
  EXPECT_NE(replaced->FindAccelerator("H100"), nullptr);  // other kinds stay

  std::string bad = WriteFile(dir.path() / "bad.csv",
                              "provider,instance_type,accelerator,accelerator_count,"
                              "on_demand_usd_per_hour\nacme,x,H100,8,12.5.1\n");
  auto broken = cost::LoadCatalog({{}, {bad}});
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find("bad.csv:2: column on_demand_usd_per_hour: '12.5.1'"),
            std::string::npos)
      << broken.status().message();
  auto unknown = cost::LoadCatalog({{}, {WriteFile(dir.path() / "u.csv", "foo,bar\n1,2\n")}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("not a catalog table"), std::string::npos);
}

TEST(CostCatalogCli, ListsAndRanksOffers) {
  auto listed = RunWithShippedCatalog({"cost", "catalog", "--gpu", "H100", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  Json j = Json::parse(listed.output);
  ASSERT_EQ(j["accelerators"].size(), 1u);
  bool saw_p5 = false;
  for (const auto& o : j["offers"]) {
    EXPECT_EQ(o["accelerator"], "H100");
    if (o["instance_type"] == "p5.48xlarge") {
      saw_p5 = true;
      EXPECT_EQ(o["on_demand_usd_per_hour"], 55.04);
      EXPECT_EQ(o["previous_on_demand_usd_per_hour"], 98.32);
      EXPECT_EQ(o["on_demand_price_date"], "2026-07");
    }
  }
  EXPECT_TRUE(saw_p5);

  auto human = RunWithShippedCatalog({"cost", "catalog", "--gpu", "H100"});
  EXPECT_EQ(human.exit_code, 0);
  EXPECT_NE(human.output.find("$98.32 (pre-June-2025)"), std::string::npos) << human.output;

  auto ranked = RunWithShippedCatalog({"cost", "compare", "H100", "--json"});
  ASSERT_EQ(ranked.exit_code, 0) << ranked.output;
  Json r = Json::parse(ranked.output);
  double previous = 0;
  for (const auto& o : r["ranked"]) {
    EXPECT_GE(o["usd_per_gpu_hour"].get<double>(), previous);
    previous = o["usd_per_gpu_hour"];
  }
  EXPECT_GT(r["ranked"].size(), 3u);

  auto unknown = RunWithShippedCatalog({"cost", "compare", "X9"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.output.find("unknown accelerator 'X9'"), std::string::npos);
}

}  // namespace
}  // namespace tf::testing
