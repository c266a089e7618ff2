package server_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// metadataOf returns the metadata of a gRPC error's logbook ErrorInfo.
func metadataOf(err error) map[string]string {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == "logbook" {
			return info.GetMetadata()
		}
	}
	return nil
}

// requireMeta fails unless err's logbook metadata has every entry of want
// ("" = must be absent).
func requireMeta(t *testing.T, what string, err error, want map[string]string) {
	t.Helper()
	md := metadataOf(err)
	for k, v := range want {
		got, ok := md[k]
		if (v == "" && ok) || (v != "" && got != v) {
			t.Fatalf("%s: metadata %s = %q (present %v), want %q; error %v, metadata %v", what, k, got, ok, v, err, md)
		}
	}
}

func i64(v int64) *int64 { return &v }

// expected_seq on Append: a matching length appends, any other is
// SEQ_CONFLICT naming both lengths and appends nothing; every error reply
// carries appended and firstSeq.
func TestAppendExpectedSeq(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})
	rpc := logbookv1.NewSessionsClient(grpcConn(t, r))
	ctx := context.Background()
	if _, err := rpc.Create(ctx, &logbookv1.SessionsCreateRequest{SessionId: "x"}); err != nil {
		t.Fatal(err)
	}
	two := []*logbookv1.AppendInput{pbInput("user/message", string(userData("u0", "a")), true), pbInput("user/message", string(userData("u1", "b")), true)}
	turn := pbInput("turn/start", `{"turn":1}`, false)
	if app, err := rpc.Append(ctx, &logbookv1.SessionsAppendRequest{SessionId: "x", Events: append([]*logbookv1.AppendInput{turn}, two...), ExpectedSeq: i64(0), Flush: true}); err != nil || len(app.GetEnvelopes()) != 3 {
		t.Fatalf("expected 0 on an empty log: %v, %v", app, err)
	}
	events := func() int64 {
		in, err := rpc.Inspect(ctx, &logbookv1.SessionsInspectRequest{SessionId: "x"})
		if err != nil {
			t.Fatal(err)
		}
		return in.GetEvents()
	}
	for _, stale := range []int64{0, 2, 4} {
		_, err := rpc.Append(ctx, &logbookv1.SessionsAppendRequest{SessionId: "x", Events: two, ExpectedSeq: i64(stale), Flush: true})
		if status.Code(err) != codes.FailedPrecondition || reason(err) != "SEQ_CONFLICT" {
			t.Fatalf("expected %d on a log of 3: %v", stale, err)
		}
		requireMeta(t, "a stale expected_seq", err, map[string]string{"expected": itoa(stale), "actual": "3", "appended": "0", "firstSeq": "3"})
		if n := events(); n != 3 {
			t.Fatalf("a refused append left %d events, want 3", n)
		}
	}
	app, err := rpc.Append(ctx, &logbookv1.SessionsAppendRequest{SessionId: "x", Events: two[:1], ExpectedSeq: i64(3)})
	if err != nil || len(app.GetEnvelopes()) != 1 || app.GetEnvelopes()[0][:9] != `{"seq":3,` {
		t.Fatalf("expected 3: %v, %v", app, err)
	}
	if _, err := rpc.Append(ctx, &logbookv1.SessionsAppendRequest{SessionId: "x", Events: two, ExpectedSeq: i64(-1)}); reason(err) != "INVALID_SEQ" {
		t.Fatalf("expected -1: %v", err)
	} else {
		requireMeta(t, "a negative expected_seq", err, map[string]string{"appended": "0", "firstSeq": ""})
	}

	// Every error reply of Append says how many events were appended.
	_, err = rpc.Append(ctx, &logbookv1.SessionsAppendRequest{SessionId: "x", Events: []*logbookv1.AppendInput{two[0], pbInput("user/message", `{"id":`, true)}, ExpectedSeq: i64(4)})
	if reason(err) != "JSON_SYNTAX" {
		t.Fatalf("a rejected second event: %v", err)
	}
	requireMeta(t, "a rejected event", err, map[string]string{"appended": "1", "firstSeq": "4", "index": "1", "seq": "5"})
	_, err = rpc.Append(ctx, &logbookv1.SessionsAppendRequest{SessionId: "missing", Events: two})
	if reason(err) != "SESSION_NOT_FOUND" {
		t.Fatalf("a missing session: %v", err)
	}
	requireMeta(t, "a missing session", err, map[string]string{"appended": "0", "firstSeq": ""})
	if n := events(); n != 5 {
		t.Fatalf("%d events, want 5", n)
	}
}

// expected_seq on AppendStream: each message is checked against the length
// right before its own events; a stale one ends the stream with
// SEQ_CONFLICT, the metadata counting what the stream appended before it.
func TestAppendStreamExpectedSeq(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})
	rpc := logbookv1.NewSessionsClient(grpcConn(t, r))
	ctx := context.Background()
	if _, err := rpc.Create(ctx, &logbookv1.SessionsCreateRequest{SessionId: "s"}); err != nil {
		t.Fatal(err)
	}
	ev := func(i int) []*logbookv1.AppendInput {
		return []*logbookv1.AppendInput{pbInput("user/message", string(userData("u"+itoa(int64(i)), "s")), true)}
	}
	stream, err := rpc.AppendStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	turn := pbInput("turn/start", `{"turn":1}`, false)
	msgs := []*logbookv1.SessionsAppendRequest{
		{SessionId: "s", Events: append([]*logbookv1.AppendInput{turn}, ev(0)...), ExpectedSeq: i64(0)},
		{Events: ev(1)},
		{Events: ev(2), ExpectedSeq: i64(3)},
		{Events: ev(3), ExpectedSeq: i64(3)}, // stale
		{Events: ev(4)},
	}
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			break // the server ended the stream
		}
	}
	_, err = stream.CloseAndRecv()
	if reason(err) != "SEQ_CONFLICT" {
		t.Fatalf("a stale message: %v", err)
	}
	requireMeta(t, "a stale message", err, map[string]string{"expected": "3", "actual": "4", "appended": "4", "firstSeq": "0"})
	in, err := rpc.Inspect(ctx, &logbookv1.SessionsInspectRequest{SessionId: "s"})
	if err != nil || in.GetEvents() != 4 {
		t.Fatalf("%d events after the stream (%v), want 4", in.GetEvents(), err)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// The JSON API takes expectedSeq as protobuf's JSON mapping writes an
// int64 (a string) and answers a stale one with SEQ_CONFLICT in the
// Logbook-Code header and an ErrorInfo detail carrying the lengths.
func TestAppendExpectedSeqJSON(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})
	if code, _, body := post(t, r, "", "Create", `{"sessionId":"j"}`); code != http.StatusOK {
		t.Fatalf("create: %d %s", code, body)
	}
	ev := `"events":[{"type":"user/message","data":` + jsonString(t, string(userData("u0", "a"))) + `,"surfaceOp":{}}]`
	turn := `"events":[{"type":"turn/start","data":"{\"turn\":1}"},{"type":"user/message","data":` + jsonString(t, string(userData("u0", "a"))) + `,"surfaceOp":{}}]`
	if code, _, body := post(t, r, "", "Append", `{"sessionId":"j","expectedSeq":"0",`+turn+`}`); code != http.StatusOK {
		t.Fatalf("expectedSeq 0: %d %s", code, body)
	}
	code, h, body := post(t, r, "", "Append", `{"sessionId":"j","expectedSeq":"0",`+ev+`}`)
	if code != http.StatusBadRequest || h.Get("Logbook-Code") != "SEQ_CONFLICT" {
		t.Fatalf("a stale expectedSeq: %d %v %s", code, h.Get("Logbook-Code"), body)
	}
	var reply struct {
		Details []struct {
			Type  string
			Value string // base64 without padding
		}
	}
	if err := json.Unmarshal(body, &reply); err != nil {
		t.Fatal(err)
	}
	for _, d := range reply.Details {
		var info errdetails.ErrorInfo
		b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(d.Value, "="))
		if d.Type == "google.rpc.ErrorInfo" && err == nil && proto.Unmarshal(b, &info) == nil {
			md := info.GetMetadata()
			if md["expected"] != "0" || md["actual"] != "2" || md["appended"] != "0" || md["firstSeq"] != "2" {
				t.Fatalf("metadata %v", md)
			}
			return
		}
	}
	t.Fatalf("no ErrorInfo detail in %s", body)
}

// A session fenced by a final persistence failure (its log shrank under
// the server, found when the killed plugin's handle is re-opened) says so in every failed append and flush: "fenced", which
// client.Fenced reads and AppendRetry does not retry.
func TestFencedSessionSaysSo(t *testing.T) {
	dir := t.TempDir()
	e := startEngine(t, headless(dir))
	r := serve(t, e, server.Options{})
	c := newClient(t, r, "")
	ctx := context.Background()
	if _, err := c.Create(ctx, "f", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := appendFlush(ctx, c, "f", events.TurnStart(1), userInput("u0", "a")); err != nil {
		t.Fatal(err)
	}
	var logs []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Base(filepath.Dir(path)) == "f" && strings.HasPrefix(d.Name(), "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl") {
			logs = append(logs, path)
		}
		return err
	})
	if len(logs) != 1 {
		t.Fatalf("log files %v", logs)
	}
	// The log shrinks under the server, and the plugin dies: the re-open
	// after its restart finds the shorter log, a final failure.
	if err := os.Truncate(logs[0], 0); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(e.Plugins["jsonl"].Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := appendFlush(ctx, c, "f", userInput("u1", "b"))
	if !errors.Is(err, sdk.CodeFlushFailed) {
		t.Fatalf("an append whose flush met the dead plugin: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Session("f").Flush(ctx)
		if client.Fenced(err) && errors.Is(err, sdk.CodeFlushFailed) {
			break
		}
		if err == nil || time.Now().After(deadline) {
			t.Fatalf("the flush of a log that shrank under the server: %v", err)
		}
		time.Sleep(10 * time.Millisecond) // the plugin restarts
	}
	_, err = c.Session("f").Append(ctx, userInput("u2", "c"))
	if md := (*sdk.Error)(nil); !errors.As(err, &md) || md.Meta["fenced"] != "true" || !errors.Is(err, sdk.CodeSessionFenced) {
		t.Fatalf("an append to the fenced session: %v", err)
	}
	n := 0
	_, err = c.Session("f").AppendRetry(ctx, 3, []events.Input{userInput("u2", "c")}, client.RetryOptions{Flush: true, OnRetry: func(error) { n++ }})
	if !client.Fenced(err) || n != 0 {
		t.Fatalf("AppendRetry on the fenced session: %v after %d retries", err, n)
	}
}

// An append stream whose first message carries an expected_seq outside the
// offset domain is refused with INVALID_SEQ before the session is reached:
// a stored session that is not live is not resumed, so its log is left
// exactly as it was (no lifecycle marker), as Append leaves it.
func TestAppendStreamInvalidExpectedSeqChangesNothing(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{})
	rpc := logbookv1.NewSessionsClient(grpcConn(t, r))
	ctx := context.Background()
	if _, err := rpc.Create(ctx, &logbookv1.SessionsCreateRequest{SessionId: "v"}); err != nil {
		t.Fatal(err)
	}
	one := []*logbookv1.AppendInput{pbInput("user/message", string(userData("u0", "a")), true)}
	turn := pbInput("turn/start", `{"turn":1}`, false)
	if _, err := rpc.Append(ctx, &logbookv1.SessionsAppendRequest{SessionId: "v", Events: append([]*logbookv1.AppendInput{turn}, one...), Flush: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := rpc.Release(ctx, &logbookv1.SessionsReleaseRequest{SessionId: "v"}); err != nil {
		t.Fatal(err)
	}
	stored := func() sdk.Offset {
		v, _, err := e.Store.View(ctx, "v", nil)
		if err != nil {
			t.Fatal(err)
		}
		return v.Len()
	}
	before := stored()
	stream, err := rpc.AppendStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = stream.Send(&logbookv1.SessionsAppendRequest{SessionId: "v", Events: one, ExpectedSeq: i64(-1)})
	_, err = stream.CloseAndRecv()
	if reason(err) != "INVALID_SEQ" {
		t.Fatalf("a negative expected_seq on the stream: %v", err)
	}
	requireMeta(t, "a negative expected_seq", err, map[string]string{"appended": "0", "firstSeq": ""})
	if _, ok := e.Store.Get("v"); ok {
		t.Fatal("the refused stream made the session live")
	}
	if n := stored(); n != before {
		t.Fatalf("the refused stream left %d stored events, want %d", n, before)
	}
}
