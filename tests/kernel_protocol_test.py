"""Runs Debian's jupyter_kernel_test suite (python3-jupyter-kernel-test) against the
installed Harmonium kernel: stdout, stderr, completion, complete/incomplete/invalid code,
an error with exactly one error output, execute_result, display_data (text/html and
image/png), history (tail, range, search), inspect and clear_output.

The kernelspec name is $HARMONIUM_KERNEL (default "harmonium", what `make install`
registers). When $HARMONIUM_BIN is set, the kernelspec must start that binary."""

import json
import os
import unittest

import jupyter_kernel_test
from jupyter_client.kernelspec import KernelSpecManager

KERNEL = os.environ.get("HARMONIUM_KERNEL", "harmonium")


def check_kernelspec(name=KERNEL):
    """Fails early, with the fix, when the kernelspec is missing or starts another binary.
    Without $HARMONIUM_BIN (tests run by hand) a missing kernelspec skips instead."""
    want = os.environ.get("HARMONIUM_BIN")
    try:
        spec = KernelSpecManager().get_kernel_spec(name)
    except Exception as e:  # NoSuchKernel
        msg = f"kernelspec {name!r} not installed ({e}); run `make install`"
        if want:  # under `make test` the kernel must be there
            raise AssertionError(msg) from None
        raise unittest.SkipTest(msg) from None
    if want and os.path.realpath(spec.argv[0]) != os.path.realpath(want):
        raise AssertionError(f"kernelspec {name!r} starts {spec.argv[0]}, not HARMONIUM_BIN={want}; "
                             "run `make install`")
    return spec


# A valid 1×1 grey PNG, shown with display.PNG.
PNG_CELL = "display.PNG([]byte{137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82, 0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0, 58, 126, 155, 85, 0, 0, 0, 10, 73, 68, 65, 84, 120, 156, 99, 96, 0, 0, 0, 2, 0, 1, 72, 175, 164, 113, 0, 0, 0, 0, 73, 69, 78, 68, 174, 66, 96, 130})"


class HarmoniumKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = KERNEL
    language_name = "go"
    file_extension = ".go"

    code_hello_world = 'fmt.Println("hello, world")'
    code_stderr = 'fmt.Fprintln(os.Stderr, "something went wrong")'

    completion_samples = [
        {"text": "fmt.Pri", "matches": {"Print", "Printf", "Println"}},
        {"text": "strings.ToUp", "matches": {"ToUpper", "ToUpperSpecial"}},
    ]

    complete_code_samples = [
        "x := 1",
        'fmt.Println("hi")',
        "func add(a, b int) int { return a + b }",
        "for i := 0; i < 3; i++ {\n\tfmt.Println(i)\n}",
    ]
    incomplete_code_samples = [
        "func f() {",
        "for i := 0; i < 3; i++ {",
        "xs := []int{\n\t1,\n\t2,",
        'fmt.Println("a",',
    ]
    invalid_code_samples = ["x := )(", "}"]

    code_generate_error = "undefinedName + 1"

    code_execute_result = [
        {"code": "1+1", "result": "2"},
        {"code": "[]int{1, 2, 3}"},
    ]
    code_history_pattern = "1+1"
    supported_history_operations = ("tail", "range", "search")

    code_display_data = [
        {"code": 'display.HTML("<b>bold</b>")', "mime": "text/html"},
        {"code": PNG_CELL, "mime": "image/png"},
    ]

    code_inspect_sample = "fmt.Println"
    code_clear_output = "display.Clear(false)"

    @classmethod
    def setUpClass(cls):
        check_kernelspec()
        super().setUpClass()
        # Packages the samples use; a cell may mix imports and statements.
        cls.kc.execute_interactive('import (\n\t"fmt"\n\t"os"\n\t"strings"\n)', timeout=60)

    def test_kernel_info_fields(self):
        self.flush_channels()
        reply = self.kc.kernel_info(reply=True, timeout=15)
        c = reply["content"]
        self.assertEqual(c["protocol_version"], "5.4")
        self.assertEqual(c["implementation"], "harmonium")
        li = c["language_info"]
        for key, want in {"name": "go", "mimetype": "text/x-go", "file_extension": ".go",
                          "pygments_lexer": "go", "codemirror_mode": "go"}.items():
            self.assertEqual(li[key], want, key)
        self.assertTrue(c["banner"])
        self.assertIsInstance(c["help_links"], list)

    def test_is_complete_indent(self):
        self.flush_channels()
        msg_id = self.kc.is_complete("func f() {")
        reply = self.get_non_kernel_info_reply(timeout=15)
        self.assertEqual(reply["parent_header"]["msg_id"], msg_id)
        self.assertEqual(reply["content"]["status"], "incomplete")
        self.assertIn("indent", reply["content"])


if __name__ == "__main__":
    unittest.main()
