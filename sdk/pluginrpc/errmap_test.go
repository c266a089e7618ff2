package pluginrpc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/errinfo"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

func TestToStatusCodes(t *testing.T) {
	cases := []struct {
		code sdk.Code
		want codes.Code
	}{
		{sdk.CodePluginUnavailable, codes.Unavailable},
		{sdk.CodeBackendBusy, codes.Unavailable},
		{sdk.CodeSessionAlreadyExists, codes.AlreadyExists},
		{sdk.CodeSessionNotFound, codes.NotFound},
		{sdk.CodeSeqConflict, codes.FailedPrecondition},
		{sdk.CodeAlreadyOwned, codes.FailedPrecondition},
		{sdk.CodeHandleClosed, codes.FailedPrecondition},
		{sdk.CodeCorruptLog, codes.DataLoss},
		{sdk.CodeIOError, codes.Internal},
		{sdk.CodeSeqNotContiguous, codes.InvalidArgument},
		{sdk.CodeEventTooLarge, codes.ResourceExhausted},
		{sdk.CodeConfigInvalid, codes.InvalidArgument},
	}
	for _, tc := range cases {
		t.Run(string(tc.code), func(t *testing.T) {
			in := &sdk.Error{Code: tc.code, Op: "jsonl", SessionID: "s1", Seq: new(int64(12)), Index: new(2), Detail: "offending 12", Err: errors.New("cause")}
			err := toStatus(in)
			st, ok := status.FromError(err)
			if !ok || st.Code() != tc.want {
				t.Fatalf("status %v, want gRPC %s", err, tc.want)
			}
			if st.Message() != in.Error() {
				t.Fatalf("message %q, want %q", st.Message(), in.Error())
			}
			var info *errdetails.ErrorInfo
			for _, d := range st.Details() {
				info, _ = d.(*errdetails.ErrorInfo)
			}
			if info == nil || info.Reason != string(tc.code) || info.Domain != "logbook" {
				t.Fatalf("details %v", st.Details())
			}
			want := map[string]string{"op": "jsonl", "session_id": "s1", "seq": "12", "index": "2", "detail": "offending 12", "cause": "cause"}
			if fmt.Sprint(info.Metadata) != fmt.Sprint(want) {
				t.Fatalf("metadata %v, want %v", info.Metadata, want)
			}
			back := fromStatus(context.Background(), "x.Y", err)
			var e *sdk.Error
			if !errors.As(back, &e) || e.Code != in.Code || e.Op != in.Op || e.SessionID != in.SessionID ||
				e.Seq == nil || e.Index == nil || *e.Seq != *in.Seq || *e.Index != *in.Index || e.Detail != in.Detail || e.Err == nil || e.Err.Error() != "cause" {
				t.Fatalf("round trip = %#v", back)
			}
		})
	}
}

func TestToStatusOmitsUnsetFields(t *testing.T) {
	err := toStatus(sdk.Errorf(sdk.CodeLogShrank, "flush", "read %d < %d", 3, 5))
	st, _ := status.FromError(err)
	info := st.Details()[0].(*errdetails.ErrorInfo)
	if _, ok := info.Metadata["seq"]; ok {
		t.Fatalf("an absent seq travelled: %v", info.Metadata)
	}
	for _, k := range []string{"index", "session_id", "cause"} {
		if _, ok := info.Metadata[k]; ok {
			t.Fatalf("%s travelled: %v", k, info.Metadata)
		}
	}
	e := fromStatus(context.Background(), "x", err).(*sdk.Error)
	if e.Seq != nil || e.Index != nil || e.Err != nil || e.SessionID != "" {
		t.Fatalf("rebuilt %#v", e)
	}
}

func TestFromStatusWithoutErrorInfo(t *testing.T) {
	cases := []struct {
		code codes.Code
		want sdk.Code
	}{
		{codes.Unavailable, sdk.CodePluginUnavailable},
		{codes.DeadlineExceeded, sdk.CodePluginUnavailable},
		{codes.Aborted, sdk.CodePluginUnavailable},
		{codes.Canceled, sdk.CodePluginUnavailable},
		{codes.Internal, sdk.CodeIOError},
		{codes.Unknown, sdk.CodeIOError},
		{codes.Unimplemented, sdk.CodeIOError},
		{codes.NotFound, sdk.CodeIOError},
		{codes.ResourceExhausted, sdk.CodeIOError},
	}
	for _, tc := range cases {
		t.Run(tc.code.String(), func(t *testing.T) {
			in := status.Error(tc.code, "transport said no")
			err := fromStatus(context.Background(), "persistence.Stat", in)
			if sdk.CodeOf(err) != tc.want {
				t.Fatalf("got %v, want %s", err, tc.want)
			}
			if !errors.Is(err, in) {
				t.Fatal("the status error is not wrapped")
			}
			if status.Code(errors.Unwrap(err)) != tc.code {
				t.Fatalf("wrapped status code %v", status.Code(errors.Unwrap(err)))
			}
			if !strings.Contains(err.Error(), "persistence.Stat") {
				t.Fatalf("message %q does not name the call", err)
			}
			if sdk.Retryable(err) != true {
				t.Fatal("IO_ERROR and PLUGIN_UNAVAILABLE are retryable")
			}
		})
	}
}

func TestFromStatusIgnoresForeignErrorInfo(t *testing.T) {
	st, err := status.New(codes.NotFound, "x").WithDetails(&errdetails.ErrorInfo{Reason: "SESSION_NOT_FOUND", Domain: "example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if got := sdk.CodeOf(fromStatus(context.Background(), "x", st.Err())); got != sdk.CodeIOError {
		t.Fatalf("foreign ErrorInfo mapped to %s", got)
	}
}

func TestFromStatusWrapsContextError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := fromStatus(ctx, "x", status.Error(codes.Canceled, "context canceled"))
	if !errors.Is(err, context.Canceled) || sdk.CodeOf(err) != sdk.CodePluginUnavailable {
		t.Fatalf("got %v", err)
	}
	// A bare context error (the call never started) maps the same way.
	err = fromStatus(ctx, "x", context.Canceled)
	if !errors.Is(err, context.Canceled) || sdk.CodeOf(err) != sdk.CodePluginUnavailable {
		t.Fatalf("got %v", err)
	}
}

func TestToStatusPlainErrors(t *testing.T) {
	if toStatus(nil) != nil {
		t.Fatal("nil error became a status")
	}
	for _, tc := range []struct {
		err  error
		want codes.Code
	}{
		{errors.New("boom"), codes.Unknown},
		{fmt.Errorf("op: %w", context.Canceled), codes.Canceled},
		{context.DeadlineExceeded, codes.DeadlineExceeded},
		{status.Error(codes.ResourceExhausted, "quota"), codes.ResourceExhausted},
	} {
		st, _ := status.FromError(toStatus(tc.err))
		if st.Code() != tc.want || len(st.Details()) != 0 {
			t.Fatalf("%v: status %v %v", tc.err, st.Code(), st.Details())
		}
	}
}

func TestLongErrorTextIsClipped(t *testing.T) {
	detail := strings.Repeat("é", errinfo.MaxText) // 2 bytes per rune
	err := toStatus(&sdk.Error{Code: sdk.CodePayloadInvalid, Detail: detail})
	e := fromStatus(context.Background(), "x", err).(*sdk.Error)
	if len(e.Detail) > errinfo.MaxText || !utf8.ValidString(e.Detail) || !strings.HasSuffix(e.Detail, "…") {
		t.Fatalf("detail of %d bytes, valid %v", len(e.Detail), utf8.ValidString(e.Detail))
	}
	st, _ := status.FromError(err)
	if len(st.Message()) > errinfo.MaxText {
		t.Fatalf("message of %d bytes", len(st.Message()))
	}
}

func TestPluginErrorProtoRoundTrip(t *testing.T) {
	in := &sdk.Error{Code: sdk.CodeCorruptLog, Op: "jsonl", SessionID: "s", Seq: new(int64(0)), Index: new(4), Detail: "d", Err: errors.New("c")}
	e := errorFromProto(errorToProto(in))
	if e.Code != in.Code || e.Op != in.Op || e.SessionID != in.SessionID || (e.Seq == nil || *e.Seq != 0) || (e.Index == nil || *e.Index != 4) || e.Detail != "d" || e.Err.Error() != "c" {
		t.Fatalf("got %#v", e)
	}
	e = errorFromProto(errorToProto(errors.New("disk gone")))
	if e.Code != sdk.CodeIOError || e.Detail != "disk gone" || e.Seq != nil || e.Index != nil {
		t.Fatalf("plain error became %#v", e)
	}
	if errorToProto(nil) != nil {
		t.Fatal("nil error became a PluginError")
	}
}

func TestSplitBatchKeepsEveryRequestUnderTheLimit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 200 {
		maxBytes := 4<<10 + rng.IntN(64<<10)
		n := rng.IntN(300)
		handle := strings.Repeat("h", rng.IntN(40))
		events := make([][]byte, n)
		for i := range events {
			size := rng.IntN(maxBytes / 3)
			if rng.IntN(10) == 0 {
				// As large as fits alone: framing is 13 bytes plus the handle
				// for the request and 4 for the event.
				size = maxBytes - len(handle) - 17 - rng.IntN(3)
			}
			events[i] = make([]byte, size)
		}
		first := sdk.Seq(rng.Int64N(sdk.MaxSeq))
		parts, err := splitBatch(handle, "", first, events, maxBytes)
		if err != nil {
			t.Fatalf("iter %d: %v", iter, err)
		}
		var joined [][]byte
		seq := first
		for i, p := range parts {
			req := &logbookv1.AppendRequest{Handle: handle, FirstSeq: int64(seq), Events: p}
			if size := proto.Size(req); size > maxBytes {
				t.Fatalf("iter %d: part %d encodes to %d > %d", iter, i, size, maxBytes)
			}
			if i < len(parts)-1 {
				next := &logbookv1.AppendRequest{Handle: handle, FirstSeq: int64(seq), Events: append(append([][]byte(nil), p...), parts[i+1][0])}
				if proto.Size(next) <= maxBytes-13 { // base reserves 10 varint bytes, an empty handle and a zero first_seq are omitted
					t.Fatalf("iter %d: part %d could take the next event", iter, i)
				}
			}
			if len(p) == 0 && n > 0 {
				t.Fatalf("iter %d: empty part", iter)
			}
			joined = append(joined, p...)
			seq += sdk.Seq(len(p))
		}
		if len(joined) != n {
			t.Fatalf("iter %d: parts carry %d events, want %d", iter, len(joined), n)
		}
	}
	parts, err := splitBatch("h", "", 0, nil, 4<<10)
	if err != nil || len(parts) != 1 || len(parts[0]) != 0 {
		t.Fatalf("empty batch = %v, %v", parts, err)
	}
}

func TestCreateWithUndecodableHeaderIsHeaderInvalid(t *testing.T) {
	s := &persistenceServer{}
	_, err := s.Create(context.Background(), &logbookv1.CreateRequest{Header: []byte(`{"type":"session","version":1,"id":"s"}`)})
	e := fromStatus(context.Background(), "persistence.Create", err)
	if sdk.CodeOf(e) != sdk.CodeHeaderInvalid {
		t.Fatalf("got %v", e)
	}
	_, err = s.Create(context.Background(), &logbookv1.CreateRequest{Header: []byte(`{"type":"session","version":99,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}`)})
	if got := sdk.CodeOf(fromStatus(context.Background(), "persistence.Create", err)); got != sdk.CodeFormatTooNew {
		t.Fatalf("a newer format = %s, want FORMAT_TOO_NEW", got)
	}
}
