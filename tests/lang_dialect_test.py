"""The notebook Go dialect through the real kernel (jupyter_client): mixed cells,
re-run imports, range over int, min/max, closures over loop variables, a goroutine
panic, a gonum plot, a matrix, a live-updated display and %timeit give the expected
outputs, and the kernel stays alive throughout.

The kernelspec is $HARMONIUM_KERNEL (default "harmonium"), installed by `make install`."""

import base64
import os
import unittest

from jupyter_client.manager import KernelManager

KERNEL = os.environ.get("HARMONIUM_KERNEL", "harmonium")
TIMEOUT = 120  # the machine is shared; generous


class DialectTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.km = KernelManager(kernel_name=KERNEL)
        cls.km.start_kernel()
        cls.kc = cls.km.client()
        cls.kc.start_channels()
        cls.kc.wait_for_ready(timeout=TIMEOUT)

    @classmethod
    def tearDownClass(cls):
        cls.kc.stop_channels()
        cls.km.shutdown_kernel(now=True)

    def run_cell(self, code):
        msgs = []
        reply = self.kc.execute_interactive(code, timeout=TIMEOUT, output_hook=msgs.append)
        return reply["content"], msgs

    def ok(self, code):
        content, msgs = self.run_cell(code)
        self.assertEqual(content["status"], "ok", (code, content, msgs))
        return msgs

    @staticmethod
    def of(msgs, kind):
        return [m["content"] for m in msgs if m["msg_type"] == kind]

    def stdout(self, msgs):
        return "".join(c["text"] for c in self.of(msgs, "stream") if c["name"] == "stdout")

    def result(self, msgs):
        results = self.of(msgs, "execute_result")
        self.assertEqual(len(results), 1, msgs)
        return results[0]["data"]

    def result_metadata(self, msgs):
        return self.of(msgs, "execute_result")[0]["metadata"]

    def assert_alive(self):
        self.assertEqual(self.result(self.ok("40 + 2"))["text/plain"], "42")

    def test_1_mixed_cells_and_reimports(self):
        cell = ('import "fmt"\n'
                'n := 4\n'
                'func sq(x int) int { return x * x }\n'
                'type P struct{ X int }\n'
                'fmt.Println("sq", sq(n), P{n})')
        for _ in range(2):  # imports and declarations re-run fine
            self.assertEqual(self.stdout(self.ok(cell)), "sq 16 {4}\n")
        self.assertEqual(self.result(self.ok("sq(n) + 1"))["text/plain"], "17")

    def test_2_modern_go(self):
        msgs = self.ok('s := 0\nfor i := range 10 { s += i }\ns')
        self.assertEqual(self.result(msgs)["text/plain"], "45")
        self.assertEqual(self.result(self.ok("x := 2.5\nmin(x, 1) + max(3, 7, 5)"))["text/plain"], "8")
        msgs = self.ok("var fs []func() int\nfor i := 0; i < 3; i++ { fs = append(fs, func() int { return i }) }\n"
                       "fs[0]() + 10*fs[1]() + 100*fs[2]()")
        self.assertEqual(self.result(msgs)["text/plain"], "210")

    def test_3_goroutine_panic(self):
        content, msgs = self.run_cell('import "time"\ngo func() { panic("in goroutine") }()\n'
                                      'time.Sleep(300 * time.Millisecond)')
        self.assertEqual(content["status"], "error", content)
        self.assertEqual(content["ename"], "GoroutinePanic")
        self.assertIn("in goroutine", content["evalue"])
        errors = self.of(msgs, "error")
        self.assertEqual(len(errors), 1, msgs)  # exactly one error output
        self.assertTrue(any("line 2," in line for line in errors[0]["traceback"]), errors[0])
        self.assert_alive()

    def test_4_plot_and_matrix(self):
        msgs = self.ok('import (\n\t"gonum.org/v1/plot"\n\t"gonum.org/v1/plot/plotter"\n'
                       '\t"gonum.org/v1/gonum/mat"\n)\n'
                       'p := plot.New()\np.Title.Text = "parabola"\npts := make(plotter.XYs, 20)\n'
                       'for i := range pts { pts[i].X = float64(i); pts[i].Y = float64(i * i) }\n'
                       'line, _ := plotter.NewLine(pts)\np.Add(line)\np')
        data = self.result(msgs)
        self.assertTrue(base64.b64decode(data["image/png"]).startswith(b"\x89PNG"))
        self.assertNotIn("image/svg+xml", data)  # PNG only: nbconvert's HTML export strips SVG
        self.assertEqual(self.result_metadata(msgs)["image/png"]["width"], 480)  # 2× PNG shown at 480 px
        data = self.result(self.ok("mat.NewDense(2, 3, []float64{1, 2, 3, 4, 5, 6})"))
        self.assertIn("2×3", data["text/html"])
        self.assertIn("<td>6</td>", data["text/html"])
        self.assertIn("⎡1  2  3⎤", data["text/plain"])

    def test_5_live_display(self):
        msgs = self.ok('h := display.Markdown("step 0")\nfor i := 1; i <= 3; i++ {\n'
                       '\th.Update(display.MIMEBundle{"text/markdown": fmt.Sprintf("step %d", i)})\n}')
        shown = self.of(msgs, "display_data")
        updates = self.of(msgs, "update_display_data")
        self.assertEqual(len(shown), 1, msgs)
        self.assertEqual(len(updates), 3, msgs)
        did = shown[0]["transient"]["display_id"]
        self.assertTrue(all(u["transient"]["display_id"] == did for u in updates))
        self.assertEqual(updates[-1]["data"]["text/markdown"], "step 3")

    def test_6_timeit(self):
        out = self.stdout(self.ok("%timeit -r 3 acc := 0; for i := 0; i < 1000; i++ { acc += i }"))
        self.assertRegex(out, r"^[\d.]+ (ns|µs|ms|s) ± [\d.]+ (ns|µs|ms|s) per loop \(mean ± std\. dev\. of 3 runs, \d+ loops? each\)\n$")
        self.assert_alive()

    def test_7_completion_and_inspection(self):
        reply = self.kc.complete("mat.NewDe", 9, reply=True, timeout=TIMEOUT)["content"]
        self.assertIn("NewDense", reply["matches"])
        self.assertEqual((reply["cursor_start"], reply["cursor_end"]), (4, 9))
        reply = self.kc.inspect("mat.NewDense", 8, reply=True, timeout=TIMEOUT)["content"]
        self.assertTrue(reply["found"])
        self.assertIn("NewDense creates a new Dense matrix", reply["data"]["text/plain"])
        msg_id = self.kc.is_complete("for i := range 3 {")
        while True:
            reply = self.kc.get_shell_msg(timeout=TIMEOUT)
            if reply["parent_header"].get("msg_id") == msg_id:
                break
        self.assertEqual(reply["content"]["status"], "incomplete")


if __name__ == "__main__":
    unittest.main()
