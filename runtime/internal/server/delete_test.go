package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/server"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// Delete over the Sessions API: a live session is ALREADY_OWNED and stays;
// released, it is deleted (the reply carries its length and digest), and
// a second delete is SESSION_NOT_FOUND.
func TestDeleteOverTheSessionsAPI(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})
	rpc := logbookv1.NewSessionsClient(grpcConn(t, r))
	ctx := context.Background()
	if _, err := rpc.Create(ctx, &logbookv1.SessionsCreateRequest{SessionId: "d"}); err != nil {
		t.Fatal(err)
	}
	user := pbInput("user/message", `{"id":"u","role":"user","content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}}`, true)
	turn := pbInput("turn/start", `{"turn":1}`, false)
	if _, err := rpc.Append(ctx, &logbookv1.SessionsAppendRequest{SessionId: "d", Flush: true, Events: []*logbookv1.AppendInput{turn, user}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rpc.Delete(ctx, &logbookv1.SessionsDeleteRequest{SessionId: "d"}); reason(err) != "ALREADY_OWNED" {
		t.Fatalf("delete of a live session: %v; want ALREADY_OWNED", err)
	}
	if _, err := rpc.Release(ctx, &logbookv1.SessionsReleaseRequest{SessionId: "d"}); err != nil {
		t.Fatal(err)
	}
	rep, err := rpc.Delete(ctx, &logbookv1.SessionsDeleteRequest{SessionId: "d", Reason: "test"})
	if err != nil || rep.GetEvents() != 2 || !strings.HasPrefix(rep.GetDigest(), "sha256:") {
		t.Fatalf("delete: %v (%v)", rep, err)
	}
	if _, err := rpc.Delete(ctx, &logbookv1.SessionsDeleteRequest{SessionId: "d"}); reason(err) != "SESSION_NOT_FOUND" {
		t.Fatalf("a second delete: %v; want SESSION_NOT_FOUND", err)
	}
	if _, err := rpc.Inspect(ctx, &logbookv1.SessionsInspectRequest{SessionId: "d"}); reason(err) != "SESSION_NOT_FOUND" {
		t.Fatalf("inspect after the delete: %v", err)
	}
}
