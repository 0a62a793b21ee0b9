#!/usr/bin/env python3
"""What `rtscope --on BOARD measure` costs beside a local `measure`, with
this machine as the board: an sshd of the script's own on 127.0.0.1 (its
own keys and config, the board's files in a temp dir), as the tests do.

Per pair, one local run and one remote run of DURATION seconds, one
after the other, in alternating order: the wall time of each (the remote
one includes reaching the board, the binary check, starting detached,
following once a second, copying the run back) and the p99 and maximum
each run measured (does following from here disturb the board?). The
first remote run also copies the binary; it is reported apart.

Usage: sudo python3 bench/remote-overhead.py [--pairs 3] [--duration 20]
Needs root, OpenSSH (openssh-server) and a release build.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

BIN = os.path.abspath(os.environ.get("RTSCOPE", "target/release/rtscope"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_sshd(tmp):
    for k in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                        os.path.join(tmp, k)], check=True)
    shutil.copy(os.path.join(tmp, "client_key.pub"), os.path.join(tmp, "authorized_keys"))
    port = free_port()
    board = os.path.join(tmp, "board")
    with open(os.path.join(tmp, "sshd_config"), "w") as f:
        f.write(f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {tmp}/host_key\n"
                f"PidFile {tmp}/sshd.pid\nAuthorizedKeysFile {tmp}/authorized_keys\n"
                "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                "KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\n"
                f"SetEnv XDG_CACHE_HOME={board}/cache XDG_DATA_HOME={board}/data "
                f"RTSCOPE_RUN_DIR={board}/run\n")
    with open(os.path.join(tmp, "ssh_config"), "w") as f:
        f.write(f"Host board\n HostName 127.0.0.1\n Port {port}\n User root\n"
                f" IdentityFile {tmp}/client_key\n IdentitiesOnly yes\n"
                " StrictHostKeyChecking no\n UserKnownHostsFile /dev/null\n LogLevel ERROR\n")
    made = not os.path.isdir("/run/sshd")
    os.makedirs("/run/sshd", exist_ok=True)
    p = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", os.path.join(tmp, "sshd_config")],
                         stderr=open(os.path.join(tmp, "sshd.log"), "w"))
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    return p, made


def measure(args, json_path, env):
    t0 = time.monotonic()
    subprocess.run([BIN] + args + ["measure", "-D", f"{ARGS.duration}s", "-t", "1", "-a", "1",
                                   "-q", "--json", json_path],
                   check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    o = json.load(open(json_path))["overall"]
    return wall, o["p99_ns"] / 1000, o["max_ns"] / 1000


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--duration", type=int, default=20)
    ARGS = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (SCHED_FIFO, and sshd logs in as root)")
    tmp = tempfile.mkdtemp(prefix="rtscope-bench-remote.")
    sshd, made = start_sshd(tmp)
    env = dict(os.environ, RTSCOPE_DB=os.path.join(tmp, "local.db"),
               RTSCOPE_SSH_CONFIG=os.path.join(tmp, "ssh_config"),
               RTSCOPE_RUN_DIR=os.path.join(tmp, "run"))
    remote = ["--on", "ssh://board"]
    rows = []
    try:
        first = measure(remote, os.path.join(tmp, "first.json"), env)
        for i in range(ARGS.pairs):
            order = [("local", []), ("remote", remote)]
            if i % 2:
                order.reverse()
            for name, args in order:
                rows.append((name,) + measure(args, os.path.join(tmp, f"{name}{i}.json"), env))
    finally:
        sshd.terminate()
        sshd.wait()
        if made:
            shutil.rmtree("/run/sshd", ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    d = ARGS.duration
    print(f"{ARGS.pairs} pairs of {d}s runs, CPU 1, alternating order")
    print(f"first remote run (binary copied): wall {first[0]:.2f} s, {first[0] - d:.2f} s beyond the run")
    print(f"{'run':8} {'wall s':>8} {'beyond s':>9} {'p99 us':>8} {'max us':>9}")
    for name, wall, p99, mx in rows:
        print(f"{name:8} {wall:8.2f} {wall - d:9.2f} {p99:8.1f} {mx:9.1f}")
    for name in ("local", "remote"):
        w = [r[1] - d for r in rows if r[0] == name]
        p = [r[2] for r in rows if r[0] == name]
        print(f"{name:8} mean beyond {sum(w) / len(w):.2f} s, mean p99 {sum(p) / len(p):.1f} us")
    loc = [r[2] for r in rows if r[0] == "local"]
    rem = [r[2] for r in rows if r[0] == "remote"]
    print(f"p99 remote / local: {(sum(rem) / len(rem)) / (sum(loc) / len(loc)):.2f}")


if __name__ == "__main__":
    main()
