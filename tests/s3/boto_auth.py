"""SigV4 against tensorfleet's S3 API: wrong secrets, unknown keys, unsigned and skewed requests,
altered bodies, presigned URLs (working, altered, expired, too long-lived), and bodies sent
aws-chunked with signed chunks (STREAMING-AWS4-HMAC-SHA256-PAYLOAD), whose chunk signatures are
computed here by hand, apart from the server's code."""

import datetime
import hashlib
import hmac
import http.client
import os
import types
import urllib.error
import urllib.parse
import urllib.request

import botocore
import botocore.auth
from botocore import UNSIGNED
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from s3check import BUCKET, ENDPOINT, KEY_ID, SECRET, check, client, done, expect_error

s3 = client()
bucket = BUCKET + "-auth"
s3.create_bucket(Bucket=bucket)
s3.put_object(Bucket=bucket, Key="note.txt", Body=b"signed content")

# Credentials that do not check out.
expect_error("SignatureDoesNotMatch", 403, client(secret="not-the-secret-" + "x" * 25).list_buckets)
expect_error("InvalidAccessKeyId", 403, client(key_id="TFAKNOSUCHKEY0000000").list_buckets)
expect_error("AccessDenied", 403, client(signature_version=UNSIGNED).list_buckets)
expect_error("AccessDenied", 403, client(signature_version=UNSIGNED).get_object, Bucket=bucket,
             Key="note.txt")


SIGNER_MODULES = [botocore.auth]
try:
    import botocore.crt.auth
    SIGNER_MODULES.append(botocore.crt.auth)
except ImportError:
    pass


class ShiftedClock:
    """Makes botocore sign as if the time were `shift` away from now, with its own signer and
    with the CRT's (which it uses when awscrt is installed)."""

    def __init__(self, shift):
        real = datetime.datetime

        class Shifted(real):
            @classmethod
            def utcnow(cls):
                return real.utcnow() + shift

        self.module = types.SimpleNamespace(datetime=Shifted, timedelta=datetime.timedelta,
                                            timezone=datetime.timezone)

    def __enter__(self):
        self.saved = [(m, m.datetime) for m in SIGNER_MODULES]
        for m in SIGNER_MODULES:
            m.datetime = self.module

    def __exit__(self, *exc):
        for m, saved in self.saved:
            m.datetime = saved


with ShiftedClock(datetime.timedelta(minutes=-20)):
    expect_error("RequestTimeTooSkewed", 403, s3.list_buckets)
with ShiftedClock(datetime.timedelta(minutes=+20)):
    expect_error("RequestTimeTooSkewed", 403, s3.list_buckets)
with ShiftedClock(datetime.timedelta(minutes=-5)):
    s3.list_buckets()  # within the 15 minutes allowed


# A body changed after signing: its SHA-256 is not the one signed.
def swap_body(request, **kwargs):
    original = request.body.read() if hasattr(request.body, "read") else request.body
    request.body = b"X" * len(original)


tamperer = client()
tamperer.meta.events.register("before-send.s3.PutObject", swap_body)
expect_error("XAmzContentSHA256Mismatch", 400, tamperer.put_object, Bucket=bucket,
             Key="tampered.txt", Body=b"original body")
expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="tampered.txt")


# Presigned URLs.
def fetch(url, method="GET", data=None):
    req = urllib.request.Request(url, method=method, data=data)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "note.txt"},
                                ExpiresIn=300)
check(fetch(url) == (200, b"signed content"), "a presigned GET works")
status, text = fetch(url.replace("note.txt", "other.txt", 1))
check(status == 403 and b"SignatureDoesNotMatch" in text, "a presigned URL for another key")
put_url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "up.txt"},
                                    ExpiresIn=300)
status, _ = fetch(put_url, method="PUT", data=b"uploaded through a presigned URL")
check(status == 200, "a presigned PUT works: %d" % status)
check(s3.get_object(Bucket=bucket, Key="up.txt")["Body"].read() ==
      b"uploaded through a presigned URL", "what the presigned PUT sent")
# Past the 8 MiB that a buffered body may have: a presigned PUT's body is streamed like any PUT's.
large = os.urandom(9 << 20)
large_url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "large.bin"},
                                      ExpiresIn=300)
status, _ = fetch(large_url, method="PUT", data=large)
check(status == 200, "a presigned PUT of 9 MiB works: %d" % status)
check(s3.get_object(Bucket=bucket, Key="large.bin")["Body"].read() == large, "all 9 MiB of it")
with ShiftedClock(datetime.timedelta(hours=-2)):
    old = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "note.txt"},
                                    ExpiresIn=3600)
status, text = fetch(old)
check(status == 403 and b"<Code>AccessDenied</Code>" in text and
      b"Request has expired" in text, "an expired presigned URL: %d %s" % (status, text[:300]))
long_lived = s3.generate_presigned_url("get_object",
                                       Params={"Bucket": bucket, "Key": "note.txt"},
                                       ExpiresIn=7 * 24 * 3600 + 1)
status, text = fetch(long_lived)
check(status == 400 and b"AuthorizationQueryParametersError" in text, "longer than 7 days")


# aws-chunked bodies with signed chunks, signed here by hand.
class StreamingSigner(botocore.auth.S3SigV4Auth):
    """botocore's own (pure Python) signer, signing the payload as aws-chunked."""
    form = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"

    def payload(self, request):
        return self.form


class StreamingTrailerSigner(StreamingSigner):
    """The same, with signed trailing headers after the chunks."""
    form = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"


def hmac_sha256(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def signed_chunked_put(key, data, chunk=64 * 1024, tamper=None, omit_final=False, trailer=None,
                       sent_trailer=None):
    """PUTs `data` as STREAMING-AWS4-HMAC-SHA256-PAYLOAD; `tamper(body)` may alter the encoded
    body after signing (keeping its length), and `omit_final` leaves out the final empty chunk.
    With `trailer` (NAME, VALUE) it is sent as STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, the
    header signed after the chunks; `sent_trailer` is then what goes on the wire instead.
    Returns (status, response body)."""
    sizes = [min(chunk, len(data) - i) for i in range(0, len(data), chunk)]
    if not omit_final:
        sizes.append(0)
    encoded_length = sum(len("%x;chunk-signature=" % n) + 64 + 4 + n for n in sizes)
    wire_trailer = sent_trailer or trailer
    if trailer:
        encoded_length += -2 + len("%s:%s\r\n" % wire_trailer) + len(
            "x-amz-trailer-signature:") + 64 + 4
    url = "%s/%s/%s" % (ENDPOINT, bucket, urllib.parse.quote(key))
    headers = {
        "Content-Encoding": "aws-chunked",
        "Content-Length": str(encoded_length),
        "X-Amz-Decoded-Content-Length": str(len(data)),
    }
    if trailer:
        headers["X-Amz-Trailer"] = trailer[0]
    request = AWSRequest(method="PUT", url=url, headers=headers)
    signer = StreamingTrailerSigner if trailer else StreamingSigner
    signer(Credentials(KEY_ID, SECRET), "s3", "us-east-1").add_auth(request)
    amz_date = request.context["timestamp"]
    scope = "%s/us-east-1/s3/aws4_request" % amz_date[:8]
    signing_key = b"AWS4" + SECRET.encode()
    for part in (amz_date[:8], "us-east-1", "s3", "aws4_request"):
        signing_key = hmac_sha256(signing_key, part)
    previous = request.headers["Authorization"].rsplit("Signature=", 1)[1]
    body, at = b"", 0
    for n in sizes:
        piece = data[at:at + n]
        at += n
        to_sign = "\n".join(["AWS4-HMAC-SHA256-PAYLOAD", amz_date, scope, previous,
                             hashlib.sha256(b"").hexdigest(), hashlib.sha256(piece).hexdigest()])
        previous = hmac.new(signing_key, to_sign.encode(), hashlib.sha256).hexdigest()
        body += b"%x;chunk-signature=%s\r\n" % (n, previous.encode()) + piece + b"\r\n"
    if trailer:
        body = body[:-2]  # the final chunk's line is followed by the trailer at once
        canonical = "%s:%s\n" % trailer
        to_sign = "\n".join(["AWS4-HMAC-SHA256-TRAILER", amz_date, scope, previous,
                             hashlib.sha256(canonical.encode()).hexdigest()])
        signature = hmac.new(signing_key, to_sign.encode(), hashlib.sha256).hexdigest()
        body += ("%s:%s\r\nx-amz-trailer-signature:%s\r\n\r\n" %
                 (wire_trailer[0], wire_trailer[1], signature)).encode()
    assert len(body) == encoded_length
    if tamper:
        body = tamper(body)
        assert len(body) == encoded_length
    parsed = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
    headers = dict(request.headers.items())
    conn.request("PUT", parsed.path, body=body, headers=headers)
    response = conn.getresponse()
    result = (response.status, response.read())
    conn.close()
    return result


data = os.urandom(200 * 1024 + 5)
status, text = signed_chunked_put("chunked.bin", data)
check(status == 200, "a chunk-signed upload: %d %s" % (status, text[:300]))
check(s3.get_object(Bucket=bucket, Key="chunked.bin")["Body"].read() == data,
      "the chunk-signed upload's content, decoded")
empty_status, _ = signed_chunked_put("chunked-empty.bin", b"")
check(empty_status == 200, "an empty chunk-signed upload")


def flip_in_second_chunk(body):
    at = body.index(b"\r\n", 70 * 1024) + 100  # inside the second chunk's data
    return body[:at] + bytes([body[at] ^ 1]) + body[at + 1:]


status, text = signed_chunked_put("chunked-bad.bin", data, tamper=flip_in_second_chunk)
check(status == 403 and b"SignatureDoesNotMatch" in text,
      "a chunk altered in flight: %d %s" % (status, text[:300]))
status, text = signed_chunked_put("chunked-short.bin", data, omit_final=True)
check(status == 400 and b"IncompleteBody" in text,
      "a body without its final chunk: %d %s" % (status, text[:300]))
for key in ["chunked-bad.bin", "chunked-short.bin"]:
    expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key=key)

# STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER: signed chunks, then a checksum in a trailer that
# is signed too (what the AWS SDKs for Java, Go and Rust send when asked for a checksum).
import base64  # noqa: E402
import zlib  # noqa: E402

crc = ("x-amz-checksum-crc32", base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode())
status, text = signed_chunked_put("signed-trailer.bin", data, trailer=crc)
check(status == 200, "a chunk-signed upload with a signed trailer: %d %s" % (status, text[:300]))
check(s3.get_object(Bucket=bucket, Key="signed-trailer.bin")["Body"].read() == data,
      "its content, decoded")
check(s3.head_object(Bucket=bucket, Key="signed-trailer.bin",
                     ChecksumMode="ENABLED").get("ChecksumCRC32") == crc[1],
      "its trailing checksum is kept with it")
wrong_crc = (crc[0], base64.b64encode(bytes(4)).decode())
status, text = signed_chunked_put("signed-trailer-bad.bin", data, trailer=wrong_crc)
check(status == 400 and b"BadDigest" in text,
      "a signed trailer whose checksum is wrong: %d %s" % (status, text[:300]))
status, text = signed_chunked_put("signed-trailer-bad.bin", data, trailer=crc,
                                  sent_trailer=wrong_crc)
check(status == 403 and b"SignatureDoesNotMatch" in text,
      "a trailer changed after signing: %d %s" % (status, text[:300]))
expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="signed-trailer-bad.bin")

# STREAMING-UNSIGNED-PAYLOAD-TRAILER: what boto3 sends over TLS when it is asked for a checksum
# (and newer SDKs send by default): unsigned aws-chunked content, in chunked transfer coding,
# with the checksum in a trailer. This boto3 picks it for https:// only, so the choice is made
# as if the endpoint were one.
import botocore.httpchecksum as httpchecksum  # noqa: E402

plain_resolve = httpchecksum.resolve_request_checksum_algorithm


def resolve_as_if_tls(request, operation_model, params, supported_algorithms=None):
    url = request["url"]
    request["url"] = "https:" + url[len("http:"):]
    try:
        return plain_resolve(request, operation_model, params, supported_algorithms)
    finally:
        request["url"] = url


httpchecksum.resolve_request_checksum_algorithm = resolve_as_if_tls
sent = {}
trailing = client()
trailing.meta.events.register("before-send.s3.PutObject",
                              lambda request, **_: sent.update(request.headers))
content = os.urandom(200 * 1024 + 3)
r = trailing.put_object(Bucket=bucket, Key="trailer.bin", Body=content, ChecksumAlgorithm="CRC32")
check(sent.get("X-Amz-Trailer") == b"x-amz-checksum-crc32" and
      sent.get("Content-Encoding") == b"aws-chunked",
      "the checksum went in a trailer: %s" % sent)
check(r.get("ChecksumCRC32") ==
      base64.b64encode(zlib.crc32(content).to_bytes(4, "big")).decode(),
      "PutObject answers with the trailer's CRC32: %s" % r.get("ChecksumCRC32"))
check(s3.get_object(Bucket=bucket, Key="trailer.bin")["Body"].read() == content,
      "content sent with a trailing checksum round-trips")
plain_sha256 = httpchecksum._CHECKSUM_CLS["sha256"]


class WrongSha256(plain_sha256):
    def digest(self):
        return bytes(32)


httpchecksum._CHECKSUM_CLS["sha256"] = WrongSha256
expect_error("BadDigest", 400, trailing.put_object, Bucket=bucket, Key="trailer-bad.bin",
             Body=content, ChecksumAlgorithm="SHA256")
expect_error("NoSuchKey", 404, s3.get_object, Bucket=bucket, Key="trailer-bad.bin")
httpchecksum._CHECKSUM_CLS["sha256"] = plain_sha256
httpchecksum.resolve_request_checksum_algorithm = plain_resolve

for key in ["note.txt", "up.txt", "large.bin", "chunked.bin", "chunked-empty.bin", "trailer.bin",
            "signed-trailer.bin"]:
    s3.delete_object(Bucket=bucket, Key=key)
s3.delete_bucket(Bucket=bucket)
done("boto_auth")
