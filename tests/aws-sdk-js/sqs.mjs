// The AWS SDK for JavaScript v3 against tensorfleet's SQS API. This SDK speaks SQS's JSON 1.0
// protocol (X-Amz-Target: AmazonSQS.*) and checks the MD5 of every body it sends and receives.
// The server and keys come from the environment (tests/sqs_clients_test.cc sets them):
// SQS_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, OTHER_KEY_ID, OTHER_SECRET.
import {
  SQSClient, CreateQueueCommand, GetQueueUrlCommand, ListQueuesCommand, SendMessageCommand,
  SendMessageBatchCommand, ReceiveMessageCommand, DeleteMessageCommand,
  DeleteMessageBatchCommand, ChangeMessageVisibilityCommand, GetQueueAttributesCommand,
  SetQueueAttributesCommand, TagQueueCommand, ListQueueTagsCommand, PurgeQueueCommand,
  DeleteQueueCommand, QueueDoesNotExist, ReceiptHandleIsInvalid, QueueNameExists,
  TooManyEntriesInBatchRequest, StartMessageMoveTaskCommand, ListMessageMoveTasksCommand,
  CancelMessageMoveTaskCommand, AddPermissionCommand, ResourceNotFoundException,
} from "@aws-sdk/client-sqs";

const endpoint = process.env.SQS_ENDPOINT;
let checks = 0;
function check(condition, what) {
  checks++;
  if (!condition) {
    console.log("FAILED: " + what);
    process.exit(1);
  }
}
function client(accessKeyId = process.env.AWS_ACCESS_KEY_ID,
                secretAccessKey = process.env.AWS_SECRET_ACCESS_KEY) {
  return new SQSClient({ endpoint, region: "us-east-1", maxAttempts: 1,
                         credentials: { accessKeyId, secretAccessKey } });
}
async function expectError(type, code, promise) {
  try {
    await promise;
  } catch (e) {
    const ok = (type === null || e instanceof type) && (code === null || e.name === code);
    check(ok, `expected ${code}, got ${e.name}: ${e.message}`);
    return e;
  }
  check(false, `succeeded; expected ${code}`);
}

const sqs = client();
const { QueueUrl: url } = await sqs.send(new CreateQueueCommand({
  QueueName: "js-tasks", Attributes: { VisibilityTimeout: "5" }, tags: { team: "js" } }));
check(url.endsWith("/js-tasks"), "queue URL " + url);
await expectError(QueueNameExists, "QueueNameExists", sqs.send(new CreateQueueCommand({
  QueueName: "js-tasks", Attributes: { VisibilityTimeout: "6" } })));
const byName = await sqs.send(new GetQueueUrlCommand({ QueueName: "js-tasks" }));
check(byName.QueueUrl === url, "GetQueueUrl");
const listed = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: "js-" }));
check(listed.QueueUrls.length === 1 && listed.QueueUrls[0] === url, "ListQueues");
const tags = await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }));
check(tags.Tags.team === "js", "tags from CreateQueue");
await sqs.send(new TagQueueCommand({ QueueUrl: url, Tags: { stage: "test" } }));
check((await sqs.send(new ListQueueTagsCommand({ QueueUrl: url }))).Tags.stage === "test",
      "TagQueue");

// The SDK checks MD5OfMessageBody itself: a wrong one would throw here.
const sent = await sqs.send(new SendMessageCommand({
  QueueUrl: url, MessageBody: "héllo ✓",
  MessageAttributes: { kind: { DataType: "String", StringValue: "greet" },
                       raw: { DataType: "Binary", BinaryValue: new Uint8Array([0, 255, 7]) } },
}));
check(typeof sent.MessageId === "string" && sent.MD5OfMessageAttributes.length === 32, "sent");
const batch = await sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [
  { Id: "a", MessageBody: "one" }, { Id: "b", MessageBody: "two", DelaySeconds: 9999 }] }));
check(batch.Successful.length === 1 && batch.Failed[0].Id === "b", "batch with one failure");
await expectError(TooManyEntriesInBatchRequest, "TooManyEntriesInBatchRequest",
  sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: Array.from(
    { length: 11 }, (_, i) => ({ Id: "e" + i, MessageBody: "m" })) })));

const got = await sqs.send(new ReceiveMessageCommand({
  QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
  MessageAttributeNames: ["All"], MessageSystemAttributeNames: ["All"] }));
check(got.Messages.length === 2, "received two: " + JSON.stringify(got.Messages));
const hello = got.Messages.find((m) => m.MessageId === sent.MessageId);
check(hello.Body === "héllo ✓", "UTF-8 body");
check(Buffer.from(hello.MessageAttributes.raw.BinaryValue).equals(Buffer.from([0, 255, 7])),
      "binary attribute");
check(hello.MD5OfMessageAttributes === sent.MD5OfMessageAttributes, "attribute MD5s agree");
check(hello.Attributes.ApproximateReceiveCount === "1", "system attributes");
await sqs.send(new ChangeMessageVisibilityCommand({
  QueueUrl: url, ReceiptHandle: hello.ReceiptHandle, VisibilityTimeout: 60 }));
await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: hello.ReceiptHandle }));
const other = got.Messages.find((m) => m !== hello);
const deleted = await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: [
  { Id: "x", ReceiptHandle: other.ReceiptHandle }, { Id: "y", ReceiptHandle: "nonsense" }] }));
check(deleted.Successful[0].Id === "x" && deleted.Failed[0].Code === "ReceiptHandleIsInvalid",
      "delete batch: " + JSON.stringify(deleted));
await expectError(ReceiptHandleIsInvalid, "ReceiptHandleIsInvalid",
  sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: "nonsense" })));

await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { DelaySeconds: "1" } }));
const attrs = await sqs.send(new GetQueueAttributesCommand({
  QueueUrl: url, AttributeNames: ["DelaySeconds", "ApproximateNumberOfMessages"] }));
check(attrs.Attributes.DelaySeconds === "1" && attrs.Attributes.ApproximateNumberOfMessages === "0",
      "attributes: " + JSON.stringify(attrs.Attributes));
await sqs.send(new PurgeQueueCommand({ QueueUrl: url }));

// Another project's key finds none of it.
const stranger = client(process.env.OTHER_KEY_ID, process.env.OTHER_SECRET);
await expectError(QueueDoesNotExist, "QueueDoesNotExist",
  stranger.send(new GetQueueUrlCommand({ QueueName: "js-tasks" })));
await expectError(QueueDoesNotExist, "QueueDoesNotExist",
  stranger.send(new SendMessageCommand({ QueueUrl: url, MessageBody: "intrusion" })));
// Wrong secret; an operation this server does not have.
await expectError(null, "SignatureDoesNotMatch",
  client(process.env.AWS_ACCESS_KEY_ID, "x".repeat(40)).send(new ListQueuesCommand({})));
await expectError(null, "UnsupportedOperation", sqs.send(new AddPermissionCommand({
  QueueUrl: url, Label: "l", AWSAccountIds: ["123456789012"], Actions: ["SendMessage"] })));

// A dead-letter queue's redrive as a message move task: the message goes back to its source.
const { QueueUrl: dlq } = await sqs.send(new CreateQueueCommand({ QueueName: "js-dlq" }));
const dlqArn = (await sqs.send(new GetQueueAttributesCommand({
  QueueUrl: dlq, AttributeNames: ["QueueArn"] }))).Attributes.QueueArn;
const { QueueUrl: work } = await sqs.send(new CreateQueueCommand({ QueueName: "js-work",
  Attributes: { VisibilityTimeout: "0",
                RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 1 }) } }));
await sqs.send(new SendMessageCommand({ QueueUrl: work, MessageBody: "retry me" }));
await sqs.send(new ReceiveMessageCommand({ QueueUrl: work }));
check((await sqs.send(new ReceiveMessageCommand({ QueueUrl: work }))).Messages === undefined,
      "dead-lettered on the second receive");
await expectError(ResourceNotFoundException, "ResourceNotFoundException", sqs.send(
  new StartMessageMoveTaskCommand({ SourceArn: dlqArn.replace(/:\d{12}:/, ":000000000000:") })));
await expectError(null, "InvalidParameterValue", sqs.send(new StartMessageMoveTaskCommand({
  SourceArn: dlqArn.replace("js-dlq", "js-work") })));
const { TaskHandle } = await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlqArn }));
check(typeof TaskHandle === "string" && TaskHandle.length > 0, "a task handle");
const tasks = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlqArn }));
check(tasks.Results.length === 1 && tasks.Results[0].Status === "COMPLETED" &&
      tasks.Results[0].ApproximateNumberOfMessagesMoved === 1,
      "the task moved one message: " + JSON.stringify(tasks.Results));
const back = await sqs.send(new ReceiveMessageCommand({ QueueUrl: work }));
check(back.Messages && back.Messages[0].Body === "retry me", "the message is back in its source");
await expectError(ResourceNotFoundException, "ResourceNotFoundException",
  sqs.send(new CancelMessageMoveTaskCommand({ TaskHandle })));

await sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
await expectError(QueueDoesNotExist, "QueueDoesNotExist",
  sqs.send(new GetQueueUrlCommand({ QueueName: "js-tasks" })));
console.log(`sqs.mjs: ${checks} checks passed`);
