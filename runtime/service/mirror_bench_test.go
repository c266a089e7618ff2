package service_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/service"
)

// claudeLine is a Claude Code prompt line of session sid, the n-th of a
// chain (parentUuid the previous line's uuid).
func claudeLine(sid string, n int) string {
	parent := "null"
	if n > 0 {
		parent = fmt.Sprintf(`"00000000-0000-4000-8000-%012d"`, n-1)
	}
	return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":"/tmp/bench","sessionId":"%s","version":"2.0.0","gitBranch":"","type":"user","message":{"role":"user","content":"prompt %d"},"uuid":"00000000-0000-4000-8000-%012d","timestamp":"2026-12-07T00:00:00.000Z"}`+"\n",
		parent, sid, n, n)
}

// BenchmarkMirrorLineLatency measures a line's way from the end of its
// write to the file to its raw record in the session, through a Mirror
// with file notifications over the JSONL backend: ms/line (mean), p50-ms
// and p99-ms.
func BenchmarkMirrorLineLatency(b *testing.B) {
	ctx := context.Background()
	src, data := b.TempDir(), b.TempDir()
	cfg, err := config.Parse(fmt.Appendf(nil, "data_dir = %q\npersistence \"jsonl\" {}\n", data), "bench.hcl")
	if err != nil {
		b.Fatal(err)
	}
	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close(ctx)
	m, err := svc.NewMirror(service.MirrorOptions{Sources: []service.MirrorSource{{From: "claude-code", Dir: src}}})
	if err != nil {
		b.Fatal(err)
	}
	if mode, why := m.Mode(); mode != "fsnotify" {
		b.Fatalf("the mirror runs in %s mode (%v); the benchmark needs notifications", mode, why)
	}
	mctx, stop := context.WithCancel(ctx)
	passes := make(chan service.MirrorPass, 1024)
	done := make(chan error, 1)
	go func() { done <- m.Run(mctx, func(p service.MirrorPass) { passes <- p }) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()
	<-passes // the first pass: nothing there

	const sid = "7d1f0c3e-0b8a-4b51-9a53-3f0b6c1d2e4f"
	id := "claude-code-" + sid
	file := filepath.Join(src, sid+".jsonl")
	length := func() int64 {
		st, err := svc.Stat(ctx, id)
		if err != nil {
			return 0
		}
		return int64(st.Length)
	}
	// The session exists before the timing starts.
	appendFile(b, file, claudeLine(sid, 0))
	for length() == 0 {
		time.Sleep(time.Millisecond)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		before := length()
		appendFile(b, file, claudeLine(sid, i+1))
		start := time.Now()
		for length() <= before {
			if time.Since(start) > 5*time.Second {
				b.Fatalf("line %d not in the session after 5s", i+1)
			}
			time.Sleep(200 * time.Microsecond)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(sum)/float64(len(lat)), "ms/line")
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
	b.ReportMetric(0, "ns/op")
}
