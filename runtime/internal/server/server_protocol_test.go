package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/seed-e5e476df/logbook/internal/protocolcases"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/errinfo"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1/logbookv1connect"
)

// The agent-loop rules over Connect, with the generated client: each
// rule's event fails FailedPrecondition with an ErrorInfo naming its code
// and Meta and changes nothing, alone and as an AppendGroup member; the
// legal patterns are accepted; the operation cases append once under
// Append's operation_id.
func TestConnectProtocolCases(t *testing.T) {
	r := serve(t, startEngine(t, headless(t.TempDir())), server.Options{})
	protocolcases.Run(t, connectDoor{logbookv1connect.NewSessionsClient(http.DefaultClient, r.url)}, protocolcases.Options{Groups: true, Lenient: true, Operations: true})
}

// connectDoor drives the Sessions service.
type connectDoor struct {
	c logbookv1connect.SessionsClient
}

func (d connectDoor) Create(t testing.TB, id string, lenient bool) protocolcases.Session {
	req := &logbookv1.SessionsCreateRequest{SessionId: id}
	if lenient {
		req.Protocol = sdk.ProtocolLenient
	}
	reply, err := d.c.Create(context.Background(), connect.NewRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	if lenient && !strings.Contains(reply.Msg.GetHeader(), `"protocol":"lenient"`) {
		t.Fatalf("created with protocol lenient, the header is %s", reply.Msg.GetHeader())
	}
	return connectSession{d.c, id}
}

// connectSession is one session of the service.
type connectSession struct {
	c  logbookv1connect.SessionsClient
	id string
}

func (s connectSession) Append(t testing.TB, ins []protocolcases.Input) ([]sdk.Seq, *protocolcases.Refusal) {
	reply, err := s.c.Append(context.Background(), connect.NewRequest(s.request(t, ins)))
	return s.result(t, reply, err)
}

func (s connectSession) AppendGroup(t testing.TB, ins []protocolcases.Input) ([]sdk.Seq, *protocolcases.Refusal) {
	reply, err := s.c.AppendGroup(context.Background(), connect.NewRequest(s.request(t, ins)))
	return s.result(t, reply, err)
}

// AppendOnce is Append with operation_id: the reply's replay says a
// replay.
func (s connectSession) AppendOnce(t testing.TB, id string, ins []protocolcases.Input) ([]sdk.Seq, bool, *protocolcases.Refusal) {
	req := s.request(t, ins)
	req.OperationId = id
	reply, err := s.c.Append(context.Background(), connect.NewRequest(req))
	seqs, ref := s.result(t, reply, err)
	return seqs, err == nil && reply.Msg.GetReplay(), ref
}

// request is the append request of ins, each input's data as written.
func (s connectSession) request(t testing.TB, ins []protocolcases.Input) *logbookv1.SessionsAppendRequest {
	req := &logbookv1.SessionsAppendRequest{SessionId: s.id}
	for _, in := range protocolcases.Inputs(ins) {
		pb := &logbookv1.AppendInput{Type: in.Type, Data: string(in.Data)}
		if op := in.SurfaceOp; op != nil {
			pb.SurfaceOp = &logbookv1.SurfaceOp{Replace: op.Replace, StartSeq: int64(op.StartSeq), EndSeq: int64(op.EndSeq)}
		}
		if in.SourceEventSeqs != nil {
			pb.SourceEventSeqs = &logbookv1.SourceEventSeqs{}
			for _, q := range in.SourceEventSeqs {
				pb.SourceEventSeqs.Seqs = append(pb.SourceEventSeqs.Seqs, int64(q))
			}
		}
		req.Events = append(req.Events, pb)
	}
	return req
}

// result returns the seqs of an accepted append, or the refusal its
// error's ErrorInfo carries; a rule's refusal must be FailedPrecondition.
func (s connectSession) result(t testing.TB, reply *connect.Response[logbookv1.SessionsAppendReply], err error) ([]sdk.Seq, *protocolcases.Refusal) {
	t.Helper()
	if err == nil {
		return envelopeSeqs(t, reply.Msg.GetEnvelopes()), nil
	}
	var ce *connect.Error
	if !errors.As(err, &ce) {
		t.Fatalf("append: %v (not a Connect error)", err)
	}
	var e *sdk.Error
	for _, d := range ce.Details() {
		if v, derr := d.Value(); derr == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok {
				e = errinfo.Decode(info)
			}
		}
	}
	if e == nil {
		t.Fatalf("append: %v (no ErrorInfo)", err)
	}
	if slices.Contains(protocolcases.Codes, e.Code) && ce.Code() != connect.CodeFailedPrecondition {
		t.Errorf("%s travels as %s, want failed_precondition", e.Code, ce.Code())
	}
	if want := connect.Code(pluginrpc.StatusCode(e.Code)); ce.Code() != want {
		t.Errorf("%s travels as %s, want %s", e.Code, ce.Code(), want)
	}
	return nil, &protocolcases.Refusal{Code: e.Code, Meta: e.Meta, Index: e.Index, Text: ce.Message()}
}

func (s connectSession) Log(t testing.TB) []string {
	st, err := s.c.Events(context.Background(), connect.NewRequest(&logbookv1.SessionsEventsRequest{SessionId: s.id}))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []string
	for st.Receive() {
		out = append(out, st.Msg().GetEnvelopes()...)
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// envelopeSeqs returns the seqs of envelopes.
func envelopeSeqs(t testing.TB, envs []string) []sdk.Seq {
	t.Helper()
	var out []sdk.Seq
	for _, env := range envs {
		var e struct{ Seq sdk.Seq }
		if err := json.Unmarshal([]byte(env), &e); err != nil {
			t.Fatalf("an envelope that does not decode: %v: %s", err, env)
		}
		out = append(out, e.Seq)
	}
	return out
}
