"""Executes every notebook in notebooks/ twice, with reduced sizes (HARMONIUM_QUICK=1):
once headlessly with `harmonium run` and once through Jupyter with nbconvert and the
installed Harmonium kernel. Each run must finish without an error output, and each
notebook must produce at least one image and print its reproduction table (a final
cell whose output contains the word "measured")."""

import glob
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("HARMONIUM_BIN", os.path.join(ROOT, "bin", "harmonium"))
NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))
KERNEL = os.environ.get("HARMONIUM_KERNEL", "harmonium")


def outputs(nb):
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            yield from cell.get("outputs", [])


def text_of(out):
    if out["output_type"] == "stream":
        t = out["text"]
    else:
        t = out.get("data", {}).get("text/plain", "")
    return "".join(t) if isinstance(t, list) else t


class NotebookTest(unittest.TestCase):
    def check_executed(self, path, name):
        with open(path) as f:
            nb = json.load(f)
        outs = list(outputs(nb))
        errors = [o for o in outs if o["output_type"] == "error"]
        self.assertEqual(errors, [], f"{name}: error outputs")
        images = [o for o in outs if "image/png" in o.get("data", {})]
        self.assertTrue(images, f"{name}: produced no image")
        last = [c for c in nb["cells"] if c["cell_type"] == "code"][-1]
        final = "".join(text_of(o) for o in last.get("outputs", []))
        self.assertIn("measured", final.lower(), f"{name}: final cell prints no reproduction table")

    def run_both(self, nbpath):
        name = os.path.basename(nbpath)
        env = dict(os.environ, HARMONIUM_QUICK="1")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "run-" + name)
            r = subprocess.run([BIN, "run", nbpath, "-o", out], cwd=os.path.dirname(nbpath),
                               env=env, capture_output=True, text=True, timeout=900)
            self.assertEqual(r.returncode, 0, f"harmonium run {name}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
            self.check_executed(out, "harmonium run " + name)

            # nbconvert runs the kernel in the notebook's own folder, so relative data paths hold.
            copy = os.path.join(tmp, name)
            r = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
                                "--ExecutePreprocessor.kernel_name=" + KERNEL,
                                "--ExecutePreprocessor.timeout=900",
                                "--output-dir", tmp, "--output", name, nbpath],
                               cwd=os.path.dirname(nbpath), env=env, capture_output=True, text=True,
                               timeout=1200)
            self.assertEqual(r.returncode, 0, f"nbconvert {name}:\n{r.stderr[-3000:]}")
            self.check_executed(copy, "nbconvert " + name)


def _make(nbpath):
    def test(self):
        self.run_both(nbpath)
    return test


for _nb in NOTEBOOKS:
    _name = os.path.splitext(os.path.basename(_nb))[0].replace("-", "_")
    setattr(NotebookTest, "test_" + _name, _make(_nb))

if __name__ == "__main__":
    unittest.main()
