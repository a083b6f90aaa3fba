#!/usr/bin/python3
"""A command-provider script for AWS EC2, through the AWS CLI (`aws`, v1 or v2).

One script serves create, delete and list (the input's "action" says which; the contract is
in docs/pools.md, "The command provider"). Machines are instances tagged
tensorfleet-pool=<pool> and tensorfleet-machine=<machine>, started from a launch template whose
image has `tensorfleet` in /usr/local/bin. Their user data starts the worker under systemd with
the machine's join token (one use, spent when the worker registers).

- Spot: a shape with `spot: true` asks for a spot instance; if EC2 has no spot capacity (or the
  price is above the maximum) and SPOT_FALLBACK=on-demand, it asks for an on-demand instance
  instead, labelled spot=false.
- Gangs: the shape's placement_group becomes the instance's cluster placement group, its zone
  the availability zone.
- Idempotent: a machine that already has an instance (pending or running) is left as it is,
  and each run-instances carries a client token made of the machine's name, so a retried call
  never starts a second instance.

Environment (the pool spec's `env:`): LAUNCH_TEMPLATE (an id, lt-...; required),
LAUNCH_TEMPLATE_VERSION (default $Latest), INSTANCE_TYPE (overrides the template's),
SUBNET (a subnet id), SPOT_FALLBACK (on-demand or none; default none), AWS_REGION or
AWS_PROFILE as the CLI reads them, AWS (the CLI to run; default: aws).
"""
import json
import os
import shlex
import subprocess
import sys

# What EC2 answers when a spot request cannot be met now (RunInstances error codes).
NO_SPOT_CAPACITY = ("InsufficientInstanceCapacity", "SpotMaxPriceTooLow",
                    "MaxSpotInstanceCountExceeded", "UnfulfillableCapacity")
LIVE_STATES = ("pending", "running")
ALL_STATES = "pending,running,stopping,stopped,shutting-down"


class AwsError(Exception):
    pass


def aws(*args):
    cli = os.environ.get("AWS", "aws")
    done = subprocess.run([cli, "ec2", *args, "--output", "json"], capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise AwsError(done.stderr.strip() or f"aws exited with {done.returncode}")
    return json.loads(done.stdout) if done.stdout.strip() else {}


def instances(pool, machine=None, states=ALL_STATES):
    filters = [f"Name=tag:tensorfleet-pool,Values={pool}",
               f"Name=instance-state-name,Values={states}"]
    if machine:
        filters.append(f"Name=tag:tensorfleet-machine,Values={machine}")
    answer = aws("describe-instances", "--filters", *filters)
    return [i for r in answer.get("Reservations", []) for i in r.get("Instances", [])]


def tag(instance, key):
    for t in instance.get("Tags", []):
        if t.get("Key") == key:
            return t.get("Value")
    return None


def user_data(call, spot):
    args = list(call["worker_args"])
    if spot:
        args += ["--spot-notice-url",
                 "http://169.254.169.254/latest/meta-data/spot/instance-action"]
    else:
        # An on-demand fallback of a spot shape: say so, for metering and placement.
        args = [a for a in args if a != "--spot"]
    env_file = "/etc/tensorfleet/worker.env"
    return "\n".join([
        "#!/bin/bash",
        "set -euo pipefail",
        "mkdir -p /etc/tensorfleet /var/lib/tensorfleet",
        f"umask 077; echo TENSORFLEET_TOKEN={shlex.quote(call['join_token'])} > {env_file}",
        'IMDS=$(curl -s -X PUT http://169.254.169.254/latest/api/token '
        '-H "X-aws-ec2-metadata-token-ttl-seconds: 60")',
        'ID=$(curl -s -H "X-aws-ec2-metadata-token: $IMDS" '
        'http://169.254.169.254/latest/meta-data/instance-id)',
        "systemd-run --unit tensorfleet-worker -p Restart=on-failure "
        f"-p EnvironmentFile={env_file} /usr/local/bin/tensorfleet "
        + " ".join(shlex.quote(a) for a in args)
        + " --worker-dir /var/lib/tensorfleet/worker --label instance_id=$ID",
        "",
    ])


def run_instance(call, spot):
    shape = call["shape"]
    pool, machine = call["pool"], call["machine"]
    template = os.environ.get("LAUNCH_TEMPLATE")
    if not template:
        raise AwsError("LAUNCH_TEMPLATE is not set (the pool spec's provider.env)")
    version = os.environ.get("LAUNCH_TEMPLATE_VERSION", "$Latest")
    tags = [{"Key": "tensorfleet-pool", "Value": pool},
            {"Key": "tensorfleet-machine", "Value": machine},
            {"Key": "Name", "Value": machine}]
    args = ["run-instances", "--count", "1",
            "--launch-template", f"LaunchTemplateId={template},Version={version}",
            "--client-token", f"{machine}-{'spot' if spot else 'od'}",
            "--tag-specifications",
            json.dumps([{"ResourceType": "instance", "Tags": tags}]),
            "--user-data", user_data(call, spot)]
    if os.environ.get("INSTANCE_TYPE"):
        args += ["--instance-type", os.environ["INSTANCE_TYPE"]]
    if os.environ.get("SUBNET"):
        args += ["--subnet-id", os.environ["SUBNET"]]
    placement = {}
    if shape.get("placement_group"):
        placement["GroupName"] = shape["placement_group"]
    if shape.get("zone"):
        placement["AvailabilityZone"] = shape["zone"]
    if placement:
        args += ["--placement", json.dumps(placement)]
    if spot:
        args += ["--instance-market-options", json.dumps(
            {"MarketType": "spot",
             "SpotOptions": {"SpotInstanceType": "one-time",
                             "InstanceInterruptionBehavior": "terminate"}})]
    answer = aws(*args)
    return answer["Instances"][0]["InstanceId"]


def create(call):
    existing = [i for i in instances(call["pool"], call["machine"], "pending,running")]
    if existing:
        return {"detail": existing[0]["InstanceId"] + " (already asked for)"}
    spot = bool(call["shape"].get("spot"))
    try:
        instance = run_instance(call, spot)
    except AwsError as e:
        fallback = os.environ.get("SPOT_FALLBACK", "none") == "on-demand"
        if not (spot and fallback and any(code in str(e) for code in NO_SPOT_CAPACITY)):
            raise
        print(f"no spot capacity ({e}); asking for on-demand", file=sys.stderr)
        instance = run_instance(call, False)
        return {"detail": instance + " (on-demand fallback)"}
    return {"detail": instance}


def delete(call):
    ids = [i["InstanceId"] for i in instances(call["pool"], call["machine"],
                                              "pending,running,stopping,stopped")]
    if ids:
        aws("terminate-instances", "--instance-ids", *ids)
    return {}


def list_machines(call):
    machines = []
    for i in instances(call["pool"]):
        machine = tag(i, "tensorfleet-machine")
        if not machine:
            continue
        state = i.get("State", {}).get("Name", "unknown")
        machines.append({"id": machine, "running": state in LIVE_STATES,
                         "detail": f"{i['InstanceId']} {i.get('InstanceType', '')} {state}"})
    return {"machines": machines}


def main():
    call = json.load(sys.stdin)
    actions = {"create": create, "delete": delete, "list": list_machines}
    if call.get("action") not in actions:
        sys.exit(f"unknown action {call.get('action')!r}")
    try:
        print(json.dumps(actions[call["action"]](call)))
    except AwsError as e:
        sys.exit(str(e))


if __name__ == "__main__":
    main()
