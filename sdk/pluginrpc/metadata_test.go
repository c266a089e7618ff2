package pluginrpc

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// metadataKeys records the metadata keys of every call a server receives,
// beyond those gRPC itself sends.
type metadataKeys struct {
	mu   sync.Mutex
	keys []string
}

func (m *metadataKeys) note(ctx context.Context) {
	md, _ := metadata.FromIncomingContext(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range md {
		if !strings.HasPrefix(k, ":") && !strings.HasPrefix(k, "grpc-") && k != "content-type" && k != "user-agent" {
			m.keys = append(m.keys, k)
		}
	}
}

// Every protocol feature is in the .proto: a write cycle of create,
// appends, flush, read and close sends the plugin no metadata of its own.
func TestTheClientSendsNoMetadata(t *testing.T) {
	var seen metadataKeys
	c := serveOver(t, memory.New(),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			seen.note(ctx)
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			seen.note(ss.Context())
			return h(srv, ss)
		}))
	ctx := t.Context()
	o, err := c.Create(ctx, sdk.Header{FormatVersion: sdk.FormatVersion, ID: "md", CreatedAt: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := c.Append(ctx, o.Handle, sdk.Seq(i), persistencetest.Batch(i, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Flush(ctx, o.Handle); err != nil {
		t.Fatal(err)
	}
	if err := c.Read(ctx, o.Handle, 0, -1, func([][]byte) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx, o.Handle); err != nil {
		t.Fatal(err)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if len(seen.keys) > 0 {
		slices.Sort(seen.keys)
		t.Fatalf("calls carried metadata %q", slices.Compact(seen.keys))
	}
}
