#!/usr/bin/python3
"""A command-provider script whose machines are `tensorfleet worker` processes on this host.

One script serves create, delete and list (the input's "action" says which): the pool spec
names it three times (examples/pools/local-command.yaml). It shows the contract of
docs/pools.md ("The command provider") in its smallest form, and is what the end-to-end tests
run. Unlike the local provider, its workers are not the server's children: like cloud machines,
they outlive a server that stops, until `delete` stops them.

Environment: TENSORFLEET_BINARY (the tensorfleet to run; default: `tensorfleet` on PATH) and
MACHINES_DIR (where each machine keeps its pid, log and worker directory; default: ./machines,
in the pool's directory where the server runs this script).
"""
import json
import os
import signal
import subprocess
import sys
import time


def machine_dir(machine):
    root = os.environ.get("MACHINES_DIR", os.path.join(os.getcwd(), "machines"))
    return os.path.join(root, machine)


def pid_of(path):
    try:
        with open(os.path.join(path, "pid")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def alive(pid):
    if pid is None:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return ") Z " not in f.read()  # a zombie has stopped
    except OSError:
        return False


def create(call):
    path = machine_dir(call["machine"])
    if alive(pid_of(path)):
        return {"detail": "already running"}  # asked again: nothing more to do
    os.makedirs(path, mode=0o700, exist_ok=True)
    binary = os.environ.get("TENSORFLEET_BINARY", "tensorfleet")
    argv = [binary] + call["worker_args"] + [
        "--worker-dir", os.path.join(path, "worker"), "--heartbeat", "1s"]
    # The join token goes in the environment, never on the command line.
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": os.environ.get("HOME", "/"),
           "LANG": os.environ.get("LANG", "C.UTF-8"),
           "TENSORFLEET_TOKEN": call["join_token"]}
    with open(os.path.join(path, "worker.log"), "ab") as log:
        worker = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                  stderr=log, start_new_session=True)
    with open(os.path.join(path, "pid"), "w") as f:
        f.write(str(worker.pid))
    return {"detail": f"pid {worker.pid}"}


def delete(call):
    path = machine_dir(call["machine"])
    pid = pid_of(path)
    if alive(pid):
        os.kill(pid, signal.SIGTERM)  # the worker interrupts its jobs and stops
        deadline = time.time() + 30
        while alive(pid) and time.time() < deadline:
            time.sleep(0.05)
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    if os.path.isdir(path):
        subprocess.run(["rm", "-rf", path], check=True)
    return {}


def list_machines(call):
    root = os.environ.get("MACHINES_DIR", os.path.join(os.getcwd(), "machines"))
    machines = []
    if os.path.isdir(root):
        for name in sorted(os.listdir(root)):
            pid = pid_of(os.path.join(root, name))
            running = alive(pid)
            machines.append({"id": name, "running": running,
                             "detail": f"pid {pid}" if running else f"pid {pid} exited"})
    return {"machines": machines}


def main():
    call = json.load(sys.stdin)
    actions = {"create": create, "delete": delete, "list": list_machines}
    if call.get("action") not in actions:
        sys.exit(f"unknown action {call.get('action')!r}")
    print(json.dumps(actions[call["action"]](call)))


if __name__ == "__main__":
    main()
