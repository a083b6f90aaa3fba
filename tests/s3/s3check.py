"""What the S3 client scripts share: a boto3 client for the server under test, and checks that
say what failed. The server, key and secret come from the environment (tests/s3_clients_test.cc
sets them): S3_ENDPOINT, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, S3_BUCKET (a bucket name
prefix of this run)."""

import os
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

ENDPOINT = os.environ["S3_ENDPOINT"]
KEY_ID = os.environ["AWS_ACCESS_KEY_ID"]
SECRET = os.environ["AWS_SECRET_ACCESS_KEY"]
BUCKET = os.environ.get("S3_BUCKET", "tf-test")

_checks = 0


def client(key_id=KEY_ID, secret=SECRET, endpoint=ENDPOINT, **config):
    """A path-style SigV4 client that never retries, so that every error is seen as it is."""
    options = dict(signature_version="s3v4", s3={"addressing_style": "path"},
                   retries={"max_attempts": 1, "mode": "standard"})
    options.update(config)
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id=key_id, aws_secret_access_key=secret,
                        config=Config(**options))


def call_with_headers(operation, headers, **kwargs):
    """Calls client operation `operation` ("put_object") with `kwargs`, sending `headers` too:
    ones this boto3 has no parameter for (If-None-Match on a put, say)."""
    c = client()
    name = "".join(word.capitalize() for word in operation.split("_"))

    def add_headers(request, **_):
        for header, value in headers.items():
            request.headers[header] = value
    c.meta.events.register("before-sign.s3." + name, add_headers)
    return getattr(c, operation)(**kwargs)


def call_with_query(operation, query, **kwargs):
    """Calls client operation `operation` with `kwargs`, `query` ("versions", "a=1&b=2") added to
    the URL's query: parameters this boto3 has no way to send."""
    c = client()
    name = "".join(word.capitalize() for word in operation.split("_"))

    def add_query(request, **_):
        request.url += ("&" if "?" in request.url else "?") + query
    c.meta.events.register("before-sign.s3." + name, add_query)
    return getattr(c, operation)(**kwargs)


def check(condition, what):
    global _checks
    _checks += 1
    if not condition:
        print("FAILED: " + what, flush=True)
        sys.exit(1)


def expect_error(code, status, call, *args, **kwargs):
    """Runs call(*args, **kwargs) and checks that the server answered with S3 error `code` and
    HTTP `status`. Returns the error response."""
    try:
        call(*args, **kwargs)
    except ClientError as e:
        got_code = e.response.get("Error", {}).get("Code")
        got_status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        check(got_code == code and got_status == status,
              "%s: expected %s/%d, got %s/%s (%s)" % (
                  getattr(call, "__name__", "call"), code, status, got_code, got_status,
                  e.response.get("Error", {}).get("Message")))
        return e.response
    check(False, "%s succeeded; expected %s" % (getattr(call, "__name__", "call"), code))


def done(script):
    print("%s: all %d checks passed" % (script, _checks), flush=True)
