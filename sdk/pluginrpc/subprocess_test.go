package pluginrpc_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
)

// TestSubprocessPlugin builds testdata/pruneplugin and runs it as a real
// go-plugin subprocess with AutoMTLS, as a host would.
func TestSubprocessPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and launches a plugin binary")
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the plugin")
	}
	bin := filepath.Join(t.TempDir(), "pruneplugin")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command(gotool, append(args, "./testdata/pruneplugin")...)
	var out bytes.Buffer
	build.Stdout, build.Stderr = &out, &out
	if err := build.Run(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out.Bytes())
	}

	cc := pluginrpc.NewClientConfig(0)
	cc.Cmd = exec.Command(bin)
	cc.Logger = hclog.New(&hclog.LoggerOptions{Name: "host", Level: hclog.Warn, Output: os.Stderr})
	cc.StartTimeout = 30 * time.Second
	client := plugin.NewClient(cc)
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatal(err)
	}
	c := pluginrpc.NewClient(rpc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "pruneplugin" || info.Version != "test" || len(info.Kinds) != 1 || info.Kinds[0] != sdk.KindPruner ||
		len(info.ProtocolVersions) != 1 || info.ProtocolVersions[0] != sdk.ProtocolVersion {
		t.Fatalf("Info = %+v", info)
	}
	if client.NegotiatedVersion() != sdk.ProtocolVersion {
		t.Fatalf("negotiated protocol %d", client.NegotiatedVersion())
	}
	if err := c.Configure(ctx, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	p, err := c.Pruner()
	if err != nil {
		t.Fatal(err)
	}
	reps, err := p.Prune(ctx, "s", []sdk.PruneNode{{Seq: 4, CallID: "c", Message: []byte(`{"role":"tool"}`)}}, sdk.PruneBudget{ThresholdChars: 10})
	if err != nil || len(reps) != 1 || reps[0].Seq != 4 || string(reps[0].Content) != `{"role":"tool"}` {
		t.Fatalf("Prune = %+v, %v", reps, err)
	}
	_, err = p.Prune(ctx, "s9", nil, sdk.PruneBudget{})
	e := wantCode(t, err, sdk.CodeConfigInvalid)
	if e.Op != "pruneplugin" || e.SessionID != "s9" {
		t.Fatalf("error from the subprocess = %+v", e)
	}
}
