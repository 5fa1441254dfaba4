package reply_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/zeromicro/go-zero/rest/router"

	"github.com/seckill/seckill/api/internal/reply"
)

const gzipLimit = 1024

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// postGzip sends body as a gzip-encoded JSON POST through reply.Router (MaxBytes
// gzipLimit); read is what the route read, nil when it did not run.
func postGzip(t testing.TB, body []byte) (status int, read []byte) {
	t.Helper()
	r := router.NewRouter()
	if err := r.Handle(http.MethodPost, "/x", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil || r.Header.Get("Content-Encoding") != "" || r.ContentLength != int64(len(b)) {
			t.Errorf("the route read %d bytes of %d, error %v, encoding %q", len(b), r.ContentLength, err,
				r.Header.Get("Content-Encoding"))
		}
		read = b
		w.WriteHeader(http.StatusNoContent)
	})); err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, "/x", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	rec := httptest.NewRecorder()
	reply.Router{Router: r, MaxBytes: gzipLimit}.ServeHTTP(rec, req)
	return rec.Code, read
}

// TestGzipBodyLimitedInflated: a gzip body reaches the route inflated when its inflated
// size is within MaxBytes, and is 413 otherwise, however small compressed.
func TestGzipBodyLimitedInflated(t *testing.T) {
	small := []byte(`{"activity_id":1,"request_id":"abcdefgh"}`)
	if code, read := postGzip(t, gz(t, small)); code != http.StatusNoContent || !bytes.Equal(read, small) {
		t.Errorf("small: %d, read %q", code, read)
	}
	big := bytes.Repeat([]byte(" "), gzipLimit+1)
	if code, read := postGzip(t, gz(t, big)); code != http.StatusRequestEntityTooLarge || read != nil {
		t.Errorf("%d bytes inflated: %d, route read %d bytes; want 413", len(big), code, len(read))
	}
	if code, read := postGzip(t, []byte("not gzip")); code != http.StatusBadRequest || read != nil {
		t.Errorf("not gzip: %d, route read %d bytes; want 400", code, len(read))
	}
}

// FuzzGzipBody: whatever the compressed bytes, the route reads at most MaxBytes, exactly
// their inflation when it runs, and it runs whenever they inflate within MaxBytes.
func FuzzGzipBody(f *testing.F) {
	f.Add(gz(f, []byte(`{"activity_id":1,"request_id":"abcdefgh"}`)))
	f.Add(gz(f, bytes.Repeat([]byte("a"), 4*gzipLimit)))
	f.Add(append(gz(f, []byte(`{"a":`)), gz(f, []byte(`1}`))...)) // two members
	f.Add([]byte("\x1f\x8b\x08\x00garbage"))
	f.Fuzz(func(t *testing.T, body []byte) {
		code, read := postGzip(t, body)
		var want []byte
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err == nil {
			want, err = io.ReadAll(io.LimitReader(zr, gzipLimit+1))
		}
		fits := err == nil && len(want) <= gzipLimit
		switch {
		case len(read) > gzipLimit:
			t.Fatalf("the route read %d bytes, over %d", len(read), gzipLimit)
		case fits && (code != http.StatusNoContent || !bytes.Equal(read, want)):
			t.Fatalf("inflates to %d bytes: %d, route read %d", len(want), code, len(read))
		case !fits && code == http.StatusNoContent:
			t.Fatalf("does not inflate within %d bytes (%v), yet the route ran", gzipLimit, err)
		}
	})
}
