// errors.AsType (Go 1.26) and errors.As.
package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

type argError struct {
	arg     int
	message string
}

func (e *argError) Error() string { return fmt.Sprintf("%d - %s", e.arg, e.message) }

func f(arg int) (int, error) {
	if arg == 42 {
		return -1, &argError{arg, "can't work with it"}
	}
	return arg + 3, nil
}

func main() {
	_, err := f(42)
	if ae, ok := errors.AsType[*argError](err); ok {
		fmt.Println(ae.arg, ae.message)
	}
	var ae *argError
	if errors.As(err, &ae) {
		fmt.Println("As:", ae.arg)
	}
	wrapped := fmt.Errorf("wrapped: %w", err)
	_, err = os.Open("/no/such/file")
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		fmt.Println(pe.Op, pe.Path)
	}
	_, ok := errors.AsType[*fs.PathError](wrapped)
	fmt.Println(ok)
}
