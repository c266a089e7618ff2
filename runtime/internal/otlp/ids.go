package otlp

import (
	"crypto/sha256"
	"strconv"
)

// The span kinds an id is derived for (see the package doc).
const (
	kindSession = "session"
	kindTurn    = "turn"
	kindChat    = "chat"
	kindTool    = "tool"
)

// TraceID returns the trace id of a session: the first 16 bytes of
// SHA-256("logbook/otlp trace\x00" + sessionID).
func TraceID(sessionID string) []byte {
	h := sha256.Sum256([]byte("logbook/otlp trace\x00" + sessionID))
	return nonZero(h[:16])
}

// SpanID returns the id of the span of kind keyed on seq (and, for a tool
// call, its call id) in a session: the first 8 bytes of
// SHA-256("logbook/otlp span\x00" + sessionID + "\x00" + kind + "\x00" +
// seq [+ "\x00" + callID]).
func SpanID(sessionID, kind string, seq int64, callID string) []byte {
	s := "logbook/otlp span\x00" + sessionID + "\x00" + kind + "\x00" + strconv.FormatInt(seq, 10)
	if callID != "" {
		s += "\x00" + callID
	}
	h := sha256.Sum256([]byte(s))
	return nonZero(h[:8])
}

// nonZero returns id, with its last bit set if every byte is zero (an
// all-zero id is invalid in OTLP; SHA-256 gives one with probability
// 2^-64, but the rule costs nothing).
func nonZero(id []byte) []byte {
	for _, c := range id {
		if c != 0 {
			return id
		}
	}
	id[len(id)-1] = 1
	return id
}
