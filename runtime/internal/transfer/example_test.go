package transfer_test

import (
	"context"
	"fmt"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/runtime/internal/rpcsize"
	"github.com/seed-e5e476df/logbook/runtime/internal/transfer"
	"github.com/seed-e5e476df/logbook/sdk"
)

// Migrate copies every session to another backend; Verify then finds the
// two equal.
func ExampleMigrate() {
	ctx := context.Background()
	primary, mirror := memory.New(), memory.New()
	o, _ := primary.Create(ctx, sdk.Header{ID: "s", CreatedAt: 1_700_000_000_000})
	primary.Append(ctx, o.Handle, 0, [][]byte{
		[]byte(`{"seq":0,"time":1700000000000,"type":"turn/start","data":{"turn":1}}`),
		[]byte(`{"seq":1,"time":1700000000001,"type":"turn/end","data":{"turn":1,"reason":{"kind":"completed"}}}`),
	})
	primary.Flush(ctx, o.Handle)
	primary.Close(ctx, o.Handle)

	res, err := transfer.Migrate(ctx, primary, mirror, transfer.MigrateOptions{BatchBytes: rpcsize.MaxCopyBatchBytes(sdk.DefaultRPCMaxBytes)})
	fmt.Printf("%+v %v\n", res, err)
	for _, c := range transfer.Verify(ctx, primary, []transfer.Mirror{{Name: "mirror", Persistence: mirror}}, []string{"s"}, nil) {
		fmt.Println(c.Session, c.Mirror, c.Status, c.Events)
	}
	// Output:
	// {Sessions:1 Copied:1 Complete:0 Failed:0 Events:2} <nil>
	// s mirror ok 2
}
