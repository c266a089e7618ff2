package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
)

// BenchmarkBackendAppend times Backend.Append + Flush in process with
// 256-event batches of the benchmark corpus; ns/op is per event.
func BenchmarkBackendAppend(b *testing.B) {
	ctx := context.Background()
	envs := corpus.Session(42, 20_000)
	be, err := sqlite.Open(ctx, sqlite.DefaultConfig(filepath.Join(b.TempDir(), "s.db")))
	if err != nil {
		b.Fatal(err)
	}
	defer be.Shutdown()
	o, err := be.Create(ctx, header("s1"))
	if err != nil {
		b.Fatal(err)
	}
	next := 0
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(256, b.N-done, len(envs)-next)
		if n == 0 {
			b.StopTimer()
			be.Close(ctx, o.Handle)
			h := header("s" + string(rune('a'+done%26)) + filepath.Base(b.TempDir()))
			if o, err = be.Create(ctx, h); err != nil {
				b.Fatal(err)
			}
			next = 0
			b.StartTimer()
			continue
		}
		if _, err := be.Append(ctx, o.Handle, sdk.Seq(next), envs[next:next+n]); err != nil {
			b.Fatal(err)
		}
		if _, err := be.Flush(ctx, o.Handle); err != nil {
			b.Fatal(err)
		}
		next += n
		done += n
	}
}

// BenchmarkBackendColdRead times Open(read) + Read(0, -1) of a
// 100,000-event session in process.
func BenchmarkBackendColdRead(b *testing.B) {
	ctx := context.Background()
	envs := corpus.Session(99, 100_000)
	be, err := sqlite.Open(ctx, sqlite.DefaultConfig(filepath.Join(b.TempDir(), "s.db")))
	if err != nil {
		b.Fatal(err)
	}
	defer be.Shutdown()
	o, err := be.Create(ctx, header("cold"))
	if err != nil {
		b.Fatal(err)
	}
	total := int64(0)
	for i := 0; i < len(envs); i += 4096 {
		j := min(i+4096, len(envs))
		if _, err := be.Append(ctx, o.Handle, sdk.Seq(i), envs[i:j]); err != nil {
			b.Fatal(err)
		}
	}
	for _, e := range envs {
		total += int64(len(e))
	}
	be.Close(ctx, o.Handle)
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		o, err := be.Open(ctx, "cold", sdk.AccessRead)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if err := be.Read(ctx, o.Handle, 0, -1, func(evs [][]byte) error { n += len(evs); return nil }); err != nil {
			b.Fatal(err)
		}
		be.Close(ctx, o.Handle)
		if n != len(envs) {
			b.Fatalf("read %d", n)
		}
	}
}
