package allocs

import "testing"

var sink []byte

func TestBytes(t *testing.T) {
	if got := Bytes(func() { sink = make([]byte, 8<<20) }); got < 8<<20 || got > 9<<20 {
		t.Errorf("an 8 MiB allocation measured as %d bytes", got)
	}
	if got := Bytes(func() {}); got > 64<<10 {
		t.Errorf("nothing measured as %d bytes", got)
	}
}
