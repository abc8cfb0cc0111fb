package guard

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestCall(t *testing.T) {
	if err := Call(func() error { return nil }); err != nil {
		t.Errorf("no error: got %v", err)
	}
	if err := Call(func() error { return io.EOF }); err != io.EOF {
		t.Errorf("plain error: got %v, want io.EOF unchanged", err)
	}
	err := Call(func() error { panic("boom") })
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("panic with a string: got %v, want an error naming the value", err)
	}
	err = Call(func() error { panic(io.ErrUnexpectedEOF) })
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("panic with an error: got %v, want it wrapped", err)
	}
	err = Call(func() error {
		var s []int
		_ = s[3]
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "index out of range") {
		t.Errorf("runtime panic: got %v", err)
	}
}
