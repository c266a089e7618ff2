package memory_test

import (
	"bytes"
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
)

// readDamaged collects what ReadDamaged of s1 passes to fn.
func readDamaged(t *testing.T, b *memory.Backend) (sdk.Damaged, [][]byte) {
	t.Helper()
	var got [][]byte
	d, err := b.ReadDamaged(t.Context(), "s1", func(c [][]byte) error {
		got = append(got, c...)
		return nil
	})
	if err != nil {
		t.Fatalf("ReadDamaged: %v", err)
	}
	return d, got
}

func TestReadDamagedOfAnIntactLogReturnsItAll(t *testing.T) {
	b, _ := stored(t, 4)
	d, got := readDamaged(t, b)
	if d.Corrupt || d.ValidEvents != 4 || d.Header.ID != "s1" || d.Damage.Offset != 0 || d.Damage.Tail != nil {
		t.Fatalf("ReadDamaged = %+v; want 4 valid events, not corrupt", d)
	}
	if !equalEvents(got, persistencetest.Batch(0, 4)) {
		t.Fatalf("events = %q", got)
	}
}

func TestDamageMakesOpenCorruptAndReadDamagedReturnsThePrefixAndTheDamage(t *testing.T) {
	b, _ := stored(t, 5)
	rev := revision(t, b)
	if err := memory.HooksOf(b).Damage("s1", 2, "checksum mismatch"); err != nil {
		t.Fatal(err)
	}
	for _, access := range []sdk.Access{sdk.AccessRead, sdk.AccessWrite} {
		_, err := b.Peer().Open(t.Context(), "s1", access)
		persistencetest.RequireCode(t, err, sdk.CodeCorruptLog, "event 2", "checksum mismatch")
	}
	d, got := readDamaged(t, b)
	all := persistencetest.Batch(0, 5)
	if !equalEvents(got, all[:2]) {
		t.Fatalf("valid prefix = %q; want events 0 and 1", got)
	}
	var image []byte // the JSONL image: header line, then event lines
	st, _ := b.Stat(t.Context(), "s1")
	header := st.SizeBytes
	for _, ev := range all {
		header -= int64(len(ev))
		image = append(append(image, ev...), '\n')
	}
	offset := header + 1 + int64(len(all[0])+1+len(all[1])+1)
	tail := image[offset-header-1:]
	want := sdk.Damage{Offset: offset, Bytes: int64(len(tail)), IntactEventsExcluded: 2, Reason: "checksum mismatch", Tail: tail}
	if !d.Corrupt || d.ValidEvents != 2 || d.Damage.Offset != want.Offset || d.Damage.Bytes != want.Bytes ||
		d.Damage.IntactEventsExcluded != 2 || d.Damage.Reason != want.Reason || !bytes.Equal(d.Damage.Tail, tail) {
		t.Fatalf("ReadDamaged = %+v; want %+v", d, want)
	}
	requireStored(t, b, 5, rev) // damage changes nothing stored
}

func TestDamageAndReadDamagedRefuseWhatIsNotThere(t *testing.T) {
	b, _ := stored(t, 2)
	persistencetest.RequireCode(t, memory.HooksOf(b).Damage("s1", 2, "x"), sdk.CodeInvalidSeq, 2)
	persistencetest.RequireCode(t, memory.HooksOf(b).Damage("s1", -1, "x"), sdk.CodeInvalidSeq, -1)
	persistencetest.RequireCode(t, memory.HooksOf(b).Damage("absent", 0, "x"), sdk.CodeSessionNotFound, "absent")
	_, err := b.ReadDamaged(t.Context(), "absent", func([][]byte) error { return nil })
	persistencetest.RequireCode(t, err, sdk.CodeSessionNotFound, "absent")
	_, err = b.ReadDamaged(t.Context(), "", func([][]byte) error { return nil })
	persistencetest.RequireCode(t, err, sdk.CodeInvalidSessionID)
}

func equalEvents(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}
