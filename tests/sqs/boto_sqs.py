"""boto3 (client and resource layers) against tensorfleet's SQS API: queues with attributes and
tags, messages with attributes (and their MD5s, computed here apart from the server's code),
batches with per-entry failures, visibility, dead-letter queues, FIFO, long polling, paging, and
errors as SQS names them. This boto3 speaks SQS's Query protocol (form-encoded, XML answers).

The server, key and secret come from the environment (tests/sqs_clients_test.cc sets them):
SQS_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, and OTHER_KEY_ID/OTHER_SECRET, a key of
another project."""

import base64
import hashlib
import os
import struct
import sys
import time

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ["SQS_ENDPOINT"]
checks = 0


def check(condition, what):
    global checks
    checks += 1
    if not condition:
        print("FAILED: " + what, flush=True)
        sys.exit(1)


def client(key_id=None, secret=None):
    return boto3.client("sqs", endpoint_url=ENDPOINT, region_name="us-east-1",
                        aws_access_key_id=key_id or os.environ["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=secret or os.environ["AWS_SECRET_ACCESS_KEY"],
                        config=Config(retries={"max_attempts": 1, "mode": "standard"}))


def expect_error(code, call, **kwargs):
    try:
        call(**kwargs)
    except ClientError as e:
        got = e.response.get("Error", {}).get("Code")
        check(got == code, "%s: expected %s, got %s (%s)" % (
            call.__name__, code, got, e.response.get("Error", {}).get("Message")))
        return e.response["Error"]
    check(False, "%s succeeded; expected %s" % (call.__name__, code))


def attributes_md5(attributes):
    """SQS's MD5OfMessageAttributes, written from its description."""
    def prefixed(data):
        return struct.pack(">I", len(data)) + data
    out = b""
    for name in sorted(attributes):
        value = attributes[name]
        out += prefixed(name.encode()) + prefixed(value["DataType"].encode())
        if value["DataType"].startswith("Binary"):
            out += b"\x02" + prefixed(value["BinaryValue"])
        else:
            out += b"\x01" + prefixed(value["StringValue"].encode())
    return hashlib.md5(out).hexdigest()


sqs = client()

# Queues: create with attributes and tags, again with the same attributes (the same URL), with
# other attributes (QueueAlreadyExists), list by prefix and in pages, URL by name.
url = sqs.create_queue(QueueName="agent-tasks",
                       Attributes={"VisibilityTimeout": "2", "MaximumMessageSize": "2048"},
                       tags={"team": "agents"})["QueueUrl"]
check(url.startswith(ENDPOINT + "/") and url.endswith("/agent-tasks"), "queue URL " + url)
account = url.split("/")[-2]
check(len(account) == 12 and account.isdigit(), "account id " + account)
again = sqs.create_queue(QueueName="agent-tasks",
                         Attributes={"VisibilityTimeout": "2", "MaximumMessageSize": "2048"})
check(again["QueueUrl"] == url, "creating the same queue again gives its URL")
expect_error("QueueAlreadyExists", sqs.create_queue, QueueName="agent-tasks",
             Attributes={"VisibilityTimeout": "9"})
check(sqs.get_queue_url(QueueName="agent-tasks")["QueueUrl"] == url, "GetQueueUrl")
for i in range(3):
    sqs.create_queue(QueueName="page-%d" % i)
listed = sqs.list_queues(QueueNamePrefix="page-")["QueueUrls"]
check([u.split("/")[-1] for u in listed] == ["page-0", "page-1", "page-2"], "prefix listing")
first = sqs.list_queues(QueueNamePrefix="page-", MaxResults=2)
check(len(first["QueueUrls"]) == 2 and "NextToken" in first, "first page of 2")
second = sqs.list_queues(QueueNamePrefix="page-", MaxResults=2, NextToken=first["NextToken"])
check([u.split("/")[-1] for u in second["QueueUrls"]] == ["page-2"], "second page")
check("NextToken" not in second, "no token after the last page")

attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
check(attributes["VisibilityTimeout"] == "2", "VisibilityTimeout kept")
check(attributes["QueueArn"] == "arn:aws:sqs:us-east-1:%s:agent-tasks" % account, "QueueArn")
check(sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"team": "agents"}, "tags from CreateQueue")
sqs.tag_queue(QueueUrl=url, Tags={"cost-centre": "42"})
sqs.untag_queue(QueueUrl=url, TagKeys=["team"])
check(sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"cost-centre": "42"}, "tag and untag")
expect_error("InvalidAttributeName", sqs.set_queue_attributes, QueueUrl=url,
             Attributes={"Colour": "blue"})
expect_error("InvalidAttributeValue", sqs.set_queue_attributes, QueueUrl=url,
             Attributes={"VisibilityTimeout": "soon"})

# Messages with attributes; the MD5s the server answers are the ones computed here.
message_attributes = {
    "kind": {"DataType": "String", "StringValue": "summarise"},
    "priority": {"DataType": "Number", "StringValue": "3"},
    "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xfe"},
    "trace.id": {"DataType": "String.uuid", "StringValue": "t-1"},
}
sent = sqs.send_message(QueueUrl=url, MessageBody="task 1", MessageAttributes=message_attributes)
check(sent["MD5OfMessageBody"] == hashlib.md5(b"task 1").hexdigest(), "MD5OfMessageBody")
check(sent["MD5OfMessageAttributes"] == attributes_md5(message_attributes),
      "MD5OfMessageAttributes on send")
got = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["All"], AttributeNames=["All"],
                          WaitTimeSeconds=1)["Messages"]
check(len(got) == 1 and got[0]["Body"] == "task 1", "received the message")
m = got[0]
check(m["MessageId"] == sent["MessageId"], "same message id")
check(m["MessageAttributes"]["blob"]["BinaryValue"] == b"\x00\x01\xfe", "binary attribute")
check(m["MessageAttributes"]["trace.id"]["DataType"] == "String.uuid", "custom type label")
check(m["MD5OfMessageAttributes"] == attributes_md5(message_attributes),
      "MD5OfMessageAttributes on receive")
check(m["Attributes"]["ApproximateReceiveCount"] == "1", "ApproximateReceiveCount")
check(m["Attributes"]["SenderId"] == account, "SenderId")
check(abs(int(m["Attributes"]["SentTimestamp"]) - time.time() * 1000) < 60_000, "SentTimestamp")
# Only the attributes asked for come back, with the MD5 of those.
sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"],
                              VisibilityTimeout=0)
some = sqs.receive_message(QueueUrl=url, MessageAttributeNames=["trace.*", "priority"])[
    "Messages"]
check(set(some[0]["MessageAttributes"]) == {"trace.id", "priority"}, "attribute name filter")
check(some[0]["MD5OfMessageAttributes"] == attributes_md5(
    {k: message_attributes[k] for k in ("trace.id", "priority")}), "MD5 of the returned ones")
check(some[0].get("Attributes", {}) == {}, "no system attributes unless asked")
sqs.delete_message(QueueUrl=url, ReceiptHandle=some[0]["ReceiptHandle"])
expect_error("ReceiptHandleIsInvalid", sqs.delete_message, QueueUrl=url,
             ReceiptHandle="not-a-handle")
expect_error("InvalidParameterValue", sqs.send_message, QueueUrl=url, MessageBody="x" * 3000)
expect_error("InvalidParameterValue", sqs.receive_message, QueueUrl=url, MaxNumberOfMessages=11)

# Batches: per-entry failures do not fail the others; the batch rules of SQS.
batch = sqs.send_message_batch(QueueUrl=url, Entries=[
    {"Id": "a", "MessageBody": "one"},
    {"Id": "b", "MessageBody": "two", "DelaySeconds": 1000},
    {"Id": "c", "MessageBody": "three"},
])
check(sorted(e["Id"] for e in batch["Successful"]) == ["a", "c"], "batch successes")
check([e["Id"] for e in batch["Failed"]] == ["b"] and batch["Failed"][0]["SenderFault"],
      "the entry with a bad delay failed alone")
expect_error("AWS.SimpleQueueService.BatchEntryIdsNotDistinct", sqs.send_message_batch,
             QueueUrl=url, Entries=[{"Id": "x", "MessageBody": "1"},
                                    {"Id": "x", "MessageBody": "2"}])
expect_error("AWS.SimpleQueueService.TooManyEntriesInBatchRequest", sqs.send_message_batch,
             QueueUrl=url, Entries=[{"Id": str(i), "MessageBody": "m"} for i in range(11)])
expect_error("AWS.SimpleQueueService.InvalidBatchEntryId", sqs.send_message_batch,
             QueueUrl=url, Entries=[{"Id": "no spaces", "MessageBody": "m"}])
received = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
handles = [m["ReceiptHandle"] for m in received.get("Messages", [])]
check(len(handles) == 2, "two messages of the batch")
visibility = sqs.change_message_visibility_batch(QueueUrl=url, Entries=[
    {"Id": "0", "ReceiptHandle": handles[0], "VisibilityTimeout": 30},
    {"Id": "1", "ReceiptHandle": "bogus", "VisibilityTimeout": 30},
])
check([e["Id"] for e in visibility["Successful"]] == ["0"], "visibility batch success")
check(visibility["Failed"][0]["Code"] == "ReceiptHandleIsInvalid", "visibility batch failure")
deleted = sqs.delete_message_batch(QueueUrl=url, Entries=[
    {"Id": "0", "ReceiptHandle": handles[0]}, {"Id": "1", "ReceiptHandle": handles[1]}])
check(len(deleted["Successful"]) == 2, "delete batch")
counts = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=[
    "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
check(counts == {"ApproximateNumberOfMessages": "0",
                 "ApproximateNumberOfMessagesNotVisible": "0"}, "counts after deleting: %s" % counts)

# A receipt handle of another queue deletes nothing there and is refused.
other_url = sqs.create_queue(QueueName="other")["QueueUrl"]
sqs.send_message(QueueUrl=other_url, MessageBody="keep me")
other = sqs.receive_message(QueueUrl=other_url)["Messages"][0]
expect_error("ReceiptHandleIsInvalid", sqs.delete_message, QueueUrl=url,
             ReceiptHandle=other["ReceiptHandle"])

# Dead-letter queues: a message received too often moves there; the source is listed; purge.
dlq = sqs.create_queue(QueueName="agent-dlq")["QueueUrl"]
dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"][
    "QueueArn"]
work = sqs.create_queue(QueueName="agent-work", Attributes={
    "VisibilityTimeout": "0",
    "RedrivePolicy": '{"deadLetterTargetArn":"%s","maxReceiveCount":"2"}' % dlq_arn,
})["QueueUrl"]
policy = sqs.get_queue_attributes(QueueUrl=work, AttributeNames=["RedrivePolicy"])
check(dlq_arn in policy["Attributes"]["RedrivePolicy"], "RedrivePolicy answered back")
check(sqs.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"] == [work],
      "ListDeadLetterSourceQueues")
sqs.send_message(QueueUrl=work, MessageBody="poison")
for _ in range(2):
    check(len(sqs.receive_message(QueueUrl=work).get("Messages", [])) == 1, "received")
check(sqs.receive_message(QueueUrl=work).get("Messages") is None, "moved on the third receive")
check(sqs.receive_message(QueueUrl=dlq)["Messages"][0]["Body"] == "poison", "in the DLQ")
sqs.purge_queue(QueueUrl=dlq)

# FIFO: order within a group, deduplication, sequence numbers.
fifo = sqs.create_queue(QueueName="steps.fifo", Attributes={
    "FifoQueue": "true", "ContentBasedDeduplication": "true"})["QueueUrl"]
s1 = sqs.send_message(QueueUrl=fifo, MessageBody="step 1", MessageGroupId="run-1")
sqs.send_message(QueueUrl=fifo, MessageBody="step 2", MessageGroupId="run-1")
dup = sqs.send_message(QueueUrl=fifo, MessageBody="step 1", MessageGroupId="run-1")
check(dup["MessageId"] == s1["MessageId"], "a duplicate within 5 minutes is the same message")
check("SequenceNumber" in s1, "FIFO sends answer a sequence number")
# A receive retried with its attempt id (its answer lost, say) gets the same message and handle.
r1 = sqs.receive_message(QueueUrl=fifo, ReceiveRequestAttemptId="attempt-1")["Messages"]
r2 = sqs.receive_message(QueueUrl=fifo, ReceiveRequestAttemptId="attempt-1")["Messages"]
check([m["ReceiptHandle"] for m in r1] == [m["ReceiptHandle"] for m in r2] and
      r1[0]["Body"] == "step 1", "a retried FIFO receive answers the same")
sqs.change_message_visibility(QueueUrl=fifo, ReceiptHandle=r1[0]["ReceiptHandle"],
                              VisibilityTimeout=0)
steps = sqs.receive_message(QueueUrl=fifo, MaxNumberOfMessages=10,
                            AttributeNames=["MessageGroupId", "SequenceNumber"])["Messages"]
check([m["Body"] for m in steps] == ["step 1", "step 2"], "FIFO order")
check(steps[0]["Attributes"]["MessageGroupId"] == "run-1", "MessageGroupId attribute")
expect_error("InvalidParameterValue", sqs.send_message, QueueUrl=fifo, MessageBody="no group")
expect_error("InvalidParameterValue", sqs.create_queue, QueueName="plain.fifo")

# Long polling: an empty queue answers after the wait, with no messages.
empty = sqs.create_queue(QueueName="empty")["QueueUrl"]
started = time.time()
check("Messages" not in sqs.receive_message(QueueUrl=empty, WaitTimeSeconds=1), "empty receive")
check(time.time() - started >= 0.9, "waited for the wait time")

# The resource layer.
resource = boto3.resource("sqs", endpoint_url=ENDPOINT, region_name="us-east-1",
                          aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"],
                          aws_secret_access_key=os.environ["AWS_SECRET_ACCESS_KEY"])
queue = resource.get_queue_by_name(QueueName="agent-tasks")
check(queue.url == url, "resource: queue by name")
queue.send_message(MessageBody="from the resource layer")
for message in queue.receive_messages(WaitTimeSeconds=1):
    check(message.body == "from the resource layer", "resource: body")
    message.delete()
check(queue.attributes["ApproximateNumberOfMessages"] == "0", "resource: attributes")
check(sorted(q.url.split("/")[-1] for q in resource.queues.filter(QueueNamePrefix="agent-"))
      == ["agent-dlq", "agent-tasks", "agent-work"], "resource: queues by prefix")

# Another project's key: none of these queues exist for it, by name, URL or listing.
stranger = client(os.environ["OTHER_KEY_ID"], os.environ["OTHER_SECRET"])
expect_error("AWS.SimpleQueueService.NonExistentQueue", stranger.get_queue_url,
             QueueName="agent-tasks")
expect_error("AWS.SimpleQueueService.NonExistentQueue", stranger.receive_message, QueueUrl=url)
expect_error("AWS.SimpleQueueService.NonExistentQueue", stranger.send_message, QueueUrl=url,
             MessageBody="intrusion")
check("QueueUrls" not in stranger.list_queues(), "a stranger lists nothing")

# Wrong credentials and an unknown key.
expect_error("SignatureDoesNotMatch", client(secret="wrong" * 8).list_queues)
expect_error("InvalidClientTokenId", client(key_id="TFAKNOSUCHKEY0000000").list_queues)
expect_error("AWS.SimpleQueueService.UnsupportedOperation", sqs.add_permission, QueueUrl=url,
             Label="l", AWSAccountIds=["123456789012"], Actions=["SendMessage"])

sqs.delete_queue(QueueUrl=empty)
expect_error("AWS.SimpleQueueService.NonExistentQueue", sqs.get_queue_url, QueueName="empty")
print("boto_sqs.py: %d checks passed" % checks)
