package telemetry_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/runtime/internal/otlp"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/runtime/internal/telemetry"
)

// waitLimit bounds every wait of these tests.
const waitLimit = 20 * time.Second

// spansPerTurn is how many spans turnInputs makes: the turn, two chats and
// one tool call.
const spansPerTurn = 4

// receiver is an in-test OTLP/HTTP collector: it decodes each POST as a
// protobuf ExportTraceServiceRequest and keeps the spans of the requests
// it answers 200.
type receiver struct {
	srv *httptest.Server

	// status, when set, gives the answer to the n-th request (from 1)
	// before it is read; 200 keeps its spans.
	status func(n int) int
	// hold, when set, holds every request until it closes (or the request
	// ends).
	hold chan struct{}

	mu       sync.Mutex
	requests int
	spans    []*tracepb.Span
	// changed gets a value (without waiting) whenever a request arrives or
	// is kept.
	changed chan struct{}
}

// newReceiver starts a receiver on ln (nil: a new loopback port); the test
// closes it.
func newReceiver(t testing.TB, ln net.Listener, status func(int) int, hold chan struct{}) *receiver {
	t.Helper()
	r := &receiver{status: status, hold: hold, changed: make(chan struct{}, 1)}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(r.serve))
	if ln != nil {
		r.srv.Listener.Close()
		r.srv.Listener = ln
	}
	r.srv.Start()
	t.Cleanup(r.close)
	return r
}

// close releases held requests and stops the server; it may be called more
// than once.
func (r *receiver) close() {
	r.release()
	r.srv.Close()
}

// release lets every held request (and every later one) through.
func (r *receiver) release() {
	if r.hold == nil {
		return
	}
	select {
	case <-r.hold:
	default:
		close(r.hold)
	}
}

func (r *receiver) poke() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.requests++
	n := r.requests
	r.mu.Unlock()
	r.poke()
	if r.hold != nil {
		select {
		case <-r.hold:
		case <-req.Context().Done():
			return
		}
	}
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, fmt.Sprintf("unexpected %s %s (%s)", req.Method, req.URL.Path, req.Header.Get("Content-Type")), http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		z, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = z
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return
	}
	if r.status != nil {
		if code := r.status(n); code != http.StatusOK {
			http.Error(w, "not now", code)
			return
		}
	}
	m := &coltracepb.ExportTraceServiceRequest{}
	if err := proto.Unmarshal(b, m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	for _, rs := range m.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			if ss.Scope.GetName() != otlp.ScopeName {
				r.mu.Unlock()
				http.Error(w, "scope "+ss.Scope.GetName(), http.StatusBadRequest)
				return
			}
			r.spans = append(r.spans, ss.Spans...)
		}
	}
	r.mu.Unlock()
	r.poke()
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

// got returns the requests seen and a copy of the spans kept.
func (r *receiver) got() (requests int, spans []*tracepb.Span) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests, slices.Clone(r.spans)
}

// wait waits until ok holds for what the receiver got.
func (r *receiver) wait(t testing.TB, what string, ok func(requests int, spans []*tracepb.Span) bool) []*tracepb.Span {
	t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		n, spans := r.got()
		if ok(n, spans) {
			return spans
		}
		select {
		case <-r.changed:
		case <-deadline.C:
			t.Fatalf("receiver: %s not within %v (%d requests, %d spans)", what, waitLimit, n, len(spans))
		}
	}
}

// waitSpans waits until the receiver kept at least n spans.
func (r *receiver) waitSpans(t testing.TB, n int) []*tracepb.Span {
	t.Helper()
	return r.wait(t, fmt.Sprintf("%d spans", n), func(_ int, s []*tracepb.Span) bool { return len(s) >= n })
}

// waitRequests waits until n requests arrived.
func (r *receiver) waitRequests(t testing.TB, n int) {
	t.Helper()
	r.wait(t, fmt.Sprintf("%d requests", n), func(got int, _ []*tracepb.Span) bool { return got >= n })
}

// waitStats polls p's counts (the Pusher has no signal to wait on) until
// ok holds.
func waitStats(t testing.TB, p *telemetry.Pusher, what string, ok func(telemetry.Stats) bool) telemetry.Stats {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		st := p.Stats()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats: %s not within %v: %+v", what, waitLimit, st)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// newStore returns a store on one in-memory backend; the test closes it.
func newStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.New(store.Options{Backends: []store.Backend{{Name: "memory", Persistence: memory.New()}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close(context.Background()) })
	return st
}

// start starts a Pusher on st with o (Endpoint defaulting to r's URL,
// Timeout to 10s); the test closes it.
func start(t testing.TB, st *store.Store, r *receiver, o telemetry.Options) *telemetry.Pusher {
	t.Helper()
	if o.Endpoint == "" {
		o.Endpoint = r.srv.URL
	}
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	p, err := telemetry.Start(st, o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// turnInputs is a complete strict turn n: a prompt, a step whose reply
// calls a tool and its result (turn 1 sends the request header first),
// then a step with the answer.
func turnInputs(n int) []session.AppendInput {
	lines := []string{
		fmt.Sprintf(`{"type":"turn/start","data":{"turn":%d}}`, n),
		fmt.Sprintf(`{"type":"user/message","data":{"id":"u%d","role":"user","content":[{"type":"text","text":"list the files"}],"source":{"kind":"prompt"}},"surfaceOp":"append"}`, n),
		fmt.Sprintf(`{"type":"step/start","data":{"turn":%d,"step":1}}`, n),
		fmt.Sprintf(`{"type":"assistant/message","data":{"turn":%d,"step":1,"message":{"id":"a%d-1","role":"assistant","content":[{"type":"tool-call","id":"call-%d","name":"list_dir","arguments":"{}"}],"source":{"kind":"model","provider":"mock","model":"mock-1"}},"stream":[],"usage":{"input":3,"output":1}},"surfaceOp":"append"}`, n, n, n),
		fmt.Sprintf(`{"type":"tool/call","data":{"turn":%d,"step":1,"callId":"call-%d","name":"list_dir","arguments":"{}"}}`, n, n),
		fmt.Sprintf(`{"type":"tool/result","data":{"turn":%d,"step":1,"message":{"id":"r-call-%d","role":"tool","toolCallId":"call-%d","content":[{"type":"text","text":"go.mod"}],"source":{"kind":"tool","callId":"call-%d"}}},"surfaceOp":"append"}`, n, n, n, n),
		fmt.Sprintf(`{"type":"step/end","data":{"turn":%d,"step":1}}`, n),
		fmt.Sprintf(`{"type":"step/start","data":{"turn":%d,"step":2}}`, n),
		fmt.Sprintf(`{"type":"assistant/message","data":{"turn":%d,"step":2,"message":{"id":"a%d-2","role":"assistant","content":[{"type":"text","text":"go.mod"}],"source":{"kind":"model","provider":"mock","model":"mock-1"}},"stream":[],"usage":{"input":5,"output":2}},"surfaceOp":"append"}`, n, n),
		fmt.Sprintf(`{"type":"step/end","data":{"turn":%d,"step":2}}`, n),
		fmt.Sprintf(`{"type":"turn/end","data":{"turn":%d,"reason":{"kind":"completed"}}}`, n),
	}
	if n == 1 {
		lines = slices.Insert(lines, 3, `{"type":"request/header","data":{"header":{"config":{"provider":"mock","model":"mock-1"}},"reason":"initial"}}`)
	}
	ins := make([]session.AppendInput, len(lines))
	for i, l := range lines {
		var e struct {
			Type      string          `json:"type"`
			Data      json.RawMessage `json:"data"`
			SurfaceOp string          `json:"surfaceOp"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			panic(err)
		}
		ins[i] = session.AppendInput{Type: e.Type, Data: e.Data}
		if e.SurfaceOp == "append" {
			ins[i].SurfaceOp = &events.SurfaceOp{}
		}
	}
	return ins
}

// appendTurns appends turns from..to (inclusive) to s.
func appendTurns(t testing.TB, s *session.Session, from, to int) {
	t.Helper()
	if err := tryTurns(s, from, to); err != nil {
		t.Fatal(err)
	}
}

// tryTurns is appendTurns for a goroutine other than the test's.
func tryTurns(s *session.Session, from, to int) error {
	for n := from; n <= to; n++ {
		for _, in := range turnInputs(n) {
			if _, err := s.Append(context.Background(), in); err != nil {
				return fmt.Errorf("turn %d: %s: %w", n, in.Type, err)
			}
		}
	}
	return nil
}

// create creates a live session id in st.
func create(t testing.TB, st *store.Store, id string) *session.Session {
	t.Helper()
	s, err := st.Create(context.Background(), store.CreateOptions{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// expected folds s's log with package otlp as the push does: every ended
// turn's spans, then (released) the root span.
func expected(s *session.Session, released bool) []*tracepb.Span {
	b := otlp.NewBuilder(s.ID(), otlp.Options{})
	var out []*tracepb.Span
	for _, e := range s.Events().All() {
		out = append(out, b.Add(otlp.Event{Seq: int64(e.Seq()), Time: e.Time(), Type: e.Type(), Data: e.Data()})...)
	}
	if released {
		out = append(out, b.Root())
	}
	return out
}

// key is what a pushed span must share with the span otlp builds.
func key(s *tracepb.Span) string {
	return fmt.Sprintf("%x/%x<-%x %q %d..%d %d attrs", s.TraceId, s.SpanId, s.ParentSpanId, s.Name, s.StartTimeUnixNano, s.EndTimeUnixNano, len(s.Attributes))
}

// sameSpans reports how got differs from want as sets of keys, each span
// once ("" when equal).
func sameSpans(got, want []*tracepb.Span) string {
	var g, w []string
	for _, s := range got {
		g = append(g, key(s))
	}
	for _, s := range want {
		w = append(w, key(s))
	}
	slices.Sort(g)
	slices.Sort(w)
	if slices.Equal(g, w) {
		return ""
	}
	return fmt.Sprintf("got %d spans\n  %s\nwant %d\n  %s", len(g), strings.Join(g, "\n  "), len(w), strings.Join(w, "\n  "))
}

// logBuffer is a logger whose lines the test can count.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.b.String(), s)
}

func (l *logBuffer) logger() hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{Output: l, Level: hclog.Info})
}

// settledGoroutines waits until at most n goroutines run, and fails with
// their stacks if they do not within the limit.
func settledGoroutines(t testing.TB, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), n, buf)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
