// The SQS-compatible API driven by real clients against a real `tensorfleet server` on each back
// end: the AWS CLI and boto3 (SQS's Query protocol, as this machine's botocore speaks it) and the
// AWS SDK for JavaScript v3 (the JSON 1.0 protocol), each with a project's access key, beside a
// key of another project that must find none of its queues.
#include <memory>

#include "pg_test_schema.h"
#include "s3_clients_fixture.h"

namespace tf::testing {
namespace {

using Json = nlohmann::json;
using Backend = ::testing::WithParamInterface<std::string>;

// The store the server is started on: on PostgreSQL, a schema of the test's own. A base of the
// fixture, so that it exists before the server is made.
class BackendStore {
 protected:
  BackendStore() {
    if (Backend::GetParam() == "postgresql" && StoreReachable("postgresql")) {
      schema_ = std::make_unique<PgTestSchema>(TestPostgresUrl(), "sqs_");
    }
  }
  std::vector<std::string> StoreFlags() const {
    if (!schema_) return {};
    return {"--store", schema_->url()};
  }
  std::unique_ptr<PgTestSchema> schema_;
};

class SqsClientsTest : public BackendStore, public S3ClientsTest, public Backend {
 protected:
  SqsClientsTest() : S3ClientsTest(StoreFlags()) {}

  void SetUp() override {
    TF_SKIP_UNLESS_STORE_REACHABLE(GetParam());
    S3ClientsTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_EQ(Cli({"project", "create", "strangers"}).exit_code, 0);
    auto key = Cli({"--json", "s3", "key", "create", "--project", "strangers", "other"});
    ASSERT_EQ(key.exit_code, 0) << key.output;
    Json j = Json::parse(key.output);
    other_id_ = j["id"];
    other_secret_ = j["secret"];
  }

  std::vector<std::string> SqsEnv() const {
    std::vector<std::string> env = ClientEnv();
    env.push_back("SQS_ENDPOINT=" + url());
    env.push_back("OTHER_KEY_ID=" + other_id_);
    env.push_back("OTHER_SECRET=" + other_secret_);
    return env;
  }

  Json AwsJson(std::vector<std::string> args) {
    ProgramRun r = Aws(std::move(args));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    Json j = Json::parse(r.output, nullptr, false);
    return j.is_discarded() ? Json::object() : j;
  }

  std::string other_id_, other_secret_;
};

TEST_P(SqsClientsTest, AwsCliSendsReceivesAndDeletes) {
  Json created = AwsJson({"sqs", "create-queue", "--queue-name", "cli-jobs", "--attributes",
                          "VisibilityTimeout=7,DelaySeconds=0", "--tags", "team=ml"});
  const std::string queue = created["QueueUrl"];
  EXPECT_EQ(queue.rfind(url() + "/", 0), 0u) << queue;
  EXPECT_EQ(AwsJson({"sqs", "get-queue-url", "--queue-name", "cli-jobs"})["QueueUrl"], queue);
  EXPECT_EQ(AwsJson({"sqs", "list-queues"})["QueueUrls"], Json::array({queue}));

  Json sent = AwsJson({"sqs", "send-message", "--queue-url", queue, "--message-body",
                       "{\"prompt\": \"hi\"}", "--message-attributes",
                       R"({"kind":{"DataType":"String","StringValue":"chat"}})"});
  EXPECT_EQ(sent["MD5OfMessageBody"], Md5Hex("{\"prompt\": \"hi\"}"));
  Json got = AwsJson({"sqs", "receive-message", "--queue-url", queue, "--attribute-names", "All",
                      "--message-attribute-names", "All", "--wait-time-seconds", "2"});
  ASSERT_EQ(got["Messages"].size(), 1u) << got.dump();
  const Json& m = got["Messages"][0];
  EXPECT_EQ(m["Body"], "{\"prompt\": \"hi\"}");
  EXPECT_EQ(m["MessageAttributes"]["kind"]["StringValue"], "chat");
  EXPECT_EQ(m["MD5OfMessageAttributes"], sent["MD5OfMessageAttributes"]);
  EXPECT_EQ(m["Attributes"]["ApproximateReceiveCount"], "1");

  Json attributes = AwsJson({"sqs", "get-queue-attributes", "--queue-url", queue,
                             "--attribute-names", "All"})["Attributes"];
  EXPECT_EQ(attributes["VisibilityTimeout"], "7");
  EXPECT_EQ(attributes["ApproximateNumberOfMessagesNotVisible"], "1");
  EXPECT_EQ(AwsJson({"sqs", "list-queue-tags", "--queue-url", queue})["Tags"]["team"], "ml");

  EXPECT_EQ(
      Aws({"sqs", "delete-message", "--queue-url", queue, "--receipt-handle", m["ReceiptHandle"]})
          .exit_code,
      0);
  attributes = AwsJson({"sqs", "get-queue-attributes", "--queue-url", queue, "--attribute-names",
                        "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"});
  EXPECT_EQ(attributes["Attributes"]["ApproximateNumberOfMessages"], "0");
  EXPECT_EQ(attributes["Attributes"]["ApproximateNumberOfMessagesNotVisible"], "0");

  // The queue is the native API's queue: the same messages through /v1/queues.
  AwsJson({"sqs", "send-message", "--queue-url", queue, "--message-body", "native"});
  ProgramRun native = Cli({"--json", "queue", "receive", "cli-jobs"});
  EXPECT_EQ(native.exit_code, 0) << native.output;
  EXPECT_NE(native.output.find("native"), std::string::npos) << native.output;

  // Errors as SQS names them, with what was wrong.
  ProgramRun missing = Aws({"sqs", "get-queue-url", "--queue-name", "nope"});
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("NonExistentQueue"), std::string::npos) << missing.output;
  ProgramRun bad = Aws({"sqs", "set-queue-attributes", "--queue-url", queue, "--attributes",
                        "VisibilityTimeout=99999"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.output.find("VisibilityTimeout"), std::string::npos) << bad.output;

  EXPECT_EQ(Aws({"sqs", "delete-queue", "--queue-url", queue}).exit_code, 0);
  EXPECT_EQ(AwsJson({"sqs", "list-queues"}).count("QueueUrls"), 0u);
}

TEST_P(SqsClientsTest, Boto3ClientAndResource) {
  ProgramRun r =
      RunProgram({kPython, std::string(TENSORFLEET_SOURCE_DIR) + "/tests/sqs/boto_sqs.py"},
                 SqsEnv(), std::chrono::seconds(300));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("checks passed"), std::string::npos) << r.output;
}

TEST_P(SqsClientsTest, AwsSdkForJavaScript) {
  const std::string dir = std::string(TENSORFLEET_SOURCE_DIR) + "/tests/aws-sdk-js";
  if (!std::filesystem::exists(dir + "/node_modules/@aws-sdk/client-sqs")) {
    GTEST_SKIP() << "needs the AWS SDK for JavaScript in " << dir
                 << "/node_modules (scripts/install-deps.sh installs it)";
  }
  std::vector<std::string> env = SqsEnv();
  env.push_back("NODE_NO_WARNINGS=1");
  env.push_back("AWS_SDK_JS_SUPPRESS_MAINTENANCE_MODE_MESSAGE=1");
  ProgramRun r =
      RunProgram({"/usr/bin/env", "node", dir + "/sqs.mjs"}, env, std::chrono::seconds(300));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("checks passed"), std::string::npos) << r.output;
}

INSTANTIATE_TEST_SUITE_P(Backends, SqsClientsTest, ::testing::ValuesIn(StoreBackends()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tf::testing
