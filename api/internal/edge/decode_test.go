package edge

import (
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/iotest"
)

// closeCounted is a request body: rest, then its io.EOF (with the last bytes, as net/http's
// body may give it), counting its closes; a read after its io.EOF is an error (io.MultiReader
// never reads a reader again once it gave io.EOF).
type closeCounted struct {
	rest   []byte
	eof    bool
	closed int
}

var errReadAfterEOF = errors.New("read after io.EOF")

func (b *closeCounted) Read(p []byte) (int, error) {
	if b.eof {
		return 0, errReadAfterEOF
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	if len(b.rest) == 0 {
		b.eof = true
		return n, io.EOF
	}
	return n, nil
}

func (b *closeCounted) Close() error {
	b.closed++
	return nil
}

// TestReplayReadsAsMultiReader: a decoded body handed on reads as io.MultiReader of the bytes
// decoded and the original body would (whole, byte by byte, with io.EOF again after the end),
// and closing it closes the original once.
func TestReplayReadsAsMultiReader(t *testing.T) {
	const body = `{"activity_id":5,"request_id":"abcdefgh"}`
	const rest = ` trailing bytes`
	for _, read := range []struct {
		name string
		all  func(io.Reader) ([]byte, error)
	}{
		{"whole", io.ReadAll},
		{"byte by byte", func(r io.Reader) ([]byte, error) { return io.ReadAll(iotest.OneByteReader(r)) }},
	} {
		orig := &closeCounted{rest: []byte(rest)}
		r := &http.Request{Body: orig}
		replay(r, []byte(body))
		got, err := read.all(r.Body)
		if err != nil || string(got) != body+rest {
			t.Fatalf("%s: read %q, %v; want %q", read.name, got, err, body+rest)
		}
		if n, err := r.Body.Read(make([]byte, 8)); n != 0 || !errors.Is(err, io.EOF) {
			t.Errorf("%s: a read after the end gave %d, %v; want 0, io.EOF", read.name, n, err)
		}
		if err := r.Body.Close(); err != nil || orig.closed != 1 {
			t.Errorf("%s: Close: %v, the original closed %d times; want once", read.name, err, orig.closed)
		}
	}
}
