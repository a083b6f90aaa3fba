// Safetensors: the fixture checkpoints parse; every way a header can lie is refused with a
// message that names the file and the tensor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/formats/safetensors.h"
#include "engine_test_util.h"
#include "store_test_env.h"

namespace tf::testing {
namespace {

using engine::DType;
using engine::ParseSafetensors;
using engine::SafetensorsFile;
using ::testing::HasSubstr;

Status ParseError(const std::string& bytes) {
  auto r = ParseSafetensors(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "m.st");
  return r.ok() ? OkStatus() : r.status();
}

TEST(EngineSafetensors, OpensFixtureCheckpoint) {
  auto file = SafetensorsFile::Open(EngineData("llama-gqa/model.safetensors"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ((*file)->tensors().size(), 21u);
  const auto* q = (*file)->Find("model.layers.0.self_attn.k_proj.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->dtype, DType::kF32);
  EXPECT_EQ(q->shape, (std::vector<int64_t>{32, 64}));
  EXPECT_EQ(q->num_bytes, 32u * 64 * 4);
  EXPECT_EQ((*file)->Find("no.such.tensor"), nullptr);

  auto bf16 = SafetensorsFile::Open(EngineData("llama-gqa-bf16/model.safetensors"));
  ASSERT_TRUE(bf16.ok()) << bf16.status().ToString();
  EXPECT_EQ((*bf16)->Find("lm_head.weight")->dtype, DType::kBF16);
}

TEST(EngineSafetensors, ValidSmallFile) {
  std::string data(4 * 6 + 2 * 2, '\0');
  auto s = ParseError(SafetensorsBytes(
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]},)"
      R"("b":{"dtype":"BF16","shape":[2],"data_offsets":[24,28]},)"
      R"("e":{"dtype":"F16","shape":[0],"data_offsets":[28,28]}})",
      data));
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST(EngineSafetensors, TruncatedFileNamesFileAndTensor) {
  TempDir dir;
  std::string bytes = ReadFileBytes(EngineData("llama-gqa/model.safetensors"));
  std::string path = (dir.path() / "model.safetensors").string();
  WriteFileBytes(path, bytes.substr(0, bytes.size() - 100));
  auto file = SafetensorsFile::Open(path);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(file.status().message(), HasSubstr(path));
  EXPECT_THAT(file.status().message(), HasSubstr("tensor 'model.norm.weight'"));
  EXPECT_THAT(file.status().message(), HasSubstr("truncated"));
}

TEST(EngineSafetensors, ShortAndEmptyFiles) {
  EXPECT_THAT(ParseError("").message(), HasSubstr("m.st: file is 0 bytes"));
  EXPECT_THAT(ParseError("abc").message(), HasSubstr("too short"));
}

TEST(EngineSafetensors, HeaderLengthPastEndOfFile) {
  std::string bytes = SafetensorsBytes("{}", "");
  bytes[0] = 100;  // claims a 100-byte header in a 10-byte file
  EXPECT_THAT(ParseError(bytes).message(),
              HasSubstr("m.st: header length 100 runs past the end of the file (10 bytes)"));
  bytes = std::string(8, '\xff');
  EXPECT_THAT(ParseError(bytes).message(), HasSubstr("runs past the end of the file"));
}

TEST(EngineSafetensors, HeaderNotJsonObject) {
  EXPECT_THAT(ParseError(SafetensorsBytes("{\"a\":", "")).message(), HasSubstr("not valid JSON"));
  EXPECT_THAT(ParseError(SafetensorsBytes("[1,2]", "")).message(), HasSubstr("not a JSON object"));
}

TEST(EngineSafetensors, OffsetsOutOfRange) {
  auto s = ParseError(SafetensorsBytes(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
                                       std::string(12, '\0')));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("m.st: tensor 'w': data_offsets [0, 16] run past the end"));
  s = ParseError(SafetensorsBytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})",
                                  std::string(8, '\0')));
  EXPECT_THAT(s.message(), HasSubstr("end before they begin"));
  s = ParseError(SafetensorsBytes(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})",
                                  std::string(8, '\0')));
  EXPECT_THAT(s.message(), HasSubstr("tensor 'w': 'data_offsets' must be two non-negative"));
}

TEST(EngineSafetensors, SizeMustMatchShape) {
  auto s = ParseError(SafetensorsBytes(
      R"({"w":{"dtype":"BF16","shape":[3,2],"data_offsets":[0,8]}})", std::string(16, '\0')));
  EXPECT_THAT(s.message(),
              HasSubstr("tensor 'w': data_offsets [0, 8] hold 8 bytes but BF16 [3, 2] needs 12"));
}

TEST(EngineSafetensors, BadDtypeAndShape) {
  auto s = ParseError(SafetensorsBytes(R"({"w":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})",
                                       std::string(8, '\0')));
  EXPECT_THAT(s.message(), HasSubstr("tensor 'w': dtype 'I64' is not supported"));
  s = ParseError(SafetensorsBytes(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", "abcd"));
  EXPECT_THAT(s.message(), HasSubstr("missing string field 'dtype'"));
  s = ParseError(
      SafetensorsBytes(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "abcd"));
  EXPECT_THAT(s.message(), HasSubstr("not a non-negative integer"));
  s = ParseError(SafetensorsBytes(
      R"({"w":{"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,4]}})", "abcd"));
  EXPECT_THAT(s.message(), HasSubstr("too large"));
}

TEST(EngineSafetensors, OverlappingTensors) {
  auto s = ParseError(SafetensorsBytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                       std::string(12, '\0')));
  EXPECT_THAT(s.message(), HasSubstr("tensor 'b': data overlaps tensor 'a'"));
}

TEST(EngineSafetensors, MissingFileIsNotFound) {
  auto file = SafetensorsFile::Open("/nonexistent/model.safetensors");
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(file.status().message(), HasSubstr("/nonexistent/model.safetensors"));
}

}  // namespace
}  // namespace tf::testing
