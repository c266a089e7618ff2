package session

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Call ids are bounded at append (docs/format.md, Call ids): every id a
// caller gives a tool call is at most sdk.MaxCallIDBytes, so the ids the
// runtime derives from one (a closer's message id) stay within their own
// caps. Restore reads a stored log as it is: a log written before the
// bound may hold longer call ids, and closerMessageID shortens them.

// checkCallIDs refuses an appended event carrying a call id longer than
// sdk.MaxCallIDBytes with PAYLOAD_INVALID naming the member, its length
// and the limit. r passed event-local validation, so its shape is known;
// a tool message's source.callId equals its toolCallId there. A tool/result
// that rewrites an earlier one is exempt: it may change only its content
// (S7g), so its call id is the stored one, and a log stored before the
// bound can still have its results pruned.
func checkCallIDs(r *record) *sdk.Error {
	d := r.dataView()
	c := newChecker(r.typ, "data")
	switch r.typ {
	case TypeToolCall:
		c.in("callId")
		return c.callID(d.Get("callId"))
	case TypeToolResult:
		if r.meta.op.Replace {
			return nil
		}
		c.in("message")
		c.in("toolCallId")
		return c.callID(d.Get("message").Get("toolCallId"))
	case TypeAssistantMessage:
		c.in("message")
		c.in("content")
		for i, b := range d.Get("message").Get("content").Elements() {
			if !b.Get("type").StrEqual("tool-call") {
				continue
			}
			c.at(i)
			c.in("id")
			if err := c.callID(b.Get("id")); err != nil {
				return err
			}
			c.out()
			c.out()
		}
	}
	return nil
}

// callID checks one call id at the current path against
// sdk.MaxCallIDBytes. The canonical body is never shorter than the decoded
// string, so only long ids are decoded.
func (c *payloadChecker) callID(v jsonv.Value) *sdk.Error {
	if start, end := v.Span(); end-start-2 <= sdk.MaxCallIDBytes {
		return nil
	}
	s, _ := v.Str()
	if len(s) <= sdk.MaxCallIDBytes {
		return nil
	}
	return c.bad(sdk.CodePayloadInvalid, v, strconv.Itoa(len(s))+" bytes; a call id is at most "+strconv.Itoa(sdk.MaxCallIDBytes)+" bytes (sdk.MaxCallIDBytes)")
}

// closerMessageID is the message id of the closer that answers callID at
// seq: "<cause>-tool-result-<callID>-<seq>", or, for a call id longer than
// sdk.MaxCallIDBytes (stored before the bound), "<cause>-tool-result-h"
// plus the first 16 hex digits of SHA-256(callID), "-" and seq. Either
// form fits the 256-byte cap of a message id.
func closerMessageID(cause Cause, callID string, seq sdk.Seq) string {
	id := callID
	if len(callID) > sdk.MaxCallIDBytes {
		sum := sha256.Sum256([]byte(callID))
		id = "h" + hex.EncodeToString(sum[:8])
	}
	return string(cause) + "-tool-result-" + id + "-" + strconv.FormatInt(int64(seq), 10)
}
