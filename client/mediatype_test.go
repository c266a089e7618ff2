package client_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
)

// recorder records the method, path and Content-Type of every request.
type recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []string // "POST /path Content-Type"
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.mu.Lock()
	r.seen = append(r.seen, req.Method+" "+req.URL.Path+" "+req.Header.Get("Content-Type")+" "+req.Header.Get("Origin"))
	r.mu.Unlock()
	return r.next.RoundTrip(req)
}

// Every request the client makes is a POST with its media type (a
// server refuses a POST without one: docs/operations.md, Security
// model), flush and release included, and none carries an Origin.
func TestEveryCallCarriesItsMediaType(t *testing.T) {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	rec := &recorder{next: &http.Transport{Protocols: &p}}
	c := client.New(daemon, client.Options{HTTPClient: &http.Client{Transport: rec}})
	ctx := context.Background()
	in := events.Input{Type: "user/message", SurfaceOp: events.Append(),
		Data: []byte(`{"id":"u1","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`)}

	s, err := c.Create(ctx, "media-type", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error { _, err := s.Append(ctx, events.TurnStart(0), in); return err },
		func() error { _, err := s.AppendGroup(ctx, in); return err },
		func() error { return s.Flush(ctx) },
		func() error { _, _ = s.Compact(ctx, client.CompactOptions{}); return nil }, // may have nothing to compact: only the request matters
		func() error { _, err := s.Messages(ctx, client.ViewOptions{}); return err },
		func() error { _, err := s.Transcript(ctx); return err },
		func() error { _, err := s.Surface(ctx, client.ViewOptions{}); return err },
		func() error { _, err := s.Events(ctx); return err },
		func() error { _, err := s.Header(ctx); return err },
		func() error {
			st := s.AppendStream(ctx)
			if err := st.Send([]events.Input{in}, false); err != nil {
				return err
			}
			_, err := st.CloseAndReceive()
			return err
		},
		func() error { return s.Release(ctx) },
		func() error { _, _, err := c.Resume(ctx, "media-type"); return err },
		func() error { _, err := c.Fork(ctx, "media-type", nil, "media-type-child"); return err },
		func() error { _, _, err := c.Inspect(ctx, "media-type"); return err },
		func() error { _, err := c.List(ctx); return err },
		func() error { return c.Session("media-type-child").Release(ctx) },
		func() error { return c.Session("media-type-child").Delete(ctx, client.AuditOptions{Reason: "test"}) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := s.Release(ctx); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.seen) < len(steps) {
		t.Fatalf("%d requests for %d calls: %q", len(rec.seen), len(steps), rec.seen)
	}
	for _, r := range rec.seen {
		f := strings.Split(r, " ")
		if f[0] != "POST" || !strings.HasPrefix(f[2], "application/grpc") || f[3] != "" {
			t.Errorf("request %q: want a POST of application/grpc… without an Origin", r)
		}
	}
}
