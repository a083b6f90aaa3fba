#include "sweeps/sweep_doc.h"

namespace tf::sweeps {
namespace {

using json = nlohmann::json;

json TrialToJson(const SweepTrial& t) {
  json reports = json::array();
  for (const Report& r : t.reports) reports.push_back({r.resource, r.value});
  return {{"number", t.number},    {"params", t.params},
          {"bracket", t.bracket},  {"state", t.state},
          {"jobs", t.jobs},        {"reports", std::move(reports)},
          {"rung", t.rung},        {"cost", t.cost},
          {"reason", t.reason},    {"started_at", t.started_at},
          {"ended_at", t.ended_at}};
}

SweepTrial TrialFromJson(const json& j) {
  SweepTrial t;
  t.number = j.at("number").get<int>();
  t.params = j.value("params", json::object());
  t.bracket = j.value("bracket", 0);
  t.state = j.value("state", std::string(kTrialStarting));
  t.jobs = j.value("jobs", std::vector<std::string>{});
  for (const json& r : j.value("reports", json::array())) {
    t.reports.push_back(Report{r.at(0).get<double>(), r.at(1).get<double>()});
  }
  t.rung = j.value("rung", -1);
  t.cost = j.value("cost", 0.0);
  t.reason = j.value("reason", "");
  t.started_at = j.value("started_at", TimeMs{0});
  t.ended_at = j.value("ended_at", TimeMs{0});
  return t;
}

}  // namespace

json SweepDocToJson(const SweepDoc& d) {
  json trials = json::array();
  for (const SweepTrial& t : d.trials) trials.push_back(TrialToJson(t));
  json events = json::array();
  for (const SweepEvent& e : d.events) events.push_back({{"at", e.at}, {"text", e.text}});
  return {{"spec_yaml", d.spec_yaml},
          {"source", d.source},
          {"files", d.files},
          {"code_key", d.code_key},
          {"trials", std::move(trials)},
          {"events", std::move(events)},
          {"reason", d.reason},
          {"spent", d.spent}};
}

Result<SweepDoc> SweepDocFromJson(std::string_view text) {
  try {
    json j = json::parse(text);
    SweepDoc d;
    d.spec_yaml = j.at("spec_yaml").get<std::string>();
    d.source = j.value("source", "sweep.yaml");
    d.files = j.value("files", json::object());
    d.code_key = j.value("code_key", "");
    for (const json& t : j.value("trials", json::array())) d.trials.push_back(TrialFromJson(t));
    for (const json& e : j.value("events", json::array())) {
      d.events.push_back(SweepEvent{e.value("at", TimeMs{0}), e.value("text", "")});
    }
    d.reason = j.value("reason", "");
    d.spent = j.value("spent", 0.0);
    return d;
  } catch (const std::exception& e) {
    return Internal(std::string("a stored sweep document does not parse: ") + e.what());
  }
}

Result<SweepSpec> SpecOf(const SweepDoc& doc) {
  return ParseSweepSpec(
      doc.spec_yaml, doc.source, [&](const std::string& path) -> Result<std::string> {
        auto it = doc.files.find(path);
        if (it == doc.files.end() || !it->is_string()) {
          return NotFound("the job file '" + path + "' was not sent with the sweep");
        }
        return it->get<std::string>();
      });
}

std::optional<double> ObjectiveValue(const SweepTrial& trial, const Objective& objective) {
  if (trial.reports.empty()) return std::nullopt;
  if (!objective.best) return trial.reports.back().value;
  double best = trial.reports.front().value;
  for (const Report& r : trial.reports) {
    if (Better(r.value, best, objective.goal)) best = r.value;
  }
  return best;
}

bool TrialEnded(const SweepTrial& t) {
  return t.state == kTrialComplete || t.state == kTrialStopped || t.state == kTrialFailed;
}

bool TrialActive(const SweepTrial& t) {
  return t.state == kTrialStarting || t.state == kTrialRunning;
}

bool Better(double a, double b, Goal goal) { return goal == Goal::kMinimize ? a < b : a > b; }

}  // namespace tf::sweeps
