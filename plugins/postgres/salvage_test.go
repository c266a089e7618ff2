package postgres_test

import (
	"bytes"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// TestReadDamagedReturnsTheValidPrefixAndTheDamage: a committed bad row
// (later rows intact) is CORRUPT_LOG for Open, while ReadDamaged returns
// the rows before it and locates it, changing nothing; an intact session
// comes back whole with Corrupt false.
func TestReadDamagedReturnsTheValidPrefixAndTheDamage(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			w := where{dsn, pgtest.Schema(t, dsn)}
			p := m.connect(t, w)
			sr, _ := persistencetest.Capability[sdk.SalvageReader](p)
			o, err := p.Create(t.Context(), sdk.Header{ID: "s1", CreatedAt: 1})
			if err != nil {
				t.Fatal(err)
			}
			events := persistencetest.Batch(0, 8)
			for i := range events {
				appendEvents(t, p, o.Handle, i, 1)
			}
			p.Close(t.Context(), o.Handle)
			pgtest.Exec(t, dsn, "UPDATE "+w.schema+`.events SET envelope = '{"seq":', zstd = false WHERE session_id = 's1' AND seq = 5`)
			_, err = p.Open(t.Context(), "s1", sdk.AccessRead)
			persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, "seq 5")
			var got [][]byte
			d, err := sr.ReadDamaged(t.Context(), "s1", func(evs [][]byte) error { got = append(got, evs...); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if !d.Corrupt || d.ValidEvents != 5 || d.Damage.Offset != 5 || d.Damage.Bytes != 3 || d.Damage.IntactEventsExcluded != 2 || !bytes.Contains(d.Damage.Tail, []byte("undecodable")) {
				t.Fatalf("ReadDamaged = %+v", d)
			}
			if len(got) != 5 || !bytes.Equal(got[4], events[4]) {
				t.Fatalf("ReadDamaged passed %d events; want the 5 before the damage", len(got))
			}
			_, err = p.Open(t.Context(), "s1", sdk.AccessWrite)
			persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, "seq 5")
			pgtest.Exec(t, dsn, "UPDATE "+w.schema+".events SET envelope = $1 WHERE session_id = 's1' AND seq = 5", events[5])
			if d, err = sr.ReadDamaged(t.Context(), "s1", func([][]byte) error { return nil }); err != nil || d.Corrupt || d.ValidEvents != 8 {
				t.Fatalf("ReadDamaged of the repaired session = %+v, %v", d, err)
			}
		})
	}
}
