// SegmentedBlobReader over a blob store whose blobs are not files (as the external S3 bucket's
// are not): reads and checks across segments, how many segments it holds open at once, and the
// errors that name a segment's blob.
#include <gtest/gtest.h>

#include <map>

#include "objects/segmented_reader.h"

namespace tf::objects {
namespace {

// Blobs in memory; counts the readers alive. Only Open is used by the reader under test.
class MemoryBlobStore : public BlobStore {
 public:
  class Reader : public BlobReader {
   public:
    Reader(MemoryBlobStore& store, const std::string& content) : store_(store), content_(content) {
      ++store_.open_now;
      store_.most_open = std::max(store_.most_open, store_.open_now);
    }
    ~Reader() override { --store_.open_now; }
    uint64_t size() const override { return content_.size(); }
    Status ReadAt(uint64_t offset, size_t n, std::string* out) override {
      if (offset > content_.size() || n > content_.size() - offset) {
        return InvalidArgument("past the end");
      }
      out->assign(content_, offset, n);
      return OkStatus();
    }

   private:
    MemoryBlobStore& store_;
    const std::string& content_;
  };

  const std::string& owner() const override { return owner_; }
  Result<std::unique_ptr<BlobWriter>> Create(const std::string&) override {
    return Internal("not used");
  }
  Result<std::unique_ptr<BlobReader>> Open(const std::string& blob_id) override {
    auto it = blobs.find(blob_id);
    if (it == blobs.end()) return NotFound("no blob " + blob_id);
    return std::unique_ptr<BlobReader>(std::make_unique<Reader>(*this, it->second));
  }
  Status Remove(const std::string& blob_id) override {
    blobs.erase(blob_id);
    return OkStatus();
  }
  Result<int> RemoveUnsealed() override { return 0; }

  std::map<std::string, std::string> blobs;
  int open_now = 0, most_open = 0;

 private:
  std::string owner_ = "memory";
};

class SegmentedReaderTest : public ::testing::Test {
 protected:
  // Segments "s0".."sN" holding `parts`, read by a new reader.
  std::unique_ptr<SegmentedBlobReader> Read(const std::vector<std::string>& parts) {
    std::vector<store::BlobSegment> segments;
    for (size_t i = 0; i < parts.size(); ++i) {
      const std::string id = "s" + std::to_string(i);
      store_.blobs[id] = parts[i];
      segments.push_back({id, static_cast<int64_t>(parts[i].size())});
    }
    auto first = store_.Open("s0");
    EXPECT_TRUE(first.ok());
    return std::make_unique<SegmentedBlobReader>(store_, segments, std::move(first).value(),
                                                 [this] { ++closed_; });
  }

  MemoryBlobStore store_;
  int closed_ = 0;
};

TEST_F(SegmentedReaderTest, ReadsAcrossSegmentsAndHoldsAtMostTwoOpen) {
  std::vector<std::string> parts;
  std::string all;
  for (int i = 0; i < 20; ++i) {
    parts.push_back(std::string(100 + i, static_cast<char>('a' + i)));
    all += parts.back();
  }
  parts.insert(parts.begin() + 5, "");  // an empty segment is passed over
  auto reader = Read(parts);
  EXPECT_EQ(reader->size(), all.size());
  EXPECT_FALSE(reader->in_files());
  std::string out;
  for (uint64_t at = 0; at < all.size(); at += 37) {
    const size_t n = std::min<size_t>(250, all.size() - at);
    ASSERT_TRUE(reader->ReadAt(at, n, &out).ok());
    ASSERT_EQ(out, all.substr(at, n)) << "at " << at;
    ASSERT_TRUE(reader->Check(at, n).ok());
  }
  ASSERT_TRUE(reader->ReadAt(0, all.size(), &out).ok());
  EXPECT_EQ(out, all);
  ASSERT_TRUE(reader->ReadAt(all.size() - 1, 1, &out).ok());
  EXPECT_EQ(out, all.substr(all.size() - 1));
  EXPECT_EQ(reader->ReadAt(all.size() - 1, 2, &out).code(), StatusCode::kInvalidArgument);
  auto span = reader->FileAt(150);
  ASSERT_TRUE(span.ok());
  EXPECT_EQ(span->fd, -1);        // not in files: sent piece by piece
  EXPECT_LE(store_.open_now, 3);  // two kept, and the one the span holds
  span = Internal("released");
  EXPECT_LE(store_.most_open, 3);
  reader.reset();
  EXPECT_EQ(store_.open_now, 0);
  EXPECT_EQ(closed_, 1);
}

TEST_F(SegmentedReaderTest, AMissingOrWrongSizedSegmentIsAnErrorNamingItsBlob) {
  auto reader = Read({"first", "second", "third"});
  store_.blobs.erase("s1");
  std::string out;
  Status missing = reader->ReadAt(3, 5, &out);
  EXPECT_EQ(missing.code(), StatusCode::kInternal);
  EXPECT_NE(missing.message().find("s1"), std::string::npos) << missing.ToString();
  store_.blobs["s1"] = "other size";
  Status wrong = reader->Check(5, 6);
  EXPECT_EQ(wrong.code(), StatusCode::kInternal);
  EXPECT_NE(wrong.message().find("s1"), std::string::npos) << wrong.ToString();
  ASSERT_TRUE(reader->ReadAt(11, 5, &out).ok());  // the third segment is still readable
  EXPECT_EQ(out, "third");
}

}  // namespace
}  // namespace tf::objects
