package persistencefault_test

import (
	"context"
	"fmt"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencefault"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// A test of the host makes the backend's next append lose its reply: the
// batch is stored, the caller sees a retryable IO_ERROR, and a resend at the
// same seq is a SEQ_CONFLICT that proves the batch landed.
func ExamplePersistence_LoseNextAppendReplies() {
	ctx := context.Background()
	p := persistencefault.Wrap(memory.New())
	o, _ := p.Create(ctx, sdk.Header{ID: "s1", CreatedAt: 1})
	p.LoseNextAppendReplies(1, nil)

	batch := persistencetest.Batch(0, 2)
	_, err := p.Append(ctx, o.Handle, 0, batch)
	fmt.Println(sdk.CodeOf(err), sdk.Retryable(err))
	_, err = p.Append(ctx, o.Handle, 0, batch)
	fmt.Println(sdk.CodeOf(err))
	// Output:
	// IO_ERROR true
	// SEQ_CONFLICT
}
