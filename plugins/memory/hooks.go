package memory

import (
	"github.com/seed-e5e476df/logbook/sdk"
)

// Hooks changes what a store holds the way a lost lock, another build or a
// damaged disk would, for tests of the host: what the files of a disk
// backend let a test do by editing them. Its methods are not part of
// sdk.Persistence and no production code calls them. A Hooks is a small
// value; copies reach the same store.
type Hooks struct{ b *Backend }

// HooksOf returns the test hooks of b: those of its store, and for
// DropOwnership those of b's own unmaterialized creates.
func HooksOf(b *Backend) Hooks { return Hooks{b: b} }

// DropOwnership takes the write claim on session id away from its holder,
// as a lost lock would: the holder's next Append or Flush fails with
// OWNERSHIP_LOST (reads and Close still work), and another Open(write) may
// claim the session. It covers claims of every instance of the store on a
// stored session, and this instance's unmaterialized create of id (which
// then can no longer materialize). It reports whether a claim was dropped
// and changes no revision.
func (k Hooks) DropOwnership(id string) bool {
	b := k.b
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	hd, own := b.created(id)
	if _, stored := b.st.sessions[id]; stored {
		hd = b.st.claims.Holder(id)
	} else if !own {
		return false
	}
	if hd == nil {
		return false
	}
	hd.lost = true
	b.st.claims.Release(id, hd)
	return true
}

// SetStoredFormatVersion rewrites the "version" member of the stored header
// of session id to literal, byte for byte (e.g. "2", "0" or "1.5"), as a
// newer or older build would have written it; later Open, Stat and List
// then apply the format gate of docs/format.md to it. It counts as a change (the
// revision changes). It returns SESSION_NOT_FOUND when id is not stored.
func (k Hooks) SetStoredFormatVersion(id, literal string) error {
	b := k.b
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	s, err := b.st.stored(id)
	if err != nil {
		return err
	}
	// The header is headerjson's canonical encoding: the version literal
	// follows this prefix and ends at the next comma.
	const prefix = `{"type":"session","version":`
	rest := s.header[len(prefix):]
	end := 0
	for end < len(rest) && rest[end] != ',' {
		end++
	}
	h := make([]byte, 0, len(prefix)+len(literal)+len(rest)-end)
	h = append(append(append(h, prefix...), literal...), rest[end:]...)
	s.size += int64(len(h) - len(s.header))
	s.header = h
	s.gen++
	return nil
}

// Damage marks the stored log of session id as damaged from event seq on,
// as a media fault inside the committed log would: Open, for reading and
// for writing, then fails with CORRUPT_LOG naming seq and reason, and
// ReadDamaged returns the events before seq as the valid prefix. Offsets
// count bytes of the log's JSONL image: the header line, then one line
// per event. The damaged region is the lines from event seq on; the events
// after seq count as intact. seq must name a stored event (else
// INVALID_SEQ); a missing session is SESSION_NOT_FOUND. Nothing stored
// changes, nor the revision.
func (k Hooks) Damage(id string, seq int64, reason string) error {
	b := k.b
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	s, err := b.st.stored(id)
	if err != nil {
		return err
	}
	if seq < 0 || seq >= int64(len(s.events)) {
		return sdk.Errorf(sdk.CodeInvalidSeq, op, "cannot damage event %d: the log holds %d events", seq, len(s.events)).WithSession(id)
	}
	s.damage = &damage{seq: int(seq), reason: reason}
	return nil
}
