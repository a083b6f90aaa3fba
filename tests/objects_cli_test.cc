// The object verbs of the tensorfleet command against a live server: buckets, cp both ways
// (files and directories), ls, cat, rm, and keys that must not become paths on the way down;
// links, FIFOs, private files and long names on the way down, links and unreadable parts on the
// way up, and the errors a typo or a full disk gets.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "api_test_util.h"
#include "file_test_util.h"
#include "http/url.h"
#include "program_run.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;

class ObjectsCliTest : public ApiFixture {
 protected:
  ProgramRun Run(const std::vector<std::string>& args) {
    return RunTensorfleetOn(app_->url(), admin_token_, args);
  }

  fs::path Local(const std::string& name) { return dir_.path() / "local" / name; }
};

TEST_F(ObjectsCliTest, BucketLifecycle) {
  auto created = Run({"bucket", "create", "models"});
  EXPECT_EQ(created.exit_code, 0) << created.output;
  EXPECT_NE(created.output.find("created bucket models"), std::string::npos);
  auto listed = Run({"bucket", "list"});
  EXPECT_NE(listed.output.find("models"), std::string::npos) << listed.output;
  EXPECT_EQ(Run({"bucket", "create", "models"}).exit_code, 1);
  auto bad = Run({"bucket", "create", "Bad_Name"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.output.find("bad bucket name"), std::string::npos) << bad.output;
  EXPECT_EQ(Run({"bucket", "delete", "models"}).exit_code, 0);
  EXPECT_EQ(Run({"ls"}).output.find("models"), std::string::npos);
}

TEST_F(ObjectsCliTest, CopyUpAndDownFilesAndDirectories) {
  ASSERT_EQ(Run({"bucket", "create", "data"}).exit_code, 0);
  std::string big(9 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4099) big[i] = static_cast<char>(i);
  WriteFile(Local("tree/a.txt"), "alpha");
  WriteFile(Local("tree/sub/b.bin"), big);
  WriteFile(Local("tree/sub/deeper/c"), "");

  auto up = Run({"cp", "-r", Local("tree").string(), "tf://data/run1"});
  ASSERT_EQ(up.exit_code, 0) << up.output;
  EXPECT_NE(up.output.find("-> tf://data/run1/sub/b.bin (9.0 MiB)"), std::string::npos)
      << up.output;
  EXPECT_NE(up.output.find("3 files, 9.0 MiB in"), std::string::npos) << up.output;

  auto ls = Run({"ls", "tf://data/run1/"});
  EXPECT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_NE(ls.output.find("run1/a.txt"), std::string::npos) << ls.output;
  EXPECT_NE(ls.output.find("DIR"), std::string::npos) << ls.output;  // run1/sub/
  EXPECT_EQ(ls.output.find("run1/sub/b.bin"), std::string::npos) << ls.output;
  EXPECT_NE(Run({"ls", "-r", "tf://data/run1/"}).output.find("run1/sub/b.bin"), std::string::npos);

  auto cat = Run({"cat", "tf://data/run1/a.txt"});
  EXPECT_EQ(cat.exit_code, 0);
  EXPECT_EQ(cat.output, "alpha");

  auto one = Run({"cp", "tf://data/run1/sub/b.bin", Local("copy.bin").string()});
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_TRUE(ReadFile(Local("copy.bin")) == big);
  auto into_dir = Run({"cp", "tf://data/run1/a.txt", Local("").string()});
  ASSERT_EQ(into_dir.exit_code, 0) << into_dir.output;
  EXPECT_EQ(ReadFile(Local("a.txt")), "alpha");

  auto down = Run({"cp", "-r", "tf://data/run1", Local("back").string()});
  ASSERT_EQ(down.exit_code, 0) << down.output;
  EXPECT_EQ(ReadFile(Local("back/a.txt")), "alpha");
  EXPECT_TRUE(ReadFile(Local("back/sub/b.bin")) == big);
  EXPECT_TRUE(fs::exists(Local("back/sub/deeper/c")));

  auto rm = Run({"rm", "-r", "tf://data/run1/sub/"});
  EXPECT_EQ(rm.exit_code, 0) << rm.output;
  EXPECT_NE(rm.output.find("delete: tf://data/run1/sub/b.bin"), std::string::npos);
  auto missing = Run({"cat", "tf://data/run1/sub/b.bin"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("does not exist"), std::string::npos) << missing.output;
}

TEST_F(ObjectsCliTest, KeysThatWouldEscapeAreNotWrittenOnTheWayDown) {
  ASSERT_EQ(Run({"bucket", "create", "data"}).exit_code, 0);
  WriteFile(Local("payload"), "gotcha");
  for (const char* key : {"p/../../escaped", "p//abs", "p/ok"}) {
    ASSERT_EQ(Run({"cp", Local("payload").string(), std::string("tf://data/") + key}).exit_code, 0)
        << key;
  }
  // A folder marker (an empty object whose key ends in '/') that would make a folder outside.
  ASSERT_EQ(Call("PUT", "/v1/buckets/data/objects/" + http::PercentEncode("p/../../escaped-dir/"),
                 "", admin_token_)
                .status,
            200);
  auto down = Run({"cp", "-r", "tf://data/p", Local("into").string()});
  EXPECT_EQ(down.exit_code, 1) << down.output;  // some keys were skipped
  EXPECT_NE(down.output.find("skipping tf://data/p/../../escaped"), std::string::npos)
      << down.output;
  EXPECT_NE(down.output.find("skipping tf://data/p/../../escaped-dir/"), std::string::npos)
      << down.output;
  EXPECT_FALSE(fs::exists(Local("escaped-dir")));
  EXPECT_FALSE(fs::exists(dir_.path() / "escaped-dir"));
  EXPECT_EQ(ReadFile(Local("into/ok")), "gotcha");
  EXPECT_FALSE(fs::exists(Local("escaped")));
  EXPECT_FALSE(fs::exists(dir_.path() / "escaped"));
  EXPECT_FALSE(fs::exists(Local("into/abs")));
}

TEST_F(ObjectsCliTest, RecursiveCopyAndRemoveTakeAFolderNotEveryKeyStartingAlike) {
  ASSERT_EQ(Run({"bucket", "create", "data"}).exit_code, 0);
  WriteFile(Local("f"), "x");
  for (const char* key : {"data/y", "data/sub/z", "data2/x", "database.csv"}) {
    ASSERT_EQ(Run({"cp", Local("f").string(), std::string("tf://data/") + key}).exit_code, 0);
  }
  auto down = Run({"cp", "-r", "tf://data/data", Local("down").string()});
  ASSERT_EQ(down.exit_code, 0) << down.output;
  EXPECT_TRUE(fs::exists(Local("down/y")));
  EXPECT_TRUE(fs::exists(Local("down/sub/z")));
  EXPECT_FALSE(fs::exists(Local("down/2/x")));

  auto rm = Run({"rm", "-r", "tf://data/data"});
  ASSERT_EQ(rm.exit_code, 0) << rm.output;
  EXPECT_NE(rm.output.find("delete: tf://data/data/y"), std::string::npos) << rm.output;
  EXPECT_EQ(rm.output.find("data2"), std::string::npos) << rm.output;
  EXPECT_EQ(rm.output.find("database"), std::string::npos) << rm.output;
  EXPECT_EQ(Run({"cat", "tf://data/data2/x"}).output, "x");
  EXPECT_EQ(Run({"cat", "tf://data/database.csv"}).output, "x");
  EXPECT_EQ(Run({"cat", "tf://data/data/y"}).exit_code, 1);

  // Nothing under the folder (a typo, or a folder already removed) is an error, and an object's
  // own key with -r says to leave out -r; the object stays.
  auto nothing = Run({"rm", "-r", "tf://data/data"});
  EXPECT_EQ(nothing.exit_code, 1) << nothing.output;
  EXPECT_NE(nothing.output.find("no objects under tf://data/data/"), std::string::npos)
      << nothing.output;
  auto typo = Run({"cp", "-r", "tf://data/dta", Local("typo").string()});
  EXPECT_EQ(typo.exit_code, 1) << typo.output;
  EXPECT_NE(typo.output.find("no objects under tf://data/dta/"), std::string::npos) << typo.output;
  EXPECT_FALSE(fs::exists(Local("typo")));
  auto object = Run({"rm", "-r", "tf://data/database.csv"});
  EXPECT_EQ(object.exit_code, 1);
  EXPECT_NE(object.output.find("tf://data/database.csv is an object, not a folder: leave out -r "
                               "to remove it"),
            std::string::npos)
      << object.output;
  EXPECT_EQ(Run({"cat", "tf://data/database.csv"}).output, "x");
}

TEST_F(ObjectsCliTest, LinksUploadUnderTheirOwnNamesAndUnreadablePartsAreSaid) {
  ASSERT_EQ(Run({"bucket", "create", "data"}).exit_code, 0);
  WriteFile(Local("tree/a.txt"), "alpha");
  WriteFile(Local("outside.txt"), "from outside");
  WriteFile(Local("tree/sub/b.txt"), "beta");
  fs::create_symlink("a.txt", Local("tree/link.txt"));
  fs::create_symlink("../../outside.txt", Local("tree/sub/ext.txt"));
  fs::create_symlink("sub", Local("tree/linkdir"));  // a link to a folder: said, not followed
  fs::create_symlink("loop", Local("tree/loop"));    // a link to itself
  auto up = Run({"cp", "-r", Local("tree").string(), "tf://data/t"});
  EXPECT_EQ(up.exit_code, 1) << up.output;
  EXPECT_NE(up.output.find("skipping " + Local("tree/linkdir").string() + ": a link to a folder"),
            std::string::npos)
      << up.output;
  EXPECT_NE(up.output.find("skipping " + Local("tree/loop").string() +
                           ": a link that leads "
                           "nowhere"),
            std::string::npos)
      << up.output;
  EXPECT_NE(up.output.find("some of " + Local("tree").string() + " was not copied"),
            std::string::npos)
      << up.output;
  // Every file that could be read went up, a link's content under the link's own name.
  EXPECT_EQ(Run({"cat", "tf://data/t/a.txt"}).output, "alpha");
  EXPECT_EQ(Run({"cat", "tf://data/t/link.txt"}).output, "alpha");
  EXPECT_EQ(Run({"cat", "tf://data/t/sub/ext.txt"}).output, "from outside");
  EXPECT_EQ(Run({"cat", "tf://data/t/sub/b.txt"}).output, "beta");
  auto listed = Run({"ls", "-r", "tf://data/t/"});
  EXPECT_EQ(listed.output.find(".."), std::string::npos) << listed.output;
  EXPECT_EQ(listed.output.find("outside.txt"), std::string::npos) << listed.output;
}

TEST_F(ObjectsCliTest, ADownloadKeepsWhatItLandsOn) {
  ASSERT_EQ(Run({"bucket", "create", "data"}).exit_code, 0);
  WriteFile(Local("f"), "new content");
  ASSERT_EQ(Run({"cp", Local("f").string(), "tf://data/f"}).exit_code, 0);
  // A private file stays private.
  WriteFile(Local("private"), "old");
  fs::permissions(Local("private"), fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_EQ(Run({"cp", "tf://data/f", Local("private").string()}).exit_code, 0);
  EXPECT_EQ(ReadFile(Local("private")), "new content");
  EXPECT_EQ(fs::status(Local("private")).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  // A link stays a link, and the file it names gets the content.
  WriteFile(Local("real"), "old");
  fs::create_symlink("real", Local("link"));
  ASSERT_EQ(Run({"cp", "tf://data/f", Local("link").string()}).exit_code, 0);
  EXPECT_TRUE(fs::is_symlink(Local("link")));
  EXPECT_EQ(ReadFile(Local("real")), "new content");
  // A FIFO is written into, not replaced: its reader gets the content. The reader's end is open
  // (without blocking) before the copy starts, and the content fits the pipe's buffer.
  ASSERT_EQ(::mkfifo(Local("fifo").c_str(), 0600), 0);
  const int fifo = ::open(Local("fifo").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(fifo, 0);
  auto into_fifo = Run({"cp", "tf://data/f", Local("fifo").string()});
  EXPECT_EQ(into_fifo.exit_code, 0) << into_fifo.output;
  char got[64];
  const ssize_t n = ::read(fifo, got, sizeof got);
  ::close(fifo);
  EXPECT_EQ(std::string(got, n > 0 ? static_cast<size_t>(n) : 0), "new content");
  EXPECT_TRUE(fs::is_fifo(Local("fifo")));
  // A link in a folder copied down is replaced, never written through: the key stays inside.
  WriteFile(Local("elsewhere"), "untouched");
  fs::create_directories(Local("down"));
  fs::create_symlink(Local("elsewhere"), Local("down/f"));
  ASSERT_EQ(Run({"cp", Local("f").string(), "tf://data/folder/f"}).exit_code, 0);
  ASSERT_EQ(Run({"cp", "-r", "tf://data/folder", Local("down").string()}).exit_code, 0);
  EXPECT_FALSE(fs::is_symlink(Local("down/f")));
  EXPECT_EQ(ReadFile(Local("down/f")), "new content");
  EXPECT_EQ(ReadFile(Local("elsewhere")), "untouched");
  // '-' is stdout; nothing named '-' is made.
  auto to_stdout =
      RunTensorfleet({"--server", app_->url(), "--token", admin_token_, "cp", "tf://data/f", "-"});
  EXPECT_EQ(to_stdout.exit_code, 0);
  EXPECT_EQ(to_stdout.output, "new content");
  // A name near the file system's limit still downloads (its temporary name is a short one).
  const std::string long_name(250, 'n');
  ASSERT_EQ(Run({"cp", Local("f").string(), "tf://data/" + long_name}).exit_code, 0);
  fs::create_directories(Local("long"));
  auto longest = Run({"cp", "tf://data/" + long_name, Local("long").string() + "/"});
  EXPECT_EQ(longest.exit_code, 0) << longest.output;
  EXPECT_EQ(ReadFile(Local("long/" + long_name)), "new content");
  // A missing folder is said with the object and the path, not a temporary name.
  auto no_parent = Run({"cp", "tf://data/f", Local("none/sub/f").string()});
  EXPECT_EQ(no_parent.exit_code, 1);
  EXPECT_NE(no_parent.output.find("tf://data/f: cannot save to " + Local("none/sub/f").string() +
                                  ": No such file or directory"),
            std::string::npos)
      << no_parent.output;
}

TEST_F(ObjectsCliTest, FolderMarkersBecomeFoldersOnTheWayDown) {
  ASSERT_EQ(Run({"bucket", "create", "data"}).exit_code, 0);
  WriteFile(Local("f"), "content");
  // Folder markers, as S3 consoles make them: empty objects whose keys end in '/'.
  for (const char* marker : {"m/", "m/sub/", "m/hollow/"}) {
    ASSERT_EQ(
        Call("PUT", std::string("/v1/buckets/data/objects/") + marker, "", admin_token_).status,
        200)
        << marker;
  }
  ASSERT_EQ(Run({"cp", Local("f").string(), "tf://data/m/sub/f"}).exit_code, 0);
  auto down = Run({"cp", "-r", "tf://data/m", Local("m").string()});
  ASSERT_EQ(down.exit_code, 0) << down.output;
  EXPECT_EQ(ReadFile(Local("m/sub/f")), "content");
  EXPECT_TRUE(fs::is_directory(Local("m/hollow")));
}

TEST_F(ObjectsCliTest, UsageErrorsSayWhatIsWrong) {
  ASSERT_EQ(Run({"bucket", "create", "data"}).exit_code, 0);
  WriteFile(Local("dir/f"), "x");
  auto no_r = Run({"cp", Local("dir").string(), "tf://data/"});
  EXPECT_EQ(no_r.exit_code, 1);
  EXPECT_NE(no_r.output.find("is a directory: use -r"), std::string::npos) << no_r.output;
  auto both_local = Run({"cp", "a", "b"});
  EXPECT_EQ(both_local.exit_code, 1);
  EXPECT_NE(both_local.output.find("neither is an object"), std::string::npos);
  auto missing = Run({"cp", Local("nope").string(), "tf://data/x"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("cannot open"), std::string::npos) << missing.output;
  auto nowhere = Run({"cp", "tf://data/x", ""});
  EXPECT_EQ(nowhere.exit_code, 1);
  EXPECT_NE(nowhere.output.find("give a local path to save tf://data/x to"), std::string::npos)
      << nowhere.output;
  auto bucket_cat = Run({"cat", "tf://data/"});
  EXPECT_EQ(bucket_cat.exit_code, 1);
  EXPECT_NE(bucket_cat.output.find("tf://data/ names no object"), std::string::npos)
      << bucket_cat.output;
  auto stdin_to_folder = Run({"cp", "-", "tf://data/dir/"});
  EXPECT_EQ(stdin_to_folder.exit_code, 1);
  EXPECT_NE(stdin_to_folder.output.find("give the key to store stdin as"), std::string::npos)
      << stdin_to_folder.output;
  auto stdin_recursive = Run({"cp", "-r", "-", "tf://data/x"});
  EXPECT_EQ(stdin_recursive.exit_code, 1);
  EXPECT_NE(stdin_recursive.output.find("cp -r cannot read several files from stdin"),
            std::string::npos)
      << stdin_recursive.output;
  ASSERT_EQ(Run({"cp", Local("dir/f").string(), "tf://data/f"}).exit_code, 0);
  auto full = RunProgram({"/bin/sh", "-c",
                          std::string(TENSORFLEET_BINARY) + " --server " + app_->url() +
                              " --token " + admin_token_ + " cat tf://data/f > /dev/full"});
  EXPECT_EQ(full.exit_code, 1) << full.output;  // the last flush failing is an error too
  EXPECT_NE(full.output.find("cannot write to stdout"), std::string::npos) << full.output;
  auto no_bucket = Run({"cp", Local("dir/f").string(), "tf://nope/x"});
  EXPECT_EQ(no_bucket.exit_code, 1);
  EXPECT_NE(no_bucket.output.find("bucket 'nope' does not exist"), std::string::npos)
      << no_bucket.output;
}

// `cp - tf://...` stores what stdin gives: a pipe (chunked, its size unknown until its end; one
// over the server's 1 MiB piece, written in small pieces), an empty pipe, a file redirected to
// stdin, and one the shell has read part of. Each comes back byte for byte.
TEST_F(ObjectsCliTest, StdinUploadsFromAPipeOrARedirectedFile) {
  ASSERT_EQ(Run({"bucket", "create", "data"}).exit_code, 0);
  std::string big;
  for (int i = 0; big.size() < (3u << 20); ++i) big += "line " + std::to_string(i) + "\n";
  WriteFile(Local("big.txt"), big);
  const std::string tf =
      std::string(TENSORFLEET_BINARY) + " --server " + app_->url() + " --token " + admin_token_;
  auto piped =
      RunProgram({"/bin/sh", "-c",
                  "cat " + Local("big.txt").string() + " | " + tf + " cp - tf://data/piped.txt"});
  ASSERT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_NE(piped.output.find("stdin -> tf://data/piped.txt"), std::string::npos) << piped.output;
  auto empty = RunProgram({"/bin/sh", "-c", "true | " + tf + " cp - tf://data/empty"});
  ASSERT_EQ(empty.exit_code, 0) << empty.output;
  auto redirected = RunProgram(
      {"/bin/sh", "-c", tf + " cp - tf://data/redirected.txt < " + Local("big.txt").string()});
  ASSERT_EQ(redirected.exit_code, 0) << redirected.output;
  // A file the shell has read the first 5 bytes of: the rest, from where stdin stands.
  auto rest = RunProgram({"/bin/sh", "-c",
                          "{ dd bs=5 count=1 of=/dev/null status=none; " + tf +
                              " cp - tf://data/rest.txt; } < " + Local("big.txt").string()});
  ASSERT_EQ(rest.exit_code, 0) << rest.output;

  for (const char* key : {"piped.txt", "redirected.txt", "rest.txt"}) {
    ASSERT_EQ(Run({"cp", std::string("tf://data/") + key, Local(key).string()}).exit_code, 0);
    EXPECT_EQ(ReadFile(Local(key)), std::string(key) == "rest.txt" ? big.substr(5) : big) << key;
  }
  // A FIFO named as a path is still refused: only stdin is read to its end.
  ASSERT_EQ(::mkfifo(Local("fifo").c_str(), 0600), 0);
  auto fifo = Run({"cp", Local("fifo").string(), "tf://data/fifo"});
  EXPECT_EQ(fifo.exit_code, 1);
  EXPECT_NE(fifo.output.find("is not a regular file"), std::string::npos) << fifo.output;
  auto back = Run({"cat", "tf://data/empty"});
  EXPECT_EQ(back.exit_code, 0) << back.output;
  EXPECT_EQ(back.output, "");
}

// cp between objects copies on the server: one object (to a key, and into a folder by its
// name), and a folder with -r; copying a folder into itself and a missing source are refused.
TEST_F(ObjectsCliTest, CopiesBetweenObjectsAreMadeOnTheServer) {
  ASSERT_EQ(Run({"bucket", "create", "data"}).exit_code, 0);
  ASSERT_EQ(Run({"bucket", "create", "backup"}).exit_code, 0);
  WriteFile(Local("run/a.txt"), "alpha");
  WriteFile(Local("run/sub/b.txt"), "beta");
  ASSERT_EQ(Run({"cp", "-r", Local("run").string(), "tf://data/run"}).exit_code, 0);

  auto one = Run({"cp", "tf://data/run/a.txt", "tf://backup/a-copy.txt"});
  ASSERT_EQ(one.exit_code, 0) << one.output;
  EXPECT_NE(one.output.find("copy: tf://data/run/a.txt -> tf://backup/a-copy.txt (5 B)"),
            std::string::npos)
      << one.output;
  ASSERT_EQ(Run({"cp", "tf://data/run/a.txt", "tf://backup/folder/"}).exit_code, 0);
  auto tree = Run({"cp", "-r", "tf://data/run", "tf://backup/run-1"});
  ASSERT_EQ(tree.exit_code, 0) << tree.output;
  EXPECT_NE(tree.output.find("2 files"), std::string::npos) << tree.output;
  for (const auto& [key, content] : {std::pair{"a-copy.txt", "alpha"},
                                     {"folder/a.txt", "alpha"},
                                     {"run-1/a.txt", "alpha"},
                                     {"run-1/sub/b.txt", "beta"}}) {
    auto cat = Run({"cat", std::string("tf://backup/") + key});
    EXPECT_EQ(cat.exit_code, 0) << key << ": " << cat.output;
    EXPECT_EQ(cat.output, content) << key;
  }
  auto into_itself = Run({"cp", "-r", "tf://data/run", "tf://data/run/nested"});
  EXPECT_EQ(into_itself.exit_code, 1);
  EXPECT_NE(into_itself.output.find("into itself"), std::string::npos) << into_itself.output;
  auto missing = Run({"cp", "tf://data/none", "tf://backup/x"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("tf://data/none -> tf://backup/x"), std::string::npos)
      << missing.output;
  auto folder_without_r = Run({"cp", "tf://data/run/", "tf://backup/x"});
  EXPECT_EQ(folder_without_r.exit_code, 1);
  EXPECT_NE(folder_without_r.output.find("names no object"), std::string::npos)
      << folder_without_r.output;
  auto typed = Run({"cp", "--content-type", "text/plain", "tf://data/run/a.txt", "tf://backup/t"});
  EXPECT_EQ(typed.exit_code, 1);
  EXPECT_NE(typed.output.find("keeps the source's"), std::string::npos) << typed.output;
  // A folder with its own marker (as S3 consoles make them) to the top of a bucket: the
  // marker has no key there and is left out; the rest is copied.
  ASSERT_EQ(Call("PUT", "/v1/buckets/data/objects/run/", "", admin_token_).status, 200);
  ASSERT_EQ(Run({"bucket", "create", "flat"}).exit_code, 0);
  auto to_top = Run({"cp", "-r", "tf://data/run", "tf://flat"});
  ASSERT_EQ(to_top.exit_code, 0) << to_top.output;
  EXPECT_EQ(Run({"cat", "tf://flat/sub/b.txt"}).output, "beta");
}

}  // namespace
}  // namespace tf::testing
