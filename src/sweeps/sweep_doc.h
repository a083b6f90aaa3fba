// What the store keeps of a sweep (store::DocumentRecord of kind "sweep"): the spec as the user
// wrote it (with the job files it names), and each trial with its hyperparameters, its jobs,
// the objective values it reported and what became of it. The sweep controller
// (sweep_controller.h) is its only writer after the start; every write names the version read.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "sweeps/early_stopping.h"
#include "sweeps/sweep_spec.h"

namespace tf::sweeps {

inline constexpr const char* kSweepKind = "sweep";

// Sweep states (DocumentRecord::state).
inline constexpr const char* kSweepRunning = "running";
inline constexpr const char* kSweepStopping = "stopping";  // asked to stop; trials being stopped
inline constexpr const char* kSweepStopped = "stopped";
inline constexpr const char* kSweepFinished = "finished";
inline constexpr const char* kSweepFailed = "failed";

// Trial states.
inline constexpr const char* kTrialStarting = "starting";  // recorded; its job is being submitted
inline constexpr const char* kTrialRunning = "running";
inline constexpr const char* kTrialPaused = "paused";      // asha: stopped at a rung, may resume
inline constexpr const char* kTrialComplete = "complete";  // its job succeeded
inline constexpr const char* kTrialStopped = "stopped";    // median rule, or the sweep's stop
inline constexpr const char* kTrialFailed = "failed";      // its job failed for good

struct SweepTrial {
  int number = 0;  // 1, 2, ...
  nlohmann::json params = nlohmann::json::object();
  int bracket = 0;
  std::string state = kTrialStarting;
  std::vector<std::string> jobs;  // the first job, then one per resumption
  std::vector<Report> reports;    // the objective by resource (step), increasing
  int rung = -1;                  // the highest rung judged (-1: none)
  double cost = 0;                // dollars, every job of the trial
  std::string reason;             // why it is in its state
  TimeMs started_at = 0;
  TimeMs ended_at = 0;
};

struct SweepEvent {
  TimeMs at = 0;
  std::string text;
};

struct SweepDoc {
  std::string spec_yaml;                            // the sweep file as written
  std::string source;                               // its name, for messages
  nlohmann::json files = nlohmann::json::object();  // job files it names: path as written -> text
  std::string code_key;                             // the code bundle of the trials' jobs
  std::vector<SweepTrial> trials;
  std::vector<SweepEvent> events;  // the latest decisions, newest last (kMaxSweepEvents)
  std::string reason;              // why the sweep is in its state
  double spent = 0;                // dollars, every trial
};

inline constexpr size_t kMaxSweepEvents = 50;

nlohmann::json SweepDocToJson(const SweepDoc& doc);
Result<SweepDoc> SweepDocFromJson(std::string_view text);

// Reads the doc's spec again (with the job files it carries).
Result<SweepSpec> SpecOf(const SweepDoc& doc);

// The trial's objective: its last or best report (Objective::best), none before its first.
std::optional<double> ObjectiveValue(const SweepTrial& trial, const Objective& objective);

bool TrialEnded(const SweepTrial& trial);   // complete, stopped, failed
bool TrialActive(const SweepTrial& trial);  // starting or running

// Whether `a` is better than `b` for `goal`.
bool Better(double a, double b, Goal goal);

}  // namespace tf::sweeps
