// Package console is the merchant console: static files (HTML, CSS, plain JavaScript, no
// build step) embedded in the gateway and served at /console/. The page calls the
// gateway's merchant API with the token the merchant pastes; it holds no state of its own.
package console

import (
	"embed"
	"io/fs"
	"net/http"
)

// Path is where the gateway serves the console.
const Path = "/console"

//go:embed static
var static embed.FS

// Files are the console's files (index.html, app.js, style.css).
func Files() http.FileSystem {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return http.FS(sub)
}
