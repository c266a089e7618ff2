package chaos

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/seed-e5e476df/logbook/events"
)

// record is what the clients of one session know about it: every payload
// id they sent, and the seq each acknowledged one was acknowledged at;
// every operation id they sent with its number of events, and the first
// seq each acknowledged one was acknowledged at.
type record struct {
	id      string
	mu      sync.Mutex
	sent    map[string]bool
	acked   map[string]int64
	opSent  map[string]int
	opAcked map[string]int64
	next    int64 // one past the highest acknowledged seq

	// retired: no client appends to the session any more; settled: the
	// verifier read it after that, so only the final check reads it again.
	retired, settled bool
}

// retire notes that no client appends to the session any more.
func (r *record) retire() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retired = true
}

// settle notes a verification: a session retired before it is settled,
// and later verifications but the final one leave it out.
func (r *record) settle() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.settled = r.retired
}

// isSettled reports whether a verification read the retired session.
func (r *record) isSettled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.settled
}

func newRecord(id string) *record {
	return &record{id: id, sent: map[string]bool{}, acked: map[string]int64{}, opSent: map[string]int{}, opAcked: map[string]int64{}}
}

// send notes payload ids as sent.
func (r *record) send(events []event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range events {
		r.sent[e.pid] = true
	}
}

// sendOp notes operation op, of count events, as sent.
func (r *record) sendOp(op string, count int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.opSent[op] = count
}

// ackOp notes operation op acknowledged with its first event at seq.
// Acknowledging it again at another seq is an error: a retry of the
// operation stored it twice.
func (r *record) ackOp(op string, seq int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.opAcked[op]; ok && prev != seq {
		return fmt.Errorf("session %s: operation %s acknowledged at seq %d and again at seq %d", r.id, op, prev, seq)
	}
	r.opAcked[op] = seq
	return nil
}

// ops returns copies of the sent and acknowledged operations.
func (r *record) ops() (sent map[string]int, acked map[string]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.opSent), maps.Clone(r.opAcked)
}

// ack notes payload id pid acknowledged at seq. Acknowledging it again at
// another seq is an error: the server confirmed two places for one event.
func (r *record) ack(pid string, seq int64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.acked[pid]; ok && prev != seq {
		return fmt.Errorf("session %s: event %s acknowledged at seq %d and again at seq %d", r.id, pid, prev, seq)
	}
	r.acked[pid] = seq
	r.next = max(r.next, seq+1)
	return nil
}

// snapshot returns copies of the sent and acknowledged sets.
func (r *record) snapshot() (sent map[string]bool, acked map[string]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sent = make(map[string]bool, len(r.sent))
	for k := range r.sent {
		sent[k] = true
	}
	acked = make(map[string]int64, len(r.acked))
	for k, v := range r.acked {
		acked[k] = v
	}
	return sent, acked
}

// end is one past the highest acknowledged seq: a batch not yet
// acknowledged is stored, if at all, from there on.
func (r *record) end() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}

// ackedCount is the number of acknowledged events.
func (r *record) ackedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.acked)
}

// event is one user/message the suite appends; pid, its message id, is
// unique in the whole run.
type event struct {
	pid  string
	text string
}

// input is the event as the client sends it.
func (e event) input() events.Input {
	data, _ := json.Marshal(map[string]any{
		"id": e.pid, "role": "user", "source": map[string]string{"kind": "user"},
		"content": []map[string]string{{"type": "text", "text": e.text}},
	})
	return events.Input{Type: "user/message", Data: data, SurfaceOp: events.Append()}
}

// inTurn is evs as a whole turn numbered turn, as a harness writes them
// under the agent-loop protocol: turn/start, the user messages, turn/end.
func inTurn(turn int, evs []event) []events.Input {
	out := make([]events.Input, 0, len(evs)+2)
	out = append(out, events.TurnStart(turn))
	for _, e := range evs {
		out = append(out, e.input())
	}
	return append(out, events.TurnEnd(turn, events.Completed()))
}

// turnLines is inTurn as `logbook append` input lines.
func turnLines(turn int, evs []event) string {
	var b strings.Builder
	for _, in := range inTurn(turn, evs) {
		b.WriteString(`{"type":"` + in.Type + `","data":` + string(in.Data))
		if in.SurfaceOp != nil {
			b.WriteString(`,"surfaceOp":"append"`)
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// stored is one envelope as the suite reads it: its seq, its type; for a
// user/message from the user (as the suite's are), the payload id; for
// the first event of an operation, the operation's id and its number of
// events.
type stored struct {
	seq     int64
	typ     string
	pid     string
	op      string
	opCount int
}

// parseEnvelope reads the parts of an envelope the suite checks.
func parseEnvelope(env []byte) (stored, error) {
	var v struct {
		Seq  *int64 `json:"seq"`
		Type string `json:"type"`
		Data struct {
			ID     string `json:"id"`
			Source struct {
				Kind string `json:"kind"`
			} `json:"source"`
		} `json:"data"`
		Operation *struct {
			ID    string `json:"id"`
			Count int    `json:"count"`
		} `json:"operation"`
	}
	if err := json.Unmarshal(env, &v); err != nil || v.Seq == nil {
		return stored{}, fmt.Errorf("not an envelope (%v): %.200s", err, env)
	}
	s := stored{seq: *v.Seq, typ: v.Type}
	if v.Operation != nil {
		s.op, s.opCount = v.Operation.ID, v.Operation.Count
	}
	if v.Type == "user/message" && v.Data.Source.Kind == "user" { // not a compaction's summary
		s.pid = v.Data.ID
	}
	return s, nil
}

// filler is text of about n bytes, compressible as agent text is.
func filler(n int) string {
	const words = "the quick brown fox reads a file and lists the directory again "
	return strings.Repeat(words, n/len(words)+1)[:n]
}
