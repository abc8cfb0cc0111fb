"""Protocol tests of the installed Harmonium kernel through jupyter_client
(Debian jupyter-client): interrupts of an interpreted infinite loop and of a long
native call (reply within 1 s, earlier variables still readable), SIGINT, restart with
history kept across it, an input_request answered, stop_on_error, comm_open to an
unknown target, 1,000 random and wrongly signed messages on the shell socket, and the
CLI's errors for a bad connection file or a port in use.

The kernelspec is $HARMONIUM_KERNEL (default "harmonium"); see kernel_protocol_test.py."""

import json
import os
import random
import signal
import socket
import subprocess
import tempfile
import time
import unittest
from queue import Empty

import zmq
from jupyter_client.manager import KernelManager
from jupyter_client.session import Session

from kernel_protocol_test import KERNEL, check_kernelspec

TIMEOUT = 60  # generous: the machine is shared; the 1 s bounds are checked explicitly


class KernelFixture(unittest.TestCase):
    """One kernel per test class."""

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

    def value(self, code):
        """The text/plain execute_result of code."""
        content, outputs = self.run_cell(code)
        self.assertEqual(content["status"], "ok", content)
        results = [m["content"]["data"]["text/plain"] for m in outputs if m["msg_type"] == "execute_result"]
        self.assertEqual(len(results), 1, outputs)
        return results[0]

    def stdout(self, outputs):
        return "".join(m["content"]["text"] for m in outputs
                       if m["msg_type"] == "stream" and m["content"]["name"] == "stdout")

    def reply_to(self, msg_id, timeout=TIMEOUT):
        deadline = time.monotonic() + timeout
        while True:
            msg = self.kc.get_shell_msg(timeout=max(0.01, deadline - time.monotonic()))
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg

    def drain_iopub(self):
        while True:
            try:
                self.kc.get_iopub_msg(timeout=0.2)
            except Empty:
                return


class InterruptTest(KernelFixture):
    def interrupt_after(self, code, interrupt):
        self.run_cell('x := 41')
        msg_id = self.kc.execute(code)
        time.sleep(1.0)  # let the cell get stuck
        start = time.monotonic()
        interrupt()
        reply = self.reply_to(msg_id)
        elapsed = time.monotonic() - start
        self.assertEqual(reply["content"]["status"], "error", reply["content"])
        self.assertLess(elapsed, 1.0, f"execute_reply {elapsed:.3f} s after the interrupt")
        self.drain_iopub()
        self.assertEqual(self.value("x + 1"), "42")

    def test_interrupt_interpreted_loop(self):
        self.interrupt_after("for {\n}", self.km.interrupt_kernel)

    def test_interrupt_native_call(self):
        self.interrupt_after('import "time"\ntime.Sleep(time.Hour)', self.km.interrupt_kernel)

    def test_sigint(self):
        self.interrupt_after("n := 0\nfor {\n\tn++\n}", lambda: self.km.signal_kernel(signal.SIGINT))


class StdinTest(KernelFixture):
    def test_input_request(self):
        code = 'import "fmt"\nvar name string\nfmt.Scanln(&name)\nfmt.Println("hello " + name)'
        prompts = []

        def answer(msg):
            prompts.append(msg["content"])
            self.kc.input("Ada")

        content, outputs = self.run_cell(code, allow_stdin=True, stdin_hook=answer)
        self.assertEqual(content["status"], "ok", content)
        self.assertEqual(len(prompts), 1)
        self.assertFalse(prompts[0]["password"])
        self.assertIn("hello Ada", self.stdout(outputs))


class ShellTest(KernelFixture):
    def test_stop_on_error_aborts_queued_cells(self):
        first = self.kc.execute('import "time"\ntime.Sleep(300 * time.Millisecond)\npanic("stop here")')
        second = self.kc.execute("1+1")
        self.assertEqual(self.reply_to(first)["content"]["status"], "error")
        self.assertEqual(self.reply_to(second)["content"]["status"], "aborted")
        self.drain_iopub()
        self.assertEqual(self.value("1+1"), "2")

    def test_comm_open_unknown_target(self):
        self.drain_iopub()
        msg = self.kc.session.msg("comm_open", {"comm_id": "c0ffee", "target_name": "no.such.target", "data": {}})
        self.kc.shell_channel.send(msg)
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            m = self.kc.get_iopub_msg(timeout=TIMEOUT)
            if m["msg_type"] == "comm_close":
                self.assertEqual(m["content"]["comm_id"], "c0ffee")
                return
        self.fail("no comm_close")

    def test_comm_info(self):
        reply = self.kc.comm_info(reply=True, timeout=TIMEOUT)
        self.assertEqual(reply["content"]["status"], "ok")
        self.assertEqual(reply["content"]["comms"], {})

    def test_garbage_on_shell(self):
        """1,000 random and wrongly signed messages, then a normal cell."""
        info = self.km.get_connection_info(session=False)
        url = f"{info['transport']}://{info['ip']}:{info['shell_port']}"
        rng = random.Random(2)
        good_key = info["key"] if isinstance(info["key"], bytes) else info["key"].encode()
        wrong = Session(key=b"not-the-key", signature_scheme="hmac-sha256")
        unsigned = Session(key=b"")
        ctx = zmq.Context.instance()
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 1000)
        sock.connect(url)
        try:
            for i in range(1000):
                kind = i % 4
                if kind == 0:  # random frames
                    frames = [rng.randbytes(rng.randrange(0, 64)) for _ in range(rng.randrange(1, 8))]
                elif kind == 1:  # random frames after a delimiter
                    frames = [b"<IDS|MSG>"] + [rng.randbytes(rng.randrange(0, 200)) for _ in range(rng.randrange(0, 9))]
                elif kind == 2:  # a real request signed with the wrong key
                    msg = wrong.msg("execute_request", {"code": 'panic("must not run")', "silent": False})
                    frames = wrong.serialize(msg)
                else:  # unsigned, or a right-looking signature of other bytes
                    msg = unsigned.msg("execute_request", {"code": 'panic("must not run")'})
                    frames = unsigned.serialize(msg)
                    frames[1] = rng.randbytes(32).hex().encode()
                sock.send_multipart(frames)
        finally:
            sock.close()
        self.assertTrue(good_key)
        self.assertEqual(self.value("1+1"), "2")
        self.assertTrue(self.kc.is_alive())
        history = self.kc.history(hist_access_type="search", pattern="*must not run*", reply=True, timeout=TIMEOUT)
        self.assertEqual(history["content"]["history"], [], "a wrongly signed cell was executed")


class RestartTest(KernelFixture):
    def test_restart(self):
        self.run_cell("kept := 7")
        pid_before = self.km.provisioner.process.pid
        self.km.restart_kernel(now=False)
        self.kc.wait_for_ready(timeout=TIMEOUT)
        self.assertNotEqual(self.km.provisioner.process.pid, pid_before)
        content, _ = self.run_cell("kept")
        self.assertEqual(content["status"], "error", "state survived a restart")
        self.assertEqual(self.value("1+1"), "2")
        # History is persisted across the restart.
        h = self.kc.history(hist_access_type="range", session=-1, start=1, stop=0, output=False, raw=True,
                            reply=True, timeout=TIMEOUT)["content"]["history"]
        self.assertIn("kept := 7", [e[2] for e in h])


class CommandLineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.BIN = os.environ.get("HARMONIUM_BIN") or check_kernelspec().argv[0]

    def run_kernel(self, conn_path):
        return subprocess.run([self.BIN, "kernel", "-f", conn_path], capture_output=True, text=True, timeout=60)

    def test_bad_connection_files(self):
        with tempfile.TemporaryDirectory() as tmp:
            missing = os.path.join(tmp, "missing.json")
            garbled = os.path.join(tmp, "garbled.json")
            with open(garbled, "w") as f:
                f.write('{"ip": ')
            for path in (missing, garbled):
                r = self.run_kernel(path)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn(path, r.stderr)

    def test_port_in_use(self):
        with socket.socket() as s, tempfile.TemporaryDirectory() as tmp:
            s.bind(("127.0.0.1", 0))
            s.listen()
            port = s.getsockname()[1]
            free = []
            for _ in range(4):
                with socket.socket() as f:
                    f.bind(("127.0.0.1", 0))
                    free.append(f.getsockname()[1])
            conn = {"transport": "tcp", "ip": "127.0.0.1", "shell_port": free[0], "iopub_port": free[1],
                    "stdin_port": free[2], "control_port": free[3], "hb_port": port,
                    "key": "k", "signature_scheme": "hmac-sha256"}
            path = os.path.join(tmp, "conn.json")
            with open(path, "w") as f:
                json.dump(conn, f)
            r = self.run_kernel(path)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn(str(port), r.stderr)


if __name__ == "__main__":
    unittest.main()
