package server_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// Request in a provider format of a session with no request header as of
// the asked seq is FailedPrecondition REQUEST_HEADER_MISSING naming the
// format and the seq, as /v1 answers 409; the logbook format renders, and
// a header from some seq on makes the provider body from there.
func TestRequestWithoutAHeaderIsRequestHeaderMissing(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})
	rpc := logbookv1.NewSessionsClient(grpcConn(t, r))
	ctx := context.Background()
	if _, err := rpc.Create(ctx, &logbookv1.SessionsCreateRequest{SessionId: "h"}); err != nil {
		t.Fatal(err)
	}
	if err := appendFlush(ctx, newClient(t, r, ""), "h", append(openTurn(), closeTurn()...)...); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"openai", "anthropic"} {
		_, err := rpc.Request(ctx, &logbookv1.SessionsRequestRequest{SessionId: "h", Format: f})
		if status.Code(err) != codes.FailedPrecondition || reason(err) != "REQUEST_HEADER_MISSING" {
			t.Fatalf("Request %s of a log without a header: %v", f, err)
		}
		requireMeta(t, "REQUEST_HEADER_MISSING", err, map[string]string{"format": f, "at": "8"})
		code, body := v1(t, r, "GET", "/v1/sessions/h/request?format="+f, "")
		if code != 409 {
			t.Fatalf("/v1 request?format=%s: %d %s; want 409", f, code, body)
		}
	}
	if _, err := rpc.Request(ctx, &logbookv1.SessionsRequestRequest{SessionId: "h"}); err != nil {
		t.Fatalf("Request in the logbook format: %v", err)
	}
	if err := appendFlush(ctx, newClient(t, r, ""), "h", events.RequestHeader(events.Header{Config: events.Config{Provider: "openai", Model: "gpt-4.1"}}, events.HeaderInitial)); err != nil {
		t.Fatal(err)
	}
	at := int64(8)
	if _, err := rpc.Request(ctx, &logbookv1.SessionsRequestRequest{SessionId: "h", Format: "openai", At: &at}); reason(err) != "REQUEST_HEADER_MISSING" {
		t.Fatalf("Request openai at 8, before the header: %v", err)
	}
	if rep, err := rpc.Request(ctx, &logbookv1.SessionsRequestRequest{SessionId: "h", Format: "openai"}); err != nil || rep.GetRequest() == "" {
		t.Fatalf("Request openai after the header: %v, %v", rep, err)
	}
}

// Request in a provider format of a lenient log holding a tool result no
// call asked for leaves the result out and names its message's seq in
// omitted_seqs; the logbook format keeps it and names nothing.
func TestRequestNamesWhatItLeftOut(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})
	rpc := logbookv1.NewSessionsClient(grpcConn(t, r))
	ctx := context.Background()
	if _, err := rpc.Create(ctx, &logbookv1.SessionsCreateRequest{SessionId: "o", Protocol: "lenient"}); err != nil {
		t.Fatal(err)
	}
	if err := appendFlush(ctx, newClient(t, r, ""), "o",
		events.RequestHeader(events.Header{Config: events.Config{Provider: "openai", Model: "gpt-4.1"}}, events.HeaderInitial),
		events.UserText(events.TextMessage{ID: "u1", Text: "hi"}),
		events.ToolResult(1, 1, events.ToolText{ID: "r1", CallID: "zz", Text: "out"})); err != nil {
		t.Fatal(err)
	}
	rep, err := rpc.Request(ctx, &logbookv1.SessionsRequestRequest{SessionId: "o", Format: "anthropic"})
	if err != nil || len(rep.GetOmittedSeqs()) != 1 || rep.GetOmittedSeqs()[0] != 2 || strings.Contains(rep.GetRequest(), "zz") {
		t.Fatalf("Request anthropic: %v, %v; want the orphan left out and omitted_seqs [2]", rep, err)
	}
	if rep, err := rpc.Request(ctx, &logbookv1.SessionsRequestRequest{SessionId: "o"}); err != nil || len(rep.GetOmittedSeqs()) != 0 || !strings.Contains(rep.GetRequest(), `"toolCallId":"zz"`) {
		t.Fatalf("Request logbook: %v, %v", rep, err)
	}
}
