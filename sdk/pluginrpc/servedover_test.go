package pluginrpc

import (
	"context"
	"net"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
)

// serveOver serves backend over an in-memory connection with the plugin
// connection options, plus opts, and returns a client of it.
func serveOver(t *testing.T, backend sdk.Persistence, opts ...grpc.ServerOption) *persistenceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(append(opts, grpc.ForceServerCodecV2(newBatchCodec()))...)
	logbookv1.RegisterPersistenceServer(srv, &persistenceServer{impl: backend, chunkBytes: readChunkBytes})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	dial := func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }
	conn, err := grpc.NewClient("passthrough:///plugin", append(GRPCDialOptions(0),
		grpc.WithContextDialer(dial), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return newPersistenceClient(nil, logbookv1.NewPersistenceClient(conn), rpcLimit(0))
}

// plainLog is a backend with no optional capability; no test calls it.
type plainLog struct{ sdk.Persistence }
