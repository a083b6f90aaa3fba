// Single-stream decode speed of the engine on a synthetic Llama model with random weights held
// in memory (no checkpoint needed), per weight type.
//
//   engine_decode_bench [--types f32,f16,bf16,q8_0,q4_0] [--threads 0] [--tokens 64]
//                       [--prompt 32] [--hidden 768] [--intermediate 2048] [--layers 12]
//                       [--heads 12] [--kv-heads 4] [--vocab 32000] [--kernels best]
//
// The default shape is about 100M parameters (tied embeddings). For each type the prompt runs in
// one pass, then --tokens single-token steps are timed. Printed per type: decode tokens/s, the
// bytes of weights one token reads (every matrix except the embedding, which is read one row
// per token), and their product, the weight bandwidth the decode reached.
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "bench_util.h"
#include "engine/model.h"
#include "engine/random_weights.h"

namespace tf::bench {
namespace {

double MatrixBytes(const engine::WeightMatrix& m) {
  return static_cast<double>(m.rows) * static_cast<double>(m.row_bytes());
}

// Bytes of weights one decode step reads.
double BytesPerToken(const engine::ModelWeights& w) {
  double bytes = MatrixBytes(w.lm_head);
  for (const auto& l : w.layers) {
    for (const auto* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      bytes += MatrixBytes(*m);
    }
  }
  return bytes;
}

int Run(const Flags& flags) {
  engine::ModelConfig c;
  c.model_type = "llama";
  c.hidden_size = static_cast<int64_t>(flags.Number("hidden", 768));
  c.intermediate_size = static_cast<int64_t>(flags.Number("intermediate", 2048));
  c.num_layers = static_cast<int64_t>(flags.Number("layers", 12));
  c.num_heads = static_cast<int64_t>(flags.Number("heads", 12));
  c.num_kv_heads = static_cast<int64_t>(flags.Number("kv-heads", 4));
  c.head_dim = c.hidden_size / c.num_heads;
  c.vocab_size = static_cast<int64_t>(flags.Number("vocab", 32000));
  c.max_position_embeddings = 4096;
  c.rms_norm_eps = 1e-5f;
  c.tie_word_embeddings = true;
  const int threads = static_cast<int>(flags.Number("threads", 0));
  const int64_t tokens = static_cast<int64_t>(flags.Number("tokens", 64));
  const int64_t prompt_len = static_cast<int64_t>(flags.Number("prompt", 32));
  const bool reference = flags.Get("kernels", "best") == "reference";

  std::printf("%-6s %8s %12s %12s %10s  (%s kernels)\n", "type", "params", "MB/token",
              "decode tok/s", "GB/s",
              reference ? "reference" : engine::kernels::BestKernels().name);
  std::stringstream types(flags.Get("types", "f32,f16,bf16,q8_0,q4_0"));
  for (std::string name; std::getline(types, name, ',');) {
    engine::DType source = name == "bf16"  ? engine::DType::kBF16
                           : name == "f32" ? engine::DType::kF32
                                           : engine::DType::kF16;
    engine::ModelOptions options;
    options.num_threads = threads;
    if (reference) options.kernels = &engine::kernels::ReferenceKernels();
    if (auto q = engine::ParseQuantize(name)) options.quantize = *q;
    auto model = engine::Model::FromWeights(c, engine::RandomWeights(c, source, 1), options);
    if (!model.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), model.status().ToString().c_str());
      return 1;
    }
    double params = 0;
    for (const auto& l : (*model)->weights().layers) {
      for (const auto* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
        params += static_cast<double>(m->rows) * m->cols;
      }
    }
    params += static_cast<double>(c.vocab_size) * c.hidden_size;
    auto cache = (*model)->NewCache(prompt_len + tokens);
    std::vector<int32_t> prompt(prompt_len);
    for (int64_t i = 0; i < prompt_len; ++i)
      prompt[i] = static_cast<int32_t>((i * 7919) % c.vocab_size);
    std::vector<float> logits;
    if (!(*model)->Forward(prompt, cache.get(), false, &logits).ok()) return 1;
    auto start = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < tokens; ++i) {
      int32_t next = static_cast<int32_t>((*model)->kernels().argmax(logits.data(), c.vocab_size));
      if (!(*model)->Forward({&next, 1}, cache.get(), false, &logits).ok()) return 1;
    }
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double bytes = BytesPerToken((*model)->weights());
    double tps = tokens / seconds;
    std::printf("%-6s %7.0fM %12.1f %12.2f %10.2f\n", name.c_str(), params / 1e6, bytes / 1e6, tps,
                tps * bytes / 1e9);
  }
  return 0;
}

}  // namespace
}  // namespace tf::bench

int main(int argc, char** argv) { return tf::bench::Run(tf::bench::Flags(argc, argv)); }
