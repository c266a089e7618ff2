package handles

import (
	"errors"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// CheckCreate checks the header of a Create as every backend must before it
// claims anything, in this order: the session id (INVALID_SESSION_ID), a
// format version of 0 (the current one) or sdk.FormatVersion
// (FORMAT_UNSUPPORTED), a protocol of "", "strict" or "lenient"
// (HEADER_INVALID naming the allowed values; "strict" becomes "", the
// default, stored as no member), labels that follow sdk.ValidateLabels
// (HEADER_INVALID naming the rule),
// and that the canonical encoding reads back (HEADER_INVALID wrapping the
// decoder's error, which names where). It returns the header with
// FormatVersion set and its canonical encoding (sdk/headerjson), the bytes
// to store.
func CheckCreate(op string, h sdk.Header, where string) (sdk.Header, []byte, error) {
	if err := sdk.ValidateSessionID(h.ID); err != nil {
		return sdk.Header{}, nil, err
	}
	if h.FormatVersion != 0 && h.FormatVersion != sdk.FormatVersion {
		return sdk.Header{}, nil, sdk.Errorf(sdk.CodeFormatUnsupported, op, "this backend writes logbook format v%d; the header asks for v%d", sdk.FormatVersion, h.FormatVersion).WithSession(h.ID)
	}
	h.FormatVersion = sdk.FormatVersion
	p, err := sdk.ParseProtocol(h.Protocol)
	var usage *sdk.Error
	if errors.As(err, &usage) {
		// The store refuses a bad protocol with USAGE before a backend
		// sees it; a backend given one holds a bad header, and says so
		// with the rule ParseProtocol names.
		return sdk.Header{}, nil, sdk.Errorf(sdk.CodeHeaderInvalid, op, "the session header's %s", usage.Detail).WithSession(h.ID)
	}
	h.Protocol = p
	if err := sdk.ValidateLabels(op, h.Labels); err != nil {
		return sdk.Header{}, nil, sdk.Errorf(sdk.CodeHeaderInvalid, op, "the session header's %s", err.(*sdk.Error).Detail).WithSession(h.ID)
	}
	hdr := headerjson.Encode(h)
	if _, err := headerjson.Decode(hdr, h.ID, where); err != nil {
		return sdk.Header{}, nil, sdk.Wrapf(sdk.CodeHeaderInvalid, op, err, "the session header would not read back").WithSession(h.ID)
	}
	return h, hdr, nil
}

// CheckOpen checks the arguments of an Open: access read or write (USAGE),
// then the session id (INVALID_SESSION_ID).
func CheckOpen(op, id string, access sdk.Access) error {
	if access != sdk.AccessRead && access != sdk.AccessWrite {
		return sdk.Errorf(sdk.CodeUsage, op, "access must be read (1) or write (2); got %d", access).WithSession(id)
	}
	return sdk.ValidateSessionID(id)
}

// CheckAppend checks the firstSeq of an Append to session id (INVALID_SEQ
// outside 0 … 2^53−1).
func CheckAppend(id string, firstSeq sdk.Seq) error {
	_, err := sdk.NewSeq("firstSeq", int64(firstSeq))
	return inSession(err, id)
}

// CheckRead checks the window of a Read of session id: offset in
// 0 … 2^53−1 and length too, or -1 for "to the end" (INVALID_SEQ).
func CheckRead(id string, offset sdk.Offset, length int64) error {
	if _, err := sdk.NewOffset("offset", int64(offset)); err != nil {
		return inSession(err, id)
	}
	if length == -1 {
		return nil
	}
	_, err := sdk.NewOffset("length", length)
	return inSession(err, id)
}

// ReadEnd is where a Read of [offset, offset+length) stops in a log of end
// events: offset+length, or end when the window reaches past it or length
// is -1. A Read reads nothing when offset ≥ ReadEnd.
func ReadEnd(offset sdk.Offset, length, end int64) int64 {
	if length != -1 && int64(offset) < end && length < end-int64(offset) {
		return int64(offset) + length
	}
	return end
}

// inSession returns a copy of err naming session id when it is an
// *sdk.Error, else err.
func inSession(err error, id string) error {
	var e *sdk.Error
	if !errors.As(err, &e) {
		return err
	}
	return e.WithSession(id)
}
