"""Executes every notebook in notebooks/ twice at the quick scale (HARMONIUM_SCALE=quick):
once headlessly with `harmonium run` and once through Jupyter with nbconvert and the
installed Harmonium kernel. Each run must finish without an error output, and each
notebook must produce at least one image and show its reproduction table in its final
cell: a display.Table whose text/plain rendering has a header naming the columns (one of
them "measured"), separated by " | ", and one row per quantity, and whose text/html is an
HTML table.

The table is checked, not just found: every measured cell must hold at least one finite
number (no NaN or Inf), and when the table has a "check" column every verdict must be
"pass", "fail" or "-" (no criterion). The rows in REQUIRED_PASS are the criteria that the
quick scale really meets (see each notebook's table); they must say "pass". The other
criteria (e.g. the CD–PCD log-likelihood gap, or the saturation of the Linear RBM) need
the full sizes and may honestly fail at the quick scale; their numbers are still checked.

The notebook executed by Jupyter is then exported with `jupyter nbconvert --to html`
(Debian's 6.5 strips inline SVG): every image output must appear in the HTML as a
visible PNG. The markdown cells are read for the reader: no development log (sessions,
catalogue entries, dates, paper numbers like "seed 003") and no maths outside $…$."""

import base64
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest
import zlib

import nbformat

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("HARMONIUM_BIN", os.path.join(ROOT, "bin", "harmonium"))
NOTEBOOKS = sorted(glob.glob(os.path.join(ROOT, "notebooks", "*.ipynb")))
KERNEL = os.environ.get("HARMONIUM_KERNEL", "harmonium")
# The notebooks find MNIST through data.MNIST. The 10 000 test images
# beside the repository serve the notebooks that need only those; the training set (the
# quick start) comes from wherever data.MNIST finds it (the GoMNIST Go module).
SHARED_MNIST = os.path.join(os.path.dirname(ROOT), "shared", "data", "mnist")

# Rows (by the start of their quantity) whose criterion must pass in quick mode.
REQUIRED_PASS = {
    "quickstart.ipynb": [
        "wall time: training, whole notebook",
        "held-out log PL per pixel",
        "held-out reconstruction error",
        "mean pixel density of model samples",
        "persistent chains ≈ equilibrium samples of the final model",
        "max |J| difference, Eq. 15b",
        "log Z by AIS vs exact, 12-unit RBM",
        "held-out log-likelihood",
    ],
    "ebm-course-1.ipynb": [
        "max |E_θ(x) slide formula",
        "log Z: sum over x minus sum over h",
        "E_θ rebuilt from all interaction orders",
        "bars & stripes: final KL",
        "moment mismatch at the ML fixed point",
        "PCD − CD test log-likelihood gap",
        "memory of the start",
        "sweeps until d(t) < 2 d_noise",
    ],
    "activation-functions.ipynb": [
        "Fig. 1: mean ⟨z⟩(I)",
        "Fig. 1: mode (activation function)",
        "Fig. 3 Linear: χ²",
        "Fig. 3 ReLU: χ²",
        "Fig. 3 Step: χ²",
        "Fig. 3 Exponential: χ²",
        "Eq. 19 NRMSE of the Linear RBM",
        "Eq. 15a fields vs F(0) − F(e_k)",
        "Step vs Exp at M = ",
        "chains ×10, 20 epochs: PL gain M = 50 → 250: Linear gains least",
        "after 20 epochs: best PL at M = 50",
        "after 20 epochs: RMS weight falls M = 50 → 250",
        # the first 100 epochs of the paper's schedule, from the committed table, at every scale
        "the paper's schedule, 100 epochs: best PL at M = 50",
        "the paper's schedule, 100 epochs: RMS weight falls M = 50 → 250",
        "the paper's schedule, 100 epochs: PL gain M = 100 → 250: Linear gains least",
        "the paper's schedule, 100 epochs: Linear's PL above the others at M = 50 throughout",
    ],
    "place-cells.ipynb": [
        "Fig. 2: correlation length ξ at β = 1",
        "Fig. 12a: Λ(r = 0.01) / Λ_Ising, β = 0.3",
        "Fig. 12a: Λ(r = 10) / Λ_noise(r = 10), β = 0.3",
        "Fig. 12a: excess of Λ over both asymptotes at r_c",
        "Fig. 12b: excess of Λ over both asymptotes at r_c",
        "Eq. 25: null top eigenvalue at r = 0.35",
        "Λ_XY, P = 10",
        "XY: same r, Marchenko–Pastur edge",
        "Fig. 4b: M = 25, CV over sites of the coverage",
        "Fig. 4c: M = 100, CV over sites of the coverage",
        "Fig. 3b: slope a of FWHM",
        "Fig. 11a: largest r with angular modulation",
    ],
    "compositional-representations.ipynb": [
        "R-RBM prototypical regime",
        "R-RBM compositional regime",
        "R-RBM intricate regime",
        "Fig. 8 at the reference length, M = 2",
    ],
    "lattice-proteins.ipynb": [
        "Fig. 4f: correlation of C(a,b) with −ε(a,b)",
        "Fig. 4f: electrostatic contrast",
        "Fig. 4f: cysteine bridge",
        "Fig. 4g: bimodality b of the PC1 projections",
        "Fig. 6b: median y = −log(1−P_nat) of RBM sequences",
        "Fig. 6a: ⟨I⟩(h clamped +) − ⟨I⟩(h clamped −)",
        "Fig. 7: p(λ₁²=0) − p(λ₁²=",
        # from the committed reference-length tables, at every scale
        "Table II at the reference length: RBM pair features on contacts",
        "Table II at the reference length: RBM triplet features connected",
        "Fig. 5 at the reference length: a unit on 3–26 with complementary charges",
        "Fig. 7a at the reference length, parallel tempering: train pseudo-lik.",
        "Fig. 7a at the reference length, PCD: train pseudo-lik.",
        "Fig. 7b at the reference length, PCD: test pseudo-lik.",
    ],
    "interaction-mapping.ipynb": [
        "Fig. 2: interactions of the N = 3",
        "Fig. 2: sampled frequencies",
        "Fig. 3 Linear: sampled frequencies",
        "Fig. 3 Linear: interaction strength",
        "Fig. 3: Eq. 14 vs brute-force",
        "Fig. 3 Exponential: sampled frequencies",
        "Fig. 4 Exponential: sampled frequencies",
        "Fig. 4 Exponential: fields and higher orders",
    ],
    "sweeps.ipynb": [
        "distinct overlaps at γ = 0.05",
        "distinct overlaps at γ = 0.1",
        "distinct overlaps at γ = 0.2",
        "weights vanish above γ_c",
        "L/N at W = 0",
        "log-likelihood gain M",
        "gap to the optimum at M",
        "tasks collected from the training directory",
        "the averaged table saved as CSV and read back",
    ],
    "replica-hierarchical.ipynb": [
        "Fig. 2 sibling / cousin overlap",
        "Fig. 4A transitions where m0, m1, m2 split",
        "over-regularised threshold",
        "finite-size gap |L_N/N",
        "finite-size gap |u_N",
    ],
}

# Development-log wording that has no place in a notebook's prose.
LOG_WORDS = re.compile(r"\bseeds? \d{3}\b|catalogu|\bsessions?\b|\binvestigation\b|\b\d{3}-Q\d+\b"
                       r"|\b(?:19|20)\d\d-\d\d-\d\d\b", re.IGNORECASE)
# Sub- and superscripts or LaTeX commands written outside $…$ and `code` (they show raw
# in the browser: w_i, e^{2β}, \sum).
DOLLARS = re.compile(r"\$\$.*?\$\$|\$[^$]*\$", re.DOTALL)
RAW_TEX = re.compile(r"[_^]\{|\w_\w|\^[\w(]|\\(?:sum|frac|mathcal|langle|sqrt)\b")
# A PNG embedded in nbconvert's HTML.
HTML_PNG = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=\s]*)"')


def png_colours(raw, enough=None):
    """Returns the number of distinct pixel values of an 8-bit, non-interlaced PNG (grey,
    RGB, grey+alpha or RGBA, which is what Go's image/png writes): 1 for a blank image.
    With enough, it stops counting (and returns) once that many are found. Raises
    ValueError for anything else."""
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    idat, pos, header = b"", 8, None
    while pos + 8 <= len(raw):
        n = int.from_bytes(raw[pos:pos + 4], "big")
        kind, body = raw[pos + 4:pos + 8], raw[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    if header is None:
        raise ValueError("PNG without IHDR")
    width, height = int.from_bytes(header[0:4], "big"), int.from_bytes(header[4:8], "big")
    depth, ctype, interlace = header[8], header[9], header[12]
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"PNG of depth {depth}, colour type {ctype}, interlace {interlace}")
    data, stride = zlib.decompress(idat), width * channels
    prev, pixels = bytearray(stride), set()
    for y in range(height):
        ftype, line = data[y * (stride + 1)], bytearray(data[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):  # undo the row filter (PNG spec, section 9)
            a = line[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        pixels.update(bytes(line[i:i + channels]) for i in range(0, stride, channels))
        if enough and len(pixels) >= enough:
            return enough
        prev = line
    return len(pixels)


NUMBER = re.compile(r"[-+−]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
NOT_FINITE = re.compile(r"\b(?:nan|[-+]?inf(?:inity)?)\b", re.IGNORECASE)


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


def parse_table(text):
    """Returns the column names and the rows (lists of stripped cells) of the table in
    text: the header is the first line whose " | "-separated cells include "measured";
    rows are the following lines with as many cells (a line of dashes is skipped)."""
    lines = text.splitlines()
    for k, line in enumerate(lines):
        cols = [c.strip().lower() for c in line.split(" | ")]
        if len(cols) >= 3 and "measured" in cols:
            rows = []
            for rest in lines[k + 1:]:
                cells = [c.strip() for c in rest.split(" | ")]
                if len(cells) == len(cols):
                    rows.append(cells)
            return cols, rows
    return None, []


class TableParseTest(unittest.TestCase):
    """The parser itself, on a literal table (no notebook needed)."""

    def test_parse(self):
        text = ("noise\nquantity | paper | measured | check\n-----\n"
                "a |x| b | 1 (≥ 0.5) | 0.75 (+3%) | pass\nfree text\nc | - | nan | fail\n")
        cols, rows = parse_table(text)
        self.assertEqual(cols, ["quantity", "paper", "measured", "check"])
        self.assertEqual(rows, [["a |x| b", "1 (≥ 0.5)", "0.75 (+3%)", "pass"], ["c", "-", "nan", "fail"]])
        self.assertTrue(NOT_FINITE.search(rows[1][2]))
        self.assertFalse(NOT_FINITE.search("information 0.3"))
        self.assertTrue(NOT_FINITE.search("-Inf"))
        self.assertEqual(parse_table("no table here")[0], None)


class PNGCheckTest(unittest.TestCase):
    """The blank-image detector, on a blank and a drawn PNG built here (the notebooks'
    HTML exports exercise it on the PNGs Go's image/png writes)."""

    @staticmethod
    def png(rows):
        def chunk(kind, data):
            return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")
        h, w = len(rows), len(rows[0])
        ihdr = w.to_bytes(4, "big") + h.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])  # 8-bit grey
        # Rows with the Sub filter (1), so that unfiltering is exercised.
        pixels = b"".join(b"\x01" + bytes((r[i] - (r[i - 1] if i else 0)) & 255 for i in range(len(r))) for r in rows)
        return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(pixels)) + chunk(b"IEND", b"")

    def test_png_colours(self):
        self.assertEqual(png_colours(self.png([[255] * 20] * 10)), 1)
        rows = [[(x * y) % 256 for x in range(20)] for y in range(10)]
        self.assertEqual(png_colours(self.png(rows)), 91)
        self.assertEqual(png_colours(self.png(rows), enough=5), 5)
        with self.assertRaises(ValueError):
            png_colours(b"GIF89a")


class NotebookTest(unittest.TestCase):
    def check_executed(self, path, name):
        with open(path) as f:
            nb = json.load(f)
        try:
            nbformat.validate(nbformat.from_dict(nb))
        except nbformat.ValidationError as e:
            self.fail(f"{name}: the executed notebook is not valid nbformat: {e}")
        outs = list(outputs(nb))
        errors = [o for o in outs if o["output_type"] == "error"]
        self.assertEqual(errors, [], f"{name}: error outputs")
        images = [o for o in outs if "image/png" in o.get("data", {})]
        self.assertTrue(images, f"{name}: produced no image")
        svg = [o for o in outs if "image/svg+xml" in o.get("data", {})]
        self.assertEqual(svg, [], f"{name}: SVG outputs (nbconvert's HTML export strips them)")
        last = [c for c in nb["cells"] if c["cell_type"] == "code"][-1]
        final = "".join(text_of(o) for o in last.get("outputs", []))
        html = "".join("".join(o.get("data", {}).get("text/html", "")) for o in last.get("outputs", []))
        self.assertIn("<table", html, f"{name}: the reproduction table is not shown as HTML")
        cols, rows = parse_table(final)
        self.assertIsNotNone(cols, f"{name}: final cell prints no reproduction table:\n{final[-2000:]}")
        self.assertGreaterEqual(len(rows), 3, f"{name}: reproduction table has fewer than 3 rows")
        mcol = cols.index("measured")
        for r in rows:
            self.assertTrue(NUMBER.search(r[mcol]), f"{name}: row {r[0]!r}: no number in measured value {r[mcol]!r}")
            self.assertFalse(NOT_FINITE.search(r[mcol]), f"{name}: row {r[0]!r}: measured value {r[mcol]!r} is not finite")
        required = REQUIRED_PASS.get(os.path.basename(name.split()[-1]), [])
        if required:
            self.assertIn("check", cols, f"{name}: the table has no check column")
        if "check" in cols:
            ccol = cols.index("check")
            for r in rows:
                self.assertIn(r[ccol], ("pass", "fail", "-"), f"{name}: row {r[0]!r}: verdict {r[ccol]!r}")
            self.assertTrue(any(r[ccol] != "-" for r in rows), f"{name}: no row has a criterion")
            for prefix in required:
                match = [r for r in rows if r[0].startswith(prefix)]
                self.assertEqual(len(match), 1, f"{name}: {len(match)} rows start with {prefix!r}")
                self.assertEqual(match[0][ccol], "pass", f"{name}: criterion failed: {' | '.join(match[0])}")

    def run_both(self, nbpath):
        name = os.path.basename(nbpath)
        env = dict(os.environ, HARMONIUM_SCALE="quick")
        if "HARMONIUM_MNIST" not in env and os.path.isdir(SHARED_MNIST):
            env["HARMONIUM_MNIST"] = SHARED_MNIST
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
            self.check_html_export(copy, name)

    def check_html_export(self, executed, name):
        """nbconvert's HTML of the executed notebook shows every image output as a PNG."""
        with open(executed) as f:
            nb = json.load(f)
        want = sum(1 for o in outputs(nb) if "image/png" in o.get("data", {}))
        out_dir = os.path.dirname(executed)
        r = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "html", "--output-dir", out_dir, executed],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, f"nbconvert --to html {name}:\n{r.stderr[-3000:]}")
        with open(os.path.splitext(executed)[0] + ".html") as f:
            page = f.read()
        pngs = [base64.b64decode(re.sub(r"\s", "", m)) for m in HTML_PNG.findall(page)]
        self.assertEqual(len(pngs), want, f"{name}: {want} image outputs, {len(pngs)} PNGs in the HTML export")
        for k, raw in enumerate(pngs):
            self.assertEqual(png_colours(raw, enough=2), 2, f"{name}: PNG {k} of the HTML export is blank")


    def test_no_development_paths(self):
        """A notebook reads data through data.MNIST and its kin, never from a path of this
        repository's development layout (../shared beside the checkout)."""
        for nbpath in NOTEBOOKS:
            with open(nbpath) as f:
                nb = json.load(f)
            for k, cell in enumerate(nb["cells"]):
                src = "".join(cell["source"])
                for bad in ("../shared", "shared/data", '"shared"'):
                    self.assertNotIn(bad, src, f"{os.path.basename(nbpath)} cell {k}")

    def test_committed_valid(self):
        """Each committed notebook is valid nbformat as saved, with the unique cell ids that
        nbformat 4.5 requires (nbformat itself only warns about missing ones, and a front
        end would add them and mark the notebook modified)."""
        for nbpath in NOTEBOOKS:
            with open(nbpath) as f:
                nb = json.load(f)
            name = os.path.basename(nbpath)
            with self.subTest(notebook=name):
                nbformat.validate(nbformat.from_dict(nb))
                if (nb["nbformat"], nb["nbformat_minor"]) >= (4, 5):
                    ids = [c.get("id") for c in nb["cells"]]
                    self.assertNotIn(None, ids, f"{name}: a cell has no id")
                    self.assertEqual(len(set(ids)), len(ids), f"{name}: duplicate cell ids")

    def test_prose(self):
        """Markdown cells read as a paper's supplement: no development log and no raw
        LaTeX outside $…$."""
        for nbpath in NOTEBOOKS:
            with open(nbpath) as f:
                nb = json.load(f)
            for k, cell in enumerate(nb["cells"]):
                if cell["cell_type"] != "markdown":
                    continue
                src = "".join(cell["source"])
                with self.subTest(notebook=os.path.basename(nbpath), cell=k):
                    bad = LOG_WORDS.search(src)
                    self.assertIsNone(bad, f"development-log wording {bad and bad.group(0)!r}")
                    outside = DOLLARS.sub("", re.sub(r"`[^`]*`", "", src))
                    raw = RAW_TEX.search(outside)
                    self.assertIsNone(raw, f"LaTeX outside $…$ near {outside[max(0, raw.start() - 40):raw.end() + 20]!r}" if raw else "")

    def test_prose_checker(self):
        """The prose patterns catch what they are for and let ordinary text through."""
        for bad in ("as in seed 003", "catalogue 003-Q3", "in session 2", "on 2026-11-21", "see 001-Q4"):
            self.assertTrue(LOG_WORDS.search(bad), bad)
        for ok in ("Tubiana, Cocco & Monasson 2019, Eq. 20", "seed 1 of the RBM", "Fig. 3 (2019)"):
            self.assertFalse(LOG_WORDS.search(ok), ok)
        self.assertTrue(RAW_TEX.search(DOLLARS.sub("", "energy x^{2} here")))
        self.assertTrue(RAW_TEX.search(DOLLARS.sub("", "the weights w_i grow")))
        self.assertFalse(RAW_TEX.search(DOLLARS.sub("", re.sub(r"`[^`]*`", "", "call `train.Fit_x` with α = 0.9"))))
        self.assertFalse(RAW_TEX.search(DOLLARS.sub("", "energy $x^{2}$ and $$\\sum_{i} v_i$$ here")))

    def test_activation_functions_epochs(self):
        """HARMONIUM_EPOCHS sets activation-functions' number of epochs (the paper's 500 on a
        workstation); a value that is not a positive number stops the run with an error naming it."""
        nbpath = os.path.join(ROOT, "notebooks", "activation-functions.ipynb")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "af.ipynb")
            for epochs, ok in (("3", True), ("many", False)):
                env = dict(os.environ, HARMONIUM_SCALE="quick", HARMONIUM_EPOCHS=epochs)
                r = subprocess.run([BIN, "run", nbpath, "-o", out], cwd=os.path.dirname(nbpath),
                                   env=env, capture_output=True, text=True, timeout=900)
                if not ok:
                    self.assertNotEqual(r.returncode, 0, "HARMONIUM_EPOCHS=many was accepted")
                    self.assertIn('HARMONIUM_EPOCHS="many"', r.stdout + r.stderr)
                    continue
                self.assertEqual(r.returncode, 0, r.stderr[-3000:])
                with open(out) as f:
                    first = json.load(f)["cells"][1]
                text = "".join("".join(o.get("text", "")) for o in first.get("outputs", []))
                self.assertIn("epochs 3", text)


def _make(nbpath):
    def test(self):
        self.run_both(nbpath)
    return test


for _nb in NOTEBOOKS:
    _name = os.path.splitext(os.path.basename(_nb))[0].replace("-", "_")
    setattr(NotebookTest, "test_" + _name, _make(_nb))

if __name__ == "__main__":
    unittest.main()
