package handles

import (
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
)

// The errors of the persistence contract that every backend words the same
// way. Each names the session (SessionID) when there is one.

// HandleClosed is HANDLE_CLOSED for the handle name.
func HandleClosed(op, name string) *sdk.Error {
	return sdk.Errorf(sdk.CodeHandleClosed, op, "handle %s is closed or was never opened by this instance", strconv.Quote(name))
}

// ReadOnly is READ_ONLY_HANDLE for an Append (or another write) through the
// read handle name of session id.
func ReadOnly(op, id, name string) *sdk.Error {
	return sdk.Errorf(sdk.CodeReadOnlyHandle, op, "handle %s was opened for reading; open the session for writing to append", strconv.Quote(name)).WithSession(id)
}

// NotFound is SESSION_NOT_FOUND for session id.
func NotFound(op, id string) *sdk.Error {
	return sdk.Errorf(sdk.CodeSessionNotFound, op, "no stored session %s", strconv.Quote(id)).WithSession(id)
}

// AlreadyExists is SESSION_ALREADY_EXISTS for a Create of id; why says
// where the session is ("it is stored").
func AlreadyExists(op, id, why string) *sdk.Error {
	return sdk.Errorf(sdk.CodeSessionAlreadyExists, op, "session %s already exists: %s", strconv.Quote(id), why).WithSession(id)
}

// AlreadyOwned is ALREADY_OWNED for an Open(write) of id; why names the
// holder of the write claim.
func AlreadyOwned(op, id, why string) *sdk.Error {
	return sdk.Errorf(sdk.CodeAlreadyOwned, op, "session %s is already open for writing: %s; close that handle first", strconv.Quote(id), why).WithSession(id)
}

// SeqConflict is the SEQ_CONFLICT of a failed compare-and-set: the batch
// starts at firstSeq, the stored next seq is next. Its Seq is firstSeq.
func SeqConflict(op, id string, firstSeq, next int64) *sdk.Error {
	return sdk.Errorf(sdk.CodeSeqConflict, op, "compare-and-set failed: firstSeq %d but the stored next seq is %d", firstSeq, next).WithSession(id).WithSeq(firstSeq)
}

// IOError is IO_ERROR wrapping err; what says what was being done
// ("fstat /data/…/events.v1.jsonl"). id is "" when no session is involved.
func IOError(op, id, what string, err error) *sdk.Error {
	return sdk.Wrapf(sdk.CodeIOError, op, err, "%s", what).WithSession(id)
}
