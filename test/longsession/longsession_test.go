// Package longsession measures what a long coding-agent session costs: the
// memory and time of a cold load, a fork at the middle, write-behind append
// and append with a flush after every message, and the bytes on disk, on
// the 100,000-message session of internal/corpus.LongSession through the
// engine and its plugin subprocess. Every benchmark measures its raw limit
// in the same run and reports the ratio, because absolute times on a shared
// machine drift by tens of percent between runs.
//
// Processes whose peak memory is a figure (the cold load, the writer) run
// as children: the test binary re-executed with LONGSESSION_CHILD set,
// which reads its own VmHWM from /proc/self/status. When
// LONGSESSION_CPUPROFILE names a file, each child writes a CPU profile of
// its timed part there (the writer: engine start to the final flush; the
// cold load: engine start to Messages), one child overwriting the last.
package longsession

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"golang.org/x/sys/unix"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/internal/corpus"
	"github.com/seed-e5e476df/logbook/internal/testbin"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// logbookBin serves the bundled plugins.
var logbookBin string

// childEnv names the environment variable that makes the test binary a
// child: its value is the JSON of a childTask.
const childEnv = "LONGSESSION_CHILD"

// heapProfileEnv names a file the cold-load child writes its heap profile
// to once the session is loaded (go tool pprof -sample_index=inuse_space),
// to see where the bytes of a loaded session live.
const heapProfileEnv = "LONGSESSION_HEAPPROFILE"

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// profileEnv names the environment variable that makes a child write a CPU
// profile of its timed part to the file it names.
const profileEnv = "LONGSESSION_CPUPROFILE"

func TestMain(m *testing.M) {
	if task := os.Getenv(childEnv); task != "" {
		os.Exit(runChild(task))
	}
	testbin.Main(m, &logbookBin)
}

// seed and fullMessages fix the benchmark workload.
const (
	seed         = 42
	fullMessages = 100_000
	sessionID    = "long"
)

// workload is a generated session: its envelopes and their canonical size
// (each envelope plus its newline, the bytes of a plain JSONL log).
type workload struct {
	envs      [][]byte
	canonical int64
	messages  int // LongSession ends on a turn boundary: 3·⌈requested/3⌉
}

func newWorkload(messages int) workload {
	w := workload{envs: corpus.LongSession(seed, messages), messages: 3 * ((messages + 2) / 3)}
	for _, e := range w.envs {
		w.canonical += int64(len(e)) + 1
	}
	return w
}

// inputs turns the envelopes back into the inputs that append them.
func (w workload) inputs() ([]events.Input, error) {
	out := make([]events.Input, len(w.envs))
	for i, env := range w.envs {
		ev, err := events.ParseEvent(env)
		if err != nil {
			return nil, err
		}
		out[i] = events.Input{Type: ev.Type, Data: ev.Data, SurfaceOp: ev.SurfaceOp}
	}
	return out, nil
}

// backendConfig is a headless configuration with one backend under dir.
func backendConfig(backend, dir string) *config.Config {
	var conf []byte
	switch backend {
	case "jsonl":
		conf, _ = json.Marshal(map[string]any{"root": dir, "compression": "zstd", "zstd_level": "default"})
	case "sqlite":
		conf, _ = json.Marshal(map[string]any{"path": filepath.Join(dir, "sessions.db")})
	}
	cfg := config.Headless(config.Overrides{})
	cfg.Persistence = []config.Persistence{{Name: backend, Config: conf}}
	return cfg
}

// storeFixture imports w as session "long" into a new store of backend
// under dir.
func storeFixture(tb testing.TB, backend, dir string, w workload) {
	ctx := context.Background()
	svc, err := service.Open(ctx, service.Options{Config: backendConfig(backend, dir), Executable: logbookBin})
	if err != nil {
		tb.Fatal(err)
	}
	defer svc.Close(ctx)
	h := sdk.Header{FormatVersion: sdk.FormatVersion, ID: sessionID, CreatedAt: 1_764_000_000_000}
	if err := svc.Import(ctx, h, w.envs); err != nil {
		tb.Fatal(err)
	}
}

// logFile is the JSONL log of session "long" under root.
func logFile(tb testing.TB, root string) string {
	var found string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "events.v"+strconv.Itoa(sdk.FormatVersion)+".jsonl") && strings.Contains(p, sessionID) {
			found = p
		}
		return nil
	})
	if found == "" {
		tb.Fatalf("no log of %q under %s", sessionID, root)
	}
	return found
}

// diskBytes sums the sizes of the regular files under dir.
func diskBytes(tb testing.TB, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// childTask is what a child process does; childResult what it reports.
type childTask struct {
	Mode     string // "coldload" or "append"
	Bin      string
	Backend  string
	Dir      string
	Messages int // append: the workload size
}

type childResult struct {
	Millis   float64
	BaseKB   int64 // VmRSS once the inputs are built (append)
	PeakKB   int64 // VmHWM at the end
	HeapKB   int64 // live heap after a GC at the end (coldload)
	Messages int   // messages derived (coldload) or appended (append)
	// CPU time (user + system) of the timed part (the writer's, the cold
	// load's) and of the plugin processes over their lives (append, cold
	// load: the release at the end included); on a shared machine it
	// drifts less than the wall time.
	HostCPUMillis, PluginCPUMillis float64
	Err                            string
}

// runChild performs task and prints its childResult as one JSON line.
func runChild(task string) int {
	var t childTask
	res := childResult{}
	if err := json.Unmarshal([]byte(task), &t); err != nil {
		res.Err = err.Error()
	} else if err := t.run(&res); err != nil {
		res.Err = err.Error()
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
	if res.Err != "" {
		return 1
	}
	return 0
}

func (t childTask) run(res *childResult) error {
	ctx := context.Background()
	cfg := backendConfig(t.Backend, t.Dir)
	switch t.Mode {
	case "coldload":
		stop, err := startProfile()
		if err != nil {
			return err
		}
		start, cpu := time.Now(), cpuMillis(unix.RUSAGE_SELF)
		svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: t.Bin})
		if err != nil {
			return err
		}
		s, _, err := svc.Resume(ctx, sessionID)
		if err != nil {
			return err
		}
		msgs, err := s.Messages()
		if err != nil {
			return err
		}
		res.Millis = float64(time.Since(start).Microseconds()) / 1000
		res.HostCPUMillis = cpuMillis(unix.RUSAGE_SELF) - cpu
		if err := stop(); err != nil {
			return err
		}
		res.Messages = len(msgs)
		res.PeakKB = procStatusKB("VmHWM")
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		res.HeapKB = int64(ms.HeapAlloc / 1024)
		if path := os.Getenv(heapProfileEnv); path != "" {
			if err := writeHeapProfile(path); err != nil {
				return err
			}
		}
		runtime.KeepAlive(s)
		if err := svc.Close(ctx); err != nil {
			return err
		}
		res.PluginCPUMillis = cpuMillis(unix.RUSAGE_CHILDREN) // the plugin has exited
		return nil
	case "append":
		ins, err := newWorkload(t.Messages).inputs()
		if err != nil {
			return err
		}
		runtime.GC()
		res.BaseKB = procStatusKB("VmRSS")
		cfg.WriteWindow = 200 * time.Millisecond
		stop, err := startProfile()
		if err != nil {
			return err
		}
		start, cpu := time.Now(), cpuMillis(unix.RUSAGE_SELF)
		svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: t.Bin})
		if err != nil {
			return err
		}
		s, err := svc.Create(ctx, service.CreateRequest{ID: sessionID})
		if err != nil {
			return err
		}
		for _, in := range ins {
			if _, err := s.Append(ctx, service.AppendRequest{Inputs: []events.Input{in}}); err != nil {
				return err
			}
		}
		if _, err := s.Flush(ctx); err != nil {
			return err
		}
		res.Millis = float64(time.Since(start).Microseconds()) / 1000
		res.HostCPUMillis = cpuMillis(unix.RUSAGE_SELF) - cpu
		if err := stop(); err != nil {
			return err
		}
		res.PeakKB = procStatusKB("VmHWM")
		msgs, err := s.Messages()
		if err != nil {
			return err
		}
		res.Messages = len(msgs)
		if err := svc.Close(ctx); err != nil {
			return err
		}
		res.PluginCPUMillis = cpuMillis(unix.RUSAGE_CHILDREN) // the plugins have exited
		return nil
	}
	return fmt.Errorf("unknown child mode %q", t.Mode)
}

// startProfile starts a CPU profile into the file profileEnv names and
// returns what stops it; without profileEnv it does nothing.
func startProfile() (stop func() error, err error) {
	path := os.Getenv(profileEnv)
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

// cpuMillis is the user plus system CPU time of who (unix.RUSAGE_SELF or
// unix.RUSAGE_CHILDREN), in milliseconds.
func cpuMillis(who int) float64 {
	var ru unix.Rusage
	if err := unix.Getrusage(who, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// procStatusKB reads one "kB" field of /proc/self/status; 0 if absent.
func procStatusKB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// child runs t in a child process and returns its result.
func child(tb testing.TB, t childTask) childResult {
	t.Bin = logbookBin
	task, _ := json.Marshal(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(task))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var res childResult
	if jerr := json.Unmarshal(lastLine(out), &res); jerr != nil {
		tb.Fatalf("child %s: %v (%v)\nstdout: %s\nstderr: %s", t.Mode, err, jerr, out, stderr.Bytes())
	}
	if res.Err != "" || err != nil {
		tb.Fatalf("child %s: %s %v\nstderr: %s", t.Mode, res.Err, err, stderr.Bytes())
	}
	return res
}

func lastLine(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

// rawColdLoad is the cold load's raw limit on one core: decompress the
// stored log and check every line with json.Valid, once.
func rawColdLoad(tb testing.TB, path string) time.Duration {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	start := time.Now()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".zst") {
		dec, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
		if err != nil {
			tb.Fatal(err)
		}
		defer dec.Close()
		r = dec
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			tb.Fatal("raw limit: invalid line")
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return time.Since(start)
}

// rawValid is single-core json.Valid over every envelope of w.
func rawValid(tb testing.TB, w workload) time.Duration {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	start := time.Now()
	for _, e := range w.envs {
		if !json.Valid(e) {
			tb.Fatal("raw limit: invalid envelope")
		}
	}
	return time.Since(start)
}

// rawCopy copies the first n bytes of src into a new file of dir, fsyncs it
// and the directory: the fork's raw limit.
func rawCopy(tb testing.TB, src, dir string, n int64) time.Duration {
	start := time.Now()
	in, err := os.Open(src)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	out, err := os.CreateTemp(dir, "raw-fork-*")
	if err != nil {
		tb.Fatal(err)
	}
	defer os.Remove(out.Name())
	defer out.Close()
	if _, err := io.CopyN(out, in, n); err != nil {
		tb.Fatal(err)
	}
	if err := out.Sync(); err != nil {
		tb.Fatal(err)
	}
	d, err := os.Open(dir)
	if err != nil {
		tb.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		tb.Fatal(err)
	}
	return time.Since(start)
}

// bench is what the measurements need of a *testing.B; the harness test
// drives them with a two-iteration stand-in.
type bench interface {
	testing.TB
	Loop() bool
	ReportMetric(n float64, unit string)
}

func mb(n int64) float64 { return float64(n) / 1e6 }

// median returns the median of ds, which it sorts.
func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// medianOf returns the median of xs, which it sorts.
func medianOf(xs []float64) float64 {
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// percentile returns the p-th percentile (0 < p < 1) of sorted ds.
func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// measureColdLoad stores w with JSONL, then per iteration times the raw
// limit and a child's cold load, alternating.
func measureColdLoad(b bench, messages int) {
	w := newWorkload(messages)
	dir := b.TempDir()
	storeFixture(b, "jsonl", dir, w)
	path := logFile(b, dir)
	var raws, loads []time.Duration
	var hostCPU, pluginCPU []float64
	var peak, heap int64
	for b.Loop() {
		raws = append(raws, rawColdLoad(b, path))
		res := child(b, childTask{Mode: "coldload", Backend: "jsonl", Dir: dir})
		hostCPU, pluginCPU = append(hostCPU, res.HostCPUMillis), append(pluginCPU, res.PluginCPUMillis)
		heap = max(heap, res.HeapKB*1024)
		if res.Messages != w.messages {
			b.Fatalf("cold load derived %d messages, want %d", res.Messages, w.messages)
		}
		loads = append(loads, time.Duration(res.Millis*float64(time.Millisecond)))
		peak = max(peak, res.PeakKB*1024)
	}
	raw, load := median(raws), median(loads)
	b.ReportMetric(float64(load.Microseconds())/1000, "load-ms")
	b.ReportMetric(float64(raw.Microseconds())/1000, "raw-ms")
	b.ReportMetric(load.Seconds()/raw.Seconds(), "load/raw")
	b.ReportMetric(medianOf(hostCPU), "host-cpu-ms")
	b.ReportMetric(medianOf(pluginCPU), "plugin-cpu-ms")
	b.ReportMetric(mb(peak), "peak-MB")
	b.ReportMetric(mb(heap), "heap-MB")
	b.ReportMetric(mb(w.canonical), "canonical-MB")
	b.ReportMetric(float64(peak)/float64(w.canonical), "peak/canonical")
}

// BenchmarkLongSessionColdLoad100K: engine start + Open + Messages of the
// 100,000-message session from JSONL+zstd, in a child process. Targets:
// peak/canonical ≤ 2, load/raw ≤ 0.35.
func BenchmarkLongSessionColdLoad100K(b *testing.B) { measureColdLoad(b, fullMessages) }

// measureFork stores w with JSONL and opens it (the host holds the
// source validated, as a serving host does), then per iteration times a
// fork at the middle with the child flushed, and the raw copy of the
// parent's bytes up to the boundary, alternating.
func measureFork(b bench, messages int) {
	ctx := context.Background()
	w := newWorkload(messages)
	dir := b.TempDir()
	storeFixture(b, "jsonl", dir, w)
	path := logFile(b, dir)
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	svc, err := service.Open(ctx, service.Options{Config: backendConfig("jsonl", dir), Executable: logbookBin})
	if err != nil {
		b.Fatal(err)
	}
	defer svc.Close(ctx)
	if _, _, err := svc.Resume(ctx, sessionID); err != nil {
		b.Fatal(err)
	}
	at := sdk.Seq(len(w.envs) / 2)
	var raws, forks []time.Duration
	i := 0
	for b.Loop() {
		i++
		raws = append(raws, rawCopy(b, path, dir, info.Size()/2))
		start := time.Now()
		c, err := svc.Fork(ctx, service.ForkRequest{Source: sessionID, At: &at, As: fmt.Sprintf("child-%d", i)})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		forks = append(forks, time.Since(start))
		if err := c.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	raw, fork := median(raws), median(forks)
	b.ReportMetric(float64(fork.Microseconds())/1000, "fork-ms")
	b.ReportMetric(float64(raw.Microseconds())/1000, "raw-ms")
	b.ReportMetric(fork.Seconds()/raw.Seconds(), "fork/raw")
}

// BenchmarkLongSessionFork100K: fork of the 100,000-message session at its
// middle, child durable. Target: fork/raw ≤ 3.
func BenchmarkLongSessionFork100K(b *testing.B) { measureFork(b, fullMessages) }

// measureAppend runs, per iteration, a child writer appending w with
// write-behind and a final flush, and single-core json.Valid over the same
// bytes, alternating; then reports the bytes the backend stored.
func measureAppend(b bench, backend string, messages int) {
	w := newWorkload(messages)
	var raws, appends []time.Duration
	var hostCPU, pluginCPU []float64
	var added, disk int64
	for b.Loop() {
		raws = append(raws, rawValid(b, w))
		dir := b.TempDir()
		res := child(b, childTask{Mode: "append", Backend: backend, Dir: dir, Messages: messages})
		if res.Messages != w.messages {
			b.Fatalf("the writer derived %d messages, want %d", res.Messages, w.messages)
		}
		appends = append(appends, time.Duration(res.Millis*float64(time.Millisecond)))
		hostCPU, pluginCPU = append(hostCPU, res.HostCPUMillis), append(pluginCPU, res.PluginCPUMillis)
		added = max(added, (res.PeakKB-res.BaseKB)*1024)
		disk = diskBytes(b, dir)
	}
	raw, app := median(raws), median(appends)
	b.ReportMetric(float64(w.messages)/app.Seconds(), "msg/s")
	b.ReportMetric(float64(w.messages)/raw.Seconds(), "raw-msg/s")
	b.ReportMetric(raw.Seconds()/app.Seconds(), "append/raw-throughput")
	b.ReportMetric(medianOf(hostCPU), "host-cpu-ms")
	b.ReportMetric(medianOf(pluginCPU), "plugin-cpu-ms")
	b.ReportMetric(mb(added), "added-MB")
	b.ReportMetric(float64(added)/float64(w.canonical), "added/canonical")
	b.ReportMetric(mb(disk), "disk-MB")
	b.ReportMetric(float64(disk)/float64(w.canonical), "disk/canonical")
}

// BenchmarkLongSessionAppend100K: write-behind append of the 100,000
// messages, final flush included, in a child process, per backend. Targets:
// append/raw-throughput ≥ 1 and added/canonical ≤ 2 (JSONL); disk/canonical
// ≤ 0.2 (JSONL+zstd) and ≤ 0.6 (SQLite).
func BenchmarkLongSessionAppend100K(b *testing.B) {
	for _, backend := range []string{"jsonl", "sqlite"} {
		b.Run(backend, func(b *testing.B) { measureAppend(b, backend, fullMessages) })
	}
}

// measureAppendFlush appends w message by message — the events up to and
// including each message — flushing after each, and writes the same batch
// of envelopes to a raw file with fdatasync, alternating; it reports the
// percentiles of both.
func measureAppendFlush(b bench, messages int) {
	ctx := context.Background()
	w := newWorkload(messages)
	ins, err := w.inputs()
	if err != nil {
		b.Fatal(err)
	}
	var logbookTimes, rawTimes []time.Duration
	for b.Loop() {
		dir := b.TempDir()
		cfg := backendConfig("jsonl", dir)
		svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin})
		if err != nil {
			b.Fatal(err)
		}
		s, err := svc.Create(ctx, service.CreateRequest{ID: sessionID})
		if err != nil {
			b.Fatal(err)
		}
		raw, err := os.Create(filepath.Join(dir, "raw.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		var batch []byte
		from := 0
		for i, in := range ins {
			if in.SurfaceOp == nil && i != len(ins)-1 {
				continue
			}
			start := time.Now()
			for _, x := range ins[from : i+1] {
				if _, err := s.Append(ctx, service.AppendRequest{Inputs: []events.Input{x}}); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := s.Flush(ctx); err != nil {
				b.Fatal(err)
			}
			logbookTimes = append(logbookTimes, time.Since(start))
			batch = batch[:0]
			for _, env := range w.envs[from : i+1] {
				batch = append(append(batch, env...), '\n')
			}
			start = time.Now()
			if _, err := raw.Write(batch); err != nil {
				b.Fatal(err)
			}
			if err := unix.Fdatasync(int(raw.Fd())); err != nil {
				b.Fatal(err)
			}
			rawTimes = append(rawTimes, time.Since(start))
			from = i + 1
		}
		raw.Close()
		if err := svc.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(logbookTimes)
	slices.Sort(rawTimes)
	p50, rawP50 := percentile(logbookTimes, 0.5), percentile(rawTimes, 0.5)
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(percentile(logbookTimes, 0.99).Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(rawP50.Microseconds())/1000, "raw-p50-ms")
	b.ReportMetric(p50.Seconds()/rawP50.Seconds(), "p50/raw-p50")
	var total time.Duration
	for _, d := range logbookTimes {
		total += d
	}
	b.ReportMetric(float64(len(logbookTimes))/total.Seconds(), "msg/s")
}

// BenchmarkLongSessionAppendFlush10K: 10,000 messages, each durable on
// return (append its events, flush). Target: p50/raw-p50 ≤ 2.5.
func BenchmarkLongSessionAppendFlush10K(b *testing.B) { measureAppendFlush(b, 10_000) }
