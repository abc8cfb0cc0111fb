"""Faults a user meets through a frontend, checked through jupyter_client against the
installed Harmonium kernel (kernelspec $HARMONIUM_KERNEL, binary $HARMONIUM_BIN; see
kernel_protocol_test.py):

- a frontend suspended with SIGSTOP must not hold up output for the other clients:
  another client's 20 MB of output and its result arrive within 10 s, the kernel's
  memory stays bounded, and the suspended frontend gets output again once resumed;
- a signed execute_request replayed verbatim runs once;
- a 70 MB cell is stored in history truncated, and history keeps working in the
  kernels started after it;
- a connection file with the IPv6 loopback (::1 or [::1]) works;
- `harmonium install --name` refuses names that would leave the kernels directory.

Set HARMONIUM_FAULTS_VERBOSE=1 to print the measured figures."""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest
import uuid
from queue import Empty

import zmq
import zmq.asyncio
from jupyter_client import BlockingKernelClient
from jupyter_client.manager import KernelManager

from kernel_client_test import KernelFixture
from kernel_protocol_test import KERNEL, check_kernelspec

TIMEOUT = 60  # generous: the machine is shared; the tight bounds are checked explicitly
VERBOSE = os.environ.get("HARMONIUM_FAULTS_VERBOSE") == "1"


def report(*args):
    if VERBOSE:
        print(*args, file=sys.stderr, flush=True)


def rss_mb(pid):
    """The resident set size of process pid, in MB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS for pid {pid}")


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


# A frontend that connects to the kernel, says "ready", and then — once resumed
# after its SIGSTOP — waits for the marker text in a stream output and exits 0.
SUSPENDED_FRONTEND = textwrap.dedent("""
    import sys, time
    from jupyter_client import BlockingKernelClient
    kc = BlockingKernelClient(connection_file=sys.argv[1])
    kc.load_connection_file()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    print("ready", flush=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except Exception:
            continue
        if msg["msg_type"] == "stream" and sys.argv[2] in msg["content"]["text"]:
            sys.exit(0)
    sys.exit(1)
""")

MB = 1 << 20


class SuspendedFrontendTest(KernelFixture):
    def test_suspended_frontend_does_not_block_others(self):
        frontend = subprocess.Popen([sys.executable, "-c", SUSPENDED_FRONTEND, self.km.connection_file,
                                     marker := "resumed-" + uuid.uuid4().hex],
                                    stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(frontend.stdout.readline().strip(), "ready")
            os.kill(frontend.pid, signal.SIGSTOP)
            pid = self.km.provisioner.process.pid
            self.run_cell("1")  # the interpreter is loaded
            rss_before = rss_mb(pid)

            # 20 MB in 1 KB lines, then the cell's value.
            line = "x" * 1023
            code = f'import "fmt"\nline := "{line}"\nfor i := 0; i < 20*1024; i++ {{ fmt.Println(line) }}\n6*7'
            received, result = 0, None
            start = time.monotonic()
            msg_id = self.kc.execute(code)
            while result is None and time.monotonic() - start < TIMEOUT:
                try:
                    msg = self.kc.get_iopub_msg(timeout=1)
                except Empty:
                    continue
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "stream":
                    received += len(msg["content"]["text"])
                elif msg["msg_type"] == "execute_result":
                    result = msg["content"]["data"]["text/plain"]
            elapsed = time.monotonic() - start
            report(f"\nsuspended frontend: the active client received {received} of {20 * MB} bytes, "
                   f"result {result!r} after {elapsed:.2f} s")
            self.assertEqual(received, 20 * MB, "the active client lost output")
            self.assertEqual(result, "42")
            self.assertLess(elapsed, 10, "the active client waited for the suspended one")
            reply = self.kc.get_shell_msg(timeout=TIMEOUT)
            self.assertEqual(reply["content"]["status"], "ok", reply["content"])

            # Rounds of 30 prints of 1 MB each, as a chatty training loop makes: the
            # suspended frontend's queue is bounded (16 MB), so memory levels off.
            chatty = (f'import "strings"\nbig := strings.Repeat("{line}\\n", 1024)\n'
                      'for i := 0; i < 30; i++ { fmt.Print(big) }')
            self.run_cell(chatty)
            rss_mid = rss_mb(pid)
            self.run_cell(chatty)
            rss_after = rss_mb(pid)
            report(f"kernel RSS {rss_before:.0f} MB before, {rss_mid:.0f} MB after 20 + 30 MB printed, "
                   f"{rss_after:.0f} MB after 30 MB more")
            self.assertLess(rss_after - rss_before, 120, "kernel memory grew with the suspended frontend's backlog")
            self.assertLess(rss_after - rss_mid, 30, "kernel memory grew with the suspended frontend's backlog")

            # Once resumed, the frontend hears from the kernel again.
            os.kill(frontend.pid, signal.SIGCONT)
            deadline = time.monotonic() + TIMEOUT
            while frontend.poll() is None and time.monotonic() < deadline:
                self.run_cell(f'import "fmt"\nfmt.Println("{marker}")')
                time.sleep(0.5)
            self.assertEqual(frontend.wait(timeout=TIMEOUT), 0, "the resumed frontend got no more output")
        finally:
            if frontend.poll() is None:
                os.kill(frontend.pid, signal.SIGCONT)
                frontend.kill()
                frontend.wait()
            frontend.stdout.close()



class ReplayTest(KernelFixture):
    def test_replayed_request_runs_once(self):
        self.run_cell("n := 0")
        msg = self.kc.session.msg("execute_request", {"code": "n++", "silent": False, "store_history": True,
                                                      "user_expressions": {}, "allow_stdin": False,
                                                      "stop_on_error": True})
        self.kc.shell_channel.send(msg)
        self.kc.shell_channel.send(msg)  # the same frames, signature included
        later = self.kc.kernel_info()
        replies = 0
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = self.kc.get_shell_msg(timeout=max(0.01, deadline - time.monotonic()))
            if reply["parent_header"].get("msg_id") == later:
                break
            if reply["parent_header"].get("msg_id") == msg["header"]["msg_id"]:
                replies += 1
        self.assertEqual(replies, 1, "a replayed request was answered")
        content, outputs = self.run_cell("n")
        self.assertEqual([m["content"]["data"]["text/plain"] for m in outputs if m["msg_type"] == "execute_result"],
                         ["1"], "a replayed request ran twice")


class HistoryTest(unittest.TestCase):
    """A kernel with its own Jupyter data directory, hence its own history file."""

    def setUp(self):
        check_kernelspec()
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)
        self.env = dict(os.environ, JUPYTER_DATA_DIR=self.tmp.name)
        self.history = os.path.join(self.tmp.name, "harmonium", "history.jsonl")

    def start(self):
        km = KernelManager(kernel_name=KERNEL)
        km.start_kernel(env=self.env)
        kc = km.client()
        kc.start_channels()
        kc.wait_for_ready(timeout=TIMEOUT)
        self.addCleanup(km.shutdown_kernel, now=True)
        self.addCleanup(kc.stop_channels)
        return km, kc

    def tail(self, kc, n=10):
        reply = kc.history(hist_access_type="tail", n=n, output=False, raw=True, reply=True, timeout=TIMEOUT)
        return [e[2] for e in reply["content"]["history"]]

    def test_huge_cells_do_not_disable_history(self):
        # A history file as an older kernel left it: a 70 MB cell, a corrupt line.
        os.makedirs(os.path.dirname(self.history))
        with open(self.history, "w") as f:
            f.write(json.dumps({"session": 1, "line": 1, "source": "before := 1"}) + "\n")
            f.write(json.dumps({"session": 1, "line": 2, "source": "// " + "x" * (70 * MB)}) + "\n")
            f.write("{corrupt\n")
            f.write(json.dumps({"session": 1, "line": 3, "source": "after := 3"}) + "\n")
        km, kc = self.start()
        self.assertEqual(self.tail(kc), ["before := 1", "after := 3"])

        # A 2 MB cell runs, and is stored truncated with a note.
        big = "x := 1 // " + "y" * (2 * MB)
        reply = kc.execute_interactive(big, timeout=TIMEOUT, output_hook=lambda m: None)
        self.assertEqual(reply["content"]["status"], "ok", reply["content"])
        stored = self.tail(kc, 1)[0]
        self.assertLess(len(stored), 1.1 * MB)
        self.assertTrue(big.startswith(stored.split("\n[history:")[0]))
        self.assertIn(f"this cell had {len(big)} bytes", stored)

        # The next kernel reads the file, and stores its own cells.
        km.restart_kernel(now=True)
        kc.wait_for_ready(timeout=TIMEOUT)
        kc.execute_interactive("next := 4", timeout=TIMEOUT, output_hook=lambda m: None)
        self.assertEqual(self.tail(kc, 3)[0::2], ["after := 3", "next := 4"])
        self.assertIn("this cell had", self.tail(kc, 3)[1])
        self.assertLess(os.path.getsize(self.history), 75 * MB, "history grew by more than the capped cell")


def free_ports6(n):
    """n free ports on the IPv6 loopback; skips the test when it has none."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET6)
            socks.append(s)
            s.bind(("::1", 0))
        return [s.getsockname()[1] for s in socks]
    except OSError as e:
        raise unittest.SkipTest(f"no IPv6 loopback on this machine: {e}") from None
    finally:
        for s in socks:
            s.close()


class CommandLineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.BIN = os.environ.get("HARMONIUM_BIN") or check_kernelspec().argv[0]

    def test_ipv6_loopback(self):
        for ip in ("::1", "[::1]"):
            with self.subTest(ip=ip), tempfile.TemporaryDirectory() as tmp:
                ports = free_ports6(5)
                conn = {"transport": "tcp", "ip": ip, "shell_port": ports[0], "iopub_port": ports[1],
                        "stdin_port": ports[2], "control_port": ports[3], "hb_port": ports[4],
                        "key": uuid.uuid4().hex, "signature_scheme": "hmac-sha256"}
                path = os.path.join(tmp, "conn.json")
                with open(path, "w") as f:
                    json.dump(conn, f)
                kernel = subprocess.Popen([self.BIN, "kernel", "-f", path], stderr=subprocess.PIPE, text=True)
                ctx = zmq.asyncio.Context()
                ctx.setsockopt(zmq.IPV6, 1)  # libzmq connects to IPv6 addresses only when asked to
                kc = BlockingKernelClient(connection_file=path, context=ctx)
                kc.load_connection_file()
                kc.start_channels()
                try:
                    kc.wait_for_ready(timeout=TIMEOUT)
                    results = []
                    reply = kc.execute_interactive("6*7", timeout=TIMEOUT, output_hook=results.append)
                    self.assertEqual(reply["content"]["status"], "ok")
                    self.assertEqual([m["content"]["data"]["text/plain"] for m in results
                                      if m["msg_type"] == "execute_result"], ["42"])
                finally:
                    kc.stop_channels()
                    ctx.destroy()
                    kernel.kill()
                    _, err = kernel.communicate()
                self.assertNotIn("too many colons", err)

    def test_install_rejects_unsafe_names(self):
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("..", ".", "../escape", "a/b", "/abs"):
                with self.subTest(name=name):
                    r = subprocess.run([self.BIN, "install", "--prefix", tmp, "--name", name],
                                       capture_output=True, text=True, timeout=TIMEOUT)
                    self.assertNotEqual(r.returncode, 0)
                    self.assertIn("--name", r.stderr)
            written = [os.path.join(d, f) for d, _, fs in os.walk(tmp) for f in fs]
            self.assertEqual(written, [], "a rejected name wrote files")


if __name__ == "__main__":
    unittest.main()
