package provider

import (
	"os/exec"
	"strings"
	"testing"
)

// Package provider is a door of its own: it converts plain JSON and
// reaches no engine package (runtime/…, the module's internal/…), not
// even from its tests, and its code outside _test.go files links no
// provider SDK.
func TestImportsNoEngineAndNoProviderSDK(t *testing.T) {
	const module = "github.com/seed-e5e476df/logbook/"
	deps := func(args ...string) []string {
		t.Helper()
		out, err := exec.Command("go", append([]string{"list", "-deps"}, args...)...).Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", args, err)
		}
		return strings.Fields(string(out))
	}
	for _, pkg := range deps("-test", ".") {
		if strings.HasPrefix(pkg, module+"runtime/") || strings.HasPrefix(pkg, module+"internal/") {
			t.Errorf("provider or its tests import %s", pkg)
		}
	}
	for _, pkg := range deps(".") {
		for _, sdk := range []string{"github.com/openai/", "github.com/anthropics/"} {
			if strings.HasPrefix(pkg, sdk) {
				t.Errorf("provider links %s outside its tests", pkg)
			}
		}
	}
}
