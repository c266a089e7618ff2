package host_test

import (
	"context"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// A session ReleaseIdle released answers Flush with its final flush and
// Release with success, however often; opening it again, or deleting it,
// forgets that, and after the client's own Release a Flush is
// SESSION_NOT_LIVE.
func TestFlushAndReleaseOfAnIdleReleasedSession(t *testing.T) {
	h, _ := memoryHost(t)
	ctx := context.Background()
	idleRelease := func() {
		t.Helper()
		if n := h.ReleaseIdle(ctx, 0); n != 1 {
			t.Fatalf("ReleaseIdle released %d sessions, want 1", n)
		}
	}
	o, err := h.Acquire(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Session.Append(ctx, session.AppendInput{Type: session.TypeTurnStart, Data: []byte(`{"turn":1}`)}); err != nil {
		t.Fatal(err)
	}
	e, err := o.Session.Append(ctx, session.AppendInput{Type: session.TypeUserMessage, SurfaceOp: &session.SurfaceOp{},
		Data: []byte(`{"id":"u","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	idleRelease()
	for range 2 {
		sess, res, err := h.Flush(ctx, "s")
		if err != nil || sess != nil || !res.Participated || len(res.Backends) != 1 || res.Backends[0].DurableSeq != sdk.Cursor(e.Seq()) {
			t.Fatalf("Flush of the idle-released session: %v, %+v, live %v; want the memory backend durable at %d", err, res, sess != nil, e.Seq())
		}
		if err := h.Release(ctx, "s"); err != nil {
			t.Fatalf("Release of the idle-released session: %v", err)
		}
	}

	if _, err := h.Acquire(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Flush(ctx, "s"); sdk.CodeOf(err) != sdk.CodeSessionNotLive {
		t.Fatalf("Flush after the client's own Release: %v, want SESSION_NOT_LIVE", err)
	}
	if err := h.Release(ctx, "s"); sdk.CodeOf(err) != sdk.CodeSessionNotLive {
		t.Fatalf("a second Release: %v, want SESSION_NOT_LIVE", err)
	}

	if _, err := h.Acquire(ctx, "s"); err != nil {
		t.Fatal(err)
	}
	idleRelease()
	if _, err := h.Delete(ctx, "s", sdk.AuditRequest{Reason: "test", By: sdk.ByAPI}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Flush(ctx, "s"); sdk.CodeOf(err) != sdk.CodeSessionNotLive {
		t.Fatalf("Flush of a deleted idle-released session: %v, want SESSION_NOT_LIVE", err)
	}
}
