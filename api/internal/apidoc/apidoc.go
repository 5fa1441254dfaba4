// Package apidoc is the gateway's API document: the Swagger 2.0 file make gen writes from
// api/seckill.api (goctl api swagger, then devkit/openapi), served at /openapi.json.
// docs/DESIGN.md "The API document".
package apidoc

import _ "embed"

// Document is the API document, openapi.json.
//
//go:embed openapi.json
var Document []byte
