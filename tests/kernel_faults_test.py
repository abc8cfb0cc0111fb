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
from jupyter_client import BlockingKernelClient
from jupyter_client.manager import KernelManager

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


class KernelFixture(unittest.TestCase):
    """One kernel per test class, started through its kernelspec."""

    @classmethod
    def setUpClass(cls):
        check_kernelspec()
        cls.km = KernelManager(kernel_name=KERNEL)
        cls.km.start_kernel()
        cls.kc = cls.km.client()
        cls.kc.start_channels()
        cls.kc.wait_for_ready(timeout=TIMEOUT)

    @classmethod
    def tearDownClass(cls):
        cls.kc.stop_channels()
        cls.km.shutdown_kernel(now=True)

    def run_cell(self, code, timeout=TIMEOUT, **kw):
        """Executes code; returns the reply content and the iopub messages up to idle."""
        outputs = []
        reply = self.kc.execute_interactive(code, timeout=timeout, output_hook=outputs.append, **kw)
        return reply["content"], outputs


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
            self.assertLess(rss_after - rss_before, 100, "kernel memory grew with the suspended frontend's backlog")
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


if __name__ == "__main__":
    unittest.main()
