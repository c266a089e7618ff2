package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/seed-e5e476df/logbook/internal/testserve"
)

// decodeOTLPJSON reads OTLP/JSON with the official protobuf types: the
// OTLP specification writes ids in hex where the protobuf JSON mapping
// has base64, so the ids are turned back into base64 first.
func decodeOTLPJSON(t *testing.T, b []byte) *coltracepb.ExportTraceServiceRequest {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("export is not JSON: %v", err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, m := range x {
				if s, ok := m.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
					raw, err := hex.DecodeString(s)
					if err != nil {
						t.Fatalf("%s %q is not hex", k, s)
					}
					x[k] = base64.StdEncoding.EncodeToString(raw)
				} else {
					walk(m)
				}
			}
		case []any:
			for _, m := range x {
				walk(m)
			}
		}
	}
	walk(v)
	b, _ = json.Marshal(v)
	r := &coltracepb.ExportTraceServiceRequest{}
	if err := protojson.Unmarshal(b, r); err != nil {
		t.Fatalf("protojson.Unmarshal: %v", err)
	}
	return r
}

// spansOf flattens a request's spans.
func spansOf(r *coltracepb.ExportTraceServiceRequest) []*tracepb.Span {
	var out []*tracepb.Span
	for _, rs := range r.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			out = append(out, ss.Spans...)
		}
	}
	return out
}

// spanTree renders spans as "name(children …)" from their root, children
// in start order, and checks every span has the trace id and a parent
// among them.
func spanTree(t *testing.T, spans []*tracepb.Span, traceID []byte) string {
	t.Helper()
	children := map[string][]*tracepb.Span{}
	ids := map[string]bool{}
	var root *tracepb.Span
	for _, s := range spans {
		if !bytes.Equal(s.TraceId, traceID) {
			t.Errorf("span %q: trace id %x, want %x", s.Name, s.TraceId, traceID)
		}
		ids[string(s.SpanId)] = true
		if len(s.ParentSpanId) == 0 {
			root = s
			continue
		}
		children[string(s.ParentSpanId)] = append(children[string(s.ParentSpanId)], s)
	}
	for p := range children {
		if !ids[p] {
			t.Errorf("parent %x is not among the spans", p)
		}
	}
	if root == nil {
		t.Fatal("no root span")
	}
	var render func(s *tracepb.Span) string
	render = func(s *tracepb.Span) string {
		cs := children[string(s.SpanId)]
		sort.SliceStable(cs, func(i, j int) bool { return cs[i].StartTimeUnixNano < cs[j].StartTimeUnixNano })
		var parts []string
		for _, c := range cs {
			parts = append(parts, render(c))
		}
		if len(parts) == 0 {
			return s.Name
		}
		return s.Name + "(" + strings.Join(parts, " ") + ")"
	}
	return render(root)
}

func stringAttr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.GetStringValue()
		}
	}
	return ""
}

// traceIDOf is the documented trace id of a session (docs/import.md).
func traceIDOf(id string) []byte {
	h := sha256.Sum256([]byte("logbook/otlp trace\x00" + id))
	return h[:16]
}

// export --format otlp writes the demo session as OTLP/JSON that the
// official protobuf types read: the documented tree, attributes and ids,
// the same bytes on a second export and in -o, message content only with
// --content.
func TestExportOTLP(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "demo")
	if r := runIn(t, t.TempDir(), "", "demo", "--data", dir); r.code != 0 {
		t.Fatalf("demo: %s", r.stderr)
	}
	cfg := filepath.Join(dir, "demo.hcl")
	export := func(args ...string) string {
		t.Helper()
		r := runIn(t, dir, "", append([]string{"--config", cfg, "export", "demo", "--format", "otlp"}, args...)...)
		if r.code != 0 {
			t.Fatalf("export %v: exit %d: %s", args, r.code, r.stderr)
		}
		return r.stdout
	}
	first, second := export(), export()
	if first != second {
		t.Error("two exports of one session differ")
	}
	out := filepath.Join(t.TempDir(), "demo.otlp.json")
	export("-o", out)
	if b, err := os.ReadFile(out); err != nil || string(b) != first {
		t.Errorf("-o wrote %d bytes (%v), stdout %d", len(b), err, len(first))
	}
	req := decodeOTLPJSON(t, []byte(first))
	if rs := req.ResourceSpans; len(rs) != 1 || rs[0].ScopeSpans[0].SchemaUrl != "https://opentelemetry.io/schemas/1.41.0" {
		t.Errorf("resource spans: %v", rs)
	}
	spans := spansOf(req)
	want := "session demo(" +
		"invoke_agent(chat mock-coder-1(execute_tool list_dir) chat mock-coder-1(execute_tool read_file) chat mock-coder-1) " +
		"invoke_agent(chat mock-coder-1(execute_tool read_file)) " +
		"invoke_agent(chat mock-coder-1(execute_tool read_file) chat mock-coder-1))"
	if got := spanTree(t, spans, traceIDOf("demo")); got != want {
		t.Errorf("span tree:\n got %s\nwant %s", got, want)
	}
	var content bool
	for _, s := range spans {
		switch {
		case strings.HasPrefix(s.Name, "chat"):
			if stringAttr(s, "gen_ai.operation.name") != "chat" || stringAttr(s, "gen_ai.provider.name") != "mock" || stringAttr(s, "gen_ai.request.model") != "mock-coder-1" {
				t.Errorf("chat span attributes %v", s.Attributes)
			}
		case strings.HasPrefix(s.Name, "execute_tool"):
			if stringAttr(s, "gen_ai.tool.call.id") == "" || stringAttr(s, "gen_ai.tool.name") == "" {
				t.Errorf("tool span attributes %v", s.Attributes)
			}
			if stringAttr(s, "error.type") == "TOOL_OUTCOME_UNKNOWN" && s.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
				t.Errorf("the crashed call's span has status %v", s.Status)
			}
		}
		content = content || len(s.Events) > 0 || stringAttr(s, "gen_ai.tool.call.result") != ""
	}
	if content {
		t.Error("message content without --content")
	}
	withContent := spansOf(decodeOTLPJSON(t, []byte(export("--content"))))
	if len(withContent) != len(spans) {
		t.Fatalf("--content: %d spans, without %d", len(withContent), len(spans))
	}
	for i, s := range withContent {
		if !bytes.Equal(s.SpanId, spans[i].SpanId) {
			t.Fatalf("--content changed span %d's id", i)
		}
		if strings.HasPrefix(s.Name, "chat") && (len(s.Events) != 1 || !strings.Contains(protojson.Format(s.Events[0]), "gen_ai.output.messages")) {
			t.Errorf("--content: chat span events %v", s.Events)
		}
	}
	// Flags that only go with otlp, and formats export does not write.
	wantFail(t, runIn(t, dir, "", "--config", cfg, "export", "demo", "--content"), "USAGE", "export --content")
	wantFail(t, runIn(t, dir, "", "--config", cfg, "export", "demo", "--format", "xml"), "USAGE", "export --format xml")
}

// receiver is an in-test OTLP/HTTP collector: it decodes each POST to
// /v1/traces as a protobuf ExportTraceServiceRequest. With block set it
// holds every request until block is closed.
type receiver struct {
	mu       sync.Mutex
	spans    []*tracepb.Span
	requests int
	arrived  chan struct{} // gets a value per request, without waiting
	block    chan struct{}
}

func newReceiver(t *testing.T, block bool) (*receiver, *httptest.Server) {
	r := &receiver{arrived: make(chan struct{}, 1000)}
	if block {
		r.block = make(chan struct{})
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" || err != nil {
			http.Error(w, "not an OTLP/HTTP protobuf export", http.StatusBadRequest)
			return
		}
		m := &coltracepb.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(body, m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.requests++
		r.spans = append(r.spans, spansOf(m)...)
		r.mu.Unlock()
		select {
		case r.arrived <- struct{}{}:
		default:
		}
		if r.block != nil {
			select {
			case <-r.block:
			case <-req.Context().Done():
			}
		}
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(out)
	}))
	t.Cleanup(func() {
		if r.block != nil {
			select {
			case <-r.block:
			default:
				close(r.block)
			}
		}
		srv.Close()
	})
	return r, srv
}

// waitSpans waits up to 20 s until the receiver holds n spans.
func (r *receiver) waitSpans(t *testing.T, n int) []*tracepb.Span {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		r.mu.Lock()
		got := slices.Clone(r.spans)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-r.arrived:
		case <-deadline:
			t.Fatalf("the receiver holds %d spans after 20 s, want %d", len(got), n)
		}
	}
}

// post sends body to a serve process and fails the test unless the
// answer is 2xx.
func post(t *testing.T, addr, path, contentType, body string) {
	t.Helper()
	resp, err := http.Post("http://"+addr+path, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, b)
	}
}

// demoTurn1 returns the append input of the demo session's first turn:
// its stored events up to the first turn/end, without seq and time.
func demoTurn1(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "demo")
	if r := runIn(t, t.TempDir(), "", "demo", "--data", dir); r.code != 0 {
		t.Fatalf("demo: %s", r.stderr)
	}
	evs := runIn(t, dir, "", "--config", filepath.Join(dir, "demo.hcl"), "events", "demo")
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(evs.stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "seq")
		delete(m, "time")
		line, _ := json.Marshal(m)
		b.Write(line)
		b.WriteByte('\n')
		if string(m["type"]) == `"turn/end"` {
			return b.String()
		}
	}
	t.Fatal("the demo session has no turn/end")
	return ""
}

// telemetryConfig writes a serve config with a telemetry block.
func telemetryConfig(t *testing.T, endpoint, extra string) (cfg, data string) {
	dir := t.TempDir()
	data = filepath.Join(dir, "data")
	cfg = writeConfig(t, dir, "serve.hcl", fmt.Sprintf("persistence \"jsonl\" {}\ntelemetry {\n  otlp_endpoint = %q\n%s}\n", endpoint, extra))
	return cfg, data
}

// A real logbook serve with a telemetry block pushes each turn's spans as
// the turn ends, and the session's root span when it is released, through
// OTLP/HTTP: the receiver gets the demo's first turn and a second turn
// with exactly the tree, ids and times that export --format otlp writes
// for the same session.
func TestServeOTLPPush(t *testing.T) {
	turn1 := demoTurn1(t)
	rec, collector := newReceiver(t, false)
	cfg, data := telemetryConfig(t, collector.URL, "")
	p, err := testserve.Start(logbookBin, cmdTimeout, "--config", cfg, "--data", data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill9(cmdTimeout) })
	post(t, p.Addr(), "/v1/sessions", "application/json", `{"id":"live"}`)
	post(t, p.Addr(), "/v1/sessions/live/events", "application/x-ndjson", turn1)
	got := rec.waitSpans(t, 6) // turn 1: its span, three chats, two tools
	if tree := spanTree(t, append(got, &tracepb.Span{TraceId: traceIDOf("live"), SpanId: got[0].ParentSpanId, Name: "root"}), traceIDOf("live")); tree !=
		"root(invoke_agent(chat mock-coder-1(execute_tool list_dir) chat mock-coder-1(execute_tool read_file) chat mock-coder-1))" {
		t.Errorf("turn 1 as pushed: %s", tree)
	}
	post(t, p.Addr(), "/v1/sessions/live/events", "application/x-ndjson", input(turnLines(2, "u2", "thanks")))
	rec.waitSpans(t, 7)
	post(t, p.Addr(), "/v1/sessions/live/release", "application/json", "")
	pushed := rec.waitSpans(t, 8) // and the root
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(cmdTimeout); err != nil {
		t.Fatalf("serve: %v\n%s", err, p.Log())
	}
	r := runIn(t, data, "", "--config", cfg, "--data", data, "export", "live", "--format", "otlp")
	if r.code != 0 {
		t.Fatalf("export: %s", r.stderr)
	}
	exported := spansOf(decodeOTLPJSON(t, []byte(r.stdout)))
	key := func(s *tracepb.Span) string {
		return fmt.Sprintf("%x %x %x %s %d %d", s.TraceId, s.SpanId, s.ParentSpanId, s.Name, s.StartTimeUnixNano, s.EndTimeUnixNano)
	}
	var a, b []string
	for _, s := range pushed {
		a = append(a, key(s))
	}
	for _, s := range exported {
		b = append(b, key(s))
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Errorf("pushed spans differ from the export:\npushed\n  %s\nexported\n  %s", strings.Join(a, "\n  "), strings.Join(b, "\n  "))
	}
	if tree := spanTree(t, pushed, traceIDOf("live")); !strings.HasPrefix(tree, "session live(invoke_agent(chat") || !strings.HasSuffix(tree, " invoke_agent)") {
		t.Errorf("pushed tree %s", tree)
	}
}

// A dead collector (a closed port) or a slow one (a handler that holds
// every request) never holds up an append: appends finish at their usual
// pace while the push waits, the queue stays within its bound and what
// does not fit is dropped and counted in /metrics.
func TestServeOTLPCollectorDown(t *testing.T) {
	for _, tc := range []struct {
		name     string
		endpoint func(t *testing.T) (string, *receiver)
	}{
		{"dead", func(t *testing.T) (string, *receiver) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close() // nothing listens there now
			return "http://" + addr, nil
		}},
		{"slow", func(t *testing.T) (string, *receiver) {
			rec, srv := newReceiver(t, true)
			return srv.URL, rec
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			endpoint, rec := tc.endpoint(t)
			cfg, data := telemetryConfig(t, endpoint, "  queue = 2\n  timeout = \"30s\"\n")
			p, err := testserve.Start(logbookBin, cmdTimeout, "--config", cfg, "--data", data)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Kill9(cmdTimeout) })
			post(t, p.Addr(), "/v1/sessions", "application/json", `{"id":"s"}`)
			const turns = 40
			var worst time.Duration
			var took []time.Duration
			for i := 1; i <= turns; i++ {
				start := time.Now()
				post(t, p.Addr(), "/v1/sessions/s/events", "application/x-ndjson", input(turnLines(i, fmt.Sprintf("u%d", i), "hello")))
				d := time.Since(start)
				took = append(took, d)
				worst = max(worst, d)
			}
			if rec != nil {
				rec.mu.Lock()
				n := rec.requests
				rec.mu.Unlock()
				select {
				case <-rec.block:
					t.Fatal("the receiver was released")
				default:
				}
				if n < 1 {
					t.Error("no upload reached the slow receiver")
				}
			}
			slices.Sort(took)
			t.Logf("%d appends with the collector %s: median %v, worst %v", turns, tc.name, took[len(took)/2], worst)
			if worst > 2*time.Second {
				t.Errorf("an append took %v while the collector was %s", worst, tc.name)
			}
			m, err := testserve.Scrape("http://"+p.Addr()+"/metrics", "")
			if err != nil {
				t.Fatal(err)
			}
			dropped, _ := m.Value("logbook_otlp_spans_dropped_total")
			queued, ok := m.Value("logbook_otlp_queue_items")
			if !ok || queued > 2 {
				t.Errorf("queue holds %v items, bound 2 (metric found: %v)", queued, ok)
			}
			// 40 turns of one span each: at most 2 queued and one batch in
			// flight, so most are dropped.
			if dropped < turns-2-2-1 {
				t.Errorf("dropped %v spans of %d turns with a queue of 2", dropped, turns)
			}
			if !strings.Contains(p.Log(), "the OTLP queue is full") {
				t.Errorf("no log line about the full queue:\n%s", p.Log())
			}
		})
	}
}
