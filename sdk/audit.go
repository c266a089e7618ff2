package sdk

import (
	"encoding/json"
	"fmt"
	"time"
)

// auditJSON is the JSON form of an AuditRecord.
type auditJSON struct {
	Time    string  `json:"time"`
	Op      AuditOp `json:"op"`
	Session string  `json:"session"`
	Events  int64   `json:"events"`
	LastSeq *int64  `json:"lastSeq,omitempty"`
	Digest  string  `json:"digest"`
	Reason  string  `json:"reason"`
	By      string  `json:"by"`
}

// MarshalJSON writes r as one JSON object: {"time" (RFC 3339 with
// nanoseconds, UTC), "op", "session", "events", "lastSeq" (left out when the
// log holds no events), "digest", "reason", "by"}. It is the line of a
// JSONL audit log and the --json form of logbook audit.
func (r AuditRecord) MarshalJSON() ([]byte, error) {
	j := auditJSON{Time: r.Time.UTC().Format(time.RFC3339Nano), Op: r.Op, Session: r.Session, Events: int64(r.Events),
		Digest: r.Digest, Reason: r.Reason, By: r.By}
	if r.Events > 0 {
		last := int64(r.Events) - 1
		j.LastSeq = &last
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes; a record without a valid
// time, a known op or a session is an error.
func (r *AuditRecord) UnmarshalJSON(data []byte) error {
	var j auditJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	t, err := time.Parse(time.RFC3339Nano, j.Time)
	if err != nil {
		return fmt.Errorf("audit record: time: %w", err)
	}
	switch j.Op {
	case AuditDelete, AuditHold, AuditReleaseHold:
	default:
		return fmt.Errorf("audit record: unknown op %q", j.Op)
	}
	if j.Session == "" || j.Events < 0 {
		return fmt.Errorf("audit record: session %q, events %d", j.Session, j.Events)
	}
	*r = AuditRecord{Time: t.UTC(), Op: j.Op, Session: j.Session, Events: Offset(j.Events), Digest: j.Digest, Reason: j.Reason, By: j.By}
	return nil
}
