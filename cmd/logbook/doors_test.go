package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// The packages outside runtime/ that run the engine — this command,
// internal/demo, test/longsession and the examples — reach it only through
// the public doors: of runtime/, only runtime/service. Every other package
// of runtime/ is the engine room, which moves under runtime/internal/ where
// they could not import it. Test files count too.
func TestReachesTheRuntimeOnlyThroughTheService(t *testing.T) {
	const module = "github.com/seed-e5e476df/logbook"
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Error",
		"./", "../../internal/demo", "../../test/longsession", "../../examples/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for dec.More() {
		var p struct {
			ImportPath                         string
			Imports, TestImports, XTestImports []string
			Error                              *struct{ Err string }
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if p.Error != nil {
			t.Fatalf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		seen++
		for _, imp := range append(append(p.Imports, p.TestImports...), p.XTestImports...) {
			if strings.HasPrefix(imp, module+"/runtime/") && imp != module+"/runtime/service" {
				t.Errorf("%s imports %s; outside runtime/ the runtime is reached through %s/runtime/service only", p.ImportPath, imp, module)
			}
		}
	}
	if seen < 4 {
		t.Fatalf("go list listed %d packages; want this command, internal/demo, test/longsession and the examples", seen)
	}
}
