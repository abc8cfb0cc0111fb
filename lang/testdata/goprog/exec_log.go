// Packages os/exec and log.
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"
)

func main() {
	out, err := exec.Command("echo", "hello", "exec").Output()
	if err != nil {
		panic(err)
	}
	fmt.Print(string(out))
	cmd := exec.Command("sh", "-c", "exit 3")
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		fmt.Println("exit code", ee.ExitCode())
	}
	cmd = exec.Command("sh", "-c", "echo child stdout")
	cmd.Stdout = os.Stdout
	if err := cmd.Run(); err != nil {
		panic(err)
	}
	_, err = exec.LookPath("no-such-command-harmonium")
	fmt.Println(err != nil)

	mylog := log.New(os.Stdout, "my:", log.LstdFlags)
	mylog.SetPrefix("ohmy:")
	mylog.SetFlags(0)
	mylog.Println("from mylog")
	fmt.Println(mylog.Prefix(), mylog.Flags())
	var buf bytes.Buffer
	buflog := log.New(&buf, "buf:", log.Lmsgprefix)
	buflog.Printf("hello %d", 1)
	buflog.SetOutput(os.Stdout)
	buflog.Print("to stdout")
	fmt.Print("from buflog:", buf.String())
	fmt.Println(strings.HasPrefix(buf.String(), "buf:"))
}
