package server_test

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/seed-e5e476df/logbook/runtime/internal/server"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// grpcConn dials r with grpc-go: a real gRPC client, not Connect's.
func grpcConn(t testing.TB, r *running) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(r.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// reason returns the logbook code of a gRPC error (its ErrorInfo reason).
func reason(err error) string {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == "logbook" {
			return info.GetReason()
		}
	}
	return ""
}

func pbInput(typ, data string, surface bool) *logbookv1.AppendInput {
	in := &logbookv1.AppendInput{Type: typ, Data: data}
	if surface {
		in.SurfaceOp = &logbookv1.SurfaceOp{}
	}
	return in
}

// Every operation through grpc-go: create, append (unary and streamed),
// read back, fork, flush, inspect, list, release, and the errors carrying
// their error codes.
func TestGRPCClient(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})
	rpc := logbookv1.NewSessionsClient(grpcConn(t, r))
	ctx := context.Background()

	created, err := rpc.Create(ctx, &logbookv1.SessionsCreateRequest{SessionId: "g1", Cwd: "/work"})
	if err != nil {
		t.Fatal(err)
	}
	var header struct {
		ID  string `json:"id"`
		CWD string `json:"cwd"`
	}
	if err := json.Unmarshal([]byte(created.GetHeader()), &header); err != nil || header.ID != "g1" || header.CWD != "/work" {
		t.Fatalf("header %s (%v)", created.GetHeader(), err)
	}
	if _, err := rpc.Create(ctx, &logbookv1.SessionsCreateRequest{SessionId: "g1"}); status.Code(err) != codes.AlreadyExists || reason(err) != "SESSION_ALREADY_EXISTS" {
		t.Fatalf("second create: %v (reason %q)", err, reason(err))
	}

	// Data travels byte for byte: member order and number literals stay.
	data := `{"id":"u0","role":"user","content":[{"type":"text","text":"1.50 ≠ 1.5"}],"source":{"kind":"user"},"plugin:x":{"b":1.50,"a":1E3}}`
	// The turn it is in comes first.
	app, err := rpc.Append(ctx, &logbookv1.SessionsAppendRequest{SessionId: "g1", Events: []*logbookv1.AppendInput{pbInput("turn/start", `{"turn":1}`, false), pbInput("user/message", data, true)}, Flush: true})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":1,"time":`
	if got := app.GetEnvelopes()[1]; len(got) < len(want) || got[:len(want)] != want || !strings.Contains(got, `"data":`+data+`,"surfaceOp":"append"}`) {
		t.Fatalf("envelope %s", got)
	}
	if f := app.GetFlush(); !f.GetParticipated() || len(f.GetBackends()) != 1 || f.GetBackends()[0].GetDurableSeq() != 1 {
		t.Fatalf("flush %v", f)
	}

	// A rejected event stops the call; the ones before it stay.
	_, err = rpc.Append(ctx, &logbookv1.SessionsAppendRequest{SessionId: "g1", Events: []*logbookv1.AppendInput{
		pbInput("user/message", string(userData("u1", "ok")), true),
		pbInput("user/message", `{"id":`, true),
	}})
	if reason(err) != "JSON_SYNTAX" || status.Code(err) != codes.InvalidArgument {
		t.Fatalf("bad JSON: %v (reason %q)", err, reason(err))
	}
	if st, _ := status.FromError(err); appendedOf(st) != "1" {
		t.Fatalf("appended metadata %q", appendedOf(st))
	}

	// A client stream of appends: ten messages, then the end of the turn.
	stream, err := rpc.AppendStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 11 {
		m := &logbookv1.SessionsAppendRequest{Events: []*logbookv1.AppendInput{pbInput("user/message", string(userData("s"+string(rune('a'+i)), "streamed")), true)}}
		if i == 0 {
			m.SessionId = "g1"
		}
		if i == 10 {
			m.Events = []*logbookv1.AppendInput{pbInput("turn/end", `{"turn":1,"reason":{"kind":"completed"}}`, false)}
		}
		if err := stream.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	sr, err := stream.CloseAndRecv()
	if err != nil {
		t.Fatal(err)
	}
	if sr.GetAppended() != 11 || sr.GetNextSeq() != 14 || sr.GetFlush().GetBackends()[0].GetDurableSeq() != 13 {
		t.Fatalf("stream reply %v", sr)
	}

	// Read back: every event, in chunks, in order.
	evs, err := rpc.Events(ctx, &logbookv1.SessionsEventsRequest{SessionId: "g1"})
	if err != nil {
		t.Fatal(err)
	}
	var envs []string
	for {
		m, err := evs.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, m.GetEnvelopes()...)
	}
	if len(envs) != 14 || envs[1] != app.GetEnvelopes()[1] {
		t.Fatalf("%d events; first %s", len(envs), envs[0])
	}
	msgs, err := rpc.Messages(ctx, &logbookv1.SessionsMessagesRequest{SessionId: "g1"})
	if err != nil || len(msgs.GetMessages()) != 12 {
		t.Fatalf("messages: %d (%v)", len(msgs.GetMessages()), err)
	}
	at := int64(1)
	msgs, err = rpc.Messages(ctx, &logbookv1.SessionsMessagesRequest{SessionId: "g1", At: &at})
	if err != nil || len(msgs.GetMessages()) != 1 || !strings.Contains(msgs.GetMessages()[0], `"plugin:x":{"b":1.50,"a":1E3}`) {
		t.Fatalf("messages at 1: %q (%v)", msgs.GetMessages(), err)
	}

	// Fork from the live session, then flush and release both.
	at = 4
	fork, err := rpc.Fork(ctx, &logbookv1.SessionsForkRequest{SourceId: "g1", At: &at, ChildId: "g1-child"})
	if err != nil || !strings.Contains(fork.GetHeader(), `"parentSession":"g1","inheritedEventCount":5`) {
		t.Fatalf("fork: %s (%v)", fork.GetHeader(), err)
	}
	at = 99
	if _, err := rpc.Fork(ctx, &logbookv1.SessionsForkRequest{SourceId: "g1", At: &at, ChildId: "g1-late"}); reason(err) != "INVALID_BOUNDARY" {
		t.Fatalf("fork past the end: %v", err)
	}
	if _, err := rpc.Flush(ctx, &logbookv1.SessionsFlushRequest{SessionId: "g1-child"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"g1", "g1-child"} {
		if _, err := rpc.Release(ctx, &logbookv1.SessionsReleaseRequest{SessionId: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rpc.Flush(ctx, &logbookv1.SessionsFlushRequest{SessionId: "g1"}); reason(err) != "SESSION_NOT_LIVE" {
		t.Fatalf("flush after release: %v", err)
	}

	// Stored, not live: inspect and list read storage.
	in, err := rpc.Inspect(ctx, &logbookv1.SessionsInspectRequest{SessionId: "g1"})
	if err != nil || in.GetEvents() != 14 || in.GetLive() || in.OpenTurn != nil || len(in.GetPendingRepair()) != 0 {
		t.Fatalf("inspect %v (%v)", in, err)
	}
	if hd, err := rpc.Header(ctx, &logbookv1.SessionsHeaderRequest{SessionId: "g1"}); err != nil || hd.NextSeq == nil || hd.GetNextSeq() != 14 || hd.GetHeader() != created.GetHeader() {
		t.Fatalf("header of a stored session: %v (%v)", hd, err)
	}
	list, err := rpc.List(ctx, &logbookv1.SessionsListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list.GetSessions() {
		ids = append(ids, s.GetId())
	}
	if !slices.Equal(ids, []string{"g1", "g1-child"}) {
		t.Fatalf("list %v", ids)
	}
	if _, err := rpc.Inspect(ctx, &logbookv1.SessionsInspectRequest{SessionId: "nope"}); status.Code(err) != codes.NotFound || reason(err) != "SESSION_NOT_FOUND" {
		t.Fatalf("inspect unknown: %v", err)
	}
	// Append resumes a stored session (Open for write) and holds it.
	again := []*logbookv1.AppendInput{pbInput("turn/start", `{"turn":2}`, false), pbInput("user/message", string(userData("u9", "again")), true)}
	if _, err := rpc.Append(ctx, &logbookv1.SessionsAppendRequest{SessionId: "g1", Events: again}); err != nil {
		t.Fatal(err)
	}
	if op, err := rpc.Open(ctx, &logbookv1.SessionsOpenRequest{SessionId: "g1"}); err != nil || !op.GetAlreadyLive() || op.GetNextSeq() != 17 {
		t.Fatalf("open of a live session: %v (%v)", op, err)
	}
	if hd, err := rpc.Header(ctx, &logbookv1.SessionsHeaderRequest{SessionId: "g1"}); err != nil || hd.GetNextSeq() != 17 {
		t.Fatalf("header of a live session: %v (%v)", hd, err)
	}
}

func appendedOf(st *status.Status) string {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetMetadata()["appended"]
		}
	}
	return ""
}

// Server reflection lists the Sessions service, so grpcurl works without
// the .proto files.
func TestReflection(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})
	rc, err := reflectionpb.NewServerReflectionClient(grpcConn(t, r)).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := rc.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	if !slices.Contains(names, "logbook.v1.Sessions") {
		t.Fatalf("services %v", names)
	}
	if err := rc.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "logbook.v1.Sessions"}}); err != nil {
		t.Fatal(err)
	}
	if resp, err = rc.Recv(); err != nil || len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
		t.Fatalf("file descriptor: %v (%v)", resp, err)
	}
}
