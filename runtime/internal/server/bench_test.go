package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/server"
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
// and a new session's id, made by createInTurn.
func benchServer(b *testing.B) (*client.Client, string) {
	e := startEngine(b, config.Default(config.Overrides{DataDir: b.TempDir()}))
	r := serve(b, e, server.Options{})
	c := newClient(b, r, "")
	createInTurn(b, c, "bench")
	return c, "bench"
}

// createInTurn creates session id and opens turn 1 in it, durably, so the
// benchmark's user messages keep the loop rules (docs/format.md, "The
// agent-loop protocol") and its appends start at seq 1 with nothing else
// to write.
func createInTurn(b *testing.B, c *client.Client, id string) *client.Session {
	ctx := context.Background()
	s, err := c.Create(ctx, id, events.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Append(ctx, events.Input{Type: "turn/start", Data: []byte(`{"turn":1}`)}); err != nil {
		b.Fatal(err)
	}
	if err := s.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	return s
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
	if res.Appended != int64(b.N) || res.Flush.Backends[0].DurableSeq != sdk.Cursor(b.N) { // seq 0 is the turn/start
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
		if _, err := c.Session(id).AppendRetry(ctx, sdk.Offset(i+1), in[i%len(in):i%len(in)+1], client.RetryOptions{Flush: true, MaxAttempts: 1}); err != nil {
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

// BenchmarkServeAppendOnceFlush compares, alternating call by call on one
// server, BenchmarkServeAppendUnaryFlush's call (one 1 KiB event appended
// and flushed per unary call, at an expected seq) with the same call under
// an operation id (RetryOptions.OperationID: an AppendGroup carrying the
// id), each into its own session: the latency percentiles of both
// (plain-p50-ms, once-p50-ms, …), so the cost of the id is seen over the
// wire.
func BenchmarkServeAppendOnceFlush(b *testing.B) {
	e := startEngine(b, config.Default(config.Overrides{DataDir: b.TempDir()}))
	r := serve(b, e, server.Options{})
	c := newClient(b, r, "")
	plain, once := createInTurn(b, c, "plain"), createInTurn(b, c, "once")
	in := benchInputs()
	ctx := context.Background()
	var latPlain, latOnce []time.Duration
	b.ResetTimer()
	for i := range b.N {
		ins := in[i%len(in) : i%len(in)+1]
		t0 := time.Now()
		if _, err := plain.AppendRetry(ctx, sdk.Offset(i+1), ins, client.RetryOptions{Flush: true, MaxAttempts: 1}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		o := client.RetryOptions{Flush: true, MaxAttempts: 1, OperationID: "op-" + strconv.Itoa(i)}
		if _, err := once.AppendRetry(ctx, sdk.Offset(i+1), ins, o); err != nil {
			b.Fatal(err)
		}
		latPlain, latOnce = append(latPlain, t1.Sub(t0)), append(latOnce, time.Since(t1))
	}
	b.StopTimer()
	for name, lat := range map[string][]time.Duration{"plain": latPlain, "once": latOnce} {
		slices.Sort(lat)
		ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / float64(time.Millisecond) }
		b.ReportMetric(ms(0.50), name+"-p50-ms")
		b.ReportMetric(ms(0.99), name+"-p99-ms")
	}
}

// v1Line is in as one line of a /v1 append's NDJSON body.
func v1Line(in events.Input) []byte {
	b := []byte(`{"type":"` + in.Type + `"`)
	if in.SurfaceOp != nil {
		b = append(b, `,"surfaceOp":`+in.SurfaceOp.String()...)
	}
	b = append(b, `,"data":`...)
	b = append(b, in.Data...)
	return append(b, "}\n"...)
}

// BenchmarkServeV1Append compares, alternating round by round on one
// server, the durable ingest of 1 KiB events through the /v1 API (one
// NDJSON POST of roundEvents lines with flush=true, over loopback HTTP/1.1)
// with BenchmarkServeAppendStream's (a gRPC AppendStream of the same events,
// ended by its flush), each into its own session. v1-events/s and
// stream-events/s are the two rates, v1/stream their ratio.
func BenchmarkServeV1Append(b *testing.B) {
	const roundEvents = 4096
	e := startEngine(b, config.Default(config.Overrides{DataDir: b.TempDir()}))
	r := serve(b, e, server.Options{})
	c := newClient(b, r, "")
	ctx := context.Background()
	for _, id := range []string{"stream", "v1"} {
		createInTurn(b, c, id)
	}
	in := benchInputs()
	var body []byte
	for i := range roundEvents {
		body = append(body, v1Line(in[i%len(in)])...)
	}
	hc := &http.Client{}
	var streamTime, v1Time time.Duration
	b.SetBytes(2 * roundEvents * 1024)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		s := c.Session("stream").AppendStream(ctx)
		for i := range roundEvents {
			if err := s.Send(in[i%len(in):i%len(in)+1], false); err != nil {
				b.Fatal(err)
			}
		}
		if res, err := s.CloseAndReceive(); err != nil || res.Appended != roundEvents {
			b.Fatalf("stream: %+v %v", res, err)
		}
		t1 := time.Now()
		resp, err := hc.Post(r.url+"/v1/sessions/v1/events?flush=true", "application/x-ndjson", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || n < roundEvents*1024 {
			b.Fatalf("v1 append: status %d, %d bytes, %v", resp.StatusCode, n, err)
		}
		t2 := time.Now()
		streamTime += t1.Sub(t0)
		v1Time += t2.Sub(t1)
	}
	b.StopTimer()
	events := float64(b.N * roundEvents)
	b.ReportMetric(events/v1Time.Seconds(), "v1-events/s")
	b.ReportMetric(events/streamTime.Seconds(), "stream-events/s")
	b.ReportMetric(streamTime.Seconds()/v1Time.Seconds(), "v1/stream")
}
