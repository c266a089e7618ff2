package service_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// BenchmarkImportSourceVsAppend imports a pi file of 2000 prompts and, in
// the same iteration, appends the same prompts as user/message events
// (what `logbook append` ingests; lenient, as an import is), both into
// fresh sessions of one JSONL
// service, stored before the clock stops. It reports the source bytes per
// second of each and import/append-x, their ratio (issue 29 asks ≥ 0.5).
func BenchmarkImportSourceVsAppend(b *testing.B) {
	ctx := context.Background()
	cfg, err := config.Parse([]byte(fmt.Sprintf("persistence \"jsonl\" {\n  root = %q\n}\n", b.TempDir())), "bench.hcl")
	if err != nil {
		b.Fatal(err)
	}
	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close(ctx)
	const n = 2000
	var src strings.Builder
	fmt.Fprintf(&src, `{"type":"session","version":3,"id":"bench","timestamp":"2026-12-07T16:33:49.277Z","cwd":"/w"}`+"\n")
	parent := "null"
	for k := 1; k <= n; k++ {
		text := fmt.Sprintf("prompt %d %s", k, strings.Repeat("p", 300))
		fmt.Fprintf(&src, `{"type":"message","id":"m%08d","parentId":%s,"timestamp":"2026-12-07T16:33:49.304Z","message":{"role":"user","content":%q,"timestamp":1796115602000}}`+"\n", k, parent, text)
		parent = fmt.Sprintf(`"m%08d"`, k)
	}
	file := filepath.Join(b.TempDir(), "bench.jsonl")
	if err := os.WriteFile(file, []byte(src.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.ImportSource(ctx, service.ImportSourceRequest{From: "pi", Paths: []string{file}, As: "ref"}); err != nil {
		b.Fatal(err)
	}
	ref, _, err := svc.InspectView(ctx, "ref")
	if err != nil {
		b.Fatal(err)
	}
	var ins []events.Input
	size := 0.0
	for _, e := range ref.Events() {
		ins = append(ins, events.Input{Type: e.Type, Data: e.Data, SurfaceOp: e.SurfaceOp, SourceEventSeqs: e.SourceEventSeqs, Ignorable: e.Ignorable})
		size += float64(len(e.Envelope))
	}
	var imp, app time.Duration
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		if _, err := svc.ImportSource(ctx, service.ImportSourceRequest{From: "pi", Paths: []string{file}, As: fmt.Sprintf("imp-%d", i)}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		s, err := svc.Create(ctx, service.CreateRequest{ID: fmt.Sprintf("app-%d", i), Header: events.CreateOptions{Protocol: sdk.ProtocolLenient}})
		if err != nil {
			b.Fatal(err)
		}
		for j := 0; j < len(ins); j += 256 {
			if _, err := s.Append(ctx, service.AppendRequest{Inputs: ins[j:min(j+256, len(ins))]}); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Release(ctx); err != nil {
			b.Fatal(err)
		}
		imp, app = imp+t1.Sub(t0), app+time.Since(t1)
	}
	b.ReportMetric(size*float64(b.N)/imp.Seconds()/1e6, "import-MB/s")
	b.ReportMetric(size*float64(b.N)/app.Seconds()/1e6, "append-MB/s")
	b.ReportMetric(app.Seconds()/imp.Seconds(), "import/append-x")
}
