#include "cost/planning/claim_check.h"

#include <cmath>
#include <numeric>
#include <vector>

#include "base/ascii.h"
#include "cost/numbers.h"

namespace tf::cost {
namespace {

constexpr std::string_view kExamples =
    "(for example: a 70B model, 1T tokens, 256 GPUs, 30 days, $50K-$100K)";

// The claim's words: separators (commas between words, semicolons, parentheses) become spaces;
// a comma between digits ("$50,000") is part of its number.
std::vector<std::string> ClaimWords(std::string_view text) {
  std::string s(text);
  for (std::string_view dash : {"\xE2\x80\x93", "\xE2\x80\x94"}) {  // en and em dashes
    for (size_t at = s.find(dash); at != std::string::npos; at = s.find(dash, at)) {
      s.replace(at, dash.size(), "-");
    }
  }
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    bool digit_comma =
        c == ',' && i > 0 && i + 1 < s.size() && std::isdigit(s[i - 1]) && std::isdigit(s[i + 1]);
    if (digit_comma) {
      s.erase(i--, 1);
    } else if (c == ',' || c == ';' || c == '(' || c == ')' || c == ':') {
      s[i] = ' ';
    }
  }
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  // A trailing full stop ends a word, not a number ("30 days." but "15.6T").
  for (auto& w : out) {
    while (!w.empty() && (w.back() == '.' || w.back() == '!' || w.back() == '?')) w.pop_back();
  }
  return out;
}

std::string SingularWord(std::string w) {
  w = AsciiLower(w);
  if (w.size() > 1 && w.back() == 's') w.pop_back();
  return w;
}

// The accelerator a word names ("H100", "h100s", "A100-80GB"), or nullptr.
const Accelerator* AcceleratorWord(const Catalog& catalog, const std::string& word) {
  if (const Accelerator* a = catalog.FindAccelerator(word)) return a;
  if (word.size() > 1 && (word.back() == 's' || word.back() == 'S')) {
    return catalog.FindAccelerator(word.substr(0, word.size() - 1));
  }
  return nullptr;
}

// Hyphenated words split ("70B-parameter", "GPU-hours"), except accelerator names and money
// ranges ("$50K-$100K").
std::vector<std::string> SplitHyphenated(const std::vector<std::string>& words,
                                         const Catalog& catalog) {
  std::vector<std::string> out;
  for (const auto& w : words) {
    // "64xA100-80GB": a count glued to its accelerator.
    size_t x = w.find_first_not_of("0123456789");
    if (x != std::string::npos && x > 0 && (w[x] == 'x' || w[x] == 'X') && x + 1 < w.size() &&
        AcceleratorWord(catalog, w.substr(x + 1))) {
      out.insert(out.end(), {w.substr(0, x), "x", w.substr(x + 1)});
      continue;
    }
    if (w.find('-') == std::string::npos || w[0] == '$' || AcceleratorWord(catalog, w)) {
      out.push_back(w);
      continue;
    }
    size_t start = 0;
    while (start <= w.size()) {
      size_t dash = w.find('-', start);
      if (dash == std::string::npos) dash = w.size();
      if (dash > start) out.push_back(w.substr(start, dash - start));
      start = dash + 1;
    }
  }
  return out;
}

double ScaleWord(const std::string& word) {
  std::string w = SingularWord(word);
  if (w == "thousand") return 1e3;
  if (w == "million") return 1e6;
  if (w == "billion") return 1e9;
  if (w == "trillion") return 1e12;
  return 0;
}

// "$50K", "$1.5M", "$50000", "50K$": the amount, or nullopt if the word is not money.
Result<std::optional<double>> MoneyWord(std::string word) {
  if (word.empty() || (word.front() != '$' && word.back() != '$')) return std::optional<double>();
  if (word.front() == '$') word.erase(0, 1);
  if (!word.empty() && word.back() == '$') word.pop_back();
  if (!word.empty() && (word.back() == 'm' || word.back() == 'k' || word.back() == 'b')) {
    word.back() = static_cast<char>(std::toupper(word.back()));
  }
  auto v = ParseCount(word);
  if (!v.ok()) return InvalidArgument("'$" + word + "' in the claim is not an amount of money");
  return std::optional<double>(*v);
}

class ClaimReader {
 public:
  ClaimReader(std::vector<std::string> words, const Catalog& catalog)
      : words_(std::move(words)), catalog_(catalog) {}

  Result<Claim> Read() {
    while (i_ < words_.size()) {
      const std::string& w = words_[i_];
      if (w.find('$') != std::string::npos) {
        TF_RETURN_IF_ERROR(ReadMoney());
        continue;
      }
      std::string digits = w;
      if (digits.size() > 1 && (digits.back() == 'x' || digits.back() == 'X') &&
          std::isdigit(static_cast<unsigned char>(digits[digits.size() - 2]))) {
        digits.pop_back();  // "256x H100"
      }
      if (digits.empty() || !(std::isdigit(static_cast<unsigned char>(digits[0])) ||
                              (digits[0] == '.' && digits.size() > 1))) {
        ++i_;  // a word that is not a quantity: "a", "on", "for"
        continue;
      }
      auto n = ParseCount(digits);
      if (!n.ok())
        return InvalidArgument("'" + w + "' in the claim is not a number " +
                               std::string(kExamples));
      ++i_;
      TF_RETURN_IF_ERROR(ReadUnit(w, *n));
    }
    if (!found_) return InvalidArgument("no quantity found in the claim " + std::string(kExamples));
    return claim_;
  }

 private:
  std::string Next() const { return i_ < words_.size() ? SingularWord(words_[i_]) : ""; }

  Status Once(bool already, const std::string& what, const std::string& quoted) {
    if (already)
      return InvalidArgument("the claim states " + what + " twice (at '" + quoted + "')");
    found_ = true;
    return OkStatus();
  }

  Status ReadUnit(const std::string& quoted, double n) {
    if (double scale = ScaleWord(Next()); scale > 0) {
      n *= scale;
      ++i_;
    }
    std::string unit = Next();
    if (unit == "x" && i_ + 1 < words_.size()) {
      ++i_;  // "256 x H100"
      unit = Next();
    }
    if (unit == "model" || unit == "param" || unit == "parameter") {
      ++i_;
      TF_RETURN_IF_ERROR(Once(claim_.params > 0, "the model size", quoted));
      claim_.params = n;
      return OkStatus();
    }
    if (unit == "token") {
      ++i_;
      TF_RETURN_IF_ERROR(Once(claim_.tokens > 0, "the tokens", quoted));
      claim_.tokens = n;
      return OkStatus();
    }
    const Accelerator* a = i_ < words_.size() ? AcceleratorWord(catalog_, words_[i_]) : nullptr;
    if (unit == "gpu" || a) {
      ++i_;
      if (a) {
        if (!claim_.gpu.empty() && claim_.gpu != a->name) {
          return InvalidArgument("the claim names two accelerators, " + claim_.gpu + " and " +
                                 a->name);
        }
        claim_.gpu = a->name;
        if (Next() == "gpu") ++i_;  // "256 H100 GPUs"
      }
      if (Next() == "hour") {  // "30.84M GPU-hours", "2M H100 hours"
        ++i_;
        TF_RETURN_IF_ERROR(Once(claim_.gpu_hours.has_value(), "GPU-hours", quoted));
        claim_.gpu_hours = n;
        return OkStatus();
      }
      TF_RETURN_IF_ERROR(Once(claim_.gpus > 0, "the GPUs", quoted));
      if (n != std::floor(n) || n > 1e7) {
        return InvalidArgument("'" + quoted + "' GPUs in the claim is not a whole number");
      }
      claim_.gpus = static_cast<int>(n);
      return OkStatus();
    }
    double days_per_unit = unit == "day"                                     ? 1
                           : unit == "week"                                  ? 7
                           : unit == "month"                                 ? 30
                           : (unit == "hour" || unit == "hr" || unit == "h") ? 1.0 / 24
                                                                             : 0;
    if (days_per_unit > 0) {
      ++i_;
      TF_RETURN_IF_ERROR(Once(claim_.days.has_value(), "the time", quoted));
      claim_.days = n * days_per_unit;
      return OkStatus();
    }
    return InvalidArgument("'" + quoted + "' in the claim: say what it counts " +
                           std::string(kExamples));
  }

  // "$50K-$100K", "$50K - $100K", "$50K to $100K", "$80K".
  Status ReadMoney() {
    std::string quoted = words_[i_];
    std::string first = words_[i_++];
    std::string second;
    if (size_t dash = first.find('-'); dash != std::string::npos) {
      second = first.substr(dash + 1);
      first.resize(dash);
    } else if ((Next() == "-" || Next() == "to") && i_ + 1 < words_.size() &&
               words_[i_ + 1].find('$') != std::string::npos) {
      second = words_[i_ + 1];
      quoted += " " + words_[i_] + " " + second;
      i_ += 2;
    }
    TF_RETURN_IF_ERROR(Once(claim_.usd_high.has_value(), "the money", quoted));
    TF_ASSIGN_OR_RETURN(std::optional<double> low, MoneyWord(first));
    std::optional<double> high = low;
    if (!second.empty()) {
      if (second.front() != '$') second.insert(0, "$");
      TF_ASSIGN_OR_RETURN(high, MoneyWord(second));
    }
    if (!low || !high) return InvalidArgument("'" + quoted + "' in the claim is not an amount");
    if (*high < *low) {
      return InvalidArgument("'" + quoted + "' in the claim: the range runs backwards");
    }
    claim_.usd_low = low;
    claim_.usd_high = high;
    return OkStatus();
  }

  std::vector<std::string> words_;
  const Catalog& catalog_;
  size_t i_ = 0;
  bool found_ = false;
  Claim claim_;
};

// FormatShort without trailing zeros: "70B", "15.6T", "30.84M".
std::string Compact(double value) {
  std::string s = FormatShort(value);
  if (s.find('e') != std::string::npos) return s;
  size_t dot = s.find('.');
  if (dot == std::string::npos) return s;
  size_t end = s.find_first_not_of("0123456789", dot + 1);
  if (end == std::string::npos) end = s.size();
  size_t last = end;
  while (last > dot + 1 && s[last - 1] == '0') --last;
  if (last == dot + 1) last = dot;
  return s.substr(0, last) + s.substr(end);
}

std::string ShortUsd(double usd) {
  if (usd >= 1e6) return "$" + Compact(usd);
  if (usd >= 1e3) return "$" + Compact(usd / 1e3) + "K";
  return FormatUsd(usd);
}

}  // namespace

Result<Claim> ParseClaim(std::string_view text, const Catalog& catalog) {
  return ClaimReader(SplitHyphenated(ClaimWords(text), catalog), catalog).Read();
}

std::string DescribeClaim(const Claim& c, const std::string& accelerator) {
  std::string out = Compact(c.params) + " parameters on " + Compact(c.tokens) + " tokens, " +
                    std::to_string(c.gpus) + " x " + accelerator;
  if (c.days) out += ", " + FormatFixed(*c.days, *c.days < 10 ? 1 : 0) + " days";
  if (c.gpu_hours) out += ", " + Compact(*c.gpu_hours) + " GPU-hours";
  if (c.usd_high) {
    out += ", " + ShortUsd(*c.usd_low);
    if (*c.usd_high != *c.usd_low) out += "-" + ShortUsd(*c.usd_high);
  }
  return out;
}

Result<ClaimVerdict> CheckClaim(const Claim& claim, TrainInput in, const Catalog& catalog,
                                double tolerance, bool spot) {
  std::vector<std::string> missing;
  if (claim.params <= 0) missing.push_back("the model size (70B model)");
  if (claim.tokens <= 0) missing.push_back("the tokens (1T tokens)");
  if (claim.gpus <= 0) missing.push_back("the GPUs (256 GPUs)");
  if (!claim.days && !claim.gpu_hours && !claim.usd_high) {
    missing.push_back("something to check: time (30 days), GPU-hours or money ($50K-$100K)");
  }
  if (!missing.empty()) {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    return InvalidArgument("the claim does not state " + list);
  }
  if (tolerance < 0) return InvalidArgument("--tolerance must not be negative");
  in.params = claim.params;
  in.tokens = claim.tokens;
  in.gpus = claim.gpus;
  if (!claim.gpu.empty()) in.gpu = claim.gpu;

  ClaimVerdict v;
  v.tolerance = tolerance;
  TF_ASSIGN_OR_RETURN(v.plan, PlanTraining(in, catalog));
  const TrainPlan& plan = v.plan;
  if (!plan.possible()) return v;

  if (!plan.on_demand.empty()) v.priced_at = plan.on_demand[0];
  if (spot) {
    if (const OfferPrice* s = SpotBelowOnDemand(plan.on_demand, plan.spot)) v.priced_at = *s;
  }

  double claimed_days = 0;
  if (claim.days) {
    claimed_days = *claim.days;
  } else if (claim.gpu_hours) {
    claimed_days = *claim.gpu_hours / claim.gpus / 24;
  }
  if (claimed_days > 0) {
    double ratio = plan.days() / claimed_days;
    v.time_ratio = ratio;
    v.mfu_for_time = plan.mfu * ratio;
    int machine = plan.recommended ? plan.recommended->tensor * plan.recommended->pipeline : 1;
    if (v.priced_at && v.priced_at->offer->accelerator_count > 0) {
      machine = std::lcm(machine, v.priced_at->offer->accelerator_count);
    }
    double need = std::ceil(claim.gpus * ratio / machine - 1e-9) * machine;
    v.gpus_for_time = static_cast<int>(std::min(need, 1e9));
  }

  if (v.priced_at) {
    v.usd = plan.Usd(*v.priced_at);
    if (claim.usd_high) {
      v.money_ratio_high = v.usd / *claim.usd_high;
      v.money_ratio_low = v.usd / *claim.usd_low;
      double billed_hours = plan.hours() * v.priced_at->billed_gpus;
      v.usd_per_gpu_hour_for_budget = *claim.usd_high / billed_hours;
      v.mfu_for_budget = plan.mfu * *v.money_ratio_high;
      v.tokens_for_budget = claim.tokens / *v.money_ratio_high;
    }
  }
  return v;
}

}  // namespace tf::cost
