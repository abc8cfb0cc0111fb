"""Faults in a cell that the Go runtime makes fatal, through jupyter_client against the
installed kernel: each becomes an error output of its cell, and the next cell works.

Runaway recursion and a huge make are stopped before they happen (the session survives,
its variables too); concurrent map writes and an allocation the check cannot see kill the
executor process, and the kernel restarts it: the cell's error says the session was reset
and why, and the next cell runs in a fresh session.

The kernelspec is $HARMONIUM_KERNEL (default "harmonium"); see kernel_protocol_test.py."""

import time
import unittest

from kernel_client_test import KernelFixture


class SurvivalTest(KernelFixture):
    def error_of(self, code):
        """Runs code, which must fail; returns its error content and the seconds it took."""
        start = time.monotonic()
        content, outputs = self.run_cell(code)
        elapsed = time.monotonic() - start
        self.assertEqual(content["status"], "error", content)
        errors = [m["content"] for m in outputs if m["msg_type"] == "error"]
        self.assertEqual(len(errors), 1, outputs)
        self.assertEqual(errors[0]["ename"], content["ename"])
        return errors[0], elapsed

    def test_runaway_recursion_keeps_the_session(self):
        self.run_cell("kept := 41")
        err, elapsed = self.error_of("func r(n int) int { return r(n+1) + 1 }\nr(0)")
        self.assertEqual(err["ename"], "StackOverflow", err)
        self.assertIn("recursion deeper than", err["evalue"])
        self.assertIn(" in r ", err["evalue"])
        print(f"\n  runaway recursion became an error after {elapsed:.2f} s", end=" ")
        self.assertEqual(self.value("kept + 1"), "42")

    def test_runaway_recursion_in_a_goroutine(self):
        self.run_cell("kept2 := 1")
        err, _ = self.error_of(
            "func q(n int) int { return q(n+1) + 1 }\ndone := make(chan bool)\n"
            "go func() { defer close(done); q(0) }()\n<-done")
        self.assertEqual(err["ename"], "StackOverflow", err)
        self.assertEqual(self.value("kept2 + 1"), "2")

    def test_huge_make_keeps_the_session(self):
        self.run_cell("kept3 := 6")
        err, elapsed = self.error_of("big := make([]float64, 1<<34)\nlen(big)")
        self.assertEqual(err["ename"], "OutOfMemory", err)
        self.assertIn("make([]float64, 17179869184) needs 128.0 GiB", err["evalue"])
        print(f"\n  huge make became an error after {elapsed:.2f} s", end=" ")
        self.assertEqual(self.value("kept3 * 7"), "42")

    def reset_by(self, code, fatal):
        self.run_cell("lost := 1")
        err, elapsed = self.error_of(code)
        self.assertEqual(err["ename"], "SessionReset", err)
        self.assertIn("session was reset", err["evalue"])
        self.assertIn(fatal, err["evalue"])
        # The next cell works, in a fresh session.
        start = time.monotonic()
        self.assertEqual(self.value("6 * 7"), "42")
        after = time.monotonic() - start
        content, outputs = self.run_cell("lost")
        self.assertEqual(content["status"], "error")
        self.assertIn("undefined: lost", content["evalue"])
        return elapsed, after

    def test_concurrent_map_writes_reset_the_session(self):
        elapsed, after = self.reset_by(
            'import "time"\nm := map[int]int{}\n'
            "for i := 0; i < 4; i++ { go func() { for j := 0; ; j++ { m[j%64] = j } }() }\n"
            "time.Sleep(10 * time.Second)",
            "fatal error: concurrent map writes")
        print(f"\n  concurrent map writes became an error after {elapsed:.2f} s; next cell {after:.2f} s", end=" ")

    def test_unchecked_huge_allocation_resets_the_session(self):
        self.reset_by("p := new([1 << 34]float64)\nlen(p)", "out of memory")

    def test_kernel_keeps_its_sockets(self):
        """After a reset the kernel is the same process, with the same connection."""
        pid = self.km.provisioner.process.pid
        self.reset_by('import "time"\nm := map[int]int{}\n'
                      "for i := 0; i < 4; i++ { go func() { for j := 0; ; j++ { m[j%64] = j } }() }\n"
                      "time.Sleep(10 * time.Second)", "concurrent map writes")
        self.assertTrue(self.km.is_alive())
        self.assertEqual(self.km.provisioner.process.pid, pid)


class ClosedStdoutTest(KernelFixture):
    def test_output_after_closing_stdout(self):
        content, _ = self.run_cell('import ("fmt"; "os")\nos.Stdout.Close()')
        self.assertEqual(content["status"], "ok", content)
        content, outputs = self.run_cell('fmt.Println("still here")')
        self.assertEqual(content["status"], "ok", content)
        self.assertEqual(self.stdout(outputs), "still here\n")


if __name__ == "__main__":
    unittest.main()
