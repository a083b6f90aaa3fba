// `tensorfleet engine ...`: run the built-in inference engine locally (generate), behind an
// OpenAI-compatible API (serve; src/serve/), or measure its speed (bench; engine_bench.cc).
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/engine_bench.h"
#include "cli/engine_flags.h"
#include "engine/generate.h"
#include "engine/model.h"
#include "engine/tokenizers/tokenizer.h"
#include "jobs/quantities.h"
#include "jobs/spec_rules.h"
#include "serve/server.h"

namespace tf::cli {
namespace {

struct GenerateFlags {
  std::string model_dir;
  std::string tokenizer_dir;
  std::string prompt;
  int64_t max_tokens = 32;
  int threads = 0;
  std::string quantize = "none";
  bool ignore_eos = false;
};

double PerSecond(double count, double seconds) { return seconds > 0 ? count / seconds : 0; }

Status Generate(const client::Connection& conn, const GenerateFlags& f) {
  engine::ModelOptions options;
  options.num_threads = f.threads;
  options.quantize = engine::ParseQuantize(f.quantize).value_or(engine::Quantize::kNone);
  TF_ASSIGN_OR_RETURN(std::unique_ptr<engine::Model> model,
                      engine::Model::Load(f.model_dir, options));
  TF_ASSIGN_OR_RETURN(
      std::unique_ptr<engine::Tokenizer> tokenizer,
      engine::LoadTokenizer(f.tokenizer_dir.empty() ? f.model_dir : f.tokenizer_dir));
  auto prompt = tokenizer->Encode(f.prompt, /*add_special_tokens=*/true);
  if (!prompt.ok()) return prompt.status().WithContext("--prompt");

  engine::GenerateOptions g;
  g.max_new_tokens = f.max_tokens;
  g.stop_at_eos = !f.ignore_eos;
  engine::TokenTextStream stream(*tokenizer, /*skip_special_tokens=*/true);
  std::string text;
  auto on_token = [&](int32_t id) {
    std::string piece = stream.Add(id);
    text += piece;
    if (!conn.json) {
      std::cout << piece << std::flush;
    }
    return true;
  };
  std::vector<int32_t> ids;
  engine::GenerateStats stats;
  Status s = engine::GenerateGreedy(*model, *prompt, g, on_token, &ids, &stats);
  std::string tail = stream.Finish();
  text += tail;
  TF_RETURN_IF_ERROR(s);
  double prefill_tps = PerSecond(stats.prompt_tokens, stats.prefill_seconds);
  // The first new token comes from the prompt's pass; each later one from its own.
  double decode_tps = PerSecond(stats.generated_tokens - 1, stats.decode_seconds);
  if (conn.json) {
    PrintJson({{"text", text},
               {"prompt_tokens", stats.prompt_tokens},
               {"token_ids", ids},
               {"prefill_tokens_per_second", prefill_tps},
               {"decode_tokens_per_second", decode_tps},
               {"kernels", model->kernels().name},
               {"threads", model->num_threads()},
               {"weights", engine::MatrixTypesSummary(model->weights())}});
    return OkStatus();
  }
  std::cout << tail << std::endl;  // flushed: the summary below goes to stderr
  std::fprintf(stderr,
               "%lld prompt tokens, %lld generated; prefill %.1f tokens/s, decode %.1f tokens/s "
               "(%s kernels, %d threads; weight matrices: %s)\n",
               static_cast<long long>(stats.prompt_tokens),
               static_cast<long long>(stats.generated_tokens), prefill_tps, decode_tps,
               model->kernels().name, model->num_threads(),
               engine::MatrixTypesSummary(model->weights()).c_str());
  return OkStatus();
}

}  // namespace

void AddQuantizeOption(CLI::App* app, std::string* value) {
  app->add_option("--quantize", *value,
                  "Quantise the F32/F16/BF16 weight matrices at load: none, q8_0 (8-bit blocks, "
                  "about half of F16's memory and bandwidth) or q4_0")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "q8_0", "q4_0"}))
      ->type_name("TYPE");
}

void AddEngineCommands(CLI::App& app, client::Connection& conn, int& exit_code) {
  auto* engine = app.add_subcommand("engine", "Run the built-in inference engine locally");
  engine->require_subcommand(1);

  auto flags = std::make_shared<GenerateFlags>();
  auto* gen = engine->add_subcommand(
      "generate",
      "Greedy text generation from a Llama/Mistral/Qwen2 checkpoint (Hugging Face or GGUF)");
  gen->add_option("--model", flags->model_dir,
                  "Checkpoint directory (config.json, *.safetensors, tokenizer.json or .model), "
                  "or a GGUF file (F32, F16, BF16, Q8_0, Q4_0, Q2_K..Q6_K)")
      ->required()
      ->type_name("DIR|FILE");
  gen->add_option("--tokenizer", flags->tokenizer_dir,
                  "Take the tokenizer from this checkpoint directory or GGUF file instead")
      ->type_name("DIR|FILE");
  gen->add_option("--prompt", flags->prompt, "Text to continue")->required()->type_name("TEXT");
  gen->add_option("--max-tokens", flags->max_tokens, "Most tokens to generate")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  gen->add_option("--threads", flags->threads, "Threads for the kernels (0: one per core)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  AddQuantizeOption(gen, &flags->quantize);
  gen->add_flag("--ignore-eos", flags->ignore_eos, "Keep going after an end-of-sequence token");
  RunStatus(gen, exit_code, [&conn, flags] { return Generate(conn, *flags); });

  auto serve_flags = std::make_shared<serve::ServeOptions>();
  auto* serve = engine->add_subcommand(
      "serve", "Serve a checkpoint with an OpenAI-compatible API (completions, chat, models)");
  serve
      ->add_option("--model", serve_flags->model_dir,
                   "Checkpoint directory or GGUF file, as for generate")
      ->required()
      ->type_name("DIR|FILE");
  serve
      ->add_option("--tokenizer", serve_flags->tokenizer_dir,
                   "Take the tokenizer and chat template from this directory or GGUF file")
      ->type_name("DIR|FILE");
  serve->add_option("--host", serve_flags->host, "Address to listen on")->capture_default_str();
  serve->add_option("--port", serve_flags->port, "Port to listen on (0: any free port)")
      ->capture_default_str();
  serve->add_option("--threads", serve_flags->threads, "Threads for the kernels (0: one per core)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  serve
      ->add_option("--kv-cache-mb", serve_flags->kv_cache_mb,
                   "Memory for the paged KV cache, in MiB: how many tokens all running "
                   "requests together can hold (it also caps one request's prompt + max_tokens)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  serve
      ->add_option("--max-batch", serve_flags->max_batch,
                   "Requests decoded together in one step (continuous batching); more wait")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  serve->add_flag_callback(
      "--no-prefix-cache", [serve_flags] { serve_flags->prefix_caching = false; },
      "Compute every prompt whole: do not reuse the KV-cache blocks of a prefix that an earlier "
      "request computed (reuse gives the same tokens, faster; it is on by default)");
  AddQuantizeOption(serve, &serve_flags->quantize);
  serve
      ->add_option("--served-name", serve_flags->served_name,
                   "The model's name in the API (default: the directory's or file's name)")
      ->type_name("NAME");
  serve
      ->add_option("--api-key", serve_flags->api_key,
                   "Answer only requests that bear this key (Authorization: Bearer KEY; /health "
                   "excepted). Default: $TENSORFLEET_ENGINE_API_KEY, which, unlike a command "
                   "line, other users of the machine cannot read")
      ->type_name("KEY");
  auto shutdown_grace = std::make_shared<std::string>("5s");
  serve
      ->add_option("--shutdown-grace", *shutdown_grace,
                   "After SIGTERM, how long requests in flight have to finish")
      ->capture_default_str()
      ->type_name("DURATION");
  RunStatus(serve, exit_code, [serve_flags, shutdown_grace]() -> Status {
    auto grace = jobs::ParseDuration(*shutdown_grace);
    if (!grace.ok()) return InvalidArgument("--shutdown-grace: " + grace.status().message());
    serve_flags->shutdown_grace = std::chrono::milliseconds(*grace);
    if (serve_flags->api_key.empty()) {
      const char* key = std::getenv(std::string(jobs::kEngineApiKeyEnv).c_str());
      if (key != nullptr) serve_flags->api_key = key;
    }
    return serve::Serve(*serve_flags);
  });

  AddEngineBenchCommand(*engine, conn, exit_code);
}

}  // namespace tf::cli
