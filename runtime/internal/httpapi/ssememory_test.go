package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/runtime/internal/httpapi"
)

// followerCost is what one of n SSE followers of a live session costs, in
// bytes: connected (the heap of both ends of its connection, client and
// server, in one process), and then the growth of the heap and of the
// resident set once each has received every one of k events of size bytes,
// the events' own copy in the session subtracted.
type followerCost struct {
	connHeap, eventHeap, eventRSS float64
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
	ts := inProcessServer(t, "big", httpapi.Options{Heartbeat: time.Minute})
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n}}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	heapIdle, _ := memNow(t)
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
	per := func(d float64) float64 { return d / float64(n) }
	return followerCost{connHeap: per(float64(heap0 - heapIdle)), eventHeap: per(float64(heap1-heap0) - held), eventRSS: per(float64(rss1-rss0) - held)}
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
// costs, with 50 and 200 followers of 4 events of 1 MiB:
// conn-heap-B/follower connected (client and server ends),
// event-heap-B/follower the growth of the live heap once every follower has
// read the events, and event-rss-MiB the growth of the whole process's
// resident set then (the appends' garbage included).
func BenchmarkSSEFollowerMemory(b *testing.B) {
	for _, n := range []int{50, 200} {
		b.Run("followers="+strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				c := measureFollowers(b, n, 4, 1<<20)
				b.ReportMetric(c.connHeap, "conn-heap-B/follower")
				b.ReportMetric(c.eventHeap, "event-heap-B/follower")
				b.ReportMetric(c.eventRSS*float64(n)/(1<<20), "event-rss-MiB")
			}
		})
	}
}

// An SSE follower keeps no copy of an event: once 32 followers have read
// two events of 1 MiB, the server's heap has grown by far less than an
// event per follower.
func TestSSEFollowerKeepsNoCopyOfAnEvent(t *testing.T) {
	const size = 1 << 20
	c := measureFollowers(t, 32, 2, size)
	t.Logf("per follower: %.0f B connected, %.0f B more after two events of %d B", c.connHeap, c.eventHeap, size)
	if c.eventHeap > size/4 {
		t.Fatalf("the heap grew by %.0f B per follower reading two events of %d B; want at most %d", c.eventHeap, size, size/4)
	}
}
