package compactorsummary

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	hclog "github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

// connectCommand runs cmd as a go-plugin subprocess with AutoMTLS, as the
// host does, and returns a client for it. A cleanup kills the process.
func connectCommand(t *testing.T, cmd *exec.Cmd) *pluginrpc.Client {
	t.Helper()
	cc := pluginrpc.NewClientConfig(0)
	cc.Cmd = cmd
	cc.Logger = hclog.New(&hclog.LoggerOptions{Name: "host", Level: hclog.Warn, Output: os.Stderr})
	cc.StartTimeout = 30 * time.Second
	client := plugin.NewClient(cc)
	t.Cleanup(client.Kill)
	rpc, err := client.Client()
	if err != nil {
		t.Fatalf("starting %v: %v", cmd.Args, err)
	}
	return pluginrpc.NewClient(rpc)
}

// connectBundled runs `logbook plugin compactor-summary`.
func connectBundled(t *testing.T) *pluginrpc.Client {
	t.Helper()
	if logbookBin == "" {
		t.Fatal("the logbook binary was not built (TestMain)")
	}
	return connectCommand(t, exec.Command(logbookBin, "plugin", Name))
}

// TestPluginTransports runs the plugin over go-plugin's in-memory gRPC
// connection and as a real subprocess of the logbook binary: Info, config
// errors, an extractive summary equal to Extractive's, and an openai
// summary from the fake server, whose failure travels with its code.
func TestPluginTransports(t *testing.T) {
	transports := []struct {
		name    string
		connect func(t *testing.T) *pluginrpc.Client
	}{
		{"grpc-in-memory", func(t *testing.T) *pluginrpc.Client { return plugintest.Connect(t, ServeConfig("test")) }},
		{"subprocess", connectBundled},
	}
	want, err := Extractive{}.Summarize(t.Context(), request())
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			c := tr.connect(t)
			info, err := c.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.Name != Name || !slices.Equal(info.Kinds, []sdk.Kind{sdk.KindSummarizer}) || info.ConfigSchema != ConfigSchema || len(info.Capabilities) != 0 {
				t.Fatalf("Info = %+v", info)
			}
			requireCode(t, c.Configure(ctx, []byte(`{"mode":"extractive","color":"blue"}`)), sdk.CodeConfigInvalid, "color")
			if err := c.Configure(ctx, []byte(`{"mode":"extractive"}`)); err != nil {
				t.Fatal(err)
			}
			s, err := c.Summarizer()
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Summarize(ctx, request())
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Summary) != 1 || !bytes.Equal(got.Summary[0], want.Summary[0]) || got.Provider != want.Provider || got.Model != want.Model {
				t.Fatalf("extractive reply over the wire %+v; want %+v", got, want)
			}
			if sel, ok := s.(sdk.RangeSelector); !ok {
				t.Fatal("the host adapter is not a RangeSelector")
			} else if r, err := sel.SelectRange(ctx, sdk.SelectRangeRequest{Nodes: []sdk.Seq{0, 1}}); err != nil || r.OK {
				t.Fatalf("SelectRange of a plugin without the capability = %+v, %v; want no choice", r, err)
			}

			api := newFakeAPI(t, status(400, "Model Not Exist"), completion(okCompletion))
			if err := c.Configure(ctx, api.config(`"model":"deepseek-chat"`)); err != nil {
				t.Fatal(err)
			}
			_, err = s.Summarize(ctx, request())
			requireCode(t, err, sdk.CodeCompactionSummaryFailed, "HTTP 400", "Model Not Exist", "not retried")
			got, err = s.Summarize(ctx, request())
			if err != nil {
				t.Fatal(err)
			}
			if summaryText(t, got) != "## Goals and constraints\n- Fix TestX." || got.Provider != "deepseek" || string(got.Usage) != `{"input":70,"output":20,"cacheRead":30}` {
				t.Fatalf("openai reply over the wire %+v", got)
			}
			if n := len(api.seen()); n != 2 {
				t.Fatalf("the fake API saw %d requests; want 2", n)
			}
		})
	}
}

// buildSelectRange builds testdata/selectrange into a temporary directory.
func buildSelectRange(t *testing.T) string {
	t.Helper()
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the plugin")
	}
	bin := filepath.Join(t.TempDir(), "selectrange")
	build := exec.Command(gotool, "build", "-o", bin, "./testdata/selectrange")
	var out bytes.Buffer
	build.Stdout, build.Stderr = &out, &out
	if err := build.Run(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out.Bytes())
	}
	return bin
}

// TestSelectRangeStrategy runs the third-party strategy of
// testdata/selectrange in both variants: it declares "select-range", the
// valid variant answers the balanced older half of the surface, the invalid
// one a span ending past the surface, and both summarize.
func TestSelectRangeStrategy(t *testing.T) {
	bin := buildSelectRange(t)
	// Node 0 is the system prompt; 1 user; 2 assistant with a call; 3 its
	// result; 4 user; 5 assistant with two calls; 6, 7 results; 8 answer;
	// 9 user. The middle is position 5, inside no pair: the latest balanced
	// cut at or before it is before position 5.
	nodes := []sdk.Seq{0, 3, 4, 5, 8, 10, 11, 12, 13, 15}
	msgs := [][]byte{
		systemMsg("You are a coding agent."),
		userMsg("u1", text("Start.")),
		assistantMsg("a1", call("c1", "read", `{}`)),
		toolMsg("c1", false, text("ok")),
		userMsg("u2", text("Go on.")),
		assistantMsg("a2", call("c2", "run", `{}`), call("c3", "run", `{}`)),
		toolMsg("c2", false, text("ok")),
		toolMsg("c3", false, text("ok")),
		assistantMsg("a3", text("Done.")),
		userMsg("u3", text("Thanks.")),
	}
	req := sdk.SelectRangeRequest{SessionID: "s1", Nodes: nodes, Tokens: make([]int64, len(nodes)), Messages: msgs, RetainTokens: 10}
	cases := []struct {
		mode string
		want sdk.SelectRangeReply
	}{
		{"valid", sdk.SelectRangeReply{Start: 3, End: 8, OK: true}},
		{"invalid", sdk.SelectRangeReply{Start: 3, End: 16, OK: true}},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			cl := connectCommand(t, exec.Command(bin, c.mode))
			info, err := cl.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if info.Name != "selectrange" || !slices.Contains(info.Capabilities, "select-range") || !slices.Equal(info.Kinds, []sdk.Kind{sdk.KindSummarizer}) {
				t.Fatalf("Info = %+v", info)
			}
			if err := cl.Configure(ctx, []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
			s, err := cl.Summarizer()
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.(sdk.RangeSelector).SelectRange(ctx, req)
			if err != nil || got != c.want {
				t.Fatalf("SelectRange = %+v, %v; want %+v", got, err, c.want)
			}
			sum, err := s.Summarize(ctx, sdk.SummarizeRequest{SessionID: "s1", MaxTokens: 100, Messages: msgs[1:5]})
			if err != nil || summaryText(t, sum) == "" {
				t.Fatalf("Summarize = %+v, %v", sum, err)
			}
		})
	}
}
