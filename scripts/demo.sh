#!/usr/bin/env bash
# The main job: installs what is needed, builds, starts `tensorfleet up` (the server alone: no
# worker of its own) on a temporary data directory and drives it through the CLI, end to end:
#   a queue with a dead-letter queue; send, receive and delete; a message that keeps failing
#   moves to the dead-letter queue; a redrive brings it back; a FIFO queue with deduplication;
#   a node pool that starts nodes (local worker processes) when work waits and stops them when
#   idle; a PyTorch training job run as a managed job on the pool's nodes, interrupted half way
#   by a drain and resumed from its checkpoint on a node the pool started for it, its model then served as an endpoint (replicas of the
#   built-in engine behind the OpenAI-compatible gateway, scaled from zero by the first request,
#   out by a burst, and back to zero when idle), and what it cost;
#   objects copied up and back (a folder, and a tar stream through stdin and stdout) and between
#   objects on the server, and a damaged blob refused on read; an S3 access key and the AWS
#   CLI copying into and listing the same buckets (a 24 MiB file in three parts, kept as those
#   parts, whose attributes and second part are then read on their own; a checksum sent with an
#   upload checked, and a wrong one refused; an object read with the bucket in the host name;
#   rclone mirroring and checking the run's shards; a public-read upload refused, as there are no
#   ACLs); the SQS API with the same key: an agent's task queue made by the AWS CLI and worked
#   by boto3; a second server keeping its objects' content in an
#   S3-compatible bucket (the first server's); a budget, the alerts it fired and a job it
#   refused; a dataset packed into shards and read by a managed job with PyTorch's DataLoader
#   (samples, then batches handed over through shared memory).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
scripts/build.sh tensorfleet
# The Python dataset reader, where pybind11 was found.
if ninja -C build -t targets all 2>/dev/null | grep -q '^tensorfleet_data_native:'; then
  scripts/build.sh tensorfleet_data_native
fi

tf_bin="$PWD/build/src/tensorfleet"
data_dir=$(mktemp -d /tmp/tensorfleet-demo.XXXXXX)
export TENSORFLEET_HOME="$data_dir"
server_pid=""
second_pid=""
cleanup() {
  if [ -n "$second_pid" ]; then kill -TERM "$second_pid" 2>/dev/null; wait "$second_pid" 2>/dev/null || true; fi
  if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$data_dir"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
tf() { printf '$ tensorfleet'; printf ' %q' "$@"; printf '\n'; "$tf_bin" "$@"; }
# Ends the demo if a file read back is not byte for byte the original.
same_bytes() {
  cmp "$1" "$2" || { echo "  $2 is not byte for byte $1" >&2; exit 1; }
  echo "  $3"
}

step "Start the platform on its embedded default (SQLite in $data_dir), with no worker yet"
# --s3-domain: S3 requests may also name their bucket in the host (BUCKET.s3.demo.test).
"$tf_bin" up --no-worker --port 0 --s3-domain s3.demo.test 2>"$data_dir/server.log" &
server_pid=$!
for _ in $(seq 100); do [ -s "$data_dir/url" ] && break; sleep 0.1; done
[ -s "$data_dir/url" ] || { cat "$data_dir/server.log"; echo "server did not start"; exit 1; }
tf status

step "A work queue whose failing messages go to a dead-letter queue after 2 receives"
tf queue create jobs-dlq --retention 1209600
tf queue create jobs --visibility-timeout 1 --dead-letter-queue jobs-dlq --max-receive-count 2
tf queue list

step "Send three messages, receive them, delete two (the third 'crashes' its worker)"
tf queue send jobs "train resnet50" "eval checkpoint 7" "poison: malformed spec"
received=$("$tf_bin" --json queue receive jobs --max 10)
echo "$received" | python3 -c '
import json, sys
for m in json.load(sys.stdin)["messages"]:
    print("  received %r (receive #%d)" % (m["body"], m["receive_count"]))'
handles=$(echo "$received" | python3 -c 'import json,sys; print(" ".join(m["receipt_handle"] for m in json.load(sys.stdin)["messages"] if not m["body"].startswith("poison")))')
tf queue delete jobs $handles
tf queue attributes jobs

step "The poison message is received again after its visibility timeout, then dead-lettered"
sleep 1.2
tf queue receive jobs --wait 2
sleep 1.2
tf queue receive jobs --wait 1
tf queue attributes jobs-dlq

step "Redrive: the fixed message goes back to its source queue and is processed"
tf queue redrive jobs-dlq
tf queue receive jobs --delete

step "A FIFO queue: strict order per group, duplicates accepted but not delivered twice"
tf queue create orders.fifo --fifo --content-based-dedup
tf queue send orders.fifo --group customer-1 "order 1" "order 2" "order 3"
tf queue send orders.fifo --group customer-1 "order 1"
tf queue receive orders.fifo --max 10 --delete

step "Long polling: a receive waits until a message arrives"
( sleep 1; "$tf_bin" queue send jobs "late arrival" >/dev/null ) &
sender_pid=$!
tf queue receive jobs --wait 10 --delete
wait "$sender_pid"

step "Metrics"
curl -s -H "Authorization: Bearer $(cat "$data_dir/admin-token")" "$(cat "$data_dir/url")/metrics" \
  | grep -E '^tensorfleet_queue_messages' | head -8

step "Capacity on demand: a node pool, whose machines start when work waits for them"
# The local provider runs each machine as a worker process on this machine; a cloud's would
# start instances. Each declares what such a machine costs: cost reports price work with it.
cat >"$data_dir/pool.yaml" <<SPEC
name: demo-nodes
provider: local
machine: {cpus: 2, memory: 4Gi, price_per_hour: 32.77}
min: 0
max: 3
idle_timeout: 20s
SPEC
sed 's/^/  /' "$data_dir/pool.yaml"
tf pool create "$data_dir/pool.yaml"
tf nodes

step "Train a small Llama with PyTorch DDP (2 ranks over gloo) as a managed job"
# The example's spec, its code found from here; shortened for the demo with `--set` below
# (fewer steps, a checkpoint every 10), which replaces those hyperparameters for this run.
spec="$data_dir/llama-train.yaml"
sed -e "s|^code: .*|code: \"$PWD/examples/llama-train\"|" examples/llama-train/job.yaml >"$spec"
# Run on each node before the job's first rank there, its output in the job's log
# (docs/jobs-spec.md, "Setup"); the ranks run in a cgroup of their spec's CPUs and memory.
cat >>"$spec" <<'YAML'
setup: /usr/bin/python3 -c "import torch; print('torch', torch.__version__, 'importable in the setup')"
YAML
job=$("$tf_bin" run "$spec" --set steps=80 --set checkpoint_every=10)
echo "$ tensorfleet run llama-train.yaml --set steps=80 --set checkpoint_every=10   -> $job"
for _ in $(seq 600); do
  "$tf_bin" logs "$job" 2>/dev/null | grep -q '^step=30 ' && break; sleep 0.5
done
tf ps
echo "  the node it runs on is the pool's, started for it:"
"$tf_bin" pool describe demo-nodes | sed -n '/^MACHINE/,$p'

step "A spot interruption half way: drain the job's node"
node=$("$tf_bin" --json describe "$job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["attempts"][-1]["ranks"][0]["node"])')
tf worker drain --node "$node" --deadline 60s --reason "simulated spot interruption notice"
echo "  the drained node takes no new work: the pool starts another for the job's next attempt"
echo "  following the job's log across attempts until it ends:"
tf logs -f "$job" | grep --line-buffered -E '^\[tensorfleet\]|resumed|interrupted|starting from|^step=(10|30|50|70|80) |exported|importable|^-----'
"$tf_bin" logs "$job" | grep -q 'setup: done in' || { echo "demo: the job's setup did not run" >&2; exit 1; }
tf describe "$job"
"$tf_bin" --json describe "$job" | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["state"] == "succeeded", j["state"]
assert j["attempts"][0]["state"] == "interrupted" and j["recoveries"] == 1, j["attempts"]
print("  the job was interrupted once, resumed from its checkpoint on another node, and succeeded")'

step "Tune the learning rate: a sweep whose trials are managed jobs, stopped early by ASHA"
# Four trials of 40 steps, two at a time on the pool's nodes; at step 10 and 20 only the best
# half of the trials that got there goes on, the others pause (a paused trial that later trials
# put back in the best half resumes from its checkpoint). docs/sweeps.md.
cat >"$data_dir/lr-sweep.yaml" <<'SPEC'
name: llama-lr
job: llama-train.yaml
parameters:
  lr: {type: loguniform, low: 1e-3, high: 3e-2}
  steps: {type: fixed, value: 40}
  checkpoint_every: {type: fixed, value: 10}
  log_every: {type: fixed, value: 5}
objective: {metric: loss, goal: minimize}
strategy: random
seed: 3
max_trials: 4
max_parallel: 2
early_stopping: {type: asha, resource: step, min_resource: 10, max_resource: 40, reduction_factor: 2}
SPEC
sed 's/^/  /' "$data_dir/lr-sweep.yaml"
tf sweep start "$data_dir/lr-sweep.yaml"
for _ in $(seq 300); do
  "$tf_bin" --json sweep describe llama-lr |
    python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["state"] != "running" else 1)' && break
  sleep 1
done
tf sweep describe llama-lr
best=$("$tf_bin" --json sweep best llama-lr | python3 -c 'import json,sys; print(json.load(sys.stdin)["job_id"])')
"$tf_bin" --json sweep describe llama-lr | python3 -c '
import json, sys
s = json.load(sys.stdin)
assert s["state"] == "finished", s["state"]
assert "paused" in s["trial_counts"], s["trial_counts"]
print("  %d trials, %s; the best trial'"'"'s job is serving next" % (len(s["trials"]), s["trial_counts"]))'

step "Serve the best trial's model as an endpoint: autoscaled replicas behind the gateway"
tf cp -r "tf://tensorfleet-jobs/$best/output/model" "$data_dir/trained-model" >/dev/null
tf engine generate --model "$data_dir/trained-model" --prompt "Q: What is" --max-tokens 16
cat >"$data_dir/llama-chat.yaml" <<SPEC
name: llama-train
model: {job: $best}           # the best trial's job's output/model
engine:
  builtin: {threads: 1, max_batch: 4, kv_cache: 64Mi}
resources: {cpus: 1}
replicas: {min: 0, max: 2}    # none while idle
autoscaling: {target_ongoing_requests: 2, downscale_delay: 10s, scale_to_zero_after: 10s}
SPEC
sed 's/^/  /' "$data_dir/llama-chat.yaml"
tf endpoint up "$data_dir/llama-chat.yaml"
gateway="$(cat "$data_dir/url")/openai/v1"
token=$(cat "$data_dir/admin-token")
ask() {  # ask MAX_TOKENS SEED [PROMPT]: a completion through the gateway, as OpenAI clients send it
  curl -sS "$gateway/completions" -H "Authorization: Bearer $token" \
    -H "Content-Type: application/json" \
    -d "{\"model\": \"llama-train\", \"prompt\": \"${3:-Q: What is}\", \"max_tokens\": $1, \"seed\": $2}"
}
echo "$ curl $gateway/completions   (no replica yet: the request waits while one starts)"
started=$(date +%s.%N)
ask 24 1 | python3 -c '
import json, sys
j = json.load(sys.stdin)
print("  %r (usage %s)" % (j["choices"][0]["text"], j["usage"]))'
echo "  answered in $(python3 -c "import time; print(round(time.time() - $started, 1))") s," \
  "the replica's start (its model copied from the job's output, then loaded) included"
echo "  a burst of 16 requests at once, sharing the start of their prompt:"
shared="You answer in one short sentence, as plainly as you can, and you never repeat the question. Q: What is"
burst=()
for i in $(seq 16); do ask 80 "$i" "$shared" >"$data_dir/burst-$i.json" & burst+=($!); done
wait "${burst[@]}"
python3 - "$data_dir" <<'PY'
import glob, json, sys
answers = [json.load(open(f)) for f in glob.glob(sys.argv[1] + "/burst-*.json")]
ok = [a for a in answers if "choices" in a]
assert len(ok) == 16, answers
print("  %d of 16 answered, %d tokens" % (len(ok), sum(a["usage"]["completion_tokens"] for a in ok)))
print("  prompt tokens: %d, of them %d from the engines' prefix caches (computed once per replica,"
      " then reused)" % (sum(a["usage"]["prompt_tokens"] for a in ok),
                         sum(a["usage"]["prompt_tokens_details"]["cached_tokens"] for a in ok)))
PY
for _ in $(seq 50); do  # the controller decides once a second
  "$tf_bin" --json endpoint describe llama-train | grep -q 'load above the target' && break
  sleep 0.1
done
tf endpoint describe llama-train
echo "  idle now: back to zero replicas after 10 s"
for _ in $(seq 60); do
  "$tf_bin" --json endpoint describe llama-train |
    python3 -c 'import json,sys; sys.exit(0 if not json.load(sys.stdin)["replicas"] else 1)' && break
  sleep 1
done
"$tf_bin" endpoint describe llama-train | sed -n '/scaling decisions/,$p'
"$tf_bin" --json endpoint describe llama-train | python3 -c '
import json, sys
e = json.load(sys.stdin)
reasons = " | ".join(s["reason"] for s in e["scaling"])
assert not e["replicas"], e["replicas"]
assert "waiting and no replica: from 0 to" in reasons, reasons
assert "load above the target" in reasons and "to 0" in reasons, reasons
print("  scaled from zero by the first request, out by the burst, and back to zero when idle")'
tf endpoint down llama-train

step "What the job cost: each rank priced at its node's price (the pool's machines declare \$32.77/h)"
tf cost report --by job

step "The built-in inference engine: greedy generation on the CPU, no server needed"
echo "  (a tiny Llama test checkpoint with RANDOM weights: the text is gibberish; the tokenizer,"
echo "   the forward pass and the speed are real)"
tf engine generate --model tests/data/engine/llama-gqa --prompt "The quick brown fox" \
  --max-tokens 32 --ignore-eos
echo "  The same engine on a Q4_K_M GGUF file that llama.cpp's own quantiser wrote (Q4_K and Q6_K"
echo "  matrices, run on their K-quant kernels; random weights again):"
tf engine generate --model tests/data/engine/kquant/kquant-llama.q4_k_m.gguf \
  --prompt "The quick brown fox" --max-tokens 16 --ignore-eos

step "Sweeps: the plan of a Hyperband sweep of the training job, and the search core as ask and tell"
tf sweep check examples/llama-train/sweep.yaml --count 3
cat >"$data_dir/space.yaml" <<'YAML'
parameters:
  lr: {type: loguniform, low: 1e-4, high: 1e-2}
  batch_size: {type: categorical, choices: [8, 16, 32]}
  seq_len: {type: fixed, value: 128}
YAML
printf '%s\n' '{"params": {"lr": 0.003, "batch_size": 8, "seq_len": 128}, "value": 2.41}' |
  tf sweep suggest --space "$data_dir/space.yaml" --seed 7 --count 3

step "Cost, offline: plan a training run, check a quote, refuse an impossible deployment, audit a bill"
# Llama 2 70B on 2T tokens on A100-80GB: at the MFU the paper's run implies over all its
# hours (43.47%, so goodput 1), its published 1,720,320 GPU-hours fall out of 6 x N x D.
tf plan train --params 70B --tokens 2T --gpu A100-80GB --gpus 2048 --mfu 0.4347233 --goodput 1
# A quote from a practitioner's guide, checked at 40% MFU: it does not hold (exit code 1), and
# the verdict says by how much and what it would take.
tf plan check 'a 70B model on 1T tokens, 256 GPUs, 30 days, $50K-$100K' --mfu 0.4 ||
  echo "(exit code $?: the claim does not hold)"
# 70B in FP8 on four A10Gs: the A10G has no FP8, so the plan is refused with exit code 1.
tf plan serve --params 70B --dtype fp8 --gpu A10G --gpus 4 --context 4096 --concurrency 16 \
  || echo "(refused: exit code $?)"
# Beside the bill: the reseller's invoice, describe-instances, and what tensorfleet's own
# metering saw of the same machines (`cost report --by node --json`), so that hours billed while
# a machine sat idle or was not running at all are found too.
tf cost generate-bill --rows 20000 --out "$data_dir/bill.csv" --anomalies all \
  --invoice "$data_dir/invoice.csv" --instances "$data_dir/instances.json" \
  --metering "$data_dir/metering.json"
# The audit exits 1 when it has findings, which is what this bill is for.
tf cost audit "$data_dir/bill.csv" --invoice "$data_dir/invoice.csv" \
  --instances "$data_dir/instances.json" --metering "$data_dir/metering.json" \
  || echo "(exit code $?: findings)"

step "Objects: a checkpoint directory up and back, and a damaged blob caught on read"
run_dir="$data_dir/demo-files/run-7"
mkdir -p "$run_dir/shards"
printf 'epoch=3 loss=0.412\n' >"$run_dir/metrics.txt"
head -c 24M /dev/urandom >"$run_dir/shards/model-00001.bin"
head -c 3M /dev/urandom >"$run_dir/shards/model-00002.bin"
tf bucket create checkpoints
tf cp -r "$run_dir" tf://checkpoints/run-7
tf ls tf://checkpoints/run-7/
tf cat tf://checkpoints/run-7/metrics.txt
tf cp tf://checkpoints/run-7/shards/model-00001.bin "$data_dir/demo-files/restored.bin"
same_bytes "$run_dir/shards/model-00001.bin" "$data_dir/demo-files/restored.bin" \
  "the restored shard is byte for byte the original"
# Content lives under random ids, never under its key: find metrics.txt's blob by its bytes.
blob=$(grep -rl --fixed-strings 'epoch=3 loss=0.412' "$data_dir/objects")
[ "$(printf '%s\n' "$blob" | wc -l)" = 1 ] || { echo "expected one blob holding metrics.txt: $blob"; exit 1; }
echo "  flipping one byte of $blob on disk"
printf 'E' | dd of="$blob" bs=1 seek=0 conv=notrunc status=none
if tf cat tf://checkpoints/run-7/metrics.txt; then echo "damage not detected"; exit 1; fi
echo "  (refused: the block no longer matches its CRC-32C; no damaged byte was served)"
echo "$ tar -c -C $run_dir . | tensorfleet cp - tf://checkpoints/run-7.tar"
tar -c -C "$run_dir" . | "$tf_bin" cp - tf://checkpoints/run-7.tar
echo "$ tensorfleet cp tf://checkpoints/run-7.tar - | tar -x -C $data_dir/demo-files/untarred"
mkdir -p "$data_dir/demo-files/untarred"
"$tf_bin" cp tf://checkpoints/run-7.tar - | tar -x -C "$data_dir/demo-files/untarred"
same_bytes "$run_dir/shards/model-00002.bin" "$data_dir/demo-files/untarred/shards/model-00002.bin" \
  "the tar stream came back whole: its shards are byte for byte the originals"
tf cp -r tf://checkpoints/run-7/shards tf://checkpoints/archive/run-7-shards
"$tf_bin" cp tf://checkpoints/archive/run-7-shards/model-00001.bin "$data_dir/demo-files/archived.bin"
same_bytes "$run_dir/shards/model-00001.bin" "$data_dir/demo-files/archived.bin" \
  "copied on the server, never through this machine: byte for byte the original"

step "S3 API: an access key, then the AWS CLI on the same buckets"
key_json=$("$tf_bin" --json s3 key create demo)
echo "$ tensorfleet s3 key create demo   (the secret is shown once; kept here, not printed)"
export AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_DEFAULT_REGION=us-east-1 AWS_PAGER=
AWS_ACCESS_KEY_ID=$(echo "$key_json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
AWS_SECRET_ACCESS_KEY=$(echo "$key_json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["secret"])')
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
aws_() { printf '$ aws'; printf ' %q' "$@"; printf '\n'; aws --endpoint-url "$(cat "$data_dir/url")" "$@"; }
aws_ s3 cp --no-progress "$run_dir/shards/model-00002.bin" s3://checkpoints/run-7/from-aws.bin
aws_ s3 ls --recursive s3://checkpoints/
aws_ s3 cp --no-progress s3://checkpoints/run-7/from-aws.bin "$data_dir/demo-files/from-aws.bin"
same_bytes "$run_dir/shards/model-00002.bin" "$data_dir/demo-files/from-aws.bin" \
  "the AWS CLI's round trip is byte for byte the original"
tf ls tf://checkpoints/run-7/  # the native CLI sees what the AWS CLI wrote
# 24 MiB is past the AWS CLI's 8 MiB threshold: it uploads three parts at once and completes
# them; the server keeps the object as those three parts, without copying them into one.
aws_ s3 cp --no-progress "$run_dir/shards/model-00001.bin" s3://checkpoints/run-7/from-aws-parts.bin
aws_ s3api head-object --bucket checkpoints --key run-7/from-aws-parts.bin \
  --query '[ContentLength, ETag]' --output text
tf cp tf://checkpoints/run-7/from-aws-parts.bin "$data_dir/demo-files/from-aws-parts.bin"
same_bytes "$run_dir/shards/model-00001.bin" "$data_dir/demo-files/from-aws-parts.bin" \
  "the multipart object (ETag ending -3: three parts) reads back whole, checked by SHA-256"
# What it is made of, without reading it, and one part fetched on its own, as S3's multipart
# downloads fetch them.
aws_ s3api get-object-attributes --bucket checkpoints --key run-7/from-aws-parts.bin \
  --object-attributes ObjectSize ObjectParts --query '[ObjectSize, ObjectParts.TotalPartsCount]' \
  --output text
aws_ s3api get-object --bucket checkpoints --key run-7/from-aws-parts.bin --part-number 2 \
  "$data_dir/demo-files/part-2.bin" --query '[ContentRange, PartsCount]' --output text
python3 - "$run_dir/shards/model-00001.bin" "$data_dir/demo-files/part-2.bin" <<'PY'
import sys
whole, part = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
chunk = 8 << 20  # the AWS CLI's part size
if part != whole[chunk:2 * chunk]:
    sys.exit("part 2 is not the second 8 MiB of the file")
print("  (part 2 is the file's second 8 MiB, byte for byte)")
PY
# A checksum the client computes travels with the upload and is checked before the object is
# stored; one that does not match stores nothing.
aws_ s3api put-object --bucket checkpoints --key run-7/metrics-summed.txt --body "$run_dir/metrics.txt" \
  --checksum-algorithm SHA256 --query ChecksumSHA256 --output text
if bad=$(aws_ s3api put-object --bucket checkpoints --key run-7/metrics-bad.txt \
  --body "$run_dir/metrics.txt" --checksum-crc32 AAAAAA== 2>&1); then
  echo "$bad"; echo "a wrong checksum was not refused"; exit 1
fi
echo "$bad"
case "$bad" in
  *BadDigest*) echo "  (refused: the CRC32 sent does not match the content; nothing was stored)" ;;
  *) echo "refused, but not as BadDigest"; exit 1 ;;
esac
# The checksum stays with the object: a client that asks for it gets it back and checks it.
shown=$(aws_ s3api head-object --bucket checkpoints --key run-7/metrics-summed.txt \
  --checksum-mode ENABLED --query ChecksumSHA256 --output text)
echo "$shown"
summed=$(printf '%s\n' "$shown" | tail -n 1)
expected=$(python3 -c 'import base64, hashlib, sys
print(base64.b64encode(hashlib.sha256(open(sys.argv[1], "rb").read()).digest()).decode())' \
  "$run_dir/metrics.txt")
[ "$summed" = "$expected" ] || { echo "the kept checksum is not the content's SHA-256"; exit 1; }
# Most AWS SDKs put the bucket in the host name (virtual-hosted style). The server was started
# with --s3-domain s3.demo.test; DNS would send *.s3.demo.test to it, curl is told instead.
server_url=$(cat "$data_dir/url")
port=${server_url##*:}
vhost="checkpoints.s3.demo.test:$port"
echo "$ curl --aws-sigv4 aws:amz:us-east-1:s3 http://$vhost/run-7/metrics-summed.txt   (connecting to 127.0.0.1:$port)"
curl -sS --fail-with-body --connect-to "$vhost:127.0.0.1:$port" \
  --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
  -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" \
  "http://$vhost/run-7/metrics-summed.txt" -o "$data_dir/demo-files/vhost-metrics.txt"
same_bytes "$run_dir/metrics.txt" "$data_dir/demo-files/vhost-metrics.txt" \
  "read virtual-hosted style (the bucket in the host name), byte for byte"
# Headers given at upload come back on every GET and HEAD: a compressed log served as such.
gzip -c "$run_dir/metrics.txt" > "$data_dir/demo-files/metrics.txt.gz"
aws_ s3 cp --no-progress "$data_dir/demo-files/metrics.txt.gz" s3://checkpoints/run-7/metrics.txt.gz \
  --content-type text/plain --content-encoding gzip --cache-control "max-age=86400"
aws_ s3api head-object --bucket checkpoints --key run-7/metrics.txt.gz \
  --query '[ContentType, ContentEncoding, CacheControl]' --output text
# rclone, with an S3 client of its own, mirrors the run's shards and checks every file by size
# and MD5; its remote is defined by the environment alone.
rclone_() {
  printf '$ rclone'; printf ' %q' "$@"; printf '\n'
  AWS_CA_BUNDLE= RCLONE_CONFIG_TF_TYPE=s3 RCLONE_CONFIG_TF_PROVIDER=Other \
    RCLONE_CONFIG_TF_ENDPOINT="$(cat "$data_dir/url")" RCLONE_CONFIG_TF_REGION=us-east-1 \
    RCLONE_CONFIG_TF_ACCESS_KEY_ID="$AWS_ACCESS_KEY_ID" \
    RCLONE_CONFIG_TF_SECRET_ACCESS_KEY="$AWS_SECRET_ACCESS_KEY" rclone --config /dev/null "$@"
}
rclone_ sync "$run_dir/shards" tf:checkpoints/run-7/shards-by-rclone
rclone_ check "$run_dir/shards" tf:checkpoints/run-7/shards-by-rclone
# This server has no ACLs: a public upload is refused, saying so, rather than stored private.
if refused=$(aws_ s3api put-object --bucket checkpoints --key run-7/public.txt \
  --body "$run_dir/metrics.txt" --acl public-read 2>&1); then
  echo "$refused"; echo "a public-read upload was not refused"; exit 1
fi
echo "$refused"
case "$refused" in
  *AccessControlListNotSupported*x-amz-acl*) echo "  (refused: nothing was stored)" ;;
  *) echo "refused, but not as AccessControlListNotSupported naming x-amz-acl"; exit 1 ;;
esac

step "SQS API: an agent's task queue driven by the AWS CLI and boto3, unchanged but for the endpoint"
# The same access key signs SQS requests; its project is the account in the queue URLs
# (docs/sqs-api.md). This machine's boto3 speaks SQS's Query protocol, current SDKs its JSON one.
tasks_url=$(aws_ sqs create-queue --queue-name agent-tasks --attributes VisibilityTimeout=30 \
  --tags team=agents --query QueueUrl --output text | tail -n 1)
echo "  $tasks_url"
SQS_ENDPOINT="$(cat "$data_dir/url")" /usr/bin/python3 - <<'PY'
import os, boto3
sqs = boto3.client("sqs", endpoint_url=os.environ["SQS_ENDPOINT"], region_name="us-east-1")
url = sqs.get_queue_url(QueueName="agent-tasks")["QueueUrl"]
sent = sqs.send_message_batch(QueueUrl=url, Entries=[
    {"Id": str(i), "MessageBody": "summarise document %d" % i,
     "MessageAttributes": {"tool": {"DataType": "String", "StringValue": "summariser"}}}
    for i in range(3)])
print("  boto3 sent %d tasks" % len(sent["Successful"]))
done = 0
while done < 3:
    for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                 MessageAttributeNames=["All"]).get("Messages", []):
        print("  worker: %r with tool %s" % (m["Body"], m["MessageAttributes"]["tool"]["StringValue"]))
        sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
        done += 1
PY
aws_ sqs get-queue-attributes --queue-url "$tasks_url" --output text \
  --attribute-names ApproximateNumberOfMessages ApproximateNumberOfMessagesNotVisible
tf queue list  # the native CLI sees the same queue

step "Objects in an external S3-compatible bucket: a second server keeps its content in the first one's"
# The first server stands in for any S3-compatible service; the second signs its requests with
# the access key above (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) and keeps no content itself.
tf bucket create external
second_dir="$data_dir/second-server"
"$tf_bin" --data-dir "$second_dir" server --port 0 \
  --objects "s3://external/second?endpoint=$(cat "$data_dir/url")" 2>"$data_dir/second.log" &
second_pid=$!
for _ in $(seq 100); do [ -s "$second_dir/url" ] && break; sleep 0.1; done
[ -s "$second_dir/url" ] || { cat "$data_dir/second.log"; echo "second server did not start"; exit 1; }
tf2() { printf '$ tensorfleet --data-dir second-server'; printf ' %q' "$@"; printf '\n'; "$tf_bin" --data-dir "$second_dir" "$@"; }
tf2 bucket create models
tf2 cp "$run_dir/shards/model-00002.bin" tf://models/run-7/model.bin
aws_ s3 ls --recursive s3://external/   # the blob, in the local blob format, under the prefix
tf2 cp tf://models/run-7/model.bin "$data_dir/demo-files/from-second.bin"
same_bytes "$run_dir/shards/model-00002.bin" "$data_dir/demo-files/from-second.bin" \
  "read back through the second server, byte for byte the original"
[ ! -e "$second_dir/objects" ] && echo "  and the second server's own disk holds no object content"
kill -TERM "$second_pid"; wait "$second_pid" || true; second_pid=""

step "Datasets: lines of text packed into shards, read by a managed job through the environment contract"
tf dataset create fortunes --from /usr/share/games/fortunes/fortunes --format text --shard-size 16KiB
tf dataset describe fortunes
reader_dir="$data_dir/dataset-reader"
mkdir -p "$reader_dir"
cat >"$reader_dir/read.py" <<'PY'
import json, os
import torch.utils.data
import tensorfleet_data

print("TENSORFLEET_DATASETS =", os.environ["TENSORFLEET_DATASETS"])
ds = tensorfleet_data.Dataset("fortunes", seed=1, decode=bytes.decode)
loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
lines = list(loader)
total = tensorfleet_data.fetch_index("fortunes")["samples"]
print("read %d of the dataset's %d lines with 2 DataLoader workers; the first: %r"
      % (len(lines), total, lines[0]))
assert len(lines) == total
# The same lines in batches of 64 as (data, offsets) tensors: each batch crosses from a worker
# to this process through shared memory the dataset made before the workers were forked.
batched = tensorfleet_data.Dataset("fortunes", seed=1, batch_size=64, batched=True)
got = sum(len(offsets) - 1 for data, offsets in
          torch.utils.data.DataLoader(batched, batch_size=None, num_workers=2))
handoff = batched.handoff  # None where no shared memory could be reserved (a warning said so)
print("again in batches of 64 with 2 workers: %d lines; %s" % (got, "batches through shared "
      "memory: %(shared)d, the ordinary way: %(fallbacks)d" % handoff if handoff else
      "every batch the ordinary way"))
assert got == total and (handoff is None or handoff["fallbacks"] == 0)
PY
cat >"$data_dir/read-dataset.yaml" <<YAML
name: read-fortunes
code: "$reader_dir"
command: [/usr/bin/python3, read.py]
env: {PYTHONPATH: "$PWD/build/python"}
datasets: [fortunes]
YAML
if [ -d build/python/tensorfleet_data ]; then
  dataset_job=$("$tf_bin" run "$data_dir/read-dataset.yaml")
  echo "$ tensorfleet run read-dataset.yaml   -> $dataset_job"
  echo "$ tensorfleet logs -f $dataset_job"
  timeout 300 "$tf_bin" logs -f "$dataset_job" ||
    { echo "the dataset job did not finish in 5 minutes"; "$tf_bin" describe "$dataset_job"; exit 1; }
  "$tf_bin" --json describe "$dataset_job" | python3 -c '
import json, sys
state = json.load(sys.stdin)["state"]
assert state == "succeeded", state'
else
  echo "(the tensorfleet_data Python module is not built here: pybind11-dev is missing)"
fi

step "The pool: every node it started and stopped, and why"
tf pool describe demo-nodes
"$tf_bin" --json pool describe demo-nodes | python3 -c '
import json, sys
p = json.load(sys.stdin)
decisions = [(d["what"], d["why"]) for d in p["decisions"]]
started = [d for d in decisions if d[0].startswith("started ")]
stopped = [d for d in decisions if d[0].startswith("stopped ") and d[1] == "idle for 20s"]
assert any(why == "for '"$job"'" for _, why in started), decisions
assert stopped, decisions
print("  %d nodes started for waiting work, %d stopped after 20 s idle (the drained one first)"
      % (sum(len(w.split(", ")) for w, _ in started), len(stopped)))'
echo "  each machine registered with a join token of its own, spent at once (no admin token):"
tf nodes join-token ls
"$tf_bin" --json nodes join-token ls | python3 -c '
import json, sys
tokens = [t for t in json.load(sys.stdin)["join_tokens"] if t["name"].startswith("pool demo-nodes")]
assert tokens and all(t["state"] == "used up" and t["max_uses"] == 1 for t in tokens), tokens
print("  %d machine join tokens, all used up" % len(tokens))'

step "Budgets: a tiny monthly budget on what the project's jobs cost, its alerts, and a refused job"
tf cost budget set demo --amount 0.01 --thresholds 50,80 --action notify
sleep 1  # setting a budget has the server evaluate it at once
tf cost budget list
tf cost budget alerts
if "$tf_bin" --json cost budget show demo | python3 -c '
import json, sys; sys.exit(json.load(sys.stdin)["current"]["state"] != "exhausted")'; then
  tf cost budget set demo --action refuse-submissions
  tf run "$spec" || echo "(refused: exit code $?)"
fi

step "Stop the server gracefully"
kill -TERM "$server_pid"; wait "$server_pid" || true; server_pid=""
echo "demo finished"
