// The environment contract (worker/job_env.h, docs/jobs.md): what a job's process finds, here
// the datasets a spec names.
#include <gtest/gtest.h>

#include "worker/job_env.h"

namespace tf::worker {
namespace {

Assignment MakeAssignment(nlohmann::json spec) {
  Assignment a;
  a.job_id = "job_1";
  a.job_name = "train";
  a.attempt = 1;
  a.addresses = {"10.0.0.1"};
  a.job_token = "tfk_secret";
  a.spec = std::move(spec);
  return a;
}

TEST(JobEnvTest, EachDatasetOfTheSpecIsNamedWithWhereItsIndexIs) {
  Assignment a = MakeAssignment({{"name", "train"}, {"datasets", {"tiny-text", "web.v2"}}});
  auto env = JobEnvironment(a, 0, ProcessPaths{}, "http://10.0.0.9:8470",
                            {{"TENSORFLEET_DATASET_STALE", "x"}});
  EXPECT_EQ(env.at("TENSORFLEET_DATASET_TINY_TEXT"), "http://10.0.0.9:8470/v1/datasets/tiny-text");
  EXPECT_EQ(env.at("TENSORFLEET_DATASET_WEB_V2"), "http://10.0.0.9:8470/v1/datasets/web.v2");
  auto all = nlohmann::json::parse(env.at("TENSORFLEET_DATASETS"));
  EXPECT_EQ(all, (nlohmann::json{{"tiny-text", "http://10.0.0.9:8470/v1/datasets/tiny-text"},
                                 {"web.v2", "http://10.0.0.9:8470/v1/datasets/web.v2"}}));
  // The reader's credentials are the job's.
  EXPECT_EQ(env.at("TENSORFLEET_SERVER_URL"), "http://10.0.0.9:8470");
  EXPECT_EQ(env.at("TENSORFLEET_TOKEN"), "tfk_secret");
  // A variable of the contract inherited from the worker does not leak in.
  EXPECT_EQ(env.count("TENSORFLEET_DATASET_STALE"), 0u);
}

TEST(JobEnvTest, ASpecWithoutDatasetsGetsAnEmptyObject) {
  auto env =
      JobEnvironment(MakeAssignment({{"name", "train"}}), 0, ProcessPaths{}, "http://h:1", {});
  EXPECT_EQ(env.at("TENSORFLEET_DATASETS"), "{}");
}

}  // namespace
}  // namespace tf::worker
