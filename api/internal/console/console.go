// Package console is the merchant console: static files (HTML, CSS, plain JavaScript, no
// build step) embedded in the gateway and served at /console/. The page calls the
// gateway's merchant API with the token the merchant pastes; it holds no state of its own.
package console

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

// Path is where the gateway serves the console.
const Path = "/console"

//go:embed static
var static embed.FS

// policy keeps the page to its own files and out of other sites' frames.
const policy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Secure sets the console's Content-Security-Policy and frame headers on its responses.
func Secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == Path || strings.HasPrefix(r.URL.Path, Path+"/") {
			w.Header().Set("Content-Security-Policy", policy)
			w.Header().Set("X-Frame-Options", "DENY")
			w.Header().Set("X-Content-Type-Options", "nosniff")
		}
		h.ServeHTTP(w, r)
	})
}

// Files are the console's files (index.html, app.js, orders.js, style.css).
func Files() http.FileSystem {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return http.FS(sub)
}
