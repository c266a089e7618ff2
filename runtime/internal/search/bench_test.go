package search

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/plugins/jsonl"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// benchWords is the vocabulary of the benchmark's messages.
var benchWords = strings.Fields(`the a to of and in is for func return err nil if package import main
	string int byte slice map struct type interface go test build run file line error context value
	Read Write Open Close handle session event seq offset length buffer chunk frame index`)

// benchText returns n words of pseudo-random text.
func benchText(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(" \n"[r.IntN(8)/7])
		}
		b.WriteString(benchWords[r.IntN(len(benchWords))])
	}
	return b.String()
}

// storeBenchSessions stores sessions of turns (user message, assistant
// message with a tool call, tool result) in p, each with a checkpoint
// when checkpoint is set; one tool result in 500 holds "needle". It
// returns the canonical bytes stored.
func storeBenchSessions(b *testing.B, p sdk.Persistence, sessions, events int, checkpoint bool) int64 {
	r := rand.New(rand.NewPCG(1, 2))
	var total int64
	for s := range sessions {
		id := "s" + strconv.Itoa(s)
		o, err := p.Create(context.Background(), sdk.Header{FormatVersion: sdk.FormatVersion, ID: id, CreatedAt: int64(s), CWD: "/work"})
		if err != nil {
			b.Fatal(err)
		}
		var batch [][]byte
		for seq := range events {
			var typ, data string
			switch seq % 3 {
			case 0:
				typ, data = "user/message", userMsg(benchText(r, 20))
			case 1:
				typ, data = "assistant/message", assistantMsg(benchText(r, 30), "read", `{"path":"main.go"}`)
			default:
				text := benchText(r, 150)
				if r.IntN(500) == 0 {
					text += " needle"
				}
				typ, data = "tool/result", toolResult(text)
			}
			env := persistencetest.Envelope(seq, typ, data)
			total += int64(len(env))
			batch = append(batch, env)
			if len(batch) == 100 || seq == events-1 {
				if _, err := p.Append(context.Background(), o.Handle, sdk.Seq(seq+1-len(batch)), batch); err != nil {
					b.Fatal(err)
				}
				batch = nil
			}
		}
		if _, err := p.Flush(context.Background(), o.Handle); err != nil {
			b.Fatal(err)
		}
		if checkpoint {
			// What the store leaves when it releases a session: a
			// checkpoint bound to the stored frames, so a read open trusts
			// them instead of checking every envelope. Its payload is the
			// host's business; the backend only binds it.
			if err := p.(sdk.Checkpointer).WriteCheckpoint(context.Background(), o.Handle, sdk.Offset(events), []byte("bench")); err != nil {
				b.Fatal(err)
			}
		}
		p.Close(context.Background(), o.Handle)
	}
	return total
}

// cpuTime is the CPU time the process used so far (user and system).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSearchScan measures a whole-store search of zstd JSONL
// sessions through the backend's Read: MB/s of canonical envelope JSON
// tested, with the default ASCII case folding and case-sensitive, over
// sessions as the store leaves them (with a checkpoint, so the read open
// trusts the stored frames) and without one (the open checks every
// envelope first).
func BenchmarkSearchScan(b *testing.B) {
	for _, store := range []struct {
		name       string
		checkpoint bool
	}{{"checkpointed", true}, {"unchecked", false}} {
		p, err := jsonl.New(jsonl.Config{Root: b.TempDir(), Compression: jsonl.CompressionZstd})
		if err != nil {
			b.Fatal(err)
		}
		const sessions, events = 8, 6000
		total := storeBenchSessions(b, p, sessions, events, store.checkpoint)
		for _, tc := range []struct {
			name string
			q    Query
		}{
			{"fold", Query{Text: "Needle"}},
			{"case-sensitive", Query{Text: "needle", CaseSensitive: true}},
		} {
			b.Run(store.name+"/"+tc.name, func(b *testing.B) {
				b.SetBytes(total)
				hits := 0
				cpu0 := cpuTime(b)
				for b.Loop() {
					hits = 0
					st, err := Scan(b.Context(), p, tc.q, func(Hit) error { hits++; return nil })
					if err != nil || st.Bytes != total {
						b.Fatal(err, st)
					}
				}
				if hits == 0 {
					b.Fatal("no hits")
				}
				b.ReportMetric(float64(hits), "hits")
				// On a shared machine wall time says more about the load than
				// about the scan; CPU time says what the scan costs.
				b.ReportMetric(float64(total)*float64(b.N)/1e6/(cpuTime(b)-cpu0).Seconds(), "MB/cpu-s")
			})
		}
	}
}
