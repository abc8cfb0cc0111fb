"""The IPython habits of the installed Harmonium kernel, through jupyter_client as a
front end meets them: standard input read with bufio, bufio.Scanner and fmt.Scanln
(one input_request per line, the text printed just before as its prompt, no stream
message left over for it; EOF when the front end does not allow stdin), `x?` and
`x??` help cells, inspection (Shift-Tab) inside a call's parentheses, and completion
of a package imported by the cell being edited before it has run.

The kernelspec is $HARMONIUM_KERNEL (default "harmonium"); see kernel_protocol_test.py."""

import unittest

from kernel_client_test import KernelFixture


class StdinTest(KernelFixture):
    def ask(self, code, answers, allow_stdin=True):
        """Runs code answering its input requests with answers in turn; returns the
        reply content, the iopub messages and the input_request contents."""
        prompts = []
        answers = list(answers)

        def answer(msg):
            prompts.append(msg["content"])
            self.kc.input(answers.pop(0))

        content, outputs = self.run_cell(code, allow_stdin=allow_stdin, stdin_hook=answer)
        self.assertEqual(content["status"], "ok", content)
        return content, outputs, prompts

    def test_bufio_reader(self):
        code = ('import ("bufio"; "fmt"; "os")\nfmt.Println("first line")\nfmt.Print("Name: ")\n'
                'line, err := bufio.NewReader(os.Stdin).ReadString(\'\\n\')\nfmt.Printf("hello %q %v\\n", line, err)')
        _, outputs, prompts = self.ask(code, ["Ada"])
        self.assertEqual([p["prompt"] for p in prompts], ["Name: "])
        # The prompt is not also a stream message; the line before it is.
        self.assertEqual(self.stdout(outputs), 'first line\nhello "Ada\\n" <nil>\n')

    def test_bufio_scanner(self):
        code = ('import ("bufio"; "fmt"; "os")\nsc := bufio.NewScanner(os.Stdin)\nsum := 0\n'
                'for i := 0; i < 3; i++ {\n\tfmt.Printf("number %d? ", i+1)\n\tsc.Scan()\n'
                '\tvar n int\n\tfmt.Sscan(sc.Text(), &n)\n\tsum += n\n}\nfmt.Println("sum", sum)')
        _, outputs, prompts = self.ask(code, ["1", "20", "300"])
        self.assertEqual([p["prompt"] for p in prompts], ["number 1? ", "number 2? ", "number 3? "])
        self.assertEqual(self.stdout(outputs), "sum 321\n")

    def test_scanln_prompt(self):
        code = 'import "fmt"\nvar name string\nfmt.Print("Your name: ")\nfmt.Scanln(&name)\nfmt.Println("hello " + name)'
        _, outputs, prompts = self.ask(code, ["Grace"])
        self.assertEqual(len(prompts), 1)
        self.assertEqual(prompts[0]["prompt"], "Your name: ")
        self.assertFalse(prompts[0]["password"])
        self.assertEqual(self.stdout(outputs), "hello Grace\n")

    def test_stdin_not_allowed_is_eof(self):
        code = ('import ("bufio"; "fmt"; "os")\nfmt.Print("Name: ")\n'
                'line, err := bufio.NewReader(os.Stdin).ReadString(\'\\n\')\nfmt.Printf("%q %v\\n", line, err)')
        _, outputs, prompts = self.ask(code, [], allow_stdin=False)
        self.assertEqual(prompts, [])
        self.assertEqual(self.stdout(outputs), 'Name: "" EOF\n')


class HelpTest(KernelFixture):
    def displayed(self, outputs):
        return [m["content"]["data"]["text/plain"] for m in outputs if m["msg_type"] == "display_data"]

    def test_question_mark(self):
        content, outputs = self.run_cell("rbm.NewChains?")
        self.assertEqual(content["status"], "ok", content)
        shown = self.displayed(outputs)
        self.assertEqual(len(shown), 1, outputs)
        self.assertIn("func NewChains(", shown[0])
        # The same text as Shift-Tab on the name.
        reply = self.kc.inspect("rbm.NewChains", 6, reply=True, timeout=60)["content"]
        self.assertEqual(reply["data"]["text/plain"].strip(), shown[0].strip())

    def test_double_question_mark_shows_cell_source(self):
        self.run_cell("func triple(x int) int {\n\treturn 3 * x // three times\n}")
        content, outputs = self.run_cell("triple??")
        self.assertEqual(content["status"], "ok", content)
        self.assertEqual(self.displayed(outputs), ["func triple(x int) int {\n\treturn 3 * x // three times\n}"])
        _, outputs = self.run_cell("triple?")
        self.assertEqual(len(self.displayed(outputs)), 1, outputs)
        self.assertNotIn("three times", self.displayed(outputs)[0])

    def test_double_question_mark_shows_rbmcore_source(self):
        content, outputs = self.run_cell("rbm.NewChains??")
        self.assertEqual(content["status"], "ok", content)
        shown = self.displayed(outputs)
        self.assertEqual(len(shown), 1, outputs)
        self.assertIn("// rbmcore/rbm/", shown[0])
        self.assertIn("func NewChains(m *RBM, b int, seed uint64) (*Chains, error) {\n", shown[0])

    def test_unknown_name(self):
        content, outputs = self.run_cell("nosuchthing?")
        self.assertEqual(content["status"], "ok", content)
        self.assertEqual(self.stdout(outputs), "Object `nosuchthing` not found.\n")

    def test_inspect_inside_call(self):
        for code in ["rbm.NewChains(", "ch := rbm.NewChains(m, "]:
            reply = self.kc.inspect(code, len(code), reply=True, timeout=60)["content"]
            self.assertEqual(reply["status"], "ok", reply)
            self.assertTrue(reply["found"], (code, reply))
            self.assertIn("func NewChains(", reply["data"]["text/plain"])

    def test_complete_unexecuted_import(self):
        code = 'import "math"\nx := math.Sqr'
        reply = self.kc.complete(code, len(code), reply=True, timeout=60)["content"]
        self.assertIn("Sqrt", reply["matches"])
        self.assertEqual(code[reply["cursor_start"]:reply["cursor_end"]], "Sqr")


if __name__ == "__main__":
    unittest.main()
