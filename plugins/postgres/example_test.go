package postgres_test

import (
	"context"
	"fmt"
	"os"

	"github.com/seed-e5e476df/logbook/plugins/postgres"
	"github.com/seed-e5e476df/logbook/sdk"
)

// ExampleOpen opens the backend in process, creates a session (the write
// claim is taken before Create returns) and appends its first batch, which
// stores it. Another host's Open(write) of it would now be ALREADY_OWNED,
// naming "web-1".
func ExampleOpen() {
	ctx := context.Background()
	cfg := postgres.DefaultConfig(os.Getenv("LOGBOOK_PG_DSN"))
	cfg.HostName = "web-1"
	b, err := postgres.Open(ctx, cfg)
	if err != nil {
		fmt.Println(sdk.CodeOf(err), err)
		return
	}
	defer b.Shutdown()
	o, err := b.Create(ctx, sdk.Header{ID: "example", CreatedAt: 1_700_000_000_000})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close(ctx, o.Handle)
	d, err := b.Append(ctx, o.Handle, 0, [][]byte{[]byte(`{"seq":0,"time":1700000000000,"type":"turn/start","data":{"turn":1}}`)})
	fmt.Println(d.NextSeq, err)
}
