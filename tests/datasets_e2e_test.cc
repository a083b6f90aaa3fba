// Datasets against a live server: `tensorfleet dataset create|list|describe|delete` from JSONL,
// text and files, bad input refused with file and line and leaving nothing behind, and the
// reader streaming every sample once over HTTP, re-fetching a shard damaged in its cache and
// reporting one damaged on the server.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "api_test_util.h"
#include "client/dataset_client.h"
#include "datasets/dataset_reader.h"
#include "datasets/shard_fetcher.h"
#include "file_test_util.h"
#include "program_run.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;
using datasets::DatasetIndex;
using datasets::DatasetReader;
using datasets::PartitionParams;

std::string Line(int i) {
  return "{\"i\": " + std::to_string(i) + ", \"text\": \"" +
         std::string(20 + i % 50, 'a' + i % 26) + "\"}";
}

class DatasetsE2eTest : public ApiFixture {
 protected:
  ProgramRun Run(const std::vector<std::string>& args) {
    return RunTensorfleetOn(app_->url(), admin_token_, args);
  }

  fs::path Local(const std::string& name) { return dir_.path() / "local" / name; }

  // a.jsonl holds lines 0-299, b.jsonl lines 300-499 (with a blank line and CRLF endings).
  void WriteJsonl() {
    std::string a, b;
    for (int i = 0; i < 300; ++i) a += Line(i) + "\n";
    for (int i = 300; i < 500; ++i) b += Line(i) + (i == 400 ? "\r\n\n" : "\r\n");
    WriteFile(Local("jsonl/a.jsonl"), a);
    WriteFile(Local("jsonl/b.jsonl"), b);
  }

  // The dataset "tiny" of a.jsonl's 300 lines, in one shard; its index.
  DatasetIndex CreateTinyOfOneShard() {
    WriteJsonl();
    auto created = Run({"dataset", "create", "tiny", "--from", Local("jsonl/a.jsonl").string(),
                        "--format", "jsonl"});
    EXPECT_EQ(created.exit_code, 0) << created.output;
    return Index("tiny");
  }

  DatasetIndex Index(const std::string& name) {
    auto index = client::FetchDatasetIndex(app_->url(), admin_token_, name);
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return index.ok() ? *index : DatasetIndex{};
  }

  // Everything one worker reads; the status of the first error, if any.
  Status ReadAll(const DatasetIndex& index, PartitionParams p, const fs::path& cache,
                 std::map<int64_t, std::string>* out, int* count = nullptr) {
    auto fetcher = client::MakeHttpShardFetcher(app_->url(), admin_token_);
    if (!fetcher.ok()) return fetcher.status();
    datasets::ReaderOptions o;
    o.cache_dir = cache;
    auto reader = DatasetReader::Open(index, p, 0, o, std::move(fetcher).value());
    if (!reader.ok()) return reader.status();
    for (;;) {
      auto next = (*reader)->Next();
      if (!next.ok()) return next.status();
      if (!next->has_value()) return OkStatus();
      if (count) ++*count;
      EXPECT_TRUE(out->emplace((*next)->index, std::string((*next)->data)).second)
          << "sample " << (*next)->index << " read twice";
    }
  }
};

TEST_F(DatasetsE2eTest, CreateFromJsonlListDescribeReadEverySampleOnceAndDelete) {
  WriteJsonl();
  auto created = Run({"dataset", "create", "tiny", "--from", Local("jsonl").string(), "--format",
                      "jsonl", "--shard-size", "4KiB"});
  ASSERT_EQ(created.exit_code, 0) << created.output;
  EXPECT_NE(created.output.find("dataset tiny: 500 samples in "), std::string::npos)
      << created.output;

  auto listed = Run({"dataset", "list"});
  EXPECT_EQ(listed.exit_code, 0);
  EXPECT_NE(listed.output.find("tiny"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("500"), std::string::npos) << listed.output;
  auto described = Run({"dataset", "describe", "tiny", "--shards"});
  EXPECT_EQ(described.exit_code, 0) << described.output;
  EXPECT_NE(described.output.find("jsonl"), std::string::npos) << described.output;
  EXPECT_NE(described.output.find("tf://datasets/tiny/"), std::string::npos) << described.output;

  DatasetIndex index = Index("tiny");
  EXPECT_EQ(index.samples, 500);
  EXPECT_EQ(index.format, "jsonl");
  ASSERT_GT(index.shards.size(), 5u);
  for (const auto& s : index.shards) EXPECT_LE(s.bytes, 4096);

  // Two ranks of two workers each: every line once, with its bytes (CR dropped).
  std::map<int64_t, std::string> got;
  for (int rank = 0; rank < 2; ++rank) {
    for (int worker = 0; worker < 2; ++worker) {
      PartitionParams p{
          .seed = 1, .num_nodes = 2, .node_rank = rank, .num_workers = 2, .worker_id = worker};
      ASSERT_TRUE(ReadAll(index, p, dir_.path() / "cache", &got).ok());
    }
  }
  ASSERT_EQ(got.size(), 500u);
  for (const auto& [i, data] : got) EXPECT_EQ(data, Line(static_cast<int>(i))) << i;

  auto deleted = Run({"dataset", "delete", "tiny"});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.output;
  EXPECT_NE(deleted.output.find("(" + std::to_string(index.shards.size()) + " shard objects)"),
            std::string::npos)
      << deleted.output;
  EXPECT_EQ(Call("GET", "/v1/datasets/tiny").status, 404);
  auto ls = Run({"ls", "-r", "tf://datasets/tiny/"});
  EXPECT_EQ(ls.output.find("shard-"), std::string::npos) << ls.output;
}

TEST_F(DatasetsE2eTest, FilesAndTextFormats) {
  WriteFile(Local("files/x/1.bin"), std::string("\0\1\2", 3));
  WriteFile(Local("files/x/2.bin"), "two");
  WriteFile(Local("files/y"), "");
  WriteFile(Local("files/.DS_Store"), "hidden");  // left out, as is all of .git
  WriteFile(Local("files/.git/config"), "hidden");
  WriteFile(Local("lines.txt"), "first line\n\n  \nsecond line\nthird");
  auto files = Run({"dataset", "create", "blobs", "--from", Local("files").string(),
                    Local("lines.txt").string(), "--shard-size", "4096B"});
  ASSERT_EQ(files.exit_code, 0) << files.output;
  EXPECT_NE(files.output.find("left out 2 hidden files or folders"), std::string::npos)
      << files.output;
  DatasetIndex blobs = Index("blobs");
  EXPECT_EQ(blobs.samples, 4);  // three files below files/, and lines.txt whole
  std::map<int64_t, std::string> got;
  ASSERT_TRUE(ReadAll(blobs, {}, dir_.path() / "cache", &got).ok());
  EXPECT_EQ(got.at(0), std::string("\0\1\2", 3));  // files/x/1.bin, in path order
  EXPECT_EQ(got.at(1), "two");
  EXPECT_EQ(got.at(2), "");
  EXPECT_EQ(got.at(3), "first line\n\n  \nsecond line\nthird");

  auto text = Run(
      {"dataset", "create", "lines", "--from", Local("lines.txt").string(), "--format", "text"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  DatasetIndex lines = Index("lines");
  got.clear();
  ASSERT_TRUE(ReadAll(lines, {}, dir_.path() / "cache", &got).ok());
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got.at(0), "first line");
  EXPECT_EQ(got.at(1), "second line");
  EXPECT_EQ(got.at(2), "third");
}

TEST_F(DatasetsE2eTest, BadInputIsRefusedClearlyAndLeavesNothingBehind) {
  fs::create_directories(Local("empty"));
  auto empty = Run({"dataset", "create", "d", "--from", Local("empty").string()});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.output.find("no files"), std::string::npos) << empty.output;

  auto missing = Run({"dataset", "create", "d", "--from", Local("nowhere").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("nowhere does not exist"), std::string::npos) << missing.output;

  WriteFile(Local("blank.txt"), "\n \n");
  auto no_samples =
      Run({"dataset", "create", "d", "--from", Local("blank.txt").string(), "--format", "text"});
  EXPECT_EQ(no_samples.exit_code, 1);
  EXPECT_NE(no_samples.output.find("no samples"), std::string::npos) << no_samples.output;

  // A bad line far into the second file, after several shards were uploaded.
  WriteJsonl();
  std::string b;
  for (int i = 0; i < 200; ++i) b += (i == 150 ? std::string("{\"i\": oops}") : Line(i)) + "\n";
  WriteFile(Local("jsonl/b.jsonl"), b);
  auto bad = Run({"dataset", "create", "d", "--from", Local("jsonl").string(), "--format", "jsonl",
                  "--shard-size", "4KiB"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("b.jsonl:151: not JSON: "), std::string::npos) << bad.output;
  EXPECT_EQ(Call("GET", "/v1/datasets/d").status, 404);
  auto ls = Run({"ls", "-r", "tf://datasets/"});
  EXPECT_EQ(ls.output.find("shard-"), std::string::npos) << ls.output;

  // A line that is not JSON in a long one: the message quotes only the end of what was read.
  WriteFile(Local("long/l.jsonl"), "{\"ok\": 1}\n\"" + std::string(1 << 20, 'a') + "\n");
  auto long_line =
      Run({"dataset", "create", "d", "--from", Local("long").string(), "--format", "jsonl"});
  EXPECT_EQ(long_line.exit_code, 1);
  EXPECT_NE(long_line.output.find("l.jsonl:2: not JSON: at byte "), std::string::npos)
      << long_line.output.substr(0, 500);
  EXPECT_LT(long_line.output.size(), 1000u) << long_line.output.substr(0, 500);

  // More shards than one index can list is found before anything is uploaded: the lines of a
  // sparse file of 400 MiB would fill 102,400 shards of 4 KiB (as lines no longer than a shard).
  {
    std::ofstream(Local("sparse.txt"));
    fs::resize_file(Local("sparse.txt"), uint64_t{400} << 20);
  }
  auto many = Run({"dataset", "create", "d", "--from", Local("sparse.txt").string(), "--format",
                   "text", "--shard-size", "4KiB"});
  EXPECT_EQ(many.exit_code, 1);
  EXPECT_NE(many.output.find("would need about 102400 shards of 4.0 KiB, more than one index "
                             "can list"),
            std::string::npos)
      << many.output;
  EXPECT_NE(many.output.find("give a larger --shard-size, such as 8.0 KiB"), std::string::npos)
      << many.output;
  // A file larger than a shard is one sample in a shard of its own, so as files it is one shard.
  {
    std::ofstream(Local("sparse.bin"));
    fs::resize_file(Local("sparse.bin"), uint64_t{20} << 20);
  }
  auto one = Run({"dataset", "create", "sparse", "--from", Local("sparse.bin").string(),
                  "--shard-size", "4KiB"});
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("1 samples in 1 shards"), std::string::npos) << one.output;

  auto flag =
      Run({"dataset", "create", "d", "--from", Local("jsonl").string(), "--shard-size", "lots"});
  EXPECT_EQ(flag.exit_code, 1);
  EXPECT_NE(flag.output.find("--shard-size"), std::string::npos) << flag.output;
  auto format =
      Run({"dataset", "create", "d", "--from", Local("jsonl").string(), "--format", "csv"});
  EXPECT_NE(format.output.find("--format must be files, jsonl or text"), std::string::npos);
  auto name = Run({"dataset", "create", "Bad Name", "--from", Local("jsonl").string()});
  EXPECT_NE(name.output.find("dataset name 'Bad Name'"), std::string::npos) << name.output;

  ASSERT_EQ(Run({"dataset", "create", "d", "--from", Local("jsonl/a.jsonl").string()}).exit_code,
            0);
  auto again = Run({"dataset", "create", "d", "--from", Local("jsonl/a.jsonl").string()});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.output.find("already exists"), std::string::npos) << again.output;
  // A byte order mark at the start of a file is not part of its first sample.
  WriteFile(Local("bom.jsonl"), "\xEF\xBB\xBF{\"first\": 1}\n{\"second\": 2}\n");
  ASSERT_EQ(
      Run({"dataset", "create", "bom", "--from", Local("bom.jsonl").string(), "--format", "jsonl"})
          .exit_code,
      0);
  auto printed = Run({"dataset", "read", "bom", "--print"});
  EXPECT_NE(printed.output.find("0\t{\"first\": 1}\n"), std::string::npos) << printed.output;
  EXPECT_EQ(printed.output.find("\xEF\xBB\xBF"), std::string::npos) << printed.output;

  auto negative = Run({"dataset", "read", "d", "--rank", "-3", "--world-size", "4"});
  EXPECT_NE(negative.exit_code, 0) << negative.output;
  EXPECT_NE(negative.output.find("--rank: must be a whole number from 0 up, got '-3'"),
            std::string::npos)
      << negative.output;
  auto env_rank = RunTensorfleet(
      {"--server", app_->url(), "--token", admin_token_, "dataset", "read", "d"}, {"RANK=abc"});
  EXPECT_EQ(env_rank.exit_code, 1);
  EXPECT_NE(env_rank.output.find("$RANK is 'abc', not a whole number from 0 up"), std::string::npos)
      << env_rank.output;
  auto rank = Run({"dataset", "read", "d", "--rank", "3", "--world-size", "3"});
  EXPECT_EQ(rank.exit_code, 1);
  EXPECT_NE(rank.output.find("--rank (or $RANK) must be from 0 to 2 with a world size of 3, got 3"),
            std::string::npos)
      << rank.output;

  if (::geteuid() != 0) {  // root reads files whatever their mode
    WriteFile(Local("secret.txt"), "x");
    ::chmod(Local("secret.txt").c_str(), 0);
    auto unreadable = Run({"dataset", "create", "s", "--from", Local("secret.txt").string()});
    EXPECT_NE(unreadable.output.find("cannot read"), std::string::npos) << unreadable.output;
  }
  // The index route checks what it is told against the objects.
  auto lie = Call("POST", "/v1/datasets",
                  Json{{"name", "liar"},
                       {"bucket", "datasets"},
                       {"shard_size", 4096},
                       {"format", "text"},
                       {"shards", Json::array({Json{{"key", "liar/nope"},
                                                    {"samples", 1},
                                                    {"bytes", 10},
                                                    {"sha256", std::string(64, '0')}}})}});
  EXPECT_EQ(lie.status, 404) << lie.body.dump();
}

// Deleting a dataset deletes the objects its index names, so an index may name only objects
// under the dataset's own name, each once: never another dataset's shards or a user's files.
TEST_F(DatasetsE2eTest, AnIndexNamesOnlyObjectsUnderItsOwnNameEachOnce) {
  DatasetIndex tiny = CreateTinyOfOneShard();
  ASSERT_EQ(tiny.shards.size(), 1u);
  const datasets::ShardInfo& shard = tiny.shards[0];
  auto index_of = [&](const std::string& name, const std::vector<std::string>& keys) {
    Json shards = Json::array();
    for (const auto& key : keys) {
      shards.push_back(Json{{"key", key},
                            {"samples", shard.samples},
                            {"bytes", shard.bytes},
                            {"sha256", shard.sha256}});
    }
    return Json{{"name", name},
                {"bucket", "datasets"},
                {"shard_size", 4096},
                {"format", "jsonl"},
                {"shards", shards}};
  };
  auto thief = Call("POST", "/v1/datasets", index_of("thief", {shard.key}));
  EXPECT_EQ(thief.status, 400) << thief.body.dump();
  EXPECT_NE(thief.body.dump().find("shards[0].key: '" + shard.key +
                                   "' is not under 'thief/': a dataset's shards are kept under its "
                                   "name"),
            std::string::npos)
      << thief.body.dump();
  // A name that only starts like the owner's is not under it either.
  auto prefix = Call("POST", "/v1/datasets", index_of("ti", {shard.key}));
  EXPECT_EQ(prefix.status, 400) << prefix.body.dump();

  // The same object twice would be deleted once and counted as two shards.
  ASSERT_EQ(Run({"cp", Local("jsonl/a.jsonl").string(), "tf://datasets/twice/a.jsonl"}).exit_code,
            0);
  auto twice = Call("POST", "/v1/datasets", index_of("twice", {"twice/a.jsonl", "twice/a.jsonl"}));
  EXPECT_EQ(twice.status, 400) << twice.body.dump();
  EXPECT_NE(twice.body.dump().find("shards[1].key: 'twice/a.jsonl' is also shards[0]"),
            std::string::npos)
      << twice.body.dump();
  EXPECT_EQ(Call("GET", "/v1/datasets/thief").status, 404);
  EXPECT_EQ(Call("GET", "/v1/datasets/twice").status, 404);

  // Nothing was taken from tiny: all of it reads.
  std::map<int64_t, std::string> got;
  ASSERT_TRUE(ReadAll(tiny, {}, dir_.path() / "cache", &got).ok());
  EXPECT_EQ(got.size(), 300u);
}

// Flips one byte of `file` at the first place `needle` occurs; false if it does not.
bool FlipByteAt(const fs::path& file, const std::string& needle) {
  std::string bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  size_t at = bytes.find(needle);
  if (at == std::string::npos) return false;
  bytes[at + needle.size() / 2] ^= 0x20;
  std::fstream out(file, std::ios::binary | std::ios::in | std::ios::out);
  out.seekp(static_cast<std::streamoff>(at + needle.size() / 2));
  out.put(bytes[at + needle.size() / 2]);
  return true;
}

TEST_F(DatasetsE2eTest, DamagedShardsAreRefetchedOrReportedNeverRead) {
  DatasetIndex index = CreateTinyOfOneShard();
  ASSERT_EQ(index.shards.size(), 1u);
  const fs::path cache = dir_.path() / "cache";
  std::map<int64_t, std::string> got;
  ASSERT_TRUE(ReadAll(index, {}, cache, &got).ok());

  // Damage in the cache: the reader downloads the shard again and reads it right.
  ASSERT_TRUE(FlipByteAt(cache / (index.shards[0].sha256 + ".tfs"), Line(123)));
  got.clear();
  Status again = ReadAll(index, {}, cache, &got);
  ASSERT_TRUE(again.ok()) << again.ToString();
  ASSERT_EQ(got.size(), 300u);
  EXPECT_EQ(got.at(123), Line(123));

  // Damage in the stored object: it cannot be read right twice, so it is reported and not one
  // sample of it comes out.
  int flipped = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir_.path() / "objects")) {
    if (e.is_regular_file() && FlipByteAt(e.path(), Line(123))) ++flipped;
  }
  ASSERT_EQ(flipped, 1);
  fs::remove_all(cache);
  got.clear();
  int returned = 0;
  Status damaged = ReadAll(index, {}, cache, &got, &returned);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.message().find("tf://datasets/" + index.shards[0].key), std::string::npos)
      << damaged.ToString();
  EXPECT_NE(damaged.message().find("downloaded twice"), std::string::npos) << damaged.ToString();
  EXPECT_EQ(returned, 0);
  EXPECT_FALSE(fs::exists(cache / (index.shards[0].sha256 + ".tfs")));
}

// `dataset create` through tests/http/lost_answer_proxy.py, which loses the answer to the index
// request (POST /v1/datasets): "after" the server has made the dataset, or "before" the request
// reaches it.
ProgramRun CreateLosingTheIndexAnswer(const std::string& server, const std::string& token,
                                      const std::string& mode, const fs::path& from) {
  return RunProgram(
      {"/usr/bin/python3", std::string(TENSORFLEET_SOURCE_DIR) + "/tests/http/lost_answer_proxy.py",
       server, "POST", "/v1/datasets", mode, "--", TENSORFLEET_BINARY, "--server", "{proxy}",
       "--token", token, "dataset", "create", "lost", "--from", from.string(), "--format", "jsonl"},
      {"TENSORFLEET_URL=", "TENSORFLEET_TOKEN="});
}

// A server finishes a request whose client went away: an index answer lost on the way is no
// reason to remove shards the dataset may already point at.
TEST_F(DatasetsE2eTest, AnIndexAnswerLostAfterTheServerMadeTheDatasetKeepsItWhole) {
  WriteJsonl();
  auto run = CreateLosingTheIndexAnswer(app_->url(), admin_token_, "after", Local("jsonl/a.jsonl"));
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("dropped 1 POST"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("answer to the index was lost"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("but it made the dataset"), std::string::npos) << run.output;
  DatasetIndex index = Index("lost");
  ASSERT_EQ(index.shards.size(), 1u);
  std::map<int64_t, std::string> got;
  Status read = ReadAll(index, {}, dir_.path() / "cache", &got);
  ASSERT_TRUE(read.ok()) << read.ToString();
  ASSERT_EQ(got.size(), 300u);
  EXPECT_EQ(got.at(299), Line(299));
}

TEST_F(DatasetsE2eTest, AnIndexAnswerLostWithNoDatasetMadeKeepsTheShardsAndSaysHowToRemoveThem) {
  WriteJsonl();
  auto run =
      CreateLosingTheIndexAnswer(app_->url(), admin_token_, "before", Local("jsonl/a.jsonl"));
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("dropped 1 POST"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("the server may still be writing the index of dataset 'lost'"),
            std::string::npos)
      << run.output;
  const size_t rm = run.output.find("tensorfleet rm -r tf://datasets/lost/");
  ASSERT_NE(rm, std::string::npos) << run.output;
  EXPECT_EQ(Run({"dataset", "describe", "lost"}).exit_code, 1);
  // The shard is where the message says, and the command it gives removes it.
  const std::string url = run.output.substr(rm + std::string("tensorfleet rm -r ").size(),
                                            std::string("tf://datasets/lost/").size() + 17);
  auto listed = Run({"ls", "-r", url});
  EXPECT_NE(listed.output.find("shard-000000.tfs"), std::string::npos) << url << "\n"
                                                                       << listed.output;
  EXPECT_EQ(Run({"rm", "-r", url}).exit_code, 0);
  EXPECT_EQ(Run({"ls", "-r", "tf://datasets/"}).output.find("shard-"), std::string::npos);
}

}  // namespace
}  // namespace tf::testing
