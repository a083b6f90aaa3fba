// ListMultipartUploads' pages: order, markers, prefix, delimiter, and no upload listed twice or
// left out however the pages fall.
#include <gtest/gtest.h>

#include <set>

#include "api/s3/upload_listing.h"

namespace tf::api {
namespace {

std::vector<objects::MultipartUpload> Uploads() {
  // Unsorted on purpose; two uploads of one key.
  return {{"u3", "b", "data/b", 3},   {"u1", "b", "data/a", 1},   {"u2", "b", "data/a", 2},
          {"u5", "b", "data/d/y", 5}, {"u4", "b", "data/d/x", 4}, {"u6", "b", "other", 6}};
}

std::vector<std::string> Ids(const UploadListing& l) {
  std::vector<std::string> out;
  for (const auto& u : l.uploads) out.push_back(u.upload_id);
  return out;
}

TEST(UploadListingTest, OneBigPageInKeyOrderUnderThePrefix) {
  UploadListingRequest r;
  r.prefix = "data/";
  UploadListing l = ListUploadsPage(Uploads(), r);
  EXPECT_EQ(Ids(l), (std::vector<std::string>{"u1", "u2", "u3", "u4", "u5"}));
  EXPECT_FALSE(l.truncated);
  EXPECT_TRUE(l.next_key_marker.empty());
}

TEST(UploadListingTest, PagesOfEverySizeListEachUploadOnce) {
  for (int64_t size = 1; size <= 7; ++size) {
    UploadListingRequest r;
    r.max_uploads = size;
    std::vector<std::string> seen;
    for (int page = 0; page < 20; ++page) {
      UploadListing l = ListUploadsPage(Uploads(), r);
      EXPECT_LE(static_cast<int64_t>(l.uploads.size()), size);
      for (const auto& id : Ids(l)) seen.push_back(id);
      if (!l.truncated) break;
      r.key_marker = l.next_key_marker;
      r.upload_id_marker = l.next_upload_id_marker;
    }
    EXPECT_EQ(seen, (std::vector<std::string>{"u1", "u2", "u3", "u4", "u5", "u6"})) << size;
  }
}

TEST(UploadListingTest, AKeyMarkerAloneSkipsEveryUploadOfThatKey) {
  UploadListingRequest r;
  r.key_marker = "data/a";
  EXPECT_EQ(Ids(ListUploadsPage(Uploads(), r)), (std::vector<std::string>{"u3", "u4", "u5", "u6"}));
  r.upload_id_marker = "u1";
  EXPECT_EQ(Ids(ListUploadsPage(Uploads(), r)),
            (std::vector<std::string>{"u2", "u3", "u4", "u5", "u6"}));
}

TEST(UploadListingTest, ADelimiterGroupsKeysIntoCommonPrefixesThatCountAsEntries) {
  UploadListingRequest r;
  r.prefix = "data/";
  r.delimiter = "/";
  UploadListing l = ListUploadsPage(Uploads(), r);
  EXPECT_EQ(Ids(l), (std::vector<std::string>{"u1", "u2", "u3"}));
  EXPECT_EQ(l.common_prefixes, std::vector<std::string>{"data/d/"});

  r.max_uploads = 3;  // the prefix is the fourth entry
  l = ListUploadsPage(Uploads(), r);
  ASSERT_TRUE(l.truncated);
  EXPECT_EQ(l.next_key_marker, "data/b");
  r.key_marker = l.next_key_marker;
  r.upload_id_marker = l.next_upload_id_marker;
  l = ListUploadsPage(Uploads(), r);
  EXPECT_TRUE(Ids(l).empty());
  EXPECT_EQ(l.common_prefixes, std::vector<std::string>{"data/d/"});
  EXPECT_FALSE(l.truncated);

  r.key_marker = "data/d/";  // a page that ended on the prefix: it is not listed again
  r.upload_id_marker.clear();
  l = ListUploadsPage(Uploads(), r);
  EXPECT_TRUE(l.common_prefixes.empty());
  EXPECT_TRUE(Ids(l).empty());
}

}  // namespace
}  // namespace tf::api
