package server_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
)

// slack is what the tests below allow beyond a timeout for the server to
// notice it and for a loaded machine to schedule it.
const slack = 3 * time.Second

// rawConn dials a serve process and sends head as is.
func rawConn(t *testing.T, p *serveProcess, head string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	return c
}

// trickle writes one byte to c every interval until a write fails or stop
// is closed.
func trickle(c net.Conn, interval time.Duration, stop <-chan struct{}) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			if _, err := c.Write([]byte("x")); err != nil {
				return
			}
		}
	}
}

// endsWithin reads c until the server ends the connection and fails the
// test unless that happens within limit of start; it returns what was read.
func endsWithin(t *testing.T, c net.Conn, start time.Time, limit time.Duration, what string) string {
	t.Helper()
	_ = c.SetReadDeadline(start.Add(limit))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Errorf("%s: the connection was still open after %v", what, limit)
	}
	return string(b)
}

// A real serve cuts off clients that trickle their requests: headers
// slower than --read-header-timeout, a body slower than --read-timeout (the
// report: 500 connections trickling a byte every 5 s were held for 75 s and
// more), and it closes a connection idle for --idle-timeout.
func TestSlowClientsAreCutOff(t *testing.T) {
	p := startServe(t, t.TempDir(), "--read-header-timeout", "1s", "--read-timeout", "2s", "--idle-timeout", "3s")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer func() { close(stop); wg.Wait() }()

	const bodies = 50
	start := time.Now()
	conns := make([]net.Conn, bodies)
	for i := range conns {
		conns[i] = rawConn(t, p, "POST /logbook.v1.Sessions/Inspect HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
		wg.Go(func() { trickle(conns[i], 500*time.Millisecond, stop) })
	}
	header := rawConn(t, p, "POST /logbook.v1.Sessions/Inspect HTTP/1.1\r\nHost: localhost\r\n")
	wg.Go(func() { trickle(header, 300*time.Millisecond, stop) })

	endsWithin(t, header, start, time.Second+slack, "headers trickled")
	var mu sync.Mutex
	var slowest time.Duration
	var readers sync.WaitGroup
	for i, c := range conns {
		readers.Go(func() {
			endsWithin(t, c, start, 2*time.Second+slack, "body "+string(rune('0'+i%10))+" trickled")
			mu.Lock()
			slowest = max(slowest, time.Since(start))
			mu.Unlock()
		})
	}
	readers.Wait()
	t.Logf("%d body tricklers cut off after at most %v (read timeout 2 s)", bodies, slowest)

	idle := rawConn(t, p, "POST /logbook.v1.Sessions/List HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
	br := bufio.NewReader(idle)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, "200") {
		t.Fatalf("a request on the idle connection: %q %v", status, err)
	}
	answered := time.Now()
	_ = idle.SetReadDeadline(answered.Add(3*time.Second + slack))
	if _, err := io.Copy(io.Discard, br); err != nil {
		t.Errorf("an idle connection was still open %v after its answer (idle timeout 3 s): %v", 3*time.Second+slack, err)
	}
}

// tokenServe runs a real serve that requires the token of a fresh 0600
// token file.
func tokenServe(t *testing.T, mode os.FileMode, extra ...string) (*serveProcess, string) {
	t.Helper()
	const token = "a-bearer-token-of-32-bytes-0123"
	dir := t.TempDir()
	path := filepath.Join(dir, "token")
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return startServe(t, filepath.Join(dir, "data"), append([]string{"--token-file", path}, extra...)...), token
}

// Authentication is decided on the headers: a request without the token
// gets its 401 at once, whether its body is on its way, never sent, or
// chunked, and the server does not wait for the body.
func TestUnauthenticatedRefusedBeforeTheBody(t *testing.T) {
	p, _ := tokenServe(t, 0o600)
	if strings.Contains(p.log(), "warning") {
		t.Errorf("a private token file got a warning:\n%s", p.log())
	}
	for _, tc := range []struct{ name, head, want string }{
		{"content-length", "POST /logbook.v1.Sessions/Create HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n", " 401 "},
		{"chunked", "POST /logbook.v1.Sessions/Create HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", " 401 "},
		// gRPC-Web answers errors with 200 and the status in its headers.
		{"gRPC-Web", "POST /logbook.v1.Sessions/AppendStream HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/grpc-web+proto\r\nContent-Length: 100000\r\n\r\n", " 200 "},
	} {
		c := rawConn(t, p, tc.head)
		_ = c.SetReadDeadline(time.Now().Add(slack)) // the answer and the end of the connection
		br := bufio.NewReader(c)
		status, err := br.ReadString('\n')
		if err != nil || !strings.Contains(status, tc.want) {
			t.Errorf("%s: %q %v; want %q before the body is sent", tc.name, status, err, tc.want)
			continue
		}
		rest, err := io.ReadAll(br)
		if err != nil {
			t.Errorf("%s: the connection stayed open after the refusal: %v", tc.name, err)
		}
		if r := strings.ToLower(string(rest)); !strings.Contains(r, "unauthenticated") && !strings.Contains(r, "grpc-status: 16") {
			t.Errorf("%s: the answer does not say unauthenticated: %q", tc.name, rest)
		}
	}
}

// A token file its group or others may read gets a warning; the server
// still starts.
func TestReadableTokenFileWarns(t *testing.T) {
	p, token := tokenServe(t, 0o644)
	if !strings.Contains(p.log(), "warning: --token-file") || !strings.Contains(p.log(), "chmod 600") {
		t.Errorf("no warning for a 0644 token file:\n%s", p.log())
	}
	c := client.New(p.addr, client.Options{Token: token})
	defer c.Close()
	if _, err := c.List(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// The read timeout bounds how a request arrives, never how long a call
// lasts: an append stream whose messages come further apart than the read
// timeout (but within the idle timeout) and an Events follow that outlives
// it both keep working; a stream idle for longer than the idle timeout is
// cut.
func TestStreamsOutliveTheReadTimeout(t *testing.T) {
	p, token := tokenServe(t, 0o600, "--read-timeout", "1s", "--idle-timeout", "4s")
	ctx := context.Background()
	c := client.New(p.addr, client.Options{Token: token})
	defer c.Close()
	if _, err := c.Create(ctx, "s", events.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	followed := make(chan error, 16)
	go func() {
		for _, err := range c.Session("s").Read(fctx, client.ReadOptions{Follow: true}) {
			followed <- err
		}
		close(followed)
	}()

	s := c.Session("s").AppendStream(ctx)
	if err := s.Send([]events.Input{events.TurnStart(1)}, true); err != nil { // the turn of the messages
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the scenario: longer than the read timeout passes between two messages
	if err := s.Send([]events.Input{userInput("u1", "second")}, true); err != nil {
		t.Fatal(err)
	}
	res, err := s.CloseAndReceive()
	if err != nil || res.Appended != 2 {
		t.Fatalf("append stream with messages 2 s apart (read timeout 1 s): %+v %v", res, err)
	}
	for i := range 2 {
		select {
		case err, ok := <-followed:
			if !ok || err != nil {
				t.Fatalf("follow, event %d: %v (ended: %v)", i, err, !ok)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the follow did not yield event %d", i)
		}
	}

	idle := c.Session("s").AppendStream(ctx)
	if err := idle.Send([]events.Input{userInput("u2", "then silence")}, true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4*time.Second + slack) // the scenario: the stream idles past the idle timeout
	_ = idle.Send([]events.Input{userInput("u3", "too late")}, true)
	if _, err := idle.CloseAndReceive(); err == nil {
		t.Error("a stream idle for longer than the idle timeout was not cut")
	}
}
