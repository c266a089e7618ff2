package server_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// With a token, a call without it or with another one is refused before
// it reaches the store, on every protocol; the right one is accepted.
func TestUnauthenticatedRefused(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{Verifier: operator("s3cret-token-0123456789")})
	ctx := context.Background()
	conn := grpcConn(t, r)
	rpc := logbookv1.NewSessionsClient(conn)

	for name, md := range map[string]metadata.MD{
		"none":         nil,
		"wrong":        metadata.Pairs("authorization", "Bearer s3cret-token-0123456789N"),
		"prefix":       metadata.Pairs("authorization", "Bearer s3cret-token"),
		"other scheme": metadata.Pairs("authorization", "Basic s3cret-token-0123456789"),
	} {
		_, err := rpc.Create(metadata.NewOutgoingContext(ctx, md), &logbookv1.SessionsCreateRequest{SessionId: "x-" + strings.ReplaceAll(name, " ", "-")})
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("gRPC with %s token: %v", name, err)
		}
	}
	rc, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err == nil {
		_, err = rc.Recv()
	}
	if status.Code(err) != codes.Unauthenticated {
		t.Errorf("reflection without a token: %v", err)
	}
	if code, hdr, body := post(t, r, "", "List", `{}`); code != http.StatusUnauthorized || !strings.Contains(string(body), `"code":"unauthenticated"`) || hdr.Get("WWW-Authenticate") == "" {
		t.Errorf("JSON without a token: %d %v %s", code, hdr, body)
	}
	if code, _, body := post(t, r, "wrong", "List", `{}`); code != http.StatusUnauthorized {
		t.Errorf("JSON with a wrong token: %d %s", code, body)
	}

	_, err = newClient(t, r, "wrong").List(ctx)
	if connect.CodeOf(err) != connect.CodeUnauthenticated || sdk.CodeOf(err) != sdk.CodeIOError {
		t.Errorf("client with a wrong token: %v", err)
	}
	// Nothing was created by the refused calls.
	list, err := newClient(t, r, "s3cret-token-0123456789").List(ctx)
	if err != nil || len(list) != 0 {
		t.Fatalf("list with the token: %v (%v)", list, err)
	}
	if code, _, body := post(t, r, "s3cret-token-0123456789", "List", `{}`); code != http.StatusOK {
		t.Errorf("JSON with the token: %d %s", code, body)
	}
	_, err = rpc.Create(metadata.NewOutgoingContext(ctx, metadata.Pairs("authorization", "Bearer s3cret-token-0123456789")), &logbookv1.SessionsCreateRequest{SessionId: "ok"})
	if err != nil {
		t.Errorf("gRPC with the token: %v", err)
	}
}

// fakeAddr is a listener whose address claims to be elsewhere; it never
// binds anything but loopback.
type fakeAddr struct {
	net.Listener
	addr net.Addr
}

func (f fakeAddr) Addr() net.Addr { return f.addr }

// Without a credential, only loopback addresses are served; a legacy token
// shorter than 16 bytes and a negative timeout are refused.
func TestNonLoopbackWithoutTokenRefused(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	for _, addr := range []string{"0.0.0.0:7420", ":7420", "[::]:7420", "192.0.2.10:7420", "example.com:7420", "garbage"} {
		_, err := server.New(newHost(e), server.Options{Addr: addr})
		if !errors.Is(err, sdk.CodeConfigInvalid) || !strings.Contains(err.Error(), "token") {
			t.Errorf("New(%q) without a token: %v", addr, err)
		}
		if _, err := server.New(newHost(e), server.Options{Addr: addr, Verifier: operator("a-token-of-16-bytes")}); err != nil {
			t.Errorf("New(%q) with a token: %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:7420", "localhost:7420", "[::1]:0", "127.8.9.10:1"} {
		if _, err := server.New(newHost(e), server.Options{Addr: addr}); err != nil {
			t.Errorf("New(%q): %v", addr, err)
		}
	}
	if err := server.CheckToken("fifteen-bytes!!"); !errors.Is(err, sdk.CodeConfigInvalid) || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("CheckToken of a 15-byte token: %v", err)
	}
	for _, o := range []server.Options{{ReadHeaderTimeout: -1}, {ReadTimeout: -1}, {IdleTimeout: -1}} {
		if _, err := server.New(newHost(e), o); !errors.Is(err, sdk.CodeConfigInvalid) {
			t.Errorf("New(%+v): %v; want CONFIG_INVALID", o, err)
		}
	}
	srv, err := server.New(newHost(e), server.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = srv.Serve(context.Background(), fakeAddr{ln, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 7420}})
	if !errors.Is(err, sdk.CodeConfigInvalid) {
		t.Fatalf("Serve on a non-loopback listener without a token: %v", err)
	}
}

// A request message over MaxRequestBytes is refused (ResourceExhausted)
// and appends nothing; one under it goes through.
func TestRequestSizeLimit(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{MaxRequestBytes: 64 << 10})
	ctx := context.Background()
	c := newClient(t, r, "")
	if _, err := c.Create(ctx, "big", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Session("big").Append(ctx, events.TurnStart(1), kib(0, 32<<10)); err != nil {
		t.Fatalf("32 KiB: %v", err)
	}
	_, err := c.Session("big").Append(ctx, kib(1, 100<<10))
	if connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("100 KiB unary: %v", err)
	}
	s := c.Session("big").AppendStream(ctx)
	if err := s.Send([]events.Input{kib(2, 1<<10)}, true); err != nil { // flush: sent on its own
		t.Fatal(err)
	}
	_ = s.Send([]events.Input{kib(3, 100<<10)}, false) // may or may not see the break yet
	if _, err := s.CloseAndReceive(); connect.CodeOf(err) != connect.CodeResourceExhausted {
		t.Fatalf("100 KiB in a stream: %v", err)
	}
	big := `{"sessionId":"big","events":[{"type":"user/message","data":"` + strings.Repeat("A", 100<<10) + `","surfaceOp":{}}]}`
	if code, _, body := post(t, r, "", "Append", big); code != http.StatusTooManyRequests && code != http.StatusRequestEntityTooLarge {
		t.Fatalf("100 KiB JSON: %d %.200s", code, body)
	}
	_, in, err := c.Inspect(ctx, "big")
	if err != nil || in.Events != 3 {
		t.Fatalf("inspect: %d events (%v); want the turn/start, the 32 KiB one and the 1 KiB one streamed before the break", in.Events, err)
	}
}
