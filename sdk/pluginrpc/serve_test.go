package pluginrpc

import (
	"context"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

type nopPersistence struct{ sdk.Persistence }

type nopSummarizer struct{}

func (nopSummarizer) Summarize(context.Context, sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
	return sdk.SummarizeReply{}, nil
}

type nopPruner struct{ sdk.Pruner }

func TestValidate(t *testing.T) {
	ok := ServeConfig{Info: sdk.Info{Name: "jsonl", Kinds: []sdk.Kind{sdk.KindPersistence}}, Persistence: nopPersistence{}}
	cases := []struct {
		name   string
		edit   func(*ServeConfig)
		detail string // "" = valid
	}{
		{"valid", func(*ServeConfig) {}, ""},
		{"name with dots and dashes", func(c *ServeConfig) { c.Info.Name = "0my.plugin_x-1" }, ""},
		{"name of 64 bytes", func(c *ServeConfig) { c.Info.Name = strings.Repeat("a", 64) }, ""},
		{"name of 65 bytes", func(c *ServeConfig) { c.Info.Name = strings.Repeat("a", 65) }, "must match"},
		{"empty name", func(c *ServeConfig) { c.Info.Name = "" }, "must match"},
		{"upper case name", func(c *ServeConfig) { c.Info.Name = "JSONL" }, `"JSONL" must match`},
		{"name starting with a dot", func(c *ServeConfig) { c.Info.Name = ".x" }, "must match"},
		{"name with a slash", func(c *ServeConfig) { c.Info.Name = "a/b" }, "must match"},
		{"no kinds", func(c *ServeConfig) { c.Info.Kinds = nil }, "declares no kinds"},
		{"unknown kind", func(c *ServeConfig) { c.Info.Kinds = append(c.Info.Kinds, "storage") }, `unknown kind "storage"`},
		{"duplicate kind", func(c *ServeConfig) { c.Info.Kinds = append(c.Info.Kinds, sdk.KindPersistence) }, "twice"},
		{"declared kind without implementation", func(c *ServeConfig) { c.Info.Kinds = append(c.Info.Kinds, sdk.KindPruner) }, `kind "pruner" but ServeConfig has no implementation`},
		{"implementation without declared kind", func(c *ServeConfig) { c.Pruner = nopPruner{} }, `does not declare "pruner"`},
		{"two kinds", func(c *ServeConfig) {
			c.Info.Kinds = append(c.Info.Kinds, sdk.KindPruner)
			c.Pruner = nopPruner{}
		}, ""},
		{"protocol version 1", func(c *ServeConfig) { c.Info.ProtocolVersions = []int{1} }, ""},
		{"protocol version 2", func(c *ServeConfig) { c.Info.ProtocolVersions = []int{1, 2} }, "protocol version 2"},
		{"empty event type", func(c *ServeConfig) { c.Info.EventTypes = []sdk.EventTypeDecl{{Type: ""}} }, "empty event type at index 0"},
		{"duplicate event type", func(c *ServeConfig) {
			c.Info.EventTypes = []sdk.EventTypeDecl{{Type: "plugin:jsonl/a"}, {Type: "plugin:jsonl/a", Ignorable: true}}
		}, `"plugin:jsonl/a" twice`},
		{"select-range without RangeSelector", func(c *ServeConfig) {
			c.Info.Kinds = append(c.Info.Kinds, sdk.KindSummarizer)
			c.Summarizer = nopSummarizer{}
			c.Info.Capabilities = []string{"select-range"}
		}, "does not implement sdk.RangeSelector"},
		{"copy-prefix without PrefixCopier", func(c *ServeConfig) { c.Info.Capabilities = []string{sdk.CapabilityCopyPrefix} }, "does not implement sdk.PrefixCopier"},
		{"read-frames without FrameReader", func(c *ServeConfig) { c.Info.Capabilities = []string{sdk.CapabilityReadFrames} }, "does not implement sdk.FrameReader"},
		{"tenants without Tenancy", func(c *ServeConfig) { c.Info.Capabilities = []string{sdk.CapabilityTenants} }, "does not implement sdk.Tenancy"},
		{"RPCMaxBytes too small", func(c *ServeConfig) { c.RPCMaxBytes = 1000 }, "RPCMaxBytes = 1000"},
		{"RPCMaxBytes negative", func(c *ServeConfig) { c.RPCMaxBytes = -1 }, "RPCMaxBytes = -1"},
		{"RPCMaxBytes 64 KiB", func(c *ServeConfig) { c.RPCMaxBytes = 64 << 10 }, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			c.Info.Kinds = append([]sdk.Kind(nil), ok.Info.Kinds...)
			tc.edit(&c)
			err := c.Validate()
			_, gerr := c.GoPluginServeConfig()
			if tc.detail == "" {
				if err != nil || gerr != nil {
					t.Fatalf("Validate = %v, GoPluginServeConfig = %v", err, gerr)
				}
				return
			}
			if sdk.CodeOf(err) != sdk.CodeConfigInvalid || !strings.Contains(err.Error(), tc.detail) {
				t.Fatalf("Validate = %v, want CONFIG_INVALID with %q", err, tc.detail)
			}
			if gerr == nil {
				t.Fatal("GoPluginServeConfig accepted an invalid config")
			}
		})
	}
}

func TestGoPluginServeConfig(t *testing.T) {
	c := ServeConfig{
		Info:        sdk.Info{Name: "two", Kinds: []sdk.Kind{sdk.KindPruner, sdk.KindSummarizer}},
		Pruner:      nopPruner{},
		Summarizer:  nopSummarizer{},
		RPCMaxBytes: 64 << 10,
	}
	pc, err := c.GoPluginServeConfig()
	if err != nil {
		t.Fatal(err)
	}
	if pc.MagicCookieKey != sdk.MagicCookieKey || pc.MagicCookieValue != sdk.MagicCookieValue || pc.ProtocolVersion != sdk.ProtocolVersion {
		t.Fatalf("handshake %+v", pc.HandshakeConfig)
	}
	set := pc.VersionedPlugins[sdk.ProtocolVersion]
	if len(pc.VersionedPlugins) != 1 || len(set) != 3 || set["info"] == nil || set["pruner"] == nil || set["summarizer"] == nil {
		t.Fatalf("VersionedPlugins %v", pc.VersionedPlugins)
	}
	if pc.GRPCServer == nil || pc.Logger == nil {
		t.Fatal("no gRPC server or logger")
	}
	if pc.Logger.Name() != "two" {
		t.Fatalf("logger named %q", pc.Logger.Name())
	}
}

func TestPluginSetsAndDialOptions(t *testing.T) {
	sets := PluginSets(0)
	set := sets[sdk.ProtocolVersion]
	for _, name := range []string{"info", "persistence", "summarizer", "pruner", "projection"} {
		if set[name] == nil {
			t.Fatalf("PluginSets lacks %q", name)
		}
	}
	if len(sets) != 1 || len(set) != 5 {
		t.Fatalf("PluginSets = %v", sets)
	}
	if len(GRPCDialOptions(0)) == 0 {
		t.Fatal("no dial options")
	}
	cc := NewClientConfig(0)
	if !cc.AutoMTLS || len(cc.AllowedProtocols) != 1 || cc.AllowedProtocols[0] != "grpc" || cc.MagicCookieValue != sdk.MagicCookieValue {
		t.Fatalf("NewClientConfig = %+v", cc)
	}
	if grpcLimit(sdk.DefaultRPCMaxBytes) != sdk.DefaultRPCMaxBytes+1<<20 {
		t.Fatal("headroom is not 1 MiB")
	}
}

// The host's RPCMaxBytes, handed over in the environment, replaces the
// ServeConfig's; a value that is not a positive byte count, or outside the
// range Validate allows, is refused.
func TestGoPluginServeConfigTakesTheHostsRPCLimit(t *testing.T) {
	c := ServeConfig{Info: sdk.Info{Name: "p", Kinds: []sdk.Kind{sdk.KindPersistence}}, Persistence: nopPersistence{}}
	t.Setenv(sdk.RPCMaxBytesEnv, "50331648")
	pc, err := c.GoPluginServeConfig()
	if err != nil {
		t.Fatal(err)
	}
	if p := pc.VersionedPlugins[sdk.ProtocolVersion][string(sdk.KindPersistence)].(*persistencePlugin); p.maxBytes != 48<<20 {
		t.Fatalf("the persistence plugin serves %d bytes; want the host's %d", p.maxBytes, 48<<20)
	}
	for _, v := range []string{"", "x", "-5", "0", "100"} {
		t.Setenv(sdk.RPCMaxBytesEnv, v)
		if _, err := c.GoPluginServeConfig(); sdk.CodeOf(err) != sdk.CodeConfigInvalid {
			t.Errorf("%s=%q: %v; want CONFIG_INVALID", sdk.RPCMaxBytesEnv, v, err)
		}
	}
}
