package server_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/seed-e5e476df/logbook/runtime/internal/server"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/errinfo"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1/logbookv1connect"
)

// pbUser is a user/message of the wire.
func pbUser(id, text string) *logbookv1.AppendInput {
	return &logbookv1.AppendInput{Type: "user/message", Data: string(userData(id, text)), SurfaceOp: &logbookv1.SurfaceOp{}}
}

// In AppendStream each message with an operation_id is its own operation:
// a replayed message appends nothing and is not counted, a conflicting or
// malformed one ends the stream with its code and appends nothing of it.
func TestAppendStreamOperationIDs(t *testing.T) {
	r := serve(t, startEngine(t, headless(t.TempDir())), server.Options{})
	c := logbookv1connect.NewSessionsClient(http.DefaultClient, r.url)
	ctx := context.Background()
	if _, err := c.Create(ctx, connect.NewRequest(&logbookv1.SessionsCreateRequest{SessionId: "ops"})); err != nil {
		t.Fatal(err)
	}
	turn := &logbookv1.AppendInput{Type: "turn/start", Data: `{"turn":1}`}
	st := c.AppendStream(ctx)
	msgs := []*logbookv1.SessionsAppendRequest{
		{SessionId: "ops", Events: []*logbookv1.AppendInput{turn}, OperationId: "a"},
		{Events: []*logbookv1.AppendInput{pbUser("u1", "one")}, OperationId: "b"},
		{Events: []*logbookv1.AppendInput{turn}, OperationId: "a"}, // a replay
		{Events: []*logbookv1.AppendInput{pbUser("u2", "two")}},
	}
	for _, m := range msgs {
		if err := st.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	res, err := st.CloseAndReceive()
	if err != nil {
		t.Fatal(err)
	}
	if res.Msg.GetAppended() != 3 || res.Msg.GetNextSeq() != 3 {
		t.Fatalf("the stream's reply: %v; want 3 appended, next seq 3", res.Msg)
	}

	for _, tc := range []struct {
		id   string
		code sdk.Code
		cc   connect.Code
	}{
		{"b", sdk.CodeOperationConflict, connect.CodeFailedPrecondition},
		{"caf\u00e9", sdk.CodeOperationIDInvalid, connect.CodeInvalidArgument},
	} {
		st := c.AppendStream(ctx)
		_ = st.Send(&logbookv1.SessionsAppendRequest{SessionId: "ops", Events: []*logbookv1.AppendInput{pbUser("u3", "three")}})
		_ = st.Send(&logbookv1.SessionsAppendRequest{Events: []*logbookv1.AppendInput{pbUser("u4", "four")}, OperationId: tc.id})
		_, err := st.CloseAndReceive()
		cc, code, md := connectError(err)
		if cc != tc.cc || code != tc.code {
			t.Fatalf("operation %q in a stream: %v; want %s (%s)", tc.id, err, tc.code, tc.cc)
		}
		if md["appended"] != "1" {
			t.Fatalf("operation %q: appended %q, want 1 (the message before it)", tc.id, md["appended"])
		}
	}
	h, err := c.Header(ctx, connect.NewRequest(&logbookv1.SessionsHeaderRequest{SessionId: "ops"}))
	if err != nil || h.Msg.GetNextSeq() != 5 {
		t.Fatalf("the log's length %d (%v), want 5", h.Msg.GetNextSeq(), err)
	}
}

// connectError returns the status code of a Connect error and the logbook
// code and metadata of its ErrorInfo; zero values for another error.
func connectError(err error) (connect.Code, sdk.Code, map[string]string) {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return 0, "", nil
	}
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok && info.GetDomain() == errinfo.Domain {
				return ce.Code(), sdk.Code(info.GetReason()), info.GetMetadata()
			}
		}
	}
	return ce.Code(), "", nil
}

// Create keeps its labels in the stored header; labels the rules refuse
// are USAGE (InvalidArgument) and create nothing.
func TestCreateLabels(t *testing.T) {
	r := serve(t, startEngine(t, headless(t.TempDir())), server.Options{})
	c := logbookv1connect.NewSessionsClient(http.DefaultClient, r.url)
	ctx := context.Background()
	reply, err := c.Create(ctx, connect.NewRequest(&logbookv1.SessionsCreateRequest{SessionId: "lab", Labels: map[string]string{"framework": "adk", "key": "app/u/s"}}))
	if err != nil {
		t.Fatal(err)
	}
	if h := reply.Msg.GetHeader(); !strings.Contains(h, `"labels":{"framework":"adk","key":"app/u/s"}`) {
		t.Fatalf("the stored header %s does not hold the labels", h)
	}
	_, err = c.Create(ctx, connect.NewRequest(&logbookv1.SessionsCreateRequest{SessionId: "lab2", Labels: map[string]string{"": "empty key"}}))
	if cc, code, _ := connectError(err); cc != connect.CodeInvalidArgument || code != sdk.CodeUsage {
		t.Fatalf("an empty label key: %v; want USAGE", err)
	}
	_, err = c.Header(ctx, connect.NewRequest(&logbookv1.SessionsHeaderRequest{SessionId: "lab2"}))
	if _, code, _ := connectError(err); code != sdk.CodeSessionNotFound {
		t.Fatalf("the refused create left a session: %v", err)
	}
}
