// Code bundles (worker/code_bundle.h): a directory packed and unpacked whole, what is left out,
// the size limit, and a hostile archive that tries to write outside its directory.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cstring>
#include <fstream>
#include <map>

#include "file_test_util.h"
#include "store_test_env.h"
#include "worker/code_bundle.h"

namespace tf::testing {
namespace {

namespace fs = std::filesystem;

// Every entry below `dir`: "f path content", "l path target" or "d path".
std::map<std::string, std::string> Tree(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    std::string rel = e.path().lexically_relative(dir).generic_string();
    if (e.is_symlink()) {
      out[rel] = "l " + fs::read_symlink(e.path()).string();
    } else if (e.is_directory()) {
      out[rel] = "d";
    } else {
      out[rel] = "f " + ReadFile(e.path());
    }
  }
  return out;
}

// One member of a ustar archive, written by hand so that its names can be anything.
std::string TarMember(const std::string& name, char type, const std::string& content,
                      const std::string& link = "") {
  char h[512] = {};
  std::memcpy(h, name.data(), std::min<size_t>(name.size(), 100));
  std::snprintf(h + 100, 8, "%07o", 0644);
  std::snprintf(h + 108, 8, "%07o", 0);
  std::snprintf(h + 116, 8, "%07o", 0);
  std::snprintf(h + 124, 12, "%011o", static_cast<unsigned>(content.size()));
  std::snprintf(h + 136, 12, "%011o", 0);
  h[156] = type;
  std::memcpy(h + 157, link.data(), std::min<size_t>(link.size(), 100));
  std::memcpy(h + 257, "ustar", 6);
  std::memcpy(h + 263, "00", 2);
  std::memset(h + 148, ' ', 8);
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  std::snprintf(h + 148, 8, "%06o", sum);
  std::string out(h, sizeof h);
  out += content;
  out.append((512 - content.size() % 512) % 512, '\0');
  return out;
}

void WriteGzip(const fs::path& path, const std::string& data) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, data.data(), static_cast<unsigned>(data.size())),
            static_cast<int>(data.size()));
  gzclose(f);
}

class BundleTest : public ::testing::Test {
 protected:
  fs::path code() { return dir_.path() / "code"; }
  TempDir dir_;
};

TEST_F(BundleTest, PacksAndUnpacksTheCodeLeavingOutWhatIsNotCode) {
  WriteFile(code() / "train.py", "print('train')\n");
  WriteFile(code() / "run.sh", "#!/bin/sh\necho run\n");
  fs::permissions(code() / "run.sh", fs::perms::owner_exec, fs::perm_options::add);
  WriteFile(code() / "pkg" / "model.py", "class Model: pass\n");
  WriteFile(code() / "odd names" / "-dash\nnewline.txt", "odd\n");
  fs::create_directories(code() / "empty");
  fs::create_symlink("pkg/model.py", code() / "model_link.py");
  WriteFile(code() / ".git" / "HEAD", "ref: main\n");
  WriteFile(code() / "pkg" / "__pycache__" / "model.pyc", "bytecode");
  WriteFile(code() / "checkpoints" / "step-1.pt", "weights");
  WriteFile(code() / "out" / "result.txt", "output");
  WriteFile(code() / "pkg" / "out" / "kept.txt", "only the top-level out is excluded");

  fs::path bundle = dir_.path() / "code.tar.gz";
  worker::PackOptions options;
  options.exclude = {"checkpoints", "./out/"};
  auto packed = worker::Pack(code(), bundle, options);
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  EXPECT_EQ(packed->files, 6);

  fs::path into = dir_.path() / "attempt" / "code";
  Status s = worker::Unpack(bundle, into);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::map<std::string, std::string> want = {
      {"train.py", "f print('train')\n"},
      {"run.sh", "f #!/bin/sh\necho run\n"},
      {"pkg", "d"},
      {"pkg/model.py", "f class Model: pass\n"},
      {"pkg/out", "d"},
      {"pkg/out/kept.txt", "f only the top-level out is excluded"},
      {"odd names", "d"},
      {"odd names/-dash\nnewline.txt", "f odd\n"},
      {"empty", "d"},
      {"model_link.py", "l pkg/model.py"},
  };
  EXPECT_EQ(Tree(into), want);
  EXPECT_NE(fs::status(into / "run.sh").permissions() & fs::perms::owner_exec, fs::perms::none);
  // No temporary file is left beside the bundle.
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir_.path())) files += e.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST_F(BundleTest, TooMuchCodeIsRefusedNamingTheLargestFiles) {
  WriteFile(code() / "small.py", "x");
  WriteFile(code() / "data" / "huge.bin", std::string(3000, 'h'));
  WriteFile(code() / "big.bin", std::string(2000, 'b'));
  fs::path bundle = dir_.path() / "code.tar.gz";
  worker::PackOptions options;
  options.max_bytes = 4096;
  auto packed = worker::Pack(code(), bundle, options);
  ASSERT_EQ(packed.status().code(), StatusCode::kResourceExhausted);
  const std::string& m = packed.status().message();
  EXPECT_NE(m.find("data/huge.bin"), std::string::npos) << m;
  EXPECT_LT(m.find("data/huge.bin"), m.find("big.bin")) << m;
  EXPECT_FALSE(fs::exists(bundle));
  // Leaving the data out fits.
  options.exclude = {"data"};
  EXPECT_TRUE(worker::Pack(code(), bundle, options).ok());
}

TEST_F(BundleTest, AHostileArchiveWritesNothingOutsideItsDirectory) {
  fs::path outside = dir_.path() / "outside";
  fs::create_directories(outside);
  std::string tar = TarMember("fine.txt", '0', "fine") +
                    TarMember("../escape.txt", '0', "escaped") +
                    TarMember("a/../../escape2.txt", '0', "escaped") +
                    TarMember((outside / "absolute.txt").string(), '0', "absolute") +
                    TarMember("link", '2', "", outside.string()) +
                    TarMember("link/through-link.txt", '0', "through") + std::string(1024, '\0');
  fs::path bundle = dir_.path() / "evil.tar.gz";
  WriteGzip(bundle, tar);

  fs::path into = dir_.path() / "attempt" / "code";
  Status s = worker::Unpack(bundle, into);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(".."), std::string::npos) << s.message();
  EXPECT_TRUE(fs::is_empty(outside));
  EXPECT_FALSE(fs::exists(dir_.path() / "attempt" / "escape.txt"));
  EXPECT_FALSE(fs::exists(dir_.path() / "escape.txt"));
  EXPECT_FALSE(fs::exists(dir_.path() / "escape2.txt"));
  EXPECT_EQ(ReadFile(into / "fine.txt"), "fine");
  // An absolute name lands inside, with its leading '/' removed.
  EXPECT_EQ(ReadFile(into / fs::path(outside.string().substr(1)) / "absolute.txt"), "absolute");
}

TEST_F(BundleTest, BadInputIsAClearError) {
  WriteFile(dir_.path() / "not-a-bundle.tar.gz", "just text");
  Status s = worker::Unpack(dir_.path() / "not-a-bundle.tar.gz", dir_.path() / "x");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("not-a-bundle.tar.gz"), std::string::npos) << s.message();
  EXPECT_EQ(worker::Unpack(dir_.path() / "missing.tar.gz", dir_.path() / "x").code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(worker::Pack(dir_.path() / "missing", dir_.path() / "b.tar.gz").status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tf::testing
