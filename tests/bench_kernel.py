"""Kernel benchmark (`make bench` runs it through bench_kernel.sh).

Measures, for the Harmonium kernel ($HARMONIUM_BIN) and, as a baseline in the same run,
for ipykernel:
  * ready: wall time from process start to the first kernel_info_reply (median of 5 starts;
    the client socket retries every 1 ms so the figure is the kernel's, not the client's);
  * round trip: median time of `1+1` sent with a jupyter_client BlockingKernelClient
    (execute_request -> execute_reply), and until the kernel is idle again on iopub.
Goals for Harmonium: ready <= 300 ms, round trip <= 2 ms."""

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import zmq
from jupyter_client.blocking import BlockingKernelClient
from jupyter_client.session import Session, new_id

STARTS = int(os.environ.get("BENCH_KERNEL_STARTS", "5"))
CELLS = int(os.environ.get("BENCH_KERNEL_CELLS", "300"))


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def connection_file(tmp):
    p = free_ports(5)
    info = {"transport": "tcp", "ip": "127.0.0.1", "shell_port": p[0], "iopub_port": p[1],
            "stdin_port": p[2], "control_port": p[3], "hb_port": p[4],
            "key": new_id(), "signature_scheme": "hmac-sha256", "kernel_name": ""}
    path = os.path.join(tmp, f"kernel-{p[0]}.json")
    with open(path, "w") as f:
        json.dump(info, f)
    return path, info


def start(argv_for, tmp):
    path, info = connection_file(tmp)
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv_for(path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return proc, path, info, t0


def stop(proc):
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_ready(info):
    """Sends kernel_info_request on a fresh socket that retries every 1 ms; returns at the reply."""
    session = Session(key=info["key"].encode(), signature_scheme="hmac-sha256")
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.RECONNECT_IVL, 1)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(f"tcp://127.0.0.1:{info['shell_port']}")
    try:
        session.send(sock, "kernel_info_request", {})
        if not sock.poll(60_000):
            raise RuntimeError("no kernel_info_reply within 60 s")
        _, msg = session.recv(sock)
        assert msg["msg_type"] == "kernel_info_reply", msg["msg_type"]
    finally:
        sock.close()


def time_to_ready(argv_for, tmp):
    proc, _, info, t0 = start(argv_for, tmp)
    try:
        wait_ready(info)
        return time.perf_counter() - t0
    finally:
        stop(proc)


def round_trips(argv_for, tmp):
    proc, path, info, _ = start(argv_for, tmp)
    wait_ready(info)  # before the client's heartbeat starts counting
    kc = BlockingKernelClient(connection_file=path)
    kc.load_connection_file()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        for _ in range(20):  # warm-up
            kc.execute_interactive("1+1", timeout=30, output_hook=lambda m: None)
        reply, idle = [], []
        for _ in range(CELLS):
            t = time.perf_counter()
            msg = kc.execute("1+1", reply=True, timeout=30)
            reply.append(time.perf_counter() - t)
            assert msg["content"]["status"] == "ok", msg["content"]
            while True:  # consume the cell's iopub messages up to idle
                m = kc.get_iopub_msg(timeout=30)
                if (m["msg_type"] == "status" and m["content"]["execution_state"] == "idle"
                        and m["parent_header"].get("msg_id") == msg["parent_header"]["msg_id"]):
                    break
            idle.append(time.perf_counter() - t)
        reply.sort()
        return statistics.median(reply), reply[len(reply) // 10], statistics.median(idle)
    finally:
        kc.stop_channels()
        stop(proc)


def measure(name, argv_for, tmp):
    ready = statistics.median(time_to_ready(argv_for, tmp) for _ in range(STARTS))
    rt, p10, idle = round_trips(argv_for, tmp)
    print(f"{name:<11} ready {ready * 1e3:7.1f} ms   1+1 round trip {rt * 1e3:6.3f} ms "
          f"(10th percentile {p10 * 1e3:6.3f} ms; until idle {idle * 1e3:6.3f} ms)", flush=True)
    return ready, rt


def main():
    binary = os.environ.get("HARMONIUM_BIN") or os.path.join(os.path.dirname(__file__), "..", "bin", "harmonium")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("JUPYTER_DATA_DIR", tmp)  # keep benchmark cells out of the user's history
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"kernel benchmark: median of {STARTS} starts and {CELLS} cells, "
              f"{os.cpu_count()} CPUs, load average {load:.1f}")
        ready, rt = measure("harmonium", lambda f: [binary, "kernel", "-f", f], tmp)
        try:
            measure("ipykernel", lambda f: [sys.executable, "-m", "ipykernel_launcher", "-f", f], tmp)
        except Exception as e:  # the baseline is informative only
            print(f"ipykernel   baseline unavailable: {e}")
    ok = ready <= 0.300 and rt <= 0.002
    print(f"goal (ready <= 300 ms, round trip <= 2 ms): {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
