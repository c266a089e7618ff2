package handles

import (
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// The shared parts of the delete capability (sdk.Deleter): the checks every
// backend runs first, the SESSION_HELD error, the record's time and the
// digest of a log stored as rows.

// CheckLifecycle validates the session id and the audit request of a
// Delete or SetHold: INVALID_SESSION_ID or USAGE.
func CheckLifecycle(id string, r sdk.AuditRequest) error {
	if err := sdk.ValidateSessionID(id); err != nil {
		return inSession(err, id)
	}
	return sdk.CheckAuditRequest(r)
}

// Held is SESSION_HELD for a Delete of id, which is under a legal hold.
func Held(op, id string) *sdk.Error {
	return sdk.Errorf(sdk.CodeSessionHeld, op, "session %s is under a legal hold and cannot be deleted; release the hold first (logbook release-hold %s)", strconv.Quote(id), id).WithSession(id)
}

// DeleteOwned is ALREADY_OWNED for a Delete of id; why names the holder
// of the write claim.
func DeleteOwned(op, id, why string) *sdk.Error {
	return sdk.Errorf(sdk.CodeAlreadyOwned, op, "session %s cannot be deleted while it is open for writing: %s; release it first", strconv.Quote(id), why).WithSession(id)
}

// AuditTime is the time of a record written now: UTC, to the microsecond,
// the precision every backend stores.
func AuditTime() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Record returns the audit record of op on id with events stored events
// and the given digest, timed now.
func Record(op sdk.AuditOp, id string, events sdk.Offset, digest string, r sdk.AuditRequest) sdk.AuditRecord {
	return sdk.AuditRecord{Time: AuditTime(), Op: op, Session: id, Events: events, Digest: digest, Reason: r.Reason, By: r.By}
}

// Digest is the SHA-256 digest of a log, fed line by line: for a backend
// that stores rows, the canonical header JSON and then every envelope in
// seq order, each followed by a newline, which is the plain JSONL log of
// the session byte for byte. The zero value is not usable; call NewDigest.
type Digest struct{ h hash.Hash }

// NewDigest returns a digest of nothing yet.
func NewDigest() Digest { return Digest{h: sha256.New()} }

// Line adds b and a newline.
func (d Digest) Line(b []byte) {
	d.h.Write(b)
	d.h.Write([]byte{'\n'})
}

// Bytes adds b as it is.
func (d Digest) Bytes(b []byte) { d.h.Write(b) }

// String is "sha256:" and the hex digest of everything added.
func (d Digest) String() string { return "sha256:" + hex.EncodeToString(d.h.Sum(nil)) }
