package engine

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
)

// openDescriptors counts the open file descriptors of process pid.
func openDescriptors(t *testing.T, pid int) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// Each bundled file backend declares in Describe the descriptors a live,
// stored session really keeps open in its plugin process (JSONL 2, SQLite
// 1),
// and the plugin reports its process's limit and open count.
func TestDescriptorsPerSessionAsDeclared(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc")
	}
	for _, tc := range []struct {
		block string
		want  int
	}{
		{`persistence "jsonl" { compression = "zstd" }`, 2},
		{`persistence "sqlite" {}`, 1},
		{`persistence "memory" {}`, 0},
	} {
		name := strings.Fields(tc.block)[1]
		t.Run(strings.Trim(name, `"`), func(t *testing.T) {
			ctx := context.Background()
			cfg, err := config.Parse([]byte("data_dir = \""+t.TempDir()+"\"\n"+tc.block+"\n"), "t.hcl")
			if err != nil {
				t.Fatal(err)
			}
			e, err := Start(ctx, cfg, Options{Executable: logbookBin})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close(ctx)
			b := e.backends[0]
			d, err := b.Persistence.Describe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if d.DescriptorsPerSession != tc.want || d.DescriptorLimit <= 0 || d.DescriptorsOpen <= 0 {
				t.Fatalf("Describe = %+v, want %d descriptors per session and the process's limit and open count", d, tc.want)
			}
			pid := e.Plugins[b.Name].Pid()
			const n = 20
			create := func(id string) {
				s, err := e.Store.Create(ctx, store.CreateOptions{ID: id})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := e.Store.Flush(ctx, s); err != nil { // stored: its log file exists
					t.Fatal(err)
				}
			}
			create("warm")
			before := openDescriptors(t, pid)
			for i := range n {
				create(fmt.Sprintf("s%d", i))
			}
			if got := openDescriptors(t, pid) - before; got != n*tc.want {
				t.Errorf("%d live sessions took %d descriptors in the plugin, want %d (%d each)", n, got, n*tc.want, tc.want)
			}
		})
	}
}
