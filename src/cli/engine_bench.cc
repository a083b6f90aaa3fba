// `tensorfleet engine bench`: the command line and the report around MeasureEngine
// (engine_bench_measure.h).
#include "cli/engine_bench.h"

#include <cstdio>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/engine_bench_measure.h"
#include "cli/engine_flags.h"
#include "cli/table.h"
#include "engine/model.h"

namespace tf::cli {
namespace {

struct BenchFlags {
  std::string model;
  int threads = 0;
  std::string quantize = "none";
  std::string streams = "1,4,16,64";
  bool json = false;
  EngineBenchSettings settings;
};

// "1,4,16" -> {1, 4, 16}.
Status ParseStreams(const std::string& text, std::vector<int>* out) {
  out->clear();
  size_t begin = 0;
  while (true) {
    size_t comma = text.find(',', begin);
    std::string item = text.substr(begin, comma == std::string::npos ? comma : comma - begin);
    size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size()) {
      return InvalidArgument("--streams: '" + item +
                             "' is not a stream count (give counts like 1,4,16,64)");
    }
    out->push_back(n);
    if (comma == std::string::npos) return OkStatus();
    begin = comma + 1;
  }
}

int64_t ParameterCount(const engine::ModelConfig& c) {
  const int64_t h = c.hidden_size, q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
  int64_t layer = 2 * h + h * q + 2 * h * kv + q * h + 3 * h * c.intermediate_size;
  if (c.qkv_bias) layer += q + 2 * kv;
  if (c.o_bias) layer += h;
  int64_t embed = c.vocab_size * h;
  return embed + c.num_layers * layer + h + (c.tie_word_embeddings ? 0 : embed);
}

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// 223552 -> "0.2M", 1104000000 -> "1.10B".
std::string Count(int64_t n) {
  return n < 1'000'000'000 ? Fixed(n / 1e6, 1) + "M" : Fixed(n / 1e9, 2) + "B";
}

Json TimingJson(const BenchTiming& t) {
  return {{"tokens", t.tokens},
          {"seconds", t.seconds},
          {"tokens_per_second", t.MeanTokensPerSecond()},
          {"tokens_per_second_stddev", t.StddevTokensPerSecond()}};
}

std::string Rate(const BenchTiming& t) {
  std::string out = Fixed(t.MeanTokensPerSecond(), 1);
  if (t.seconds.size() > 1) out += " ± " + Fixed(t.StddevTokensPerSecond(), 1);
  return out;
}

void PrintHuman(const BenchFlags& f, const engine::Model& model, double load_seconds,
                const EngineBenchReport& r) {
  const engine::ModelConfig& c = model.config();
  const EngineBenchSettings& s = f.settings;
  std::cout << "model    " << f.model << "\n"
            << "         " << c.model_type << ", " << Count(ParameterCount(c))
            << " parameters: " << c.num_layers << " layers, hidden " << c.hidden_size << ", "
            << c.num_heads << "/" << c.num_kv_heads << " heads, MLP " << c.intermediate_size
            << ", vocabulary " << c.vocab_size << "\n"
            << "engine   " << model.kernels().name << " kernels, " << model.num_threads()
            << " threads; weight matrices: " << engine::MatrixTypesSummary(model.weights())
            << "; loaded in " << Fixed(load_seconds, 2) << " s\n"
            << "tokens   random ids, greedy, no stop at end-of-sequence; " << s.repetitions
            << (s.repetitions == 1 ? " run" : " runs (mean ± stddev)") << " per measurement\n";
  if (!r.prefill.seconds.empty()) {
    std::cout << "prefill  " << r.prefill.tokens << "-token prompt: " << Rate(r.prefill)
              << " tokens/s\n";
  }
  std::cout << "decode   after a " << s.context_tokens << "-token prompt per stream; several "
            << "streams: " << r.streams_mode << "\n\n";
  double single = 0;
  for (const StreamTiming& t : r.decode) {
    if (t.streams == 1) single = t.total.MeanTokensPerSecond();
  }
  Table table({"streams", "tokens each", "total tokens/s", "per stream", "vs 1 stream"});
  for (const StreamTiming& t : r.decode) {
    double total = t.total.MeanTokensPerSecond();
    table.Add({std::to_string(t.streams), std::to_string(t.tokens_per_stream), Rate(t.total),
               Fixed(total / t.streams, 1), single > 0 ? Fixed(total / single, 2) + "x" : "-"});
  }
  table.Print(std::cout);
}

void PrintJsonReport(const BenchFlags& f, const engine::Model& model, double load_seconds,
                     const EngineBenchReport& r) {
  const EngineBenchSettings& s = f.settings;
  Json decode = Json::array();
  for (const StreamTiming& t : r.decode) {
    Json j = TimingJson(t.total);
    j["streams"] = t.streams;
    j["tokens_per_stream"] = t.tokens_per_stream;
    j["per_stream_tokens_per_second"] = t.total.MeanTokensPerSecond() / t.streams;
    decode.push_back(std::move(j));
  }
  PrintJson({{"model", f.model},
             {"model_type", model.config().model_type},
             {"parameters", ParameterCount(model.config())},
             {"kernels", model.kernels().name},
             {"weights", engine::MatrixTypesSummary(model.weights())},
             {"threads", model.num_threads()},
             {"load_seconds", load_seconds},
             {"settings",
              {{"prompt", s.prompt_tokens},
               {"gen", s.gen_tokens},
               {"stream_gen", s.stream_gen_tokens},
               {"context", s.context_tokens},
               {"repeat", s.repetitions},
               {"seed", s.seed}}},
             {"prefill", r.prefill.seconds.empty() ? Json(nullptr) : TimingJson(r.prefill)},
             {"decode", decode},
             {"streams_mode", r.streams_mode}});
}

Status RunBench(const client::Connection& conn, BenchFlags f) {
  const bool json = conn.json || f.json;
  TF_RETURN_IF_ERROR(ParseStreams(f.streams, &f.settings.streams));
  TF_RETURN_IF_ERROR(CheckEngineBenchSettings(f.settings, nullptr));
  engine::ModelOptions options;
  options.num_threads = f.threads;
  options.quantize = engine::ParseQuantize(f.quantize).value_or(engine::Quantize::kNone);
  double t0 = SteadySeconds();
  TF_ASSIGN_OR_RETURN(std::unique_ptr<engine::Model> model, engine::Model::Load(f.model, options));
  double load_seconds = SteadySeconds() - t0;
  BenchProgress progress;
  if (!json) progress = [](std::string_view line) { std::cerr << line << "\n"; };
  TF_ASSIGN_OR_RETURN(EngineBenchReport report,
                      MeasureEngine(*model, f.settings, SteadySeconds, progress));
  if (json) {
    PrintJsonReport(f, *model, load_seconds, report);
  } else {
    PrintHuman(f, *model, load_seconds, report);
  }
  return OkStatus();
}

}  // namespace

void AddEngineBenchCommand(CLI::App& engine, client::Connection& conn, int& exit_code) {
  auto f = std::make_shared<BenchFlags>();
  EngineBenchSettings& s = f->settings;
  auto* bench = engine.add_subcommand(
      "bench",
      "Measure prefill and decode speed on this machine: tokens/s for one prompt, for one "
      "stream, and in total for several streams decoding at once (random token ids, greedy, "
      "no stop at end-of-sequence)");
  bench->add_option("--model", f->model, "Checkpoint directory or GGUF file, as for generate")
      ->required()
      ->type_name("DIR|FILE");
  bench->add_option("--threads", f->threads, "Threads for the kernels (0: one per core)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  AddQuantizeOption(bench, &f->quantize);
  bench
      ->add_option("--prompt", s.prompt_tokens,
                   "Prompt length for the prefill measurement (0: skip it)")
      ->capture_default_str()
      ->type_name("TOKENS");
  bench->add_option("--gen", s.gen_tokens, "Tokens one stream decodes")
      ->capture_default_str()
      ->type_name("TOKENS");
  bench
      ->add_option("--streams", f->streams,
                   "Stream counts to decode with, comma-separated; 1 is single-stream decode")
      ->capture_default_str()
      ->type_name("N,N,...");
  bench
      ->add_option("--stream-gen", s.stream_gen_tokens,
                   "Tokens each stream decodes when several run at once (0: as --gen)")
      ->capture_default_str()
      ->type_name("TOKENS");
  bench
      ->add_option("--context", s.context_tokens,
                   "Random prompt each stream runs, untimed, before its decoding is timed")
      ->capture_default_str()
      ->type_name("TOKENS");
  bench
      ->add_option("--repeat", s.repetitions,
                   "Runs of each measurement (the report gives their mean and stddev)")
      ->capture_default_str();
  bench->add_option("--seed", s.seed, "Seed for the random token ids")->capture_default_str();
  bench->add_flag("--json", f->json, "Print the report as JSON (as the global --json does)");
  RunStatus(bench, exit_code, [&conn, f] { return RunBench(conn, *f); });
}

}  // namespace tf::cli
