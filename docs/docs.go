// Package docs embeds the documents the programs serve: the OpenAPI 3.1
// description of the /v1 JSON API (openapi.json, beside this file), which
// `logbook serve` answers at GET /v1/openapi.json.
package docs

import _ "embed"

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI document of the /v1 API, a fresh copy.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }
