package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/engine"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/httpapi"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
)

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	id   string
	data []byte
}

// sseStream is an open event stream.
type sseStream struct {
	resp   *http.Response
	br     *bufio.Reader
	cancel context.CancelFunc
	events chan sseEvent
	done   chan error
}

// follow opens GET /v1/sessions/{id}/events as an event stream, with the
// given Last-Event-ID when it is not "".
func (s *server) follow(t testing.TB, path, lastID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", s.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	st := &sseStream{resp: resp, br: bufio.NewReader(resp.Body), cancel: cancel, events: make(chan sseEvent, 1024), done: make(chan error, 1)}
	go st.read()
	t.Cleanup(st.close)
	return st
}

// read parses the stream into events until it ends.
func (st *sseStream) read() {
	var ev sseEvent
	for {
		line, err := st.br.ReadString('\n')
		if err != nil {
			close(st.events)
			st.done <- err
			return
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if ev.id != "" || ev.data != nil {
				st.events <- ev
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			ev.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			ev.data = []byte(line[6:])
		}
	}
}

func (st *sseStream) close() {
	st.cancel()
	st.resp.Body.Close()
}

// next waits for the next event.
func (st *sseStream) next(t testing.TB) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-st.events:
		if !ok {
			t.Fatalf("the stream ended: %v", <-st.done)
		}
		return ev
	case <-time.After(30 * time.Second):
		t.Fatal("no event within 30 s")
	}
	return sseEvent{}
}

// An EventSource-style follower gets every event once, in order, with its
// seq as id, live events as they are appended, and after a reconnect with
// Last-Event-ID exactly the events after the last one it saw.
func TestV1FollowResumesWithoutGapsOrDuplicates(t *testing.T) {
	s := startServe(t)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"f"}`))
	appendN := func(from, n int) [][]byte {
		var ls []string
		for i := from; i < from+n; i++ {
			if i == 0 {
				ls = append(ls, turnLine(1)) // the turn of the user messages
				continue
			}
			ls = append(ls, userLine("u"+strconv.Itoa(i), "m"+strconv.Itoa(i)))
		}
		return lines(s.ok(t, 200, "POST", "/v1/sessions/f/events", "application/x-ndjson", ndjson(ls...)).body)
	}
	all := appendN(0, 3)
	st := s.follow(t, "/v1/sessions/f/events", "")
	var seen []sseEvent
	for range 3 {
		seen = append(seen, st.next(t))
	}
	all = append(all, appendN(3, 2)...) // live
	for range 2 {
		seen = append(seen, st.next(t))
	}
	st.close()
	// Events appended while the follower is away, then a reconnect from
	// the last id it saw.
	all = append(all, appendN(5, 2)...)
	st = s.follow(t, "/v1/sessions/f/events", seen[len(seen)-1].id)
	for range 2 {
		seen = append(seen, st.next(t))
	}
	all = append(all, appendN(7, 1)...)
	seen = append(seen, st.next(t))
	if len(seen) != len(all) {
		t.Fatalf("saw %d events, %d were appended", len(seen), len(all))
	}
	for i, ev := range seen {
		if ev.id != strconv.Itoa(i) || !bytes.Equal(ev.data, all[i]) {
			t.Fatalf("event %d: id %q data %s, want id %d data %s", i, ev.id, ev.data, i, all[i])
		}
	}
	// ?follow=true without the Accept header is a stream too, and to ends it.
	r := s.ok(t, 200, "GET", "/v1/sessions/f/events?follow=true&from=6&to=8", "", nil)
	if got := strings.Count("\n"+string(r.body), "\nid: "); got != 2 || !strings.HasPrefix(string(r.body), "id: 6\ndata: ") {
		t.Fatalf("follow=true&from=6&to=8 answered %q", r.body)
	}
	s.failed(t, 400, "INVALID_SEQ", "GET", "/v1/sessions/f/events", "", nil, "Accept", "text/event-stream", "Last-Event-ID", "x")
}

// An idle stream sends a comment line every Heartbeat, so a proxy keeps it
// open.
func TestV1HeartbeatKeepsAnIdleStreamOpen(t *testing.T) {
	ctx := context.Background()
	ts := inProcessServer(t, "hb", httpapi.Options{Heartbeat: 20 * time.Millisecond})
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(rctx, "GET", ts.URL+"/v1/sessions/hb/events?follow=true", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for beats := 0; beats < 3; {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d heartbeats: %v", beats, err)
		}
		if line != ": heartbeat\n" && line != "\n" {
			t.Fatalf("an idle stream sent %q", line)
		}
		if line != "\n" {
			beats++
		}
	}
}

// inProcessServer serves the API with opts over a memory backend in this
// process, with the live session id created; everything stops at the end
// of the test.
func inProcessServer(t testing.TB, id string, opts httpapi.Options) *httptest.Server {
	t.Helper()
	ctx := context.Background()
	cfg, err := config.Parse([]byte(`persistence "memory" {}`), "t.hcl")
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Start(ctx, cfg, engine.Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(ctx) })
	h := host.New(e, hclog.NewNullLogger())
	t.Cleanup(func() { h.ReleaseAll(ctx) })
	if _, err := h.Create(ctx, store.CreateOptions{ID: id}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(httpapi.New(h, opts))
	t.Cleanup(ts.Close)
	return ts
}

// followLatency appends n events one request each and returns how long each
// took to reach a connected follower, sorted.
func followLatency(t testing.TB, s *server, id string, n int) []time.Duration {
	st := s.follow(t, "/v1/sessions/"+id+"/events", "")
	lat := make([]time.Duration, 0, n)
	for i := range n {
		body := ndjson(userLine("l"+strconv.Itoa(i), "x"))
		if i == 0 {
			body = ndjson(turnLine(1)) // the turn of the user messages
		}
		t0 := time.Now()
		s.ok(t, 200, "POST", "/v1/sessions/"+id+"/events", "application/x-ndjson", body)
		ev := st.next(t)
		lat = append(lat, time.Since(t0))
		if ev.id != strconv.Itoa(i) {
			t.Fatalf("event id %s, want %d", ev.id, i)
		}
	}
	slices.Sort(lat)
	return lat
}

// A follower gets an appended event within 5 ms (median) on loopback,
// counted from the start of the append request to the event's arrival.
func TestV1FollowLatency(t *testing.T) {
	s := startServe(t)
	s.ok(t, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"lat"}`))
	lat := followLatency(t, s, "lat", 200)
	p50 := lat[len(lat)/2]
	t.Logf("follow latency over %d appends: p50 %v, p90 %v, max %v", len(lat), p50, lat[len(lat)*9/10], lat[len(lat)-1])
	if p50 > 5*time.Millisecond {
		t.Errorf("p50 %v > 5 ms", p50)
	}
}

// BenchmarkServeV1FollowLatency: the time from the start of an append to the
// appended event's arrival at a connected SSE follower; p50-ms and p99-ms.
func BenchmarkServeV1FollowLatency(b *testing.B) {
	s := startServe(b)
	s.ok(b, 201, "POST", "/v1/sessions", "application/json", []byte(`{"id":"lat"}`))
	b.ResetTimer()
	lat := followLatency(b, s, "lat", b.N)
	b.StopTimer()
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(ms(0.5), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}
