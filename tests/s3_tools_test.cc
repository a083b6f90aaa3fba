// The S3-compatible API against two more tools that teams move data with, each with an S3 client
// of its own: rclone (Go, aws-sdk-go) and s3cmd (Python, its own SigV4 signer). Each copies a tree
// up (a file past its multipart threshold among them), checks it, syncs again with nothing to do,
// syncs a change, copies and moves on the server, reads a range and takes everything back down
// byte for byte; where a tool asks for what the server does not do (s3cmd --acl-public, a URL
// signed with Signature Version 2) it is told so, and nothing is stored. Skipped when a tool is
// not installed (scripts/install-deps.sh installs both).
#include <map>

#include "s3_clients_fixture.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr const char* kRclone = "/usr/bin/rclone";
constexpr const char* kS3cmd = "/usr/bin/s3cmd";

// Files of a tree to send up and take back: an empty one, odd names, one past the 5 MiB
// multipart threshold the tests set.
std::map<std::string, std::string> TreeFiles() {
  return {
      {"empty", ""},
      {"notes/readme.txt", "plain text\n"},
      {"notes/with space & plus+.txt", "odd name"},
      {"notes/ünïcödé.txt", "unicode name"},
      {"data/block.bin", RandomBytes((1 << 20) + 3, 11)},
      {"data/deep/large.bin", RandomBytes((12 << 20) + 5, 12)},
  };
}

void WriteTree(const fs::path& root, const std::map<std::string, std::string>& files) {
  for (const auto& [name, content] : files) WriteFile(root / name, content);
}

// Every regular file below `root`, by its path relative to it, with its content.
std::map<std::string, std::string> ReadTree(const fs::path& root) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) out[fs::relative(e.path(), root).string()] = ReadFile(e.path());
  }
  return out;
}

class S3ToolsTest : public S3ClientsTest {
 protected:
  void SetUp() override {
    if (!fs::exists(kRclone) || !fs::exists(kS3cmd)) {
      GTEST_SKIP() << "needs " << kRclone << " and " << kS3cmd;
    }
    S3ClientsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const std::string port = url().substr(url().rfind(':') + 1);
    WriteFile(dir_.path() / "s3cfg",
              "[default]\naccess_key = " + key_id_ + "\nsecret_key = " + secret_ +
                  "\nhost_base = 127.0.0.1:" + port + "\nhost_bucket = 127.0.0.1:" + port +
                  "\nuse_https = False\nsignature_v2 = False\n"
                  "bucket_location = us-east-1\n");
  }

  // rclone with a remote "tf:" for the server, defined by the environment alone. (rclone 1.60
  // cannot use AWS_CA_BUNDLE over plain HTTP, so it is emptied.)
  ProgramRun Rclone(std::vector<std::string> args) {
    args.insert(args.begin(), kRclone);
    return RunProgram(
        args, {"RCLONE_CONFIG=/dev/null", "RCLONE_CONFIG_TF_TYPE=s3",
               "RCLONE_CONFIG_TF_PROVIDER=Other", "RCLONE_CONFIG_TF_ACCESS_KEY_ID=" + key_id_,
               "RCLONE_CONFIG_TF_SECRET_ACCESS_KEY=" + secret_,
               "RCLONE_CONFIG_TF_ENDPOINT=" + url(), "RCLONE_CONFIG_TF_REGION=us-east-1",
               "RCLONE_S3_UPLOAD_CUTOFF=5M", "RCLONE_S3_CHUNK_SIZE=5M",
               "AWS_CA_BUNDLE=", "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY="});
  }

  ProgramRun S3cmd(std::vector<std::string> args) {
    args.insert(args.begin(), {kS3cmd, "-c", (dir_.path() / "s3cfg").string(), "--no-progress"});
    return RunProgram(args, {"AWS_CA_BUNDLE="});
  }
};

TEST_F(S3ToolsTest, RcloneCopiesChecksSyncsAndTakesATreeBackByteForByte) {
  const fs::path up = dir_.path() / "up", down = dir_.path() / "down";
  std::map<std::string, std::string> files = TreeFiles();
  WriteTree(up, files);

  ProgramRun mkdir = Rclone({"mkdir", "tf:rclone-tree"});
  ASSERT_EQ(mkdir.exit_code, 0) << mkdir.output;
  ProgramRun copy = Rclone({"copy", up.string(), "tf:rclone-tree/up"});
  ASSERT_EQ(copy.exit_code, 0) << copy.output;
  // Sizes and MD5s: the ETags of whole objects, the kept MD5 of the one uploaded in parts.
  ProgramRun check = Rclone({"check", up.string(), "tf:rclone-tree/up"});
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("0 differences found"), std::string::npos) << check.output;
  EXPECT_NE(check.output.find(std::to_string(files.size()) + " matching files"), std::string::npos)
      << check.output;
  ProgramRun again = Rclone({"sync", "-v", up.string(), "tf:rclone-tree/up"});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(again.output.find("Copied"), std::string::npos) << "a second sync copied:\n"
                                                            << again.output;

  // A change on one side: a file gone, a file added, a file rewritten.
  fs::remove(up / "notes/readme.txt");
  files.erase("notes/readme.txt");
  files["added.txt"] = "new";
  files["data/block.bin"] = RandomBytes(70'000, 13);
  WriteTree(up, files);
  ProgramRun sync = Rclone({"sync", "-v", up.string(), "tf:rclone-tree/up"});
  ASSERT_EQ(sync.exit_code, 0) << sync.output;
  EXPECT_NE(sync.output.find("readme.txt: Deleted"), std::string::npos) << sync.output;
  EXPECT_NE(sync.output.find("added.txt: Copied"), std::string::npos) << sync.output;
  EXPECT_EQ(Rclone({"check", "--download", up.string(), "tf:rclone-tree/up"}).exit_code, 0);

  // On the server: a copy and a move of the multipart object, and a range of it.
  ASSERT_EQ(Rclone({"copyto", "tf:rclone-tree/up/data/deep/large.bin", "tf:rclone-tree/copy.bin"})
                .exit_code,
            0);
  ASSERT_EQ(Rclone({"moveto", "tf:rclone-tree/copy.bin", "tf:rclone-tree/moved.bin"}).exit_code, 0);
  ProgramRun moved = Rclone({"cat", "tf:rclone-tree/moved.bin"});
  EXPECT_TRUE(moved.output == files["data/deep/large.bin"]) << "the moved copy differs";
  ProgramRun range =
      Rclone({"cat", "--offset", "5242870", "--count", "20", "tf:rclone-tree/moved.bin"});
  EXPECT_EQ(range.output, files["data/deep/large.bin"].substr(5242870, 20));
  EXPECT_EQ(Rclone({"lsf", "tf:rclone-tree"}).output, "moved.bin\nup/\n");

  // A modification time set later (rclone copies the object onto itself with new metadata).
  ASSERT_EQ(Rclone({"touch", "-t", "2020-01-02T03:04:05", "tf:rclone-tree/moved.bin"}).exit_code,
            0);
  EXPECT_NE(Rclone({"lsl", "tf:rclone-tree/moved.bin"}).output.find("2020-01-02 03:04:05"),
            std::string::npos);

  ProgramRun back = Rclone({"copy", "tf:rclone-tree/up", down.string()});
  ASSERT_EQ(back.exit_code, 0) << back.output;
  EXPECT_TRUE(ReadTree(down) == files) << "the tree differs after the round trip";

  // Unfinished uploads are cleaned up, and the bucket is purged, its versioning asked first
  // (an answer it cannot read is an ERROR line).
  ProgramRun cleanup = Rclone({"cleanup", "tf:rclone-tree"});
  EXPECT_EQ(cleanup.exit_code, 0) << cleanup.output;
  ProgramRun purge = Rclone({"purge", "tf:rclone-tree"});
  ASSERT_EQ(purge.exit_code, 0) << purge.output;
  EXPECT_EQ(purge.output.find("ERROR"), std::string::npos) << purge.output;
  EXPECT_EQ(Rclone({"lsd", "tf:"}).output.find("rclone-tree"), std::string::npos);
  // Nothing left on disk. The parts of the object that `touch` copied onto itself were still
  // open for reading when the copy replaced them, so they were left to the sweeper (every
  // 10 s) or the next start, which a restart does now.
  server_.Stop();
  StartServer();
  EXPECT_EQ(BlobFiles(), 0);
}

TEST_F(S3ToolsTest, S3cmdPutsSyncsCopiesMovesAndGetsBackByteForByte) {
  const fs::path up = dir_.path() / "up", down = dir_.path() / "down";
  const std::map<std::string, std::string> files = TreeFiles();
  WriteTree(up, files);

  ASSERT_EQ(S3cmd({"mb", "s3://s3cmd-tree"}).exit_code, 0);
  ProgramRun put = S3cmd({"put", "--multipart-chunk-size-mb=5",
                          (up / "data/deep/large.bin").string(), "s3://s3cmd-tree/large.bin"});
  ASSERT_EQ(put.exit_code, 0) << put.output;
  ProgramRun info = S3cmd({"info", "s3://s3cmd-tree/large.bin"});
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(
      info.output.find("File size: " + std::to_string(files.at("data/deep/large.bin").size())),
      std::string::npos)
      << info.output;
  EXPECT_NE(info.output.find("FULL_CONTROL"), std::string::npos) << info.output;  // the ACL
  ProgramRun get = S3cmd({"get", "s3://s3cmd-tree/large.bin", (dir_.path() / "got").string()});
  ASSERT_EQ(get.exit_code, 0) << get.output;
  EXPECT_TRUE(ReadFile(dir_.path() / "got") == files.at("data/deep/large.bin"));

  ProgramRun sync =
      S3cmd({"sync", "--multipart-chunk-size-mb=5", up.string() + "/", "s3://s3cmd-tree/tree/"});
  ASSERT_EQ(sync.exit_code, 0) << sync.output;
  ProgramRun again = S3cmd({"sync", up.string() + "/", "s3://s3cmd-tree/tree/"});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(again.output.find("upload:"), std::string::npos) << "a second sync uploaded:\n"
                                                             << again.output;
  ProgramRun ls = S3cmd({"ls", "--recursive", "s3://s3cmd-tree/tree/"});
  for (const auto& [name, content] : files) {
    EXPECT_NE(ls.output.find("s3://s3cmd-tree/tree/" + name), std::string::npos) << ls.output;
  }
  ProgramRun sync_down = S3cmd({"sync", "s3://s3cmd-tree/tree/", down.string() + "/"});
  ASSERT_EQ(sync_down.exit_code, 0) << sync_down.output;
  EXPECT_TRUE(ReadTree(down) == files) << "the tree differs after the round trip";

  ASSERT_EQ(S3cmd({"cp", "s3://s3cmd-tree/large.bin", "s3://s3cmd-tree/copy.bin"}).exit_code, 0);
  ASSERT_EQ(S3cmd({"mv", "s3://s3cmd-tree/copy.bin", "s3://s3cmd-tree/moved.bin"}).exit_code, 0);
  ProgramRun moved = S3cmd({"get", "s3://s3cmd-tree/moved.bin", (dir_.path() / "moved").string()});
  ASSERT_EQ(moved.exit_code, 0) << moved.output;
  EXPECT_TRUE(ReadFile(dir_.path() / "moved") == files.at("data/deep/large.bin"));
  ProgramRun du = S3cmd({"du", "s3://s3cmd-tree"});
  EXPECT_NE(du.output.find(std::to_string(files.size() + 2) + " objects"), std::string::npos)
      << du.output;

  ProgramRun del = S3cmd({"del", "--recursive", "--force", "s3://s3cmd-tree"});
  ASSERT_EQ(del.exit_code, 0) << del.output;
  ProgramRun rb = S3cmd({"rb", "s3://s3cmd-tree"});
  EXPECT_EQ(rb.exit_code, 0) << rb.output;
  EXPECT_EQ(BlobFiles(), 0);
}

TEST_F(S3ToolsTest, WhatTheServerDoesNotDoIsRefusedAndNothingIsStored) {
  WriteFile(dir_.path() / "f.txt", "content");
  ASSERT_EQ(S3cmd({"mb", "s3://s3cmd-refusals"}).exit_code, 0);
  // A public object: there are no ACLs, so the upload is refused rather than left private.
  ProgramRun pub = S3cmd(
      {"put", "--acl-public", (dir_.path() / "f.txt").string(), "s3://s3cmd-refusals/public.txt"});
  EXPECT_NE(pub.exit_code, 0) << pub.output;
  EXPECT_NE(pub.output.find("x-amz-acl: public-read is not supported"), std::string::npos)
      << pub.output;
  ProgramRun encrypted = S3cmd({"put", "--server-side-encryption", (dir_.path() / "f.txt").string(),
                                "s3://s3cmd-refusals/encrypted.txt"});
  EXPECT_NE(encrypted.exit_code, 0) << encrypted.output;
  EXPECT_NE(encrypted.output.find("does not encrypt"), std::string::npos) << encrypted.output;
  EXPECT_EQ(S3cmd({"ls", "s3://s3cmd-refusals"}).output, "");
  EXPECT_EQ(BlobFiles(), 0);

  // A plain upload, and a link to it signed with Signature Version 2, which s3cmd makes.
  ASSERT_EQ(S3cmd({"put", (dir_.path() / "f.txt").string(), "s3://s3cmd-refusals/f.txt"}).exit_code,
            0);
  // Its ACL may be set to the one there is, and to nothing else.
  ProgramRun private_acl = S3cmd({"setacl", "--acl-private", "s3://s3cmd-refusals/f.txt"});
  EXPECT_EQ(private_acl.exit_code, 0) << private_acl.output;
  ProgramRun public_acl = S3cmd({"setacl", "--acl-public", "s3://s3cmd-refusals/f.txt"});
  EXPECT_NE(public_acl.exit_code, 0) << public_acl.output;
  EXPECT_NE(public_acl.output.find("AccessControlListNotSupported"), std::string::npos)
      << public_acl.output;
  ProgramRun link = S3cmd({"signurl", "s3://s3cmd-refusals/f.txt", "+600"});
  ASSERT_EQ(link.exit_code, 0) << link.output;
  std::string signed_url = link.output.substr(0, link.output.find('\n'));
  ProgramRun fetched = RunProgram({"/usr/bin/curl", "-s", "-w", "\n%{http_code}", signed_url});
  EXPECT_NE(fetched.output.find("<Code>InvalidRequest</Code>"), std::string::npos)
      << fetched.output;
  EXPECT_NE(fetched.output.find("AWS4-HMAC-SHA256"), std::string::npos) << fetched.output;
  EXPECT_NE(fetched.output.find("\n400"), std::string::npos) << fetched.output;
}

}  // namespace
}  // namespace tf::testing
