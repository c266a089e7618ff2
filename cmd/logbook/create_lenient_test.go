package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// inspected is the protocol of `logbook inspect ID --json`.
func inspected(t *testing.T, data string, id string, args ...string) string {
	t.Helper()
	var r struct {
		Protocol string `json:"protocol"`
	}
	out := ok(t, data, "", append([]string{"inspect", id, "--json"}, args...)...).stdout
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("inspect %s --json printed %q: %v", id, out, err)
	}
	return r.Protocol
}

// `logbook create --protocol lenient` stores a lenient header, which
// create, inspect and sessions show and a fork child keeps; strict is the
// default, stored as no member; another value is USAGE naming the allowed
// values, and nothing is created.
func TestCreateProtocolFlag(t *testing.T) {
	data := t.TempDir()
	if out := ok(t, data, "", "create", "l1", "--protocol", "lenient").stdout; !strings.Contains(out, `"protocol":"lenient"`) {
		t.Fatalf("create --protocol lenient printed %q", out)
	}
	if p := inspected(t, data, "l1"); p != sdk.ProtocolLenient {
		t.Fatalf("inspect l1: protocol %q", p)
	}
	if out := ok(t, data, "", "sessions", "--json").stdout; !strings.Contains(out, `"protocol":"lenient"`) {
		t.Fatalf("sessions --json printed %q", out)
	}
	ok(t, data, `{"type":"app/note","ignorable":true,"data":1}`+"\n", "append", "l1")
	ok(t, data, "", "fork", "l1", "--as", "l1-child")
	if p := inspected(t, data, "l1-child"); p != sdk.ProtocolLenient {
		t.Fatalf("the fork child of a lenient session: protocol %q", p)
	}
	for _, strict := range [][]string{{"create", "s1"}, {"create", "s2", "--protocol", "strict"}} {
		if out := ok(t, data, "", strict...).stdout; strings.Contains(out, `"protocol"`) {
			t.Fatalf("%v printed %q; a strict header has no protocol member", strict, out)
		}
	}
	r := fail(t, data, "", sdk.CodeUsage, "create", "bad", "--protocol", "loose")
	if !strings.Contains(r.lastLine(), `"strict"`) || !strings.Contains(r.lastLine(), `"lenient"`) {
		t.Fatalf("the USAGE line does not name the allowed values: %s", r.lastLine())
	}
	if _, err := os.Stat(filepath.Join(data, "bad")); !os.IsNotExist(err) {
		t.Fatalf("a refused create left %s behind (%v)", filepath.Join(data, "bad"), err)
	}
}

// A salvage child of a lenient session is lenient, on the backends whose
// damage helper finds seq 3 in a log that create began (the zstd case
// expects the frames of a log that append began).
func TestSalvageChildKeepsTheProtocol(t *testing.T) {
	for _, c := range salvageCases() {
		if c.name == "jsonl-zstd" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			data := t.TempDir()
			cfg := writeConfig(t, t.TempDir(), "logbook.hcl", c.config)
			ok(t, data, "", "create", "s", "--protocol", "lenient", "--config", cfg)
			ok(t, data, input(salvageCrash), "append", "s", "--config", cfg)
			ok(t, data, input(salvageTurn), "append", "s", "--config", cfg)
			c.damage(t, data)
			ok(t, data, "", "salvage", "s", "--as", "child", "--config", cfg)
			if p := inspected(t, data, "child", "--config", cfg); p != sdk.ProtocolLenient {
				t.Fatalf("the salvage child of a lenient session: protocol %q", p)
			}
		})
	}
}
