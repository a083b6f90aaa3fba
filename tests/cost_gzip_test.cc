// The gzip byte sources: ISA-L's inflater (when built in) and zlib's give the original bytes of
// generated bills, plain, in concatenated members and read a byte at a time; truncated and
// corrupt inputs are errors naming the file and the offset; empty inputs read as empty.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <zlib.h>

#include <functional>

#include "cost/audit/bill_generator.h"
#include "cost/audit/byte_sink.h"
#include "cost/audit/byte_source.h"
#include "cost_test_util.h"

namespace tf::testing {
namespace {

using Factory = std::function<std::unique_ptr<cost::ByteSource>(std::unique_ptr<cost::ByteSource>,
                                                                std::string)>;

// gzip (window_bits 31) or zlib (15) compression of `data` at `level`, as one member.
std::string Compress(const std::string& data, int level, int window_bits = 31) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, data.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string BillText(int64_t rows, uint64_t seed) {
  std::string text;
  cost::GeneratorOptions options;
  options.rows = rows;
  options.seed = seed;
  auto sink = cost::StringSink(&text);
  auto g = cost::GenerateBill(options, ShippedCatalog(), sink.get(), nullptr, nullptr);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE(sink->Close().ok());
  return text;
}

// Hands out at most `step` bytes per Read, so members and headers arrive split anywhere.
class TrickleSource : public cost::ByteSource {
 public:
  TrickleSource(std::string_view data, size_t step) : data_(data), step_(step) {}
  Result<size_t> Read(char* buf, size_t n) override {
    return inner_->Read(buf, std::min(n, step_));
  }

 private:
  std::string_view data_;
  size_t step_;
  std::unique_ptr<cost::ByteSource> inner_ = cost::MemorySource(data_);
};

// Gives `good` bytes, then fails.
class FailingSource : public cost::ByteSource {
 public:
  explicit FailingSource(std::string good) : good_(std::move(good)) {}
  Result<size_t> Read(char* buf, size_t n) override {
    auto got = inner_->Read(buf, n);
    if (got.ok() && *got == 0) return Unavailable("disk.gz: read failed: Input/output error");
    return got;
  }

 private:
  std::string good_;
  std::unique_ptr<cost::ByteSource> inner_ = cost::MemorySource(good_);
};

Result<std::string> ReadAll(cost::ByteSource* source, size_t chunk) {
  std::string out;
  std::string buf(chunk, '\0');
  for (;;) {
    TF_ASSIGN_OR_RETURN(size_t got, source->Read(buf.data(), buf.size()));
    if (got == 0) return out;
    out.append(buf.data(), got);
  }
}

// Inflates `gz` (read from memory `step` bytes at a time) into chunks of `chunk` bytes.
Result<std::string> Inflate(const Factory& make, const std::string& gz, size_t chunk = 1 << 20,
                            size_t step = SIZE_MAX) {
  auto source = make(std::make_unique<TrickleSource>(gz, step), "bill.csv.gz");
  return ReadAll(source.get(), chunk);
}

class CostGzipTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "isal") {
      if (!cost::IsalGzipSource(cost::MemorySource(""), "probe")) {
        GTEST_SKIP() << "built without ISA-L (libisal-dev)";
      }
      make_ = cost::IsalGzipSource;
    } else {
      make_ = cost::ZlibGzipSource;
    }
  }
  Factory make_;
};

TEST_P(CostGzipTest, GivesTheBillsBytesAtEveryLevel) {
  std::string bill = BillText(4000, 7);
  ASSERT_GT(bill.size(), 1u << 20);  // more than one input and one output chunk
  for (int level : {0, 1, 6, 9}) {
    auto out = Inflate(make_, Compress(bill, level));
    ASSERT_TRUE(out.ok()) << "level " << level << ": " << out.status().ToString();
    EXPECT_TRUE(*out == bill) << "level " << level << ": " << out->size() << " bytes, want "
                              << bill.size();
  }
}

TEST_P(CostGzipTest, ReadsConcatenatedMembersInOrder) {
  std::string a = BillText(1500, 1), b = BillText(100, 2), c = BillText(700, 3);
  // As `cat a.gz empty.gz b.gz c.gz` makes them: an empty member, a stored one, and a zlib
  // stream (zlib's inflate takes both wrappers, so igzip's must too).
  std::string gz = Compress(a, 6) + Compress("", 6) + Compress(b, 0) + Compress(c, 1) +
                   Compress(a, 9, /*window_bits=*/15);
  auto out = Inflate(make_, gz);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(*out == a + b + c + a) << out->size() << " bytes, want " << (a + b + c + a).size();
}

TEST_P(CostGzipTest, ByteAtATimeInAndOutGivesTheSameBytes) {
  std::string a = BillText(200, 4), b = BillText(100, 5);
  std::string gz = Compress(a, 6) + Compress(b, 1);
  for (auto [chunk, step] :
       {std::pair<size_t, size_t>{1, SIZE_MAX}, {1 << 20, 1}, {1, 1}, {7, 3}}) {
    auto out = Inflate(make_, gz, chunk, step);
    ASSERT_TRUE(out.ok()) << chunk << "/" << step << ": " << out.status().ToString();
    EXPECT_TRUE(*out == a + b) << "reads of " << chunk << ", input by " << step;
  }
}

TEST_P(CostGzipTest, TruncatedInputIsAnErrorNamingTheFileAndOffset) {
  std::string a = BillText(600, 8);
  std::string first = Compress(a, 6);
  std::string gz = first + Compress(a, 1);
  // Inside the header, the deflate data, the trailer; inside the second member's header and
  // data.
  for (size_t cut : {size_t{1}, size_t{5}, first.size() / 2, first.size() - 1, first.size() + 3,
                     gz.size() - 20, gz.size() - 1}) {
    for (size_t step : {SIZE_MAX, size_t{1}}) {
      auto out = Inflate(make_, gz.substr(0, cut), 1 << 16, step);
      ASSERT_FALSE(out.ok()) << "cut at " << cut << " read " << out->size() << " bytes";
      EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
      const std::string& m = out.status().message();
      EXPECT_NE(m.find("bill.csv.gz: gzip data ends early at byte " + std::to_string(cut)),
                std::string::npos)
          << m;
      size_t member = cut < first.size() ? 0 : first.size();
      EXPECT_NE(m.find("member starting at byte " + std::to_string(member)), std::string::npos)
          << m;
    }
  }
}

TEST_P(CostGzipTest, CorruptDataIsAnError) {
  std::string a = BillText(600, 9);
  std::string gz = Compress(a, 6);
  std::string bad_crc = gz;
  bad_crc[gz.size() - 6] ^= 0x55;  // the CRC-32 in the trailer
  std::string bad_block = gz;
  bad_block[10] = static_cast<char>(0xff);  // the first block header: reserved type 3
  std::string bad_magic = gz;
  bad_magic[0] = 'x';  // neither gzip nor zlib
  std::string trailing = gz + "this is not gzip";
  for (const auto& [what, data] : std::vector<std::pair<std::string, std::string>>{
           {"crc", bad_crc}, {"block", bad_block}, {"magic", bad_magic}, {"trailing", trailing}}) {
    auto out = Inflate(make_, data, 1 << 16);
    ASSERT_FALSE(out.ok()) << what;
    EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument) << what;
    EXPECT_NE(out.status().message().find("bill.csv.gz: corrupt gzip data near byte "),
              std::string::npos)
        << what << ": " << out.status().message();
  }
  // Flipped bits anywhere in the deflate data: an error (a bad code or the checksum), never a
  // silent wrong read.
  for (size_t at = 12; at + 8 < gz.size(); at += gz.size() / 40) {
    std::string flipped = gz;
    flipped[at] ^= 0x10;
    auto out = Inflate(make_, flipped, 1 << 16);
    EXPECT_FALSE(out.ok()) << "bit flipped at " << at;
  }
}

TEST_P(CostGzipTest, EmptyInputsReadAsEmpty) {
  auto none = Inflate(make_, "");
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(*none, "");
  auto empty_member = Inflate(make_, Compress("", 9) + Compress("", 1), 1);
  ASSERT_TRUE(empty_member.ok()) << empty_member.status().ToString();
  EXPECT_EQ(*empty_member, "");
}

TEST_P(CostGzipTest, ErrorsFromTheFileArePassedOn) {
  std::string gz = Compress(BillText(300, 10), 6);
  auto source = make_(std::make_unique<FailingSource>(gz.substr(0, gz.size() / 2)), "disk.gz");
  auto out = ReadAll(source.get(), 1 << 16);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(out.status().message().find("Input/output error"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Inflaters, CostGzipTest, ::testing::Values("zlib", "isal"),
                         [](const auto& info) { return info.param; });

// A .gz file opened by path reads the same with the default inflater and with TF_GZIP=zlib,
// and an empty file reads as empty.
TEST(CostGzipFile, DefaultAndForcedZlibReadFilesAlike) {
  TempDir dir;
  std::string bill = BillText(2000, 11);
  std::string gz = WriteFile(dir.path() / "bill.csv.gz", Compress(bill, 1) + Compress(bill, 6));
  std::string empty = WriteFile(dir.path() / "empty.csv", "");
  for (const char* choice : {"", "zlib"}) {
    ASSERT_EQ(setenv("TF_GZIP", choice, 1), 0);
    auto source = cost::OpenFileSource(gz);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    auto out = ReadAll(source->get(), 1 << 20);
    ASSERT_TRUE(out.ok()) << choice << ": " << out.status().ToString();
    EXPECT_TRUE(*out == bill + bill) << "TF_GZIP=" << choice;
    auto e = cost::OpenFileSource(empty);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(*ReadAll(e->get(), 16), "");
  }
  unsetenv("TF_GZIP");
  std::string cut = WriteFile(dir.path() / "cut.csv.gz", Compress(bill, 6).substr(0, 1000));
  auto source = cost::OpenFileSource(cut);
  ASSERT_TRUE(source.ok());
  auto out = ReadAll(source->get(), 1 << 20);
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find(cut + ": gzip data ends early at byte 1000"),
            std::string::npos)
      << out.status().message();
}

}  // namespace
}  // namespace tf::testing
