package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/client"
	"github.com/seed-e5e476df/logbook/events"
)

// procStatus is a size line of /proc/<pid>/status (VmRSS, VmHWM), in
// bytes.
func procStatus(pid int, key string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", key, pid)
}

// A real `logbook serve` with max_pending_bytes_total = 8 MiB and its
// JSONL plugin stopped (SIGSTOP): twelve sessions append 128 KiB events
// over /v1 until each gets 503 BACKEND_BUSY naming the bound, with
// nothing appended by the refused request. The pending total never
// passes the bound (/metrics), and serve's RSS grows by far less than
// the twelve sessions' own bounds (8 MiB each) would let it. After
// SIGCONT every acknowledged event, and nothing else, is stored once.
func TestServeBoundsWriteBehindMemoryWhileThePluginIsStopped(t *testing.T) {
	const (
		sessions = 12
		bound    = 8 << 20
		text     = 128 << 10
	)
	dir := t.TempDir()
	conf := filepath.Join(dir, "bounded.hcl")
	if err := os.WriteFile(conf, []byte("persistence \"jsonl\" {}\nmax_event_bytes = 1048576\nmax_pending_bytes = "+strconv.Itoa(bound)+
		"\nmax_pending_bytes_total = "+strconv.Itoa(bound)+"\nwrite_backpressure_timeout = \"1s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	p := startServe(t, data, "--config", conf)
	ctx := context.Background()
	c := client.New(p.addr, client.Options{})
	defer c.Close()
	acked := make([][][]byte, sessions) // each session's first: the turn/start of its messages
	for i := range sessions {
		s, err := c.Create(ctx, "b"+strconv.Itoa(i), events.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := s.Append(ctx, events.TurnStart(1))
		if err != nil {
			t.Fatal(err)
		}
		acked[i] = append(acked[i], evs[0].Envelope)
	}
	base, err := procStatus(p.Pid(), "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	plugin := jsonlPlugin(p.Pid())
	if plugin == 0 {
		t.Fatalf("no JSONL plugin under serve %d", p.Pid())
	}
	if err := syscall.Kill(plugin, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := sync.OnceFunc(func() { _ = syscall.Kill(plugin, syscall.SIGCONT) })
	t.Cleanup(resumed)

	hc := &http.Client{Timeout: 30 * time.Second} // a hang fails the test instead of stalling it
	errs := make([]error, sessions)
	var wg sync.WaitGroup
	for i := range sessions {
		wg.Go(func() {
			for n := 0; ; n++ {
				line := v1Line(userInput(fmt.Sprintf("m%06d", n), fmt.Sprintf("%02d-%06d-", i, n)+strings.Repeat("z", text)))
				resp, err := hc.Post("http://"+p.addr+"/v1/sessions/b"+strconv.Itoa(i)+"/events", "application/x-ndjson", bytes.NewReader(line))
				if err != nil {
					errs[i] = fmt.Errorf("append %d: %w", n, err)
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				switch {
				case err != nil:
					errs[i] = err
				case resp.StatusCode == http.StatusOK:
					acked[i] = append(acked[i], bytes.TrimSuffix(body, []byte("\n")))
					continue
				case resp.StatusCode != http.StatusServiceUnavailable:
					errs[i] = fmt.Errorf("append %d: %d %s", n, resp.StatusCode, body)
				default:
					var prob struct {
						Code     string            `json:"code"`
						Detail   string            `json:"detail"`
						Appended *int64            `json:"appended"`
						Meta     map[string]string `json:"meta"`
					}
					if err := json.Unmarshal(body, &prob); err != nil || prob.Code != "BACKEND_BUSY" || prob.Appended == nil || *prob.Appended != 0 ||
						!strings.Contains(prob.Detail, "max_pending_bytes_total "+strconv.Itoa(bound)) || prob.Meta["write_backpressure_timeout"] != "1s" {
						errs[i] = fmt.Errorf("append %d: 503 %s", n, body)
					}
				}
				return
			}
		})
	}
	wg.Wait()
	m := scrapeServe(t, p)
	pending, _ := m.Value("logbook_writebehind_pending_bytes")
	peakRSS, err := procStatus(p.Pid(), "VmHWM") // the peak since serve started
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, a := range acked {
		total += len(a) - 1 // past the turn/start
	}
	grew := peakRSS - base
	t.Logf("%d events of %d KiB acknowledged across %d sessions; serve's RSS %d MiB before, peak (VmHWM) %d MiB above that",
		total, text>>10, sessions, base>>20, grew>>20)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("session b%d: %v\n%s", i, err, p.log())
		}
	}
	wantMetric(t, m, bound, "logbook_writebehind_pending_bytes_limit")
	if pending <= 0 || pending > bound {
		t.Fatalf("logbook_writebehind_pending_bytes = %v with every session refused; want within (0, %d]", pending, bound)
	}
	// The sessions' own bounds alone would let 12 × 8 MiB queue (the
	// events stay in each session's log as well, and garbage between
	// collections comes on top); the process-wide bound keeps 8 MiB.
	if grew > 64<<20 {
		t.Fatalf("serve's RSS grew by %d MiB while the plugin was stopped; want well below the %d MiB the per-session bounds allow", grew>>20, sessions*bound>>20)
	}

	resumed()
	for i := range sessions {
		if err := c.Session("b" + strconv.Itoa(i)).Flush(ctx); err != nil {
			t.Fatalf("flush b%d after SIGCONT: %v", i, err)
		}
	}
	p.kill9(t)
	p2 := startServe(t, data, "--config", conf)
	c2 := client.New(p2.addr, client.Options{})
	defer c2.Close()
	for i := range sessions {
		stored, err := c2.Session("b" + strconv.Itoa(i)).Events(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) != len(acked[i]) {
			t.Fatalf("session b%d: %d events stored, %d acknowledged", i, len(stored), len(acked[i]))
		}
		for j, e := range stored {
			if !bytes.Equal(e.Envelope, acked[i][j]) {
				t.Fatalf("session b%d: stored event %d differs from the acknowledged one", i, j)
			}
		}
	}
}
