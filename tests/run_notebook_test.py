"""`harmonium run` on notebooks ($HARMONIUM_BIN, default bin/harmonium): a kill -9 while
the executed notebook is being written leaves the original intact (the write goes to a
temporary file in the same directory, fsynced, then renamed), and the time to record a
cell's output grows linearly with its size (CPU time, so that a loaded machine does not
decide the ratio)."""

import json
import os
import resource
import signal
import subprocess
import tempfile
import time
import unittest

BIN = os.environ.get("HARMONIUM_BIN") or os.path.join(os.path.dirname(__file__), "..", "bin", "harmonium")


def notebook(path, *sources):
    cells = [{"cell_type": "code", "metadata": {}, "source": s, "outputs": [], "execution_count": None}
             for s in sources]
    with open(path, "w") as f:
        json.dump({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, f)


def printing(mb):
    """A cell printing mb MiB in lines of 1 KiB."""
    return ('import (\n\t"fmt"\n\t"strings"\n)\nline := strings.Repeat("x", 1023) + "\\n"\n'
            f"for i := 0; i < {mb}*1024; i++ {{\n\tfmt.Print(line)\n}}")


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class RunNotebookTest(unittest.TestCase):
    def setUp(self):
        if not os.path.exists(BIN):
            self.skipTest(f"{BIN} not built; run `make build`")
        self.dir = tempfile.TemporaryDirectory()
        self.addCleanup(self.dir.cleanup)

    def test_kill_while_writing_keeps_the_notebook(self):
        path = os.path.join(self.dir.name, "nb.ipynb")
        notebook(path, printing(64), "6 * 7")
        with open(path, "rb") as f:
            original = f.read()
        before = os.stat(path)
        proc = subprocess.Popen([BIN, "run", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # Kill at the first sign of the write: a temporary file beside the notebook,
        # or (an in-place write) the notebook itself changing.
        killed = False
        deadline = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < deadline:
            names = os.listdir(self.dir.name)
            st = os.stat(path)
            if len(names) > 1 or (st.st_size, st.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
                proc.send_signal(signal.SIGKILL)
                killed = True
                break
            time.sleep(0.001)
        proc.wait()
        if not killed:
            self.skipTest("the notebook was written before the kill could land")
        with open(path, "rb") as f:
            after = f.read()
        json.loads(after)  # valid JSON
        self.assertEqual(after, original, "the notebook changed although the run was killed")

    def test_written_notebook(self):
        path = os.path.join(self.dir.name, "nb.ipynb")
        notebook(path, printing(1), "6 * 7")
        os.chmod(path, 0o600)
        subprocess.run([BIN, "run", path], check=True, capture_output=True, timeout=300)
        with open(path) as f:
            nb = json.load(f)
        self.assertEqual(len(nb["cells"][0]["outputs"][0]["text"]), 1 << 20)
        self.assertEqual(nb["cells"][1]["outputs"][0]["data"]["text/plain"], "42")
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o600, "the notebook's permissions changed")
        self.assertEqual(os.listdir(self.dir.name), ["nb.ipynb"], "a temporary file was left behind")

    def test_output_time_is_linear(self):
        cpu = {}
        for mb in (8, 64):
            path = os.path.join(self.dir.name, f"print{mb}.ipynb")
            notebook(path, printing(mb))
            start = children_cpu()
            subprocess.run([BIN, "run", path], check=True, capture_output=True, timeout=600)
            cpu[mb] = children_cpu() - start
            with open(path) as f:
                self.assertEqual(len(json.load(f)["cells"][0]["outputs"][0]["text"]), mb << 20)
        print(f"\n  CPU time of harmonium run: 8 MB {cpu[8]:.2f} s, 64 MB {cpu[64]:.2f} s", end=" ")
        # Linear: at most 8x (less, with the start-up); a quadratic concatenation
        # would be well over 20x. Sizes 8x apart keep the bound far from both, so
        # the noise of CPU times on a shared machine cannot decide the test.
        self.assertLess(cpu[64], 12 * cpu[8], cpu)


if __name__ == "__main__":
    unittest.main()
