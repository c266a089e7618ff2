package pruner

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

// connectSubprocess runs `logbook plugin pruner` as a go-plugin subprocess
// with AutoMTLS, as the host does, and returns a client for it. A cleanup
// kills the process.
func connectSubprocess(t *testing.T) *pluginrpc.Client {
	t.Helper()
	if logbookBin == "" {
		t.Fatal("the logbook binary was not built (TestMain)")
	}
	cc := pluginrpc.NewClientConfig(0)
	cc.Cmd = exec.Command(logbookBin, "plugin", Name)
	cc.Logger = hclog.New(&hclog.LoggerOptions{Name: "host", Level: hclog.Warn, Output: os.Stderr})
	cc.StartTimeout = 30 * time.Second
	client := plugin.NewClient(cc)
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("starting `logbook plugin pruner`: %v", err)
	}
	if v := client.NegotiatedVersion(); v != sdk.ProtocolVersion {
		t.Fatalf("negotiated protocol %d", v)
	}
	return pluginrpc.NewClient(rpc)
}

// TestPluginTransports runs the plugin over go-plugin's in-memory gRPC
// connection and as a real subprocess of the logbook binary, and checks
// what crosses the wire: Info, the config rule, the replacements (equal to
// PruneMessage's, in node order, only for oversized nodes), idempotence
// over the rewritten nodes, and the budget error with its session.
func TestPluginTransports(t *testing.T) {
	transports := []struct {
		name    string
		connect func(t *testing.T) *pluginrpc.Client
	}{
		{"grpc-in-memory", func(t *testing.T) *pluginrpc.Client { return plugintest.Connect(t, ServeConfig("test")) }},
		{"subprocess", connectSubprocess},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			c := tr.connect(t)
			info, err := c.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.Name != Name || !slices.Equal(info.Kinds, []sdk.Kind{sdk.KindPruner}) || len(info.Capabilities) != 0 {
				t.Fatalf("Info = %+v", info)
			}
			if err := c.Configure(ctx, []byte(`{"threshold_chars":1}`)); sdk.CodeOf(err) != sdk.CodeConfigInvalid {
				t.Fatalf("Configure with a member = %v; want CONFIG_INVALID (the pruner takes no config)", err)
			}
			if err := c.Configure(ctx, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			p, err := c.Pruner()
			if err != nil {
				t.Fatal(err)
			}

			big := strings.Repeat("output line ✓\n", 1000) // 14 000 code points
			nodes := []sdk.PruneNode{
				{Seq: 5, CallID: "c1", Message: message(text(big))},
				{Seq: 6, CallID: "c2", Message: message(text("small"))},
				{Seq: 9, CallID: "c3", Message: message(text(big[:5000]), image, text(big[:5000]))},
			}
			reps, err := p.Prune(ctx, "s1", nodes, DefaultBudget())
			if err != nil {
				t.Fatal(err)
			}
			if len(reps) != 2 || reps[0].Seq != 5 || reps[1].Seq != 9 {
				t.Fatalf("replacements for seqs %v; want [5 9]", seqs(reps))
			}
			for i, n := range []sdk.PruneNode{nodes[0], nodes[2]} {
				want, _, _ := PruneMessage(n.Message, DefaultBudget())
				got := reps[i]
				if string(got.Content) != string(want.Content) || got.CharsBefore != want.CharsBefore || got.CharsAfter != 4096+MarkerChars+1024 {
					t.Fatalf("seq %d: replacement %d → %d chars differs from PruneMessage's %d → %d", n.Seq, got.CharsBefore, got.CharsAfter, want.CharsBefore, want.CharsAfter)
				}
				nodes[slices.IndexFunc(nodes, func(x sdk.PruneNode) bool { return x.Seq == n.Seq })].Message = withContent(t, n.Message, got.Content)
			}
			again, err := p.Prune(ctx, "s1", nodes, DefaultBudget())
			if err != nil || len(again) != 0 {
				t.Fatalf("second run over the rewritten nodes = %v, %v; want nothing", seqs(again), err)
			}

			_, err = p.Prune(ctx, "s9", nodes, budget(8192, 8192, 0))
			e := requireCode(t, err, sdk.CodeConfigInvalid, "headChars 8192", "thresholdChars 8192")
			if e.SessionID != "s9" || e.Op != op {
				t.Fatalf("error over the wire = %+v", e)
			}
			_, err = p.Prune(ctx, "s9", []sdk.PruneNode{{Seq: 12, Message: []byte(`{"content":7}`)}}, DefaultBudget())
			if e := requireCode(t, err, sdk.CodePayloadInvalid); (e.Seq == nil || *e.Seq != 12) || e.SessionID != "s9" {
				t.Fatalf("error over the wire = %+v", e)
			}
		})
	}
}

func seqs(reps []sdk.PruneReplacement) []sdk.Seq {
	out := make([]sdk.Seq, 0, len(reps))
	for _, r := range reps {
		out = append(out, r.Seq)
	}
	return out
}
