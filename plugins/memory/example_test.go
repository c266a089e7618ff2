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

// The same id in two tenants is two sessions: each view sees only its own,
// and a view refuses a header of another tenant.
func ExampleBackend_Tenant() {
	ctx := context.Background()
	b := memory.New()
	acme, _ := b.Tenant("acme")
	for _, p := range []sdk.Persistence{b, acme} {
		h := sdk.Header{FormatVersion: sdk.FormatVersion, ID: "s", CreatedAt: 1_764_000_000_000}
		if p == acme {
			h.Tenant = "acme"
		}
		o, _ := p.Create(ctx, h)
		_, _ = p.Flush(ctx, o.Handle)
	}
	st, _ := acme.Stat(ctx, "s")
	fmt.Printf("tenant %q holds session %q\n", st.Header.Tenant, st.Header.ID)
	_, err := acme.Create(ctx, sdk.Header{FormatVersion: sdk.FormatVersion, ID: "t", CreatedAt: 1})
	fmt.Println(sdk.CodeOf(err))
	_ = b.Tenants(ctx, func(name string) error { fmt.Println("tenant", name); return nil })
	// Output:
	// tenant "acme" holds session "s"
	// USAGE
	// tenant acme
}
