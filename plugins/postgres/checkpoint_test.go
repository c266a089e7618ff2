package postgres_test

import (
	"testing"

	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// TestCheckpointIsBoundToTheRowsItCovers: a checkpoint reads back while
// the rows it covers are unchanged (also after later appends, and from a
// read handle of another instance), and not once one of them changed; one
// past the stored log is INVALID_BOUNDARY.
func TestCheckpointIsBoundToTheRowsItCovers(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			w := where{dsn, pgtest.Schema(t, dsn)}
			p := m.connect(t, w)
			c, _ := persistencetest.Capability[sdk.Checkpointer](p)
			o, err := p.Create(t.Context(), sdk.Header{ID: "s1", CreatedAt: 1})
			if err != nil {
				t.Fatal(err)
			}
			appendEvents(t, p, o.Handle, 0, 4)
			err = c.WriteCheckpoint(t.Context(), o.Handle, 5, []byte("state"))
			persistencetest.RequireCode(t, err, sdk.CodeInvalidBoundary, 5, 4)
			if err := c.WriteCheckpoint(t.Context(), o.Handle, 3, []byte("state@3")); err != nil {
				t.Fatal(err)
			}
			appendEvents(t, p, o.Handle, 4, 2)
			q := m.connect(t, w)
			qc, _ := persistencetest.Capability[sdk.Checkpointer](q)
			r, err := q.Open(t.Context(), "s1", sdk.AccessRead)
			if err != nil {
				t.Fatal(err)
			}
			n, data, found, err := qc.ReadCheckpoint(t.Context(), r.Handle)
			if err != nil || !found || n != 3 || string(data) != "state@3" {
				t.Fatalf("ReadCheckpoint = %d, %q, %v, %v; want 3, state@3", n, data, found, err)
			}
			pgtest.Exec(t, dsn, "UPDATE "+w.schema+".events SET envelope = $1 WHERE session_id = 's1' AND seq = 1", persistencetest.Envelope(1, "todo/write", `{"todos":[]}`))
			if _, _, found, err := c.ReadCheckpoint(t.Context(), o.Handle); err != nil || found {
				t.Fatalf("ReadCheckpoint after a covered row changed: found %v, %v; want not found", found, err)
			}
		})
	}
}
