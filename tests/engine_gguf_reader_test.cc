// The GGUF reader: metadata values as gguf-py wrote them, and every way a file can be broken,
// each refused with the file and the problem named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/formats/gguf.h"
#include "engine/formats/gguf_model.h"
#include "engine/model.h"
#include "engine/rope.h"
#include "engine_gguf_test_util.h"
#include "engine_test_util.h"
#include "store_test_env.h"

namespace tf::testing {
namespace {

using ::testing::HasSubstr;

std::string Error(const std::string& bytes) {
  auto parsed =
      engine::ParseGguf(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "m.gguf");
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  return parsed.status().message();
}

std::string F32Bytes(size_t n) { return std::string(n * 4, '\0'); }

TEST(EngineGgufReader, ReadsWhatGgufPyWrote) {
  auto file = engine::GgufFile::Open(EngineData("gguf/llama-gqa.f16.gguf"));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const auto& f = **file;
  EXPECT_EQ(f.contents().version, 3u);
  EXPECT_EQ(f.Find("general.architecture")->AsString(), "llama");
  EXPECT_EQ(f.Find("llama.block_count")->AsInt(), 2);
  EXPECT_EQ(f.Find("llama.block_count")->type(), engine::GgufValueType::kUint32);
  EXPECT_FLOAT_EQ(*f.Find("llama.attention.layer_norm_rms_epsilon")->AsNumber(), 1e-5f);
  const engine::GgufValue* tokens = f.Find("tokenizer.ggml.tokens");
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(tokens->TypeString(), "array[string]");
  EXPECT_EQ(tokens->size(), 1024u);
  EXPECT_EQ(tokens->StringAt(4), "<|eot_id|>");
  EXPECT_EQ(f.Find("tokenizer.ggml.token_type")->IntAt(4), 3);  // CONTROL
  EXPECT_EQ(f.Find("tokenizer.ggml.add_bos_token")->AsBool(), true);
  EXPECT_EQ(f.Find("no.such.key"), nullptr);
  const engine::GgufTensor* embed = f.FindTensor("token_embd.weight");
  ASSERT_NE(embed, nullptr);
  EXPECT_EQ(embed->type, engine::GgmlType::kF16);
  EXPECT_EQ(embed->ne, (std::vector<int64_t>{64, 1024}));
  EXPECT_EQ(embed->Shape(), (std::vector<int64_t>{1024, 64}));
  EXPECT_EQ(embed->num_bytes, 1024u * 64 * 2);
  EXPECT_EQ(f.FindTensor("output_norm.weight")->type, engine::GgmlType::kF32);
  for (const auto& t : f.tensors()) EXPECT_EQ(t.offset % 32, 0u) << t.name;
}

TEST(EngineGgufReader, ScalarTypes) {
  std::string i8 = "\xfe";  // -2
  std::string u64(8, '\xff');
  std::string f64(8, '\0');
  double half = 0.5;
  std::memcpy(f64.data(), &half, 8);
  GgufBuilder b;
  b.Raw("i8", 1, i8).Raw("u64", 10, u64).Raw("f64", 12, f64).Raw("b", 7, std::string(1, '\1'));
  std::string bytes = b.Bytes();
  auto c = engine::ParseGguf(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "m");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->metadata.size(), 4u);
  EXPECT_EQ(c->metadata[0].second.AsInt(), -2);
  EXPECT_EQ(c->metadata[1].second.AsInt(), std::nullopt);  // above INT64_MAX
  EXPECT_EQ(c->metadata[2].second.AsNumber(), 0.5);
  EXPECT_EQ(c->metadata[2].second.AsInt(), std::nullopt);
  EXPECT_EQ(c->metadata[3].second.AsBool(), true);
  EXPECT_EQ(c->metadata[3].second.AsString(), std::nullopt);
}

TEST(EngineGgufReader, HeaderErrors) {
  EXPECT_THAT(Error("GGUF"), HasSubstr("m.gguf: file is 4 bytes, too short for the 24-byte GGUF "
                                       "header; is it truncated?"));
  std::string good = GgufBuilder().U32("a", 1).Bytes();
  EXPECT_EQ(Error(good), "");
  std::string magic = good;
  magic[0] = 'X';
  EXPECT_THAT(Error(magic), HasSubstr("m.gguf: does not start with the magic \"GGUF\""));
  EXPECT_THAT(Error(GgufBuilder(1).Bytes()),
              HasSubstr("m.gguf: GGUF version 1 is not supported (versions 2 and 3 are)"));
  EXPECT_THAT(Error(GgufBuilder(4).Bytes()), HasSubstr("GGUF version 4 is not supported"));
  EXPECT_THAT(Error(GgufBuilder(3u << 24).Bytes()), HasSubstr("is a big-endian GGUF file"));
}

TEST(EngineGgufReader, AbsurdCountsAndLengths) {
  EXPECT_THAT(Error(GgufBuilder().KvCount(uint64_t{1} << 60).Bytes()),
              HasSubstr("m.gguf: metadata count 1152921504606846976 cannot fit in the file's "));
  EXPECT_THAT(Error(GgufBuilder().TensorCount(uint64_t{1} << 60).Bytes()),
              HasSubstr("m.gguf: tensor count 1152921504606846976 cannot fit"));
  std::string huge_string(8, '\xff');  // a string length of 2^64 - 1
  EXPECT_THAT(Error(GgufBuilder().Raw("s", 8, huge_string).Bytes()),
              HasSubstr("m.gguf: metadata key 's': its value (a string of 18446744073709551615 "
                        "bytes) runs past the end of the file"));
  std::string huge_array = std::string("\x04\0\0\0", 4) + std::string(8, '\x7f');
  EXPECT_THAT(Error(GgufBuilder().Raw("a", 9, huge_array).Bytes()),
              HasSubstr("metadata key 'a': its value (an array of 9187201950435737471 uint32) "
                        "runs past the end of the file"));
  EXPECT_THAT(Error(GgufBuilder().Raw("t", 13, "").Bytes()),
              HasSubstr("metadata key 't': value type 13 is unknown"));
  std::string nested = std::string("\x09\0\0\0", 4) + std::string(8, '\0');
  EXPECT_THAT(Error(GgufBuilder().Raw("n", 9, nested).Bytes()),
              HasSubstr("metadata key 'n': arrays of arrays are not supported"));
  EXPECT_THAT(Error(GgufBuilder().U32("k", 1).U32("k", 2).Bytes()),
              HasSubstr("metadata key 'k': appears twice"));
  EXPECT_THAT(Error(GgufBuilder().U32("general.alignment", 24).Bytes()),
              HasSubstr("metadata key 'general.alignment': must be a uint32 power of two"));
  // Cut inside the metadata.
  std::string cut = GgufBuilder().String("general.name", "a long enough name").Bytes();
  EXPECT_THAT(Error(cut.substr(0, 70)),  // 4 bytes short of the name's end
              HasSubstr("metadata key 'general.name': its value (a string of 18 bytes) runs past "
                        "the end of the file (70 bytes)"));
}

TEST(EngineGgufReader, TensorErrors) {
  EXPECT_EQ(Error(GgufBuilder().Tensor("w", {8, 2}, 0, F32Bytes(16)).Bytes()), "");
  EXPECT_THAT(Error(GgufBuilder().Tensor("w", {8, 2}, 0, F32Bytes(16), 4096).Bytes()),
              HasSubstr("m.gguf: tensor 'w': bytes [4096, 4160) of the data section run past "
                        "its end (64 bytes); is the file truncated?"));
  EXPECT_THAT(Error(GgufBuilder().Tensor("w", {8, 2}, 0, F32Bytes(8)).Bytes()),
              HasSubstr("tensor 'w': bytes [0, 64) of the data section run past its end"));
  EXPECT_EQ(Error(GgufBuilder().Tensor("w", {256}, 12, std::string(144, '\0')).Bytes()), "");
  EXPECT_THAT(Error(GgufBuilder().Tensor("w", {32}, 3, std::string(20, '\0')).Bytes()),
              HasSubstr("m.gguf: tensor 'w': type Q4_1 (3) is not supported (F32, F16, BF16, "
                        "Q8_0, Q4_0 and Q2_K to Q6_K are)"));
  EXPECT_THAT(Error(GgufBuilder().Tensor("w", {8}, 99, "").Bytes()),
              HasSubstr("tensor 'w': type type 99 (99) is not supported"));
  EXPECT_THAT(Error(GgufBuilder().Tensor("w", {48}, 8, std::string(51, '\0')).Bytes()),
              HasSubstr("tensor 'w': rows of 48 elements are not a whole number of Q8_0 blocks "
                        "of 32"));
  EXPECT_THAT(Error(GgufBuilder().Tensor("w", {1, 1, 1, 1, 1}, 0, F32Bytes(1)).Bytes()),
              HasSubstr("tensor 'w': has 5 dimensions (1 to 4 are allowed)"));
  EXPECT_THAT(Error(GgufBuilder().Tensor("w", {uint64_t{1} << 50}, 0, "").Bytes()),
              HasSubstr("tensor 'w': dimension 1125899906842624 is too large"));
  EXPECT_THAT(Error(GgufBuilder().Tensor("w", {4}, 0, F32Bytes(4), 8).Bytes()),
              HasSubstr("tensor 'w': offset 8 is not a multiple of the alignment 32"));
  EXPECT_THAT(Error(GgufBuilder()
                        .Tensor("a", {16}, 0, F32Bytes(16))
                        .Tensor("b", {8}, 0, F32Bytes(8), 32)
                        .Bytes()),
              HasSubstr("tensor 'b': data overlaps tensor 'a'"));
  EXPECT_THAT(
      Error(
          GgufBuilder().Tensor("a", {4}, 0, F32Bytes(4)).Tensor("a", {4}, 0, F32Bytes(4)).Bytes()),
      HasSubstr("tensor 'a': appears twice"));
  EXPECT_THAT(Error(GgufBuilder().Tensor(std::string(65, 'n'), {4}, 0, F32Bytes(4)).Bytes()),
              HasSubstr("tensor info 0's name is 65 bytes, more than the 64 allowed"));
}

// Fixture files damaged on disk: the model loader names the file and the problem.
class BrokenGgufTest : public ::testing::Test {
 protected:
  std::string Copy(const std::string& bytes) {
    std::string path = (dir_.path() / "model.gguf").string();
    WriteFileBytes(path, bytes);
    return path;
  }
  std::string LoadError(const std::string& bytes) {
    auto model = engine::Model::Load(Copy(bytes), {});
    return model.ok() ? std::string() : model.status().message();
  }
  // The fixture with the u32 value of metadata key `key` replaced.
  static std::string WithU32(std::string bytes, const std::string& key, uint32_t value) {
    size_t at = bytes.find(key);
    EXPECT_NE(at, std::string::npos);
    std::memcpy(bytes.data() + at + key.size() + 4, &value, 4);  // after the type
    return bytes;
  }
  std::string fixture_ = ReadFileBytes(EngineData("gguf/llama-gqa.f32.gguf"));
  TempDir dir_;
};

TEST_F(BrokenGgufTest, Truncated) {
  std::string path = (dir_.path() / "model.gguf").string();
  EXPECT_THAT(LoadError(fixture_.substr(0, fixture_.size() - 1000)),
              HasSubstr(path + ": tensor '"));
  EXPECT_THAT(LoadError(fixture_.substr(0, fixture_.size() - 1000)),
              HasSubstr("is the file truncated?"));
  EXPECT_THAT(LoadError(fixture_.substr(0, 5000)), HasSubstr("runs past the end of the file"));
}

TEST_F(BrokenGgufTest, ShapeThatViolatesMetadata) {
  EXPECT_THAT(LoadError(WithU32(fixture_, "llama.attention.head_count_kv", 4)),
              HasSubstr("model.gguf: tensor 'blk.0.attn_k.weight' has shape [32, 64] but the "
                        "metadata implies [64, 64]"));
  EXPECT_THAT(LoadError(WithU32(fixture_, "llama.block_count", 3)),
              HasSubstr("model.gguf: tensor 'blk.2.attn_norm.weight' is missing; the metadata "
                        "implies it with shape [64]"));
  EXPECT_THAT(LoadError(WithU32(fixture_, "llama.attention.head_count_kv", 3)),
              HasSubstr("llama.attention.head_count_kv (3) does not divide "
                        "llama.attention.head_count (4)"));
  EXPECT_THAT(LoadError(WithU32(fixture_, "llama.vocab_size", 1000)),
              HasSubstr("llama.vocab_size (1000) differs from the rows of token_embd.weight "
                        "(1024)"));
}

TEST_F(BrokenGgufTest, UnsupportedArchitecture) {
  std::string bytes = fixture_;
  size_t at = bytes.find("llama", bytes.find("general.architecture"));
  bytes.replace(at, 5, "gemma");
  EXPECT_THAT(LoadError(bytes), HasSubstr("model.gguf: general.architecture 'gemma' is not "
                                          "supported (llama, which Mistral files use too, and "
                                          "qwen2 are)"));
}

// A metadata-only llama file (with the embedding and Llama 3's rope_freqs tensors): what
// the config takes from it beyond the fixtures' keys.
TEST(EngineGgufReader, ConfigFromMetadata) {
  std::string factors(size_t{8} * 4, '\0');
  for (size_t i = 0; i < 8; ++i) {
    float f = 1.0f + static_cast<float>(i);
    std::memcpy(factors.data() + 4 * i, &f, 4);
  }
  auto build = [&](const std::string& scaling) {
    GgufBuilder b;
    b.String("general.architecture", "llama")
        .U32("llama.context_length", 4096)
        .U32("llama.embedding_length", 64)
        .U32("llama.block_count", 1)
        .U32("llama.feed_forward_length", 128)
        .U32("llama.attention.head_count", 4)
        .F32("llama.attention.layer_norm_rms_epsilon", 1e-5f)
        .F32("llama.rope.freq_base", 500000.0f)
        .U32("tokenizer.ggml.bos_token_id", 1)
        .U32("tokenizer.ggml.eos_token_id", 2)
        .U32("tokenizer.ggml.eot_token_id", 3);
    if (!scaling.empty()) b.String("llama.rope.scaling.type", scaling);
    if (scaling == "linear") b.F32("llama.rope.scaling.factor", 4.0f);
    b.Tensor("token_embd.weight", {64, 10}, 0, F32Bytes(640));
    b.Tensor("rope_freqs.weight", {8}, 0, factors);
    return engine::GgufFile::FromBytes(b.Bytes(), "m.gguf");
  };
  auto file = build("");
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  auto c = engine::GgufModelConfig(**file);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->vocab_size, 10);
  EXPECT_EQ(c->num_kv_heads, 4);  // head_count_kv defaults to head_count
  EXPECT_EQ(c->head_dim, 16);
  EXPECT_TRUE(c->tie_word_embeddings);  // no output.weight
  EXPECT_FALSE(c->qkv_bias);
  EXPECT_EQ(c->eos_token_ids, (std::vector<int32_t>{2, 3}));
  EXPECT_EQ(c->rope.freq_factors, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  engine::RopeConfig plain;
  plain.theta = 500000.0;
  EXPECT_FLOAT_EQ(engine::RopeInvFreq(c->rope, 16)[3], engine::RopeInvFreq(plain, 16)[3] / 4);
  auto linear = build("linear");
  ASSERT_TRUE(linear.ok());
  c = engine::GgufModelConfig(**linear);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->rope.type, engine::RopeConfig::Type::kLinear);
  EXPECT_DOUBLE_EQ(c->rope.factor, 4.0);
  auto yarn = build("yarn");
  ASSERT_TRUE(yarn.ok());
  EXPECT_THAT(engine::GgufModelConfig(**yarn).status().message(),
              HasSubstr("m.gguf: metadata key 'llama.rope.scaling.type' 'yarn' is not supported "
                        "(none and linear are)"));
}

TEST(EngineGgufReader, PathDetection) {
  EXPECT_TRUE(engine::IsGgufPath(EngineData("gguf/llama-gqa.f32.gguf")));
  EXPECT_FALSE(engine::IsGgufPath(EngineData("llama-gqa")));
  EXPECT_FALSE(engine::IsGgufPath(EngineData("llama-gqa/model.safetensors")));
  auto missing = engine::Model::Load(EngineData("gguf/absent.gguf"), {});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("absent.gguf: No such file"));
}

}  // namespace
}  // namespace tf::testing
