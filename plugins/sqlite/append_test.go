package sqlite_test

import (
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/sqlite"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

func TestEmptyBatchIsACompareAndSetProbe(t *testing.T) {
	b := openBackend(t, sqlite.DefaultConfig(dbPath(t)))
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	if d, err := b.Append(t.Context(), o.Handle, 0, nil); err != nil || d != (sdk.Durable{}) {
		t.Fatalf("empty append to a new session = %+v, %v; want nothing stored, no error", d, err)
	}
	_, err = b.Stat(t.Context(), "s1")
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, `"s1"`) // the probe did not materialize it
	_, err = b.Append(t.Context(), o.Handle, 1, nil)
	persistencetest.RequireCode(t, err, sdk.CodeSeqConflict, 1, 0)

	d := appendOK(t, b, o.Handle, persistencetest.Batch(0, 3))
	if got, err := b.Append(t.Context(), o.Handle, 3, nil); err != nil || got != d {
		t.Fatalf("empty append at the next seq = %+v, %v; want %+v (unchanged)", got, err, d)
	}
	_, err = b.Append(t.Context(), o.Handle, 2, nil)
	persistencetest.RequireCode(t, err, sdk.CodeSeqConflict, 2, 3)
}

func TestEnvelopeThatWouldNotReadBackIsENVELOPE_INVALID(t *testing.T) {
	path := dbPath(t)
	b := openBackend(t, sqlite.DefaultConfig(path))
	o, err := b.Create(t.Context(), header("s1"))
	must(t, err)
	appendOK(t, b, o.Handle, persistencetest.Batch(0, 1))
	for what, ev := range map[string]string{
		"whitespace":        `{"seq":2, "time":1,"type":"t","data":{}}`,
		"members reordered": `{"seq":2,"type":"t","time":1,"data":{}}`,
		"unknown member":    `{"seq":2,"time":1,"type":"t","data":{},"note":1}`,
		"ignorable false":   `{"seq":2,"time":1,"type":"t","data":{},"ignorable":false}`,
	} {
		_, err := b.Append(t.Context(), o.Handle, 1, [][]byte{persistencetest.Batch(1, 1)[0], []byte(ev)})
		t.Logf("%s: %v", what, err)
		persistencetest.RequireCode(t, err, sdk.CodeEnvelopeInvalid, "index 1")
	}
	if n := queryInt(t, path, "SELECT count(*) FROM events"); n != 1 {
		t.Fatalf("%d rows after refused batches; want 1", n)
	}
}
