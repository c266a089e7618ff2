package server_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/server"
	"github.com/seed-e5e476df/logbook/sdk"
)

// benchInputs are distinct 1 KiB user messages the benchmarks cycle through.
func benchInputs() []events.Input {
	in := make([]events.Input, 1024)
	for i := range in {
		in[i] = kib(i, 1024)
	}
	return in
}

// benchServer serves the embedded default profile (JSONL+zstd, write
// window 200 ms) over a fresh data directory and returns a client of it
// and a new session's id.
func benchServer(b *testing.B) (*client.Client, string) {
	e := startEngine(b, config.Default(config.Overrides{DataDir: b.TempDir()}))
	r := serve(b, e, server.Options{})
	c := newClient(b, r, "")
	if _, err := c.Create(context.Background(), "bench"); err != nil {
		b.Fatal(err)
	}
	return c, "bench"
}

// BenchmarkServeAppendStream streams 1 KiB events to `logbook serve` over
// loopback gRPC (h2c) with the JSONL+zstd default, one event per Send (the
// client coalesces them into messages of up to 64 KiB), and ends the
// stream, whose final flush makes them durable: events/s is the durable
// ingest rate through the server.
func BenchmarkServeAppendStream(b *testing.B) {
	c, id := benchServer(b)
	in := benchInputs()
	ctx := context.Background()
	b.SetBytes(1024)
	b.ResetTimer()
	s := c.Session(id).AppendStream(ctx)
	for i := range b.N {
		if err := s.Send(in[i%len(in):i%len(in)+1], false); err != nil {
			b.Fatal(err)
		}
	}
	res, err := s.CloseAndReceive()
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	if res.Appended != int64(b.N) || res.Flush.Backends[0].DurableSeq != sdk.Cursor(b.N-1) {
		b.Fatalf("stream result %+v for %d events", res, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkServeAppendUnaryFlush appends one 1 KiB event and flushes it to
// disk (fsync) per unary gRPC call; p50-ms and p99-ms are the call's
// latency percentiles.
func BenchmarkServeAppendUnaryFlush(b *testing.B) {
	c, id := benchServer(b)
	in := benchInputs()
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		// One attempt of AppendRetry: the append and its flush in one call.
		if _, err := c.Session(id).AppendRetry(ctx, sdk.Offset(i), in[i%len(in):i%len(in)+1], client.RetryOptions{Flush: true, MaxAttempts: 1}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}
