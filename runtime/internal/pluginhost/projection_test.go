package pluginhost

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// A message projection through a real projection plugin subprocess: the host loads
// its declared type, calls it in step S6, and refuses the type once the
// plugin is unloaded.
func TestProjectionPluginEndToEnd(t *testing.T) {
	ctx := context.Background()
	bin := filepath.Join(t.TempDir(), "redact")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/redact").CombinedOutput(); err != nil {
		t.Fatalf("building the test plugin: %v\n%s", err, out)
	}
	h := newHost(t, Options{})
	p, err := h.Start(ctx, Spec{Name: "redact", Command: bin})
	if err != nil {
		t.Fatal(err)
	}
	defs := &Projections{}
	if err := defs.Register(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := defs.Register(ctx, p); !errors.Is(err, sdk.CodeProjectionDuplicate) {
		t.Fatalf("registering the same type twice: %v", err)
	}
	s, err := session.New(session.Options{Header: sdk.Header{ID: "s"}, Projections: defs})
	if err != nil {
		t.Fatal(err)
	}
	user := session.AppendInput{Type: session.TypeUserMessage, SurfaceOp: &session.SurfaceOp{},
		Data: []byte(`{"id":"u","role":"user","content":[{"type":"text","text":"secret"}],"source":{"kind":"user"}}`)}
	openTurn(t, s)
	if _, err := s.Append(ctx, user); err != nil {
		t.Fatal(err)
	}
	project := func(text string) error {
		_, err := s.Append(ctx, session.AppendInput{Type: "projection:redact/text", Data: []byte(`{"targets":[1],"text":"` + text + `"}`)})
		return err
	}
	if err := project("change-id"); !errors.Is(err, sdk.CodeProjectionInvalid) {
		t.Fatalf("a reply changing the id: %v", err)
	}
	if err := project("fail"); !errors.Is(err, sdk.CodeProjectionFailed) {
		t.Fatalf("a failing plugin: %v", err)
	}
	if err := project("[redacted]"); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Messages()
	if err != nil || !strings.Contains(string(msgs.At(0).JSON()), "[redacted]") {
		t.Fatalf("projected message: %v", err)
	}
	if ev, _ := s.Event(1); !strings.Contains(string(ev.Data()), "secret") {
		t.Fatal("the recorded event changed")
	}
	v, _ := s.Surface()
	if v.ReplaceGeneration() != 0 || v.ContentGeneration() != 1 {
		t.Fatalf("generations %d/%d", v.ReplaceGeneration(), v.ContentGeneration())
	}
	// Restore without the plugin → PROJECTION_REQUIRED; unloading it after
	// use → PROJECTION_REMOVED.
	if _, err := session.RestoreEvents(ctx, session.Options{}, session.RestoreOptions{}, s.Events().Slice()); !errors.Is(err, sdk.CodeProjectionRequired) {
		t.Fatalf("restore without the plugin: %v", err)
	}
	defs.Remove("redact")
	if _, err := s.Messages(); !errors.Is(err, sdk.CodeProjectionRemoved) {
		t.Fatalf("messages after unloading: %v", err)
	}
	if _, err := s.Append(ctx, user); !errors.Is(err, sdk.CodeProjectionRemoved) {
		t.Fatalf("append after unloading: %v", err)
	}
}
