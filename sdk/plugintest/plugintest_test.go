package plugintest_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

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
