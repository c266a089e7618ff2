package jsonl

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// holdEnv makes the test binary a helper process (see holdProcess); its
// value is the JSON of a holdSpec.
const holdEnv = "LOGBOOK_JSONL_TEST_HOLD"

type holdSpec struct {
	Config Config
	ID     string
	Create bool   // create the session (and store nothing) instead of opening it
	Tenant string // the named tenant whose view holds it; "" for the implicit tenant
}

// holdProcess opens spec.ID for writing (or creates it, when spec.Create),
// prints "held" and keeps the claim until its stdin closes or it is
// killed: the second OS process of TestSecondProcessIsAlreadyOwned and
// TestKilledCreatorLeavesNothing.
func holdProcess(raw string) {
	var spec holdSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	var b sdk.Persistence
	b, err := New(spec.Config)
	if err == nil && spec.Tenant != "" {
		b, err = b.(*Backend).Tenant(spec.Tenant)
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	var o sdk.Opened
	if spec.Create {
		o, err = b.Create(context.Background(), sdk.Header{FormatVersion: sdk.FormatVersion, ID: spec.ID, Tenant: spec.Tenant, CreatedAt: 1})
	} else {
		o, err = b.Open(context.Background(), spec.ID, sdk.AccessWrite)
	}
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("held", o.NextSeq)
	_, _ = io.Copy(io.Discard, os.Stdin)
	_ = b.Close(context.Background(), o.Handle)
	os.Exit(0)
}

// startHolder re-executes the test binary as a holder of id's write claim
// and waits for it to report the claim.
func startHolder(t *testing.T, spec holdSpec) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	raw, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+string(raw))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case s := <-line:
		if !strings.HasPrefix(s, "held ") {
			t.Fatalf("the helper process did not take the claim: %q", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the helper process did not report within 30 s")
	}
	return cmd, stdin
}

// TestSecondProcessIsAlreadyOwned checks write ownership across OS processes: while
// another process holds the flock, Open(write) here is ALREADY_OWNED and
// reads still work; when that process closes its handle, or dies by
// SIGKILL, the kernel releases the lock and a write open succeeds.
func TestSecondProcessIsAlreadyOwned(t *testing.T) {
	for _, how := range []string{"close", "kill -9"} {
		t.Run(how, func(t *testing.T) {
			cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
			b := newTestBackend(t, cfg)
			storeEvents(t, b, "s1", persistencetest.Batch(0, 3))

			cmd, stdin := startHolder(t, holdSpec{Config: cfg, ID: "s1"})
			_, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
			persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, "s1", lockName)
			r, err := b.Open(t.Context(), "s1", sdk.AccessRead)
			if err != nil || r.NextSeq != 3 {
				t.Fatalf("Open(read) beside another process's writer = %+v, %v", r, err)
			}
			if how == "close" {
				stdin.Close()
			} else {
				_ = cmd.Process.Kill()
			}
			_ = cmd.Wait()
			w, err := b.Open(t.Context(), "s1", sdk.AccessWrite)
			if err != nil {
				t.Fatalf("Open(write) after the other process let go: %v", err)
			}
			if _, err := b.Append(t.Context(), w.Handle, 3, persistencetest.Batch(3, 1)); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestKilledCreatorLeavesNothing: while another process holds a create it
// has not stored, the id is taken here too (SESSION_ALREADY_EXISTS,
// ALREADY_OWNED) but not visible (SESSION_NOT_FOUND, not listed); once that
// process dies by SIGKILL, the directory and lock file it left block
// nothing: the id is still invisible and can be created here.
func TestKilledCreatorLeavesNothing(t *testing.T) {
	cfg := Config{Root: filepath.Join(t.TempDir(), "root"), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	cmd, _ := startHolder(t, holdSpec{Config: cfg, ID: "s1", Create: true})
	lock := filepath.Join(cfg.Root, EncodeID("s1"), lockName)
	_, err := b.Create(t.Context(), testHeader("s1"))
	persistencetest.RequireCode(t, err, sdk.CodeSessionAlreadyExists, "s1", lock)
	_, err = b.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, "s1", lock)
	requireInvisible := func(when string) {
		t.Helper()
		_, err := b.Stat(t.Context(), "s1")
		persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
		_, err = b.Open(t.Context(), "s1", sdk.AccessRead)
		persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
		if err := b.List(t.Context(), func(e sdk.ListEntry) error {
			return fmt.Errorf("%s: List shows %+v", when, e)
		}); err != nil {
			t.Fatal(err)
		}
	}
	requireInvisible("while the creator lives")

	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the killed creator left no lock file: %v", err)
	}
	requireInvisible("after the creator was killed")
	_, err = b.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "s1")
	storeEvents(t, b, "s1", persistencetest.Batch(0, 2))
	_, events := readEvents(t, b, "s1", sdk.AccessRead)
	requireEqualEvents(t, "created after the creator died", events, persistencetest.Batch(0, 2))
}

// TestTwoPluginProcessesShareOneRoot runs two `logbook plugin jsonl`
// processes from two hosts over one root: the second write open is
// ALREADY_OWNED (flock across processes), and the reader process sees the
// writer's appends.
func TestTwoPluginProcessesShareOneRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	s := storage{root: root, compression: CompressionZstd}
	subprocess := transports[2]
	a, b := subprocess.connect(t, s), subprocess.connect(t, s)
	o, err := a.Create(t.Context(), sdk.Header{ID: "s1", CreatedAt: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(t.Context(), o.Handle, 0, persistencetest.Batch(0, 2)); err != nil {
		t.Fatal(err)
	}
	_, err = b.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, "s1")
	r, err := b.Open(t.Context(), "s1", sdk.AccessRead)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Append(t.Context(), o.Handle, 2, persistencetest.Batch(2, 2)); err != nil {
		t.Fatal(err)
	}
	if got := persistencetest.ReadAll(t, b, r.Handle); len(got) != 4 {
		t.Fatalf("the other process reads %d events; want 4", len(got))
	}
	if err := a.Close(t.Context(), o.Handle); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Open(t.Context(), "s1", sdk.AccessWrite); err != nil {
		t.Fatalf("Open(write) in the second process after the first closed: %v", err)
	}
}

// TestTenantClaimAcrossKilledProcess: another OS process holding tenant
// a's s1 for writing makes tenant a's Open(write) here ALREADY_OWNED, and
// only tenant a's: the same id in tenant b and in the implicit tenant
// opens for writing. Once that process dies by SIGKILL, the kernel
// releases its lock and tenant a's s1 opens for writing here.
func TestTenantClaimAcrossKilledProcess(t *testing.T) {
	cfg := Config{Root: t.TempDir(), Compression: CompressionZstd}
	b := newTestBackend(t, cfg)
	for _, name := range []string{"a", "b", sdk.DefaultTenant} {
		v := b
		if name != sdk.DefaultTenant {
			v = view(t, b, name)
		}
		storeIn(t, v, name, "s1", persistencetest.Batch(0, 1))
	}
	cmd, _ := startHolder(t, holdSpec{Config: cfg, ID: "s1", Tenant: "a"})
	a := view(t, b, "a")
	_, err := a.Open(t.Context(), "s1", sdk.AccessWrite)
	persistencetest.RequireCode(t, err, sdk.CodeAlreadyOwned, filepath.Join(cfg.Root, ".tenants", "a", "s1", lockName))
	for _, v := range []*Backend{view(t, b, "b"), b} {
		w, err := v.Open(t.Context(), "s1", sdk.AccessWrite)
		if err != nil {
			t.Fatalf("tenant %s's s1 while another process holds tenant a's: %v", sdk.TenantName(v.tenant), err)
		}
		v.Close(t.Context(), w.Handle)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	w, err := a.Open(t.Context(), "s1", sdk.AccessWrite)
	if err != nil {
		t.Fatalf("Open(write) of tenant a's s1 after its holder was killed: %v", err)
	}
	if _, err := a.Append(t.Context(), w.Handle, 1, persistencetest.Batch(1, 1)); err != nil {
		t.Fatal(err)
	}
	a.Close(t.Context(), w.Handle)
}
