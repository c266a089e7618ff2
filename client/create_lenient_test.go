package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// The Go client's create option and the Connect create field: a lenient
// session's header says so, through Create, List, Resume and a fork child;
// "strict" is the default; another value is USAGE naming the allowed
// values, and nothing is created.
func TestCreateProtocol(t *testing.T) {
	c := serve(t, headless, "")
	ctx := context.Background()
	s, err := c.Create(ctx, "l1", events.CreateOptions{Protocol: sdk.ProtocolLenient})
	if err != nil {
		t.Fatal(err)
	}
	if h, err := s.Header(ctx); err != nil || h.Protocol != sdk.ProtocolLenient {
		t.Fatalf("create lenient: %+v (%v)", h, err)
	}
	note := events.Input{Type: "app/note", Ignorable: true, Data: json.RawMessage(`1`)}
	if _, err := s.Append(ctx, note); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx); err != nil {
		t.Fatal(err)
	}
	r, _, err := c.Resume(ctx, "l1")
	if err != nil {
		t.Fatal(err)
	}
	if h, err := r.Header(ctx); err != nil || h.Protocol != sdk.ProtocolLenient {
		t.Fatalf("resumed lenient session: %+v (%v)", h, err)
	}
	child, err := c.Fork(ctx, "l1", nil, "l1-child")
	if err != nil {
		t.Fatal(err)
	}
	if h, err := child.Header(ctx); err != nil || h.Protocol != sdk.ProtocolLenient || h.ParentSession != "l1" {
		t.Fatalf("fork child of a lenient session: %+v (%v)", h, err)
	}

	st, err := c.Create(ctx, "s1", events.CreateOptions{Protocol: sdk.ProtocolStrict})
	if err != nil {
		t.Fatal(err)
	}
	if h, err := st.Header(ctx); err != nil || h.Protocol != "" {
		t.Fatalf("create strict: %+v (%v); want the default, no protocol", h, err)
	}
	_, err = c.Create(ctx, "bad", events.CreateOptions{Protocol: "loose"})
	if !errors.Is(err, sdk.CodeUsage) || !strings.Contains(err.Error(), `"lenient"`) {
		t.Fatalf("create with protocol loose: %v; want USAGE naming the allowed values", err)
	}
	list, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if e.ID == "bad" {
			t.Fatal("a refused create left session bad behind")
		}
		if e.ID == "l1" && e.Header.Protocol != sdk.ProtocolLenient {
			t.Fatalf("List entry of l1: %+v", e.Header)
		}
	}
}
