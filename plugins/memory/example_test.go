package memory_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// An import stores a whole session in one step: one whose source fails
// midway leaves nothing under the id, and the next try stores it all.
func ExampleBackend_Import() {
	ctx := context.Background()
	b := memory.New()
	h := sdk.Header{FormatVersion: sdk.FormatVersion, ID: "restored", CreatedAt: 1_764_000_000_000}
	batches := [][][]byte{persistencetest.Batch(0, 3), persistencetest.Batch(3, 2)}
	source := func(failAt int) func(yield func([][]byte) error) error {
		return func(yield func([][]byte) error) error {
			for i, batch := range batches {
				if i == failAt {
					return errors.New("the export could not be read further")
				}
				if err := yield(batch); err != nil {
					return err
				}
			}
			return nil
		}
	}

	_, err := b.Import(ctx, h, source(1))
	fmt.Println("failed midway:", err)
	_, err = b.Stat(ctx, "restored")
	fmt.Println("stored:", sdk.CodeOf(err))

	o, err := b.Import(ctx, h, source(-1))
	if err != nil {
		panic(err)
	}
	fmt.Println("retried: events", o.NextSeq)
	_ = b.Close(ctx, o.Handle)
	// Output:
	// failed midway: the export could not be read further
	// stored: SESSION_NOT_FOUND
	// retried: events 5
}
