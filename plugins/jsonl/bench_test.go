package jsonl

import (
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// BenchmarkAppend measures one Append of a 100-event batch (one write, one
// fdatasync) on the real file system: events/s and bytes/event on disk.
func BenchmarkAppend(b *testing.B) {
	for _, comp := range []string{CompressionNone, CompressionZstd} {
		b.Run(comp, func(b *testing.B) {
			const per = 100
			cfg := Config{Root: b.TempDir(), Compression: comp}
			be, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			o, err := be.Create(b.Context(), testHeader("s1"))
			if err != nil {
				b.Fatal(err)
			}
			batches := make([][][]byte, 64)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				first := i * per
				if batches[i%64] == nil || i >= 64 {
					b.StopTimer()
					batches[i%64] = persistencetest.Batch(first, per)
					b.StartTimer()
				}
				if _, err := be.Append(b.Context(), o.Handle, sdk.Seq(first), batches[i%64]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			st, _ := be.Stat(b.Context(), "s1")
			b.ReportMetric(float64(b.N*per)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(st.SizeBytes)/float64(b.N*per), "bytes/event")
		})
	}
}

// BenchmarkOpenRead measures a write open (full scan) and a read of a
// 10 000-event log.
func BenchmarkOpenRead(b *testing.B) {
	for _, comp := range []string{CompressionNone, CompressionZstd} {
		b.Run(comp, func(b *testing.B) {
			be := benchLog(b, comp)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				o, err := be.Open(b.Context(), "s1", sdk.AccessWrite)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				if err := be.Read(b.Context(), o.Handle, 0, -1, func(ev [][]byte) error { n += len(ev); return nil }); err != nil || n != 10_000 {
					b.Fatal(err, strconv.Itoa(n))
				}
				be.Close(b.Context(), o.Handle)
			}
			b.ReportMetric(float64(b.N*10_000)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkResume measures what a host's resume asks of the backend for a
// 10 000-event log with a checkpoint of all of it: a write open,
// ReadCheckpoint, and every event through ReadFrames (zstd) or Read
// (plain); cpu-ms/op is the process's user and system time per resume,
// which a loaded machine disturbs less than the wall clock.
func BenchmarkResume(b *testing.B) {
	for _, comp := range []string{CompressionNone, CompressionZstd} {
		b.Run(comp, func(b *testing.B) {
			be := benchLog(b, comp)
			o, err := be.Open(b.Context(), "s1", sdk.AccessWrite)
			if err != nil {
				b.Fatal(err)
			}
			if err := be.WriteCheckpoint(b.Context(), o.Handle, 10_000, make([]byte, 100_000)); err != nil {
				b.Fatal(err)
			}
			be.Close(b.Context(), o.Handle)
			start := cpuTime()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				o, err := be.Open(b.Context(), "s1", sdk.AccessWrite)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, found, err := be.ReadCheckpoint(b.Context(), o.Handle); err != nil || !found {
					b.Fatal("no checkpoint", err)
				}
				n := int64(0)
				framed, err := be.ReadFrames(b.Context(), o.Handle, 0, -1, func(fs []sdk.Frame) error {
					for _, f := range fs {
						n += f.Count
					}
					return nil
				})
				if !framed && err == nil {
					err = be.Read(b.Context(), o.Handle, 0, -1, func(ev [][]byte) error { n += int64(len(ev)); return nil })
				}
				if err != nil || n != 10_000 {
					b.Fatal(err, n)
				}
				be.Close(b.Context(), o.Handle)
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchLog returns a backend over a new root holding session "s1" of
// 10 000 events in 100-event batches, compressed with comp.
func benchLog(b *testing.B, comp string) *Backend {
	be, err := New(Config{Root: b.TempDir(), Compression: comp})
	if err != nil {
		b.Fatal(err)
	}
	var batches [][][]byte
	for first := 0; first < 10_000; first += 100 {
		batches = append(batches, persistencetest.Batch(first, 100))
	}
	storeEvents(b, be, "s1", batches...)
	return be
}
