package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
	"github.com/seed-e5e476df/logbook/sdk"
)

// closeTurn continues openTurn: the tool's result (seq 5), a rewrite of it
// that replaces it (6), and the end of the step and the turn (7, 8).
func closeTurn() []events.Input {
	result := func(text string) []byte {
		return []byte(`{"turn":1,"step":1,"message":{"id":"r1","role":"tool","toolCallId":"c1","content":[{"type":"text","text":"` + text + `"}],"source":{"kind":"tool","callId":"c1"}}}`)
	}
	return []events.Input{
		{Type: "tool/result", Data: result("a.txt b.txt"), SurfaceOp: events.Append()},
		{Type: "tool/result", Data: result("[2 files]"), SurfaceOp: events.Replace(5, 5), SourceEventSeqs: []sdk.Seq{5}},
		{Type: "step/end", Data: []byte(`{"turn":1,"step":1}`)},
		{Type: "turn/end", Data: []byte(`{"turn":1,"reason":{"kind":"completed"}}`)},
	}
}

// sameJSON fails the test unless the Connect answer and the /v1 body are
// the same JSON document.
func sameJSON(t *testing.T, what string, connect []byte, status int, v1 []byte) {
	t.Helper()
	if status != 200 {
		t.Fatalf("%s over /v1: status %d: %s", what, status, v1)
	}
	if !bytes.Equal(connect, bytes.TrimSpace(v1)) {
		t.Errorf("%s:\nConnect %s\n/v1     %s", what, connect, v1)
	}
}

// The Connect calls that the /v1 API had alone answer what their /v1
// routes answer, through the Go client: the request header, the model
// request, the surface at a seq, why, shadowed, tokens and lineage, and
// hold and release-hold change what the routes see.
func TestConnectViewsAnswerAsV1(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})
	c := newClient(t, r, "")
	ctx := context.Background()
	p, err := c.Create(ctx, "p", events.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := appendFlush(ctx, c, "p", append(openTurn(), closeTurn()...)...); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fork(ctx, "p", new(sdk.Seq(6)), "child"); err != nil {
		t.Fatal(err)
	}
	at := sdk.Seq(5)

	hdr, err := p.RequestHeader(ctx, client.ViewOptions{})
	if err != nil || hdr != nil {
		t.Fatalf("RequestHeader of a log without one: %s, %v; want nil", hdr, err)
	}
	code, body := v1(t, r, "GET", "/v1/sessions/p/header", "")
	sameJSON(t, "the request header", []byte("null"), code, body)

	req, err := p.Request(ctx, "", client.ViewOptions{})
	if err != nil {
		t.Fatal(err)
	}
	code, body = v1(t, r, "GET", "/v1/sessions/p/request", "")
	sameJSON(t, "the model request", req, code, body)
	if _, err := p.Request(ctx, "nope", client.ViewOptions{}); sdk.CodeOf(err) != sdk.CodeUsage {
		t.Errorf("Request in an unknown format: %v; want USAGE", err)
	}

	why, err := p.Why(ctx, 6)
	if err != nil {
		t.Fatal(err)
	}
	code, body = v1(t, r, "GET", "/v1/sessions/p/why?seq=6", "")
	sameJSON(t, "why 6", why, code, body)
	if _, err := p.Why(ctx, 9); sdk.CodeOf(err) != sdk.CodeInvalidBoundary {
		t.Errorf("Why past the end: %v; want INVALID_BOUNDARY", err)
	}

	sh, err := p.Shadowed(ctx, client.ViewOptions{})
	if err != nil || len(sh) != 1 || sh[0] != (client.Shadowing{Seq: 5, ReplacedBy: 6}) {
		t.Fatalf("Shadowed = %v, %v; want 5 replaced by 6", sh, err)
	}
	if sh, err := p.Shadowed(ctx, client.ViewOptions{At: &at}); err != nil || len(sh) != 0 {
		t.Fatalf("Shadowed at 5 = %v, %v; want none", sh, err)
	}

	surf, err := p.Surface(ctx, client.ViewOptions{At: &at})
	if err != nil {
		t.Fatal(err)
	}
	code, body = v1(t, r, "GET", "/v1/sessions/p/surface?at=5", "")
	if b, _ := json.Marshal(surf); code != 200 || !bytes.Equal(b, bytes.TrimSpace(body)) {
		t.Errorf("the surface at 5: Connect %s, /v1 %d %s", b, code, body)
	}

	for _, o := range []client.ViewOptions{{}, {At: &at}} {
		tk, err := p.Tokens(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		path := "/v1/sessions/p/tokens"
		if o.At != nil {
			path += "?at=5"
		}
		code, body = v1(t, r, "GET", path, "")
		sameJSON(t, path, tk, code, body)
	}

	lin, err := c.Session("child").Lineage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	code, body = v1(t, r, "GET", "/v1/sessions/child/lineage", "")
	sameJSON(t, "the child's lineage", lin, code, body)

	if err := p.Release(ctx); err != nil {
		t.Fatal(err)
	}
	rec, changed, err := c.Session("p").Hold(ctx, client.AuditOptions{Reason: "LEGAL-1"})
	if err != nil || !changed || rec.Op != sdk.AuditHold || rec.By != sdk.ByAPI || rec.Reason != "LEGAL-1" || rec.Events != 9 || rec.Time.IsZero() {
		t.Fatalf("Hold = %+v, %v, %v", rec, changed, err)
	}
	code, body = v1(t, r, "POST", "/v1/sessions/p/hold", "")
	sameJSON(t, "a second hold", []byte(`{"changed":false}`), code, body)
	if err := c.Session("p").Delete(ctx, client.AuditOptions{}); sdk.CodeOf(err) != sdk.CodeSessionHeld {
		t.Fatalf("Delete of a held session: %v; want SESSION_HELD", err)
	}
	if _, changed, err := c.Session("p").ReleaseHold(ctx, client.AuditOptions{Reason: ""}); err != nil || !changed {
		t.Fatalf("ReleaseHold: %v, %v", changed, err)
	}
	if _, changed, err := c.Session("p").ReleaseHold(ctx, client.AuditOptions{Reason: ""}); err != nil || changed {
		t.Fatalf("a second ReleaseHold: %v, %v; want no change", changed, err)
	}
	var hr struct{ Changed bool }
	code, body = v1(t, r, "POST", "/v1/sessions/p/hold", "")
	if err := json.Unmarshal(body, &hr); code != 200 || err != nil || !hr.Changed {
		t.Fatalf("/v1 hold after ReleaseHold: %d %s", code, body)
	}
	if _, _, err := c.Session("nope").Hold(ctx, client.AuditOptions{Reason: ""}); sdk.CodeOf(err) != sdk.CodeSessionNotFound {
		t.Fatalf("Hold of a missing session: %v; want SESSION_NOT_FOUND", err)
	}
}
