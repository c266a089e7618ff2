package plugintest_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

type projector struct{}

func (projector) Declare(context.Context) ([]string, error) { return []string{"projection:p/x"}, nil }

func (projector) Project(context.Context, sdk.ProjectRequest) ([]sdk.ProjectTarget, error) {
	return nil, sdk.Errorf(sdk.CodeProjectionInvalid, "p", "nothing to project")
}

func TestConnect(t *testing.T) {
	c := plugintest.Connect(t, pluginrpc.ServeConfig{
		Info:      sdk.Info{Name: "p", Kinds: []sdk.Kind{sdk.KindProjection}},
		Projector: projector{},
	})
	info, err := c.Info(context.Background())
	if err != nil || info.Name != "p" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	p, err := c.Projector()
	if err != nil {
		t.Fatal(err)
	}
	if types, err := p.Declare(context.Background()); err != nil || len(types) != 1 {
		t.Fatalf("Declare = %v, %v", types, err)
	}
	if _, err := p.Project(context.Background(), sdk.ProjectRequest{}); sdk.CodeOf(err) != sdk.CodeProjectionInvalid {
		t.Fatalf("Project = %v", err)
	}
}

// fatalTB records Fatalf and ends the goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestConnectFailsOnInvalidConfig(t *testing.T) {
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		plugintest.Connect(tb, pluginrpc.ServeConfig{Info: sdk.Info{Name: "Bad Name", Kinds: []sdk.Kind{sdk.KindProjection}}, Projector: projector{}})
	}()
	<-done
	if !strings.Contains(tb.msg, "CONFIG_INVALID") || !strings.Contains(tb.msg, "Bad Name") {
		t.Fatalf("Connect failed with %q", tb.msg)
	}
}

// recorded is a Configurable that keeps the config it was given.
type recorded struct{ config []byte }

func (r *recorded) Configure(_ context.Context, config []byte) error {
	r.config = append([]byte(nil), config...)
	return nil
}

// ConfiguredPersistence hands the config to the plugin's Configurable
// before it returns the persistence adapter, which reaches the backend.
func TestConfiguredPersistence(t *testing.T) {
	r := &recorded{}
	p := plugintest.ConfiguredPersistence(t, pluginrpc.ServeConfig{
		Info:         sdk.Info{Name: "store", Version: "0.1", Kinds: []sdk.Kind{sdk.KindPersistence}},
		Persistence:  memory.New(),
		Configurable: r,
	}, []byte(`{"root":"x"}`))
	if string(r.config) != `{"root":"x"}` {
		t.Fatalf("the plugin was configured with %q", r.config)
	}
	d, err := p.Describe(t.Context())
	if err != nil || d.Name != memory.Name {
		t.Fatalf("Describe through the adapter: %+v, %v", d, err)
	}
}
