package httpapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/docs"
)

// documented returns the "METHOD path" of every operation of
// docs/openapi.json.
func documented(t *testing.T) []string {
	t.Helper()
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(docs.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q, want 3.1.0", doc.OpenAPI)
	}
	var out []string
	for path, ops := range doc.Paths {
		for method := range ops {
			if method == "parameters" {
				continue
			}
			out = append(out, strings.ToUpper(method)+" "+path)
		}
	}
	slices.Sort(out)
	return out
}

// Every route the router serves is in docs/openapi.json, and every
// operation of the document is a route.
func TestRoutesAreTheDocumentedOnes(t *testing.T) {
	var served []string
	for _, rt := range routes {
		served = append(served, rt.method+" "+rt.pattern)
	}
	slices.Sort(served)
	doc := documented(t)
	for _, r := range served {
		if !slices.Contains(doc, r) {
			t.Errorf("%s is served but not in docs/openapi.json", r)
		}
	}
	for _, d := range doc {
		if !slices.Contains(served, d) {
			t.Errorf("%s is in docs/openapi.json but not served", d)
		}
	}
}
