// SQS's protocol pieces: the Query form read into the JSON protocol's shapes and answers written
// back as XML, errors in both protocols, names (accounts, URLs, ARNs), queue attributes and the
// MD5 of message attributes.
#include <gtest/gtest.h>

#include "api/sqs/receive_attempts.h"
#include "s3/xml.h"
#include "sqs/errors.h"
#include "sqs/message_md5.h"
#include "sqs/names.h"
#include "sqs/query_protocol.h"
#include "sqs/queue_attributes.h"

namespace tf::sqs {
namespace {

using Json = nlohmann::json;

TEST(SqsQueryProtocol, FlattenedMapsListsAndEntriesBecomeTheJsonShapes) {
  auto r = FromQueryParams({
      {"Action", "SendMessageBatch"},
      {"Version", "2012-11-05"},
      {"QueueUrl", "http://h/123/q"},
      {"SendMessageBatchRequestEntry.2.Id", "b"},
      {"SendMessageBatchRequestEntry.2.MessageBody", "two"},
      {"SendMessageBatchRequestEntry.1.Id", "a"},
      {"SendMessageBatchRequestEntry.1.MessageBody", "one"},
      {"SendMessageBatchRequestEntry.1.MessageAttribute.1.Name", "k"},
      {"SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.DataType", "String"},
      {"SendMessageBatchRequestEntry.1.MessageAttribute.1.Value.StringValue", "v"},
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->action, "SendMessageBatch");
  EXPECT_EQ(r->version, "2012-11-05");
  EXPECT_EQ(r->params, Json::parse(R"({
    "QueueUrl": "http://h/123/q",
    "Entries": [
      {"Id": "a", "MessageBody": "one",
       "MessageAttributes": {"k": {"DataType": "String", "StringValue": "v"}}},
      {"Id": "b", "MessageBody": "two"}]})"));
}

TEST(SqsQueryProtocol, AttributesTagsAndNameLists) {
  auto r = FromQueryParams({
      {"Action", "CreateQueue"},
      {"QueueName", "q"},
      {"Attribute.1.Name", "VisibilityTimeout"},
      {"Attribute.1.Value", "40"},
      {"Attribute.2.Name", "DelaySeconds"},
      {"Attribute.2.Value", "5"},
      {"Tag.1.Key", "team"},
      {"Tag.1.Value", "ml"},
      {"AttributeName.1", "All"},
      {"TagKey.1", "x"},
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->params, Json::parse(R"({
    "QueueName": "q",
    "Attributes": {"VisibilityTimeout": "40", "DelaySeconds": "5"},
    "Tags": {"team": "ml"},
    "AttributeNames": ["All"],
    "TagKeys": ["x"]})"));
}

TEST(SqsQueryProtocol, ParametersThatCannotBePlacedAreRefusedByName) {
  auto unnumbered = FromQueryParams({{"Action", "CreateQueue"}, {"Attribute.Name", "x"}});
  ASSERT_FALSE(unnumbered.ok());
  EXPECT_NE(unnumbered.status().message().find("Attribute"), std::string::npos);
  auto conflict = FromQueryParams({{"Action", "X"}, {"A", "1"}, {"A.B", "2"}});
  ASSERT_FALSE(conflict.ok());
  EXPECT_NE(conflict.status().message().find("A.B"), std::string::npos);
  auto empty = FromQueryParams({{"Action", "X"}, {"A..B", "1"}});
  EXPECT_FALSE(empty.ok());
  auto nameless = FromQueryParams({{"Action", "X"}, {"Attribute.1.Value", "1"}});
  EXPECT_FALSE(nameless.ok());
}

TEST(SqsQueryProtocol, ResultsAreWrittenUnderTheActionsResultWithSqsElementNames) {
  Json result = Json::parse(R"({
    "Messages": [{"MessageId": "m1", "Body": "<hi>",
                  "Attributes": {"SentTimestamp": "5"},
                  "MessageAttributes": {"k": {"DataType": "String", "StringValue": "v"}}}],
    "QueueUrls": ["u1", "u2"]})");
  std::string xml = ToQueryXml("ReceiveMessage", result, "req-1");
  auto doc = s3::ParseXml(xml);
  ASSERT_TRUE(doc.ok()) << doc.status().message() << "\n" << xml;
  EXPECT_EQ(doc->name, "ReceiveMessageResponse");
  const s3::XmlElement* r = doc->Child("ReceiveMessageResult");
  ASSERT_NE(r, nullptr) << xml;
  const s3::XmlElement* m = r->Child("Message");
  ASSERT_NE(m, nullptr) << xml;
  EXPECT_EQ(m->Child("Body")->text, "<hi>");
  EXPECT_EQ(m->Child("Attribute")->Child("Name")->text, "SentTimestamp");
  EXPECT_EQ(m->Child("Attribute")->Child("Value")->text, "5");
  const s3::XmlElement* a = m->Child("MessageAttribute");
  ASSERT_NE(a, nullptr) << xml;
  EXPECT_EQ(a->Child("Name")->text, "k");
  EXPECT_EQ(a->Child("Value")->Child("StringValue")->text, "v");
  int urls = 0;
  for (const auto& c : r->children) urls += c.name == "QueueUrl";
  EXPECT_EQ(urls, 2);
  EXPECT_EQ(doc->Child("ResponseMetadata")->Child("RequestId")->text, "req-1");

  std::string batch = ToQueryXml(
      "DeleteMessageBatch",
      Json::parse(R"({"Successful": [{"Id": "a"}], "Failed": [{"Id": "b", "SenderFault": true,
                      "Code": "ReceiptHandleIsInvalid", "Message": "no"}]})"),
      "r");
  auto bdoc = s3::ParseXml(batch);
  ASSERT_TRUE(bdoc.ok());
  const s3::XmlElement* br = bdoc->Child("DeleteMessageBatchResult");
  ASSERT_NE(br, nullptr);
  EXPECT_EQ(br->Child("DeleteMessageBatchResultEntry")->Child("Id")->text, "a");
  EXPECT_EQ(br->Child("BatchResultErrorEntry")->Child("SenderFault")->text, "true");

  // An action without a result has only its metadata.
  auto none = s3::ParseXml(ToQueryXml("DeleteQueue", Json::object(), "r"));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->Child("DeleteQueueResult"), nullptr);
  // One that answers something has its result element even when it is empty.
  auto empty = s3::ParseXml(ToQueryXml("ReceiveMessage", Json::object(), "r"));
  ASSERT_TRUE(empty.ok());
  EXPECT_NE(empty->Child("ReceiveMessageResult"), nullptr);
}

TEST(SqsErrors, BothProtocolsNameTheErrorAsSqsDoes) {
  Error e = QueueDoesNotExist("q");
  EXPECT_EQ(Json::parse(ErrorJson(e))["__type"], "com.amazonaws.sqs#QueueDoesNotExist");
  EXPECT_EQ(QueryErrorHeader(e), "AWS.SimpleQueueService.NonExistentQueue;Sender");
  auto doc = s3::ParseXml(ErrorXml(e, "rid"));
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->name, "ErrorResponse");
  EXPECT_EQ(doc->Child("Error")->Child("Code")->text, "AWS.SimpleQueueService.NonExistentQueue");
  EXPECT_EQ(doc->Child("Error")->Child("Type")->text, "Sender");
  EXPECT_EQ(doc->Child("RequestId")->text, "rid");

  EXPECT_EQ(FromStatus(InvalidArgument("x")).query_code, "InvalidParameterValue");
  EXPECT_EQ(FromStatus(AlreadyExists("x")).query_code, "QueueAlreadyExists");
  EXPECT_EQ(FromStatus(AlreadyExists("x")).type, "QueueNameExists");
  Error internal = FromStatus(Internal("disk"));
  EXPECT_EQ(internal.status, 500);
  EXPECT_EQ(QueryErrorHeader(internal), "InternalError;Receiver");
}

TEST(SqsNames, AccountsUrlsAndArns) {
  const std::string a = AccountIdOf("default");
  EXPECT_EQ(a.size(), 12u);
  EXPECT_EQ(a, AccountIdOf("default"));
  EXPECT_NE(a, AccountIdOf("other"));
  EXPECT_EQ(QueueUrl("http://h:1/", a, "q"), "http://h:1/" + a + "/q");
  EXPECT_EQ(*QueueNameFromUrl("http://h:1/" + a + "/q", a), "q");
  EXPECT_EQ(*QueueNameFromUrl("q", a), "q");  // a bare name, as SQS takes it
  EXPECT_EQ(QueueNameFromUrl("http://h:1/999999999999/q", a).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(QueueNameFromUrl("http://h:1/", a).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(*QueueNameFromArn(QueueArn("us-east-1", a, "dlq"), a), "dlq");
  EXPECT_EQ(QueueNameFromArn("arn:aws:sqs:us-east-1:999999999999:dlq", a).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(QueueNameFromArn("arn:aws:s3:::bucket", a).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(SqsQueueAttributes, SettingsFromSqsNamesWithTheirErrors) {
  QueueNaming naming{"us-east-1", AccountIdOf("p")};
  auto s =
      SettingsFromAttributes({{"VisibilityTimeout", "40"},
                              {"RedrivePolicy", R"({"deadLetterTargetArn":")" +
                                                    QueueArn("us-east-1", naming.account, "dlq") +
                                                    R"(","maxReceiveCount":"3"})"},
                              {"Policy", "{}"}},
                             naming, /*creating=*/true);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->visibility_timeout_seconds, 40);
  EXPECT_EQ(s->dead_letter_queue, "dlq");
  EXPECT_EQ(s->max_receive_count, 3);
  EXPECT_EQ(s->kept_attributes.at("Policy"), "{}");

  auto unknown = SettingsFromAttributes({{"Colour", "red"}}, naming, true);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().type, "InvalidAttributeName");
  auto readonly = SettingsFromAttributes({{"QueueArn", "x"}}, naming, true);
  ASSERT_FALSE(readonly.ok());
  EXPECT_NE(readonly.error().message.find("cannot be set"), std::string::npos);
  auto word = SettingsFromAttributes({{"DelaySeconds", "soon"}}, naming, true);
  ASSERT_FALSE(word.ok());
  EXPECT_EQ(word.error().type, "InvalidAttributeValue");
  EXPECT_NE(word.error().message.find("DelaySeconds"), std::string::npos);
  auto later_fifo = SettingsFromAttributes({{"FifoQueue", "true"}}, naming, false);
  EXPECT_FALSE(later_fifo.ok());
  auto foreign = SettingsFromAttributes(
      {{"RedrivePolicy",
        R"({"deadLetterTargetArn":"arn:aws:sqs:us-east-1:999999999999:d","maxReceiveCount":3})"}},
      naming, true);
  ASSERT_FALSE(foreign.ok());
  EXPECT_NE(foreign.error().message.find("not a queue of this account"), std::string::npos);
}

TEST(SqsQueueAttributes, TheServicesRefusalsNameSqsAttributes) {
  Error e =
      SettingsError(InvalidArgument("visibility_timeout_seconds must be between 0 and 43200"));
  EXPECT_EQ(e.type, "InvalidAttributeValue");
  EXPECT_NE(e.message.find("VisibilityTimeout must be between"), std::string::npos) << e.message;
  EXPECT_EQ(e.message.find("visibility_timeout_seconds"), std::string::npos) << e.message;
  EXPECT_EQ(SettingsError(NotFound("q")).type, "QueueDoesNotExist");
}

TEST(SqsQueueAttributes, AttributesOfAQueueAndTheirSelection) {
  store::Queue q;
  q.name = "jobs";
  q.config.visibility_timeout_ms = 45'000;
  q.config.dead_letter_queue = "dlq";
  q.config.max_receive_count = 4;
  q.created_at = 7'000;
  q.config.kept_attributes["SqsManagedSseEnabled"] = "true";
  store::QueueCounts counts{3, 2, 1};
  QueueNaming naming{"eu-west-1", "123456789012"};
  AttributeMap all = AttributesOf(q, &counts, naming);
  EXPECT_EQ(all.at("QueueArn"), "arn:aws:sqs:eu-west-1:123456789012:jobs");
  EXPECT_EQ(all.at("VisibilityTimeout"), "45");
  EXPECT_EQ(all.at("CreatedTimestamp"), "7");
  EXPECT_EQ(all.at("ApproximateNumberOfMessages"), "3");
  EXPECT_EQ(all.at("ApproximateNumberOfMessagesNotVisible"), "2");
  EXPECT_EQ(all.at("ApproximateNumberOfMessagesDelayed"), "1");
  EXPECT_EQ(all.at("SqsManagedSseEnabled"), "true");
  auto policy = Json::parse(all.at("RedrivePolicy"));
  EXPECT_EQ(policy["deadLetterTargetArn"], "arn:aws:sqs:eu-west-1:123456789012:dlq");
  EXPECT_EQ(policy["maxReceiveCount"], 4);

  auto some = SelectAttributes(all, {"VisibilityTimeout", "FifoQueue"});
  ASSERT_TRUE(some.ok());
  EXPECT_EQ(*some, (AttributeMap{{"VisibilityTimeout", "45"}}));
  EXPECT_EQ(SelectAttributes(all, {"All"})->size(), all.size());
  EXPECT_FALSE(SelectAttributes(all, {"Nope"}).ok());
}

TEST(SqsMessageMd5, MatchesAKnownAnswer) {
  // A known answer for one String attribute.
  queues::MessageAttributes one{{"SellerName", {"String", "Example Store", ""}}};
  EXPECT_EQ(MessageAttributesMd5(one), "cd28f3b68aeee4b2eac9c66f2f694b58");
  EXPECT_EQ(MessageAttributesMd5({}), "");
  // Order of insertion does not matter; binary values count as their bytes.
  queues::MessageAttributes a{{"b", {"Binary", "", "AAEC"}}, {"a", {"Number", "1", ""}}};
  queues::MessageAttributes b{{"a", {"Number", "1", ""}}, {"b", {"Binary", "", "AAEC"}}};
  EXPECT_EQ(MessageAttributesMd5(a), MessageAttributesMd5(b));
  queues::MessageAttributes c{{"b", {"Binary", "", "AAED"}}, {"a", {"Number", "1", ""}}};
  EXPECT_NE(MessageAttributesMd5(a), MessageAttributesMd5(c));
}

TEST(SqsReceiveAttempts, AnAnswerIsKeptForFiveMinutesPerProjectQueueAndAttempt) {
  api::ReceiveAttempts attempts;
  const Json answer = {{"Messages", Json::array({{{"Body", "b"}}})}};
  EXPECT_FALSE(attempts.Find("p", "q.fifo", "a", 1'000).has_value());
  attempts.Keep("p", "q.fifo", "a", answer, 1'000);
  EXPECT_EQ(attempts.Find("p", "q.fifo", "a", 1'000 + api::kReceiveAttemptWindowMs - 1), answer);
  EXPECT_FALSE(attempts.Find("p", "q.fifo", "b", 1'000).has_value());
  EXPECT_FALSE(attempts.Find("p", "r.fifo", "a", 1'000).has_value());
  EXPECT_FALSE(attempts.Find("other", "q.fifo", "a", 1'000).has_value());
  EXPECT_FALSE(attempts.Find("p", "q.fifo", "a", 1'000 + api::kReceiveAttemptWindowMs).has_value());
  // Keeping another answer forgets those past the window.
  attempts.Keep("p", "q.fifo", "c", answer, 1'000 + api::kReceiveAttemptWindowMs);
  EXPECT_FALSE(attempts.Find("p", "q.fifo", "a", 1'000 + api::kReceiveAttemptWindowMs - 1));
}

}  // namespace
}  // namespace tf::sqs
