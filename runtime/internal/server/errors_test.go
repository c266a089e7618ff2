package server

import (
	"context"
	"errors"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/errinfo"
	"github.com/seed-e5e476df/logbook/sdk/persistencefault"
)

// A failed flush travels as FLUSH_FAILED, the code sdk.CodeOf gives it in
// the store: the status, the Logbook-Code header and the ErrorInfo agree,
// and the error a client rebuilds renders as the store's did.
func TestToConnectFailedFlushIsFlushFailed(t *testing.T) {
	ctx := context.Background()
	fault := persistencefault.Wrap(memory.New())
	st, err := store.New(store.Options{Backends: []store.Backend{{Name: memory.Name, Persistence: fault}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(ctx) })
	s, err := st.Create(ctx, store.CreateOptions{ID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, events.TurnStart(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, events.UserText(events.TextMessage{ID: "u", Text: "a"})); err != nil {
		t.Fatal(err)
	}
	fault.FailNextAppends(1, nil)
	_, flushErr := st.Flush(ctx, s)
	if sdk.CodeOf(flushErr) != sdk.CodeFlushFailed {
		t.Fatalf("flush: %v; want FLUSH_FAILED", flushErr)
	}

	var ce *connect.Error
	if !errors.As(toConnect(flushErr, nil), &ce) {
		t.Fatalf("toConnect gave no connect error")
	}
	if ce.Code() != connect.CodeInternal || ce.Meta().Get(codeHeader) != string(sdk.CodeFlushFailed) {
		t.Fatalf("status %s, %s %q; want internal, FLUSH_FAILED", ce.Code(), codeHeader, ce.Meta().Get(codeHeader))
	}
	var back *sdk.Error
	for _, d := range ce.Details() {
		if v, err := d.Value(); err == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok {
				back = errinfo.Decode(info)
			}
		}
	}
	if back == nil || back.Code != sdk.CodeFlushFailed || back.SessionID != "s" || back.Op != "flush" {
		t.Fatalf("ErrorInfo rebuilt as %v", back)
	}
	if back.Error() != flushErr.Error() {
		t.Fatalf("rebuilt error renders %q\nthe store's renders %q", back.Error(), flushErr.Error())
	}
}
