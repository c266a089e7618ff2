package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/engine"
	"github.com/seed-e5e476df/logbook/runtime/host"
	"github.com/seed-e5e476df/logbook/runtime/httpapi"
	"github.com/seed-e5e476df/logbook/runtime/store"
)

// followerCost is what n SSE followers of a live session cost the server
// once each has received every one of k events of size bytes: the growth
// of the live heap and of the process's resident set, per follower.
type followerCost struct {
	heapPerFollower, rssPerFollower float64
}

// measureFollowers runs n followers of a session of a memory backend over
// an in-process server, appends k events whose data is a string of size
// bytes, waits until every follower has read all of them, and measures the
// heap (after a GC) and the resident set against the moment before the
// appends, with every follower connected. The followers read and discard
// the stream, so what grows is the server's share; the events themselves,
// held once by the session, are subtracted.
func measureFollowers(t testing.TB, n, k, size int) followerCost {
	ctx := context.Background()
	cfg, err := config.Parse([]byte(`persistence "memory" {}`), "t.hcl")
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.Start(ctx, cfg, engine.Options{Executable: logbookBin})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	h := host.New(e, hclog.NewNullLogger())
	defer h.ReleaseAll(ctx)
	if _, err := h.Create(ctx, store.CreateOptions{ID: "big"}); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(httpapi.New(h, httpapi.Options{Heartbeat: time.Minute}))
	defer ts.Close()
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n}}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var connected, received sync.WaitGroup
	connected.Add(n)
	received.Add(n)
	errs := make(chan error, n)
	for range n {
		go func() {
			req, _ := http.NewRequestWithContext(rctx, "GET", ts.URL+"/v1/sessions/big/events", nil)
			req.Header.Set("Accept", "text/event-stream")
			resp, err := client.Do(req)
			connected.Done()
			if err != nil {
				errs <- err
				received.Done()
				return
			}
			defer resp.Body.Close()
			br := bufio.NewReaderSize(resp.Body, 4<<10)
			got := 0
			for got < k {
				line, err := br.ReadSlice('\n')
				if err == bufio.ErrBufferFull {
					continue // a long data line: skip it in pieces
				}
				if err != nil {
					errs <- err
					break
				}
				if bytes.HasPrefix(line, []byte("id: ")) {
					got++
				}
			}
			received.Done()
			<-rctx.Done() // stay connected until measured
		}()
	}
	connected.Wait()
	heap0, rss0 := memNow(t)
	body := `{"type":"app/note","data":{"x":"` + strings.Repeat("x", size) + `"},"ignorable":true}` + "\n"
	for range k {
		req, _ := http.NewRequestWithContext(rctx, "POST", ts.URL+"/v1/sessions/big/events", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/x-ndjson")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("append: %d", resp.StatusCode)
		}
	}
	received.Wait()
	select {
	case err := <-errs:
		t.Fatalf("a follower: %v", err)
	default:
	}
	heap1, rss1 := memNow(t)
	held := float64(k * size) // the session's own copy of the events
	cancel()
	return followerCost{heapPerFollower: (float64(heap1-heap0) - held) / float64(n), rssPerFollower: (float64(rss1-rss0) - held) / float64(n)}
}

// memNow returns the live heap after a GC and the resident set, in bytes.
func memNow(t testing.TB) (heap, rss int64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			rss = kb << 10
		}
	}
	return int64(ms.HeapInuse), rss
}

// BenchmarkSSEFollowerMemory: what one SSE follower of a live session
// costs the server, with 200 followers of 1 MiB events (heap-B/follower
// and rss-B/follower, the events' own size subtracted).
func BenchmarkSSEFollowerMemory(b *testing.B) {
	for range b.N {
		c := measureFollowers(b, 200, 4, 1<<20)
		b.ReportMetric(c.heapPerFollower, "heap-B/follower")
		b.ReportMetric(c.rssPerFollower, "rss-B/follower")
	}
}
