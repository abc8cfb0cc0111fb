"""End-to-end test of the Harmonium kernel in the classic Jupyter Notebook (Debian
jupyter-notebook) in headless Chromium (Debian chromium), driven by tests/e2e/notebook.mjs
with playwright-core from the npm registry (tests/e2e/package.json and its lock; no
browser is downloaded). The notebook server listens on 127.0.0.1 only, with a random
token, and finds the kernel through a kernelspec installed into a temporary JUPYTER_PATH.

Steps: a new Go notebook from the New menu, a plot, an interrupt of a long rbmcore call,
an input box, a progress bar, a restart (see notebook.mjs).

Without chromium, node or the notebook the test skips, except under CI=true, where it
fails: CI must install them (.ci/run)."""

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
E2E = os.path.join(HERE, "e2e")
CHROMIUM = os.environ.get("E2E_CHROMIUM", "/usr/bin/chromium")
REPO = os.path.dirname(HERE)


def missing():
    """What the test needs and this machine lacks."""
    gaps = []
    if not os.access(CHROMIUM, os.X_OK):
        gaps.append(f"{CHROMIUM} (apt-get install chromium)")
    for tool, pkg in [("node", "nodejs"), ("npm", "npm")]:
        if not shutil.which(tool):
            gaps.append(f"{tool} (apt-get install {pkg})")
    try:
        import notebook  # noqa: F401  (Debian python3-notebook, from jupyter-notebook)
    except ImportError:
        gaps.append("the classic Notebook (apt-get install jupyter-notebook)")
    return gaps


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NotebookE2ETest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        gaps = missing()
        if gaps:
            msg = "end-to-end notebook test needs " + ", ".join(gaps)
            if os.environ.get("CI") == "true":
                raise AssertionError(msg + " (required under CI=true: .ci/run installs them)")
            raise unittest.SkipTest(msg)
        cls.binary = os.environ.get("HARMONIUM_BIN") or os.path.join(REPO, "bin", "harmonium")
        if not os.access(cls.binary, os.X_OK):
            raise AssertionError(f"no Harmonium binary at {cls.binary}: run `make build` or set HARMONIUM_BIN")
        if not os.path.isdir(os.path.join(E2E, "node_modules", "playwright-core")):
            # The locked version from the npm registry; never a browser download.
            env = dict(os.environ, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1")
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=E2E, env=env, check=True,
                           timeout=300)
        cls.tmp = tempfile.mkdtemp(prefix="harmonium-e2e-")
        jp = os.path.join(cls.tmp, "jupyter")
        cls.kernel = "harmonium-e2e"
        subprocess.run([cls.binary, "install", "--prefix", jp, "--name", cls.kernel], check=True,
                       capture_output=True, timeout=60)
        nbdir = os.path.join(cls.tmp, "notebooks")
        os.makedirs(nbdir)
        cls.env = dict(os.environ,
                       JUPYTER_PATH=os.path.join(jp, "share", "jupyter"),
                       JUPYTER_CONFIG_DIR=os.path.join(cls.tmp, "config"),
                       JUPYTER_DATA_DIR=os.path.join(cls.tmp, "data"),
                       JUPYTER_RUNTIME_DIR=os.path.join(cls.tmp, "runtime"))
        cls.port = free_port()
        cls.token = secrets.token_hex(16)
        cls.log = open(os.path.join(cls.tmp, "notebook.log"), "w+")
        cls.server = subprocess.Popen(
            [sys.executable, "-m", "notebook", "--no-browser", "--ip=127.0.0.1", f"--port={cls.port}",
             "--port-retries=0", f"--NotebookApp.token={cls.token}", f"--notebook-dir={nbdir}",
             "--NotebookApp.allow_root=True"],
            env=cls.env, stdout=cls.log, stderr=subprocess.STDOUT)
        cls.url = f"http://127.0.0.1:{cls.port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{cls.url}/api/status?token={cls.token}", timeout=2)
                break
            except OSError:
                if cls.server.poll() is not None or time.monotonic() > deadline:
                    cls.tearDownClass()
                    raise AssertionError("the notebook server did not start:\n" + cls.server_log())
                time.sleep(0.3)

    @classmethod
    def server_log(cls):
        cls.log.flush()
        cls.log.seek(0)
        return cls.log.read()[-4000:]

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "server", None) and cls.server.poll() is None:
            cls.server.terminate()
            try:
                cls.server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                cls.server.kill()
                cls.server.wait()
        if getattr(cls, "log", None):
            cls.log.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_notebook_in_chromium(self):
        env = dict(self.env, E2E_URL=self.url, E2E_TOKEN=self.token, E2E_KERNEL=self.kernel,
                   E2E_CHROMIUM=CHROMIUM)
        r = subprocess.run(["node", "notebook.mjs"], cwd=E2E, env=env, capture_output=True, text=True,
                           timeout=600)
        sys.stderr.write(r.stdout)
        if r.returncode != 0:
            self.fail(f"notebook.mjs failed:\n{r.stdout}\n{r.stderr}\n--- notebook server log ---\n"
                      + self.server_log())


if __name__ == "__main__":
    unittest.main()
