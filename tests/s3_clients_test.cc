// The S3-compatible API against real clients: Debian's boto3 (tests/s3/*.py, run with
// /usr/bin/python3) and the AWS CLI (/usr/bin/aws), each talking to a real `tensorfleet server`
// with an access key made by `tensorfleet s3 key create`. The scripts cover every operation and
// the bad cases (wrong secret, unknown key, expired presigned URL, range past the end, multipart
// with a missing or wrong part, mixed DeleteObjects, path-like and over-long keys); here the AWS
// CLI copies, lists and syncs a directory tree up and back, byte for byte, and a revoked key and
// a restart are checked. Skipped when the clients are not installed.
#include "s3_clients_fixture.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using namespace std::chrono_literals;

TEST_F(S3ClientsTest, BotoBucketsObjectsRangesCopiesListingsAndPathLikeKeys) {
  RunScript("boto_objects.py");
}

TEST_F(S3ClientsTest, BotoMultipartUploadsAndManagedTransfers) { RunScript("boto_multipart.py"); }

TEST_F(S3ClientsTest, BotoStoredHeadersAndChecksumsComeBack) { RunScript("boto_headers.py"); }

TEST_F(S3ClientsTest, BotoObjectAttributesAndGetsByPartNumber) { RunScript("boto_parts.py"); }

TEST_F(S3ClientsTest, BotoVirtualHostedAddressing) { RunScript("boto_virtual_host.py"); }

TEST_F(S3ClientsTest, BotoSignaturesPresignedUrlsAndSignedChunks) { RunScript("boto_auth.py"); }

TEST_F(S3ClientsTest, BotoBucketConfigurationReadsAndRefusedWrites) {
  RunScript("boto_bucket_config.py");
}

TEST_F(S3ClientsTest, BotoObjectVersionsAreEachObjectsNullVersion) {
  RunScript("boto_versions.py");
}

TEST_F(S3ClientsTest, AwsCliCopiesListsAndSyncsATreeUpAndBackByteForByte) {
  const fs::path up = dir_.path() / "up", down = dir_.path() / "down";
  std::map<std::string, std::string> files = {
      {"empty", ""},
      {"one-byte", "x"},
      {"notes/readme.txt", "plain text\n"},
      {"notes/with space & plus+.txt", "odd name"},
      {"notes/ünïcödé.txt", "unicode name"},
      {"data/block.bin", RandomBytes((1 << 20) + 3, 1)},
      {"data/deep/er/large.bin", RandomBytes(9 << 20, 2)},  // past the CLI's multipart threshold
  };
  for (const auto& [name, content] : files) WriteFile(up / name, content);

  ASSERT_EQ(Aws({"s3", "mb", "s3://tree"}).exit_code, 0);
  ProgramRun cp =
      Aws({"s3", "cp", (up / "notes/readme.txt").string(), "s3://tree/single/readme.txt"});
  ASSERT_EQ(cp.exit_code, 0) << cp.output;
  ProgramRun ls = Aws({"s3", "ls", "s3://tree/single/"});
  ASSERT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_NE(ls.output.find("readme.txt"), std::string::npos) << ls.output;
  ProgramRun buckets = Aws({"s3", "ls"});
  EXPECT_NE(buckets.output.find("tree"), std::string::npos) << buckets.output;

  ProgramRun sync_up = Aws({"s3", "sync", up.string(), "s3://tree/backup"});
  ASSERT_EQ(sync_up.exit_code, 0) << sync_up.output;
  ProgramRun again = Aws({"s3", "sync", up.string(), "s3://tree/backup"});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(again.output.find("upload:"), std::string::npos) << "a second sync found differences:\n"
                                                             << again.output;
  ProgramRun listing = Aws({"s3", "ls", "--recursive", "s3://tree/backup/"});
  for (const auto& [name, content] : files) {
    EXPECT_NE(listing.output.find("backup/" + name), std::string::npos) << listing.output;
  }

  ProgramRun sync_down = Aws({"s3", "sync", "s3://tree/backup", down.string()});
  ASSERT_EQ(sync_down.exit_code, 0) << sync_down.output;
  for (const auto& [name, content] : files) {
    ASSERT_TRUE(fs::exists(down / name)) << name;
    EXPECT_TRUE(ReadFile(down / name) == content) << name << " differs after the round trip";
  }
  int count = 0;
  for (const auto& e : fs::recursive_directory_iterator(down)) count += e.is_regular_file();
  EXPECT_EQ(count, static_cast<int>(files.size()));

  // Copied within the server: past the CLI's threshold that is UploadPartCopy.
  ProgramRun copy =
      Aws({"s3", "cp", "s3://tree/backup/data/deep/er/large.bin", "s3://tree/copy.bin"});
  ASSERT_EQ(copy.exit_code, 0) << copy.output;
  ProgramRun fetch = Aws({"s3", "cp", "s3://tree/copy.bin", (dir_.path() / "copy.bin").string()});
  ASSERT_EQ(fetch.exit_code, 0) << fetch.output;
  EXPECT_TRUE(ReadFile(dir_.path() / "copy.bin") == files["data/deep/er/large.bin"]);
  // The CLI downloads an object that the AWS CLI uploaded in parts, checking its SHA-256.
  ProgramRun tf_cp =
      Cli({"cp", "tf://tree/backup/data/deep/er/large.bin", (dir_.path() / "tf-cp.bin").string()});
  ASSERT_EQ(tf_cp.exit_code, 0) << tf_cp.output;
  EXPECT_TRUE(ReadFile(dir_.path() / "tf-cp.bin") == files["data/deep/er/large.bin"]);

  ProgramRun range = Aws({"s3api", "get-object", "--bucket", "tree", "--key", "backup/one-byte",
                          "--range", "bytes=5-9", (dir_.path() / "range.out").string()});
  EXPECT_NE(range.exit_code, 0);
  EXPECT_NE(range.output.find("InvalidRange"), std::string::npos) << range.output;

  EXPECT_NE(Aws({"s3", "rb", "s3://tree"}).exit_code, 0);  // not empty
  ASSERT_EQ(Aws({"s3", "rm", "--recursive", "s3://tree"}).exit_code, 0);
  ProgramRun rb = Aws({"s3", "rb", "s3://tree"});
  EXPECT_EQ(rb.exit_code, 0) << rb.output;
  EXPECT_EQ(BlobFiles(), 0);  // nothing left on disk
}

TEST_F(S3ClientsTest, ARevokedKeyIsRefusedAndSecretsAreNeverListed) {
  ASSERT_EQ(Aws({"s3", "mb", "s3://keys"}).exit_code, 0);
  ProgramRun list = Cli({"--json", "s3", "key", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.output;
  EXPECT_NE(list.output.find(key_id_), std::string::npos);
  EXPECT_EQ(list.output.find(secret_), std::string::npos) << "a secret was listed";

  ProgramRun revoke = Cli({"s3", "key", "revoke", key_id_});
  ASSERT_EQ(revoke.exit_code, 0) << revoke.output;
  ProgramRun refused = Aws({"s3", "ls"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("InvalidAccessKeyId"), std::string::npos) << refused.output;
  ProgramRun table = Cli({"s3", "key", "list"});
  EXPECT_NE(table.output.find(key_id_), std::string::npos) << table.output;
  EXPECT_EQ(Cli({"s3", "key", "revoke", "TFAKNOSUCHKEY0000000"}).exit_code, 1);
}

TEST_F(S3ClientsTest, AnUnfinishedUploadSurvivesARestartAndCompletesAfterIt) {
  ASSERT_EQ(Aws({"s3", "mb", "s3://restart"}).exit_code, 0);
  ProgramRun created =
      Aws({"s3api", "create-multipart-upload", "--bucket", "restart", "--key", "k"});
  ASSERT_EQ(created.exit_code, 0) << created.output;
  const std::string upload_id = Json::parse(created.output)["UploadId"];
  const std::string content = RandomBytes(6 << 20, 3);
  WriteFile(dir_.path() / "part", content);
  ProgramRun part =
      Aws({"s3api", "upload-part", "--bucket", "restart", "--key", "k", "--part-number", "1",
           "--upload-id", upload_id, "--body", (dir_.path() / "part").string()});
  ASSERT_EQ(part.exit_code, 0) << part.output;
  const std::string etag = Json::parse(part.output)["ETag"];
  EXPECT_EQ(BlobFiles(), 1);

  server_.Stop();
  StartServer();
  EXPECT_EQ(BlobFiles(), 1);  // the part is kept with its upload
  ProgramRun parts =
      Aws({"s3api", "list-parts", "--bucket", "restart", "--key", "k", "--upload-id", upload_id});
  ASSERT_EQ(parts.exit_code, 0) << parts.output;
  Json listed = Json::parse(parts.output)["Parts"];
  ASSERT_EQ(listed.size(), 1u) << parts.output;
  EXPECT_EQ(listed[0]["PartNumber"], 1);
  EXPECT_EQ(listed[0]["ETag"], etag);
  EXPECT_EQ(listed[0]["Size"], 6 << 20);

  WriteFile(dir_.path() / "parts.json",
            Json{{"Parts", {{{"PartNumber", 1}, {"ETag", etag}}}}}.dump());
  ProgramRun completed =
      Aws({"s3api", "complete-multipart-upload", "--bucket", "restart", "--key", "k", "--upload-id",
           upload_id, "--multipart-upload", "file://" + (dir_.path() / "parts.json").string()});
  ASSERT_EQ(completed.exit_code, 0) << completed.output;
  ProgramRun got = Aws({"s3", "cp", "s3://restart/k", (dir_.path() / "got").string()});
  ASSERT_EQ(got.exit_code, 0) << got.output;
  EXPECT_TRUE(ReadFile(dir_.path() / "got") == content);
  EXPECT_EQ(BlobFiles(), 1);  // the object's blob; the part is gone
}

// A server whose copies on the server stop at 6 MiB, so that the limit (5 GiB by default, as
// S3's) is reached with small objects.
class S3CopyLimitTest : public S3ClientsTest {
 protected:
  static constexpr int kLimit = 6 << 20;
  S3CopyLimitTest() : S3ClientsTest({"--max-copy-size", "6Mi"}) {}
};

TEST_F(S3CopyLimitTest, CopiesOverTheLimitAreRefusedAndManagedCopiesGoInParts) {
  RunScript("boto_copy_limit.py", {"S3_MAX_COPY_BYTES=" + std::to_string(kLimit)});

  // The native copy keeps the same limit.
  ASSERT_EQ(Aws({"s3", "mb", "s3://native"}).exit_code, 0);
  WriteFile(dir_.path() / "big", RandomBytes(kLimit + 1, 5));
  ASSERT_EQ(Cli({"cp", (dir_.path() / "big").string(), "tf://native/big"}).exit_code, 0);
  ProgramRun refused = Cli({"cp", "tf://native/big", "tf://native/copy"});
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("takes objects of up to " + std::to_string(kLimit)),
            std::string::npos)
      << refused.output;
  EXPECT_NE(Cli({"cat", "tf://native/copy"}).exit_code, 0);  // nothing was made
}

TEST(ServerFlagsTest, AMaxCopySizeThatIsNotASizeIsRefused) {
  TempDir dir;
  for (const char* bad : {"0", "5242879", "lots", "5Gb"}) {
    ProgramRun r = RunProgram({TENSORFLEET_BINARY, "--data-dir", dir.path().string(), "server",
                               "--port", "0", "--max-copy-size", bad});
    EXPECT_EQ(r.exit_code, 1) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("--max-copy-size: expected a size of at least 5Mi"), std::string::npos)
        << r.output;
  }
}

}  // namespace
}  // namespace tf::testing
