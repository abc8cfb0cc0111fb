"""Execution semantics of cells through jupyter_client (Debian jupyter-client), at the
level a user meets them: an interrupt of a compiled call that ignores its context
(reply within 1 s, nothing of the cell runs or prints afterwards, its variables keep
their values), an interrupt of time.Sleep (the next cell runs at once), runtime errors
at the cell's line with Go's message (index and length named), and automatic standard-library imports in the first cell.

The kernelspec is $HARMONIUM_KERNEL (default "harmonium"); see kernel_protocol_test.py."""

import time
import unittest

from kernel_client_test import KernelFixture


def streams(outputs, name):
    return "".join(m["content"]["text"] for m in outputs
                   if m["msg_type"] == "stream" and m["content"]["name"] == name)


def result(outputs):
    results = [m["content"]["data"]["text/plain"] for m in outputs if m["msg_type"] == "execute_result"]
    return results[0] if results else None


class AbandonedCellTest(KernelFixture):
    def interrupt(self, code, wait=1.0):
        """Runs code, interrupts it after wait seconds; returns the reply and its delay."""
        msg_id = self.kc.execute(code)
        time.sleep(wait)
        start = time.monotonic()
        self.km.interrupt_kernel()
        reply = self.reply_to(msg_id)
        elapsed = time.monotonic() - start
        self.drain_iopub()
        return reply["content"], elapsed

    def test_compiled_call_ignoring_its_context(self):
        # exec.Cmd's Run is compiled and knows no context: three seconds of
        # waiting for a child process, however fast the machine.
        self.value("x := 1\nvar err error\nx")
        content, elapsed = self.interrupt(
            "x = 2\nerr = exec.Command(\"sleep\", \"3\").Run()\nx = 3\nfmt.Println(\"AFTER\", err)")
        self.assertEqual(content["status"], "error", content)
        self.assertEqual(content["ename"], "Interrupted", content)
        self.assertIn("still running a compiled call", content["evalue"])
        self.assertLess(elapsed, 1.0, f"execute_reply {elapsed:.3f} s after the interrupt")
        # The next cell waits for the call, then runs; nothing of the interrupted
        # cell ran after the interrupt: x = 3, the assignment of f and the print.
        content, outputs = self.run_cell("fmt.Println(\"NEXT\")\nfmt.Sprint(x, \" \", err)")
        self.assertEqual(content["status"], "ok", content)
        self.assertEqual(streams(outputs, "stdout"), "NEXT\n")
        self.assertEqual(result(outputs), '"2 <nil>"')
        self.assertIn("Waiting for cell", streams(outputs, "stderr"))
        # And the cells after it see nothing of it either.
        content, outputs = self.run_cell("fmt.Println(\"THEN\")")
        self.assertEqual(streams(outputs, "stdout"), "THEN\n")

    def test_sleep_stops_at_once(self):
        self.value("y := 5\ny")
        content, elapsed = self.interrupt("time.Sleep(time.Hour)\ny = 6")
        self.assertEqual(content["ename"], "Interrupted", content)
        self.assertNotIn("still running", content["evalue"])
        self.assertLess(elapsed, 1.0, f"execute_reply {elapsed:.3f} s after the interrupt")
        start = time.monotonic()
        self.assertEqual(self.value("y"), "5")
        self.assertLess(time.monotonic() - start, 2.0, "the cell after an interrupted sleep waited")


class ErrorPositionTest(KernelFixture):
    def error(self, code):
        content, _ = self.run_cell(code)
        self.assertEqual(content["status"], "error", content)
        return content

    def test_runtime_errors_at_their_line(self):
        for code, msg, where in [
            ("a := 1\nb := 0\n\n\n\nfmt.Println(a / b)", "integer divide by zero", "line 6"),
            ("var m map[string]int\nm[\"a\"] = 1", "assignment to entry in nil map", "line 2"),
            ("xs := []int{1, 2, 3}\nk := 5\n_ = k\nxs[k] = 1", "index out of range", "line 4"),
        ]:
            content = self.error(code)
            self.assertIn(msg, content["evalue"], code)
            self.assertIn(where, "\n".join(content["traceback"]), code)

    def test_index_error_names_index_and_length(self):
        content = self.error("xs := []int{1, 2, 3}\nk := 5\nxs[k] = 1")
        self.assertEqual(content["evalue"], "runtime error: index out of range [5] with length 3")
        self.assertIn(f"    at cell {content['execution_count']} (line 3, column 1)", content["traceback"])

    def test_runtime_error_in_a_function_of_an_earlier_cell(self):
        content, _ = self.run_cell("func f(a, b int) int {\n\tfmt.Print(\"\")\n\treturn a / b\n}")
        self.assertEqual(content["status"], "ok", content)
        declared = content["execution_count"]
        content = self.error("f(1, 0)")
        self.assertEqual(content["evalue"], "runtime error: integer divide by zero")
        self.assertIn(f"    at f (cell {declared}, line 3, column 2)", content["traceback"])

    def test_panic_in_a_function_of_an_earlier_cell(self):
        content, _ = self.run_cell("func f() {\n\tpanic(\"deep\")\n}")
        self.assertEqual(content["status"], "ok", content)
        declared = content["execution_count"]
        content = self.error("fmt.Println(1)\nf()")
        tb = "\n".join(content["traceback"])
        self.assertIn(f"at f (cell {declared}, line 2", tb)
        self.assertIn("line 2, column 1", tb)


class AutoImportTest(KernelFixture):
    def test_first_cell_uses_fmt(self):
        content, outputs = self.run_cell('fmt.Println("hello")')
        self.assertEqual(content["status"], "ok", content)
        self.assertEqual(streams(outputs, "stdout"), "hello\n")
        self.assertEqual(self.value('strings.ToUpper("go") + fmt.Sprint(math.Sqrt(16))'), '"GO4"')


if __name__ == "__main__":
    unittest.main()
