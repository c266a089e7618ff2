package provider

import (
	"slices"
	"strconv"
	"strings"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// Omission is a part of the derived messages that the provider formats
// leave out, because no provider accepts it where it stands: a tool result
// that answers no call of the assistant message right before its run of
// tool messages, a second result for one call, or a call whose result does
// not follow before the next other message (a lenient or old log, or a
// replace that shadowed one side of the pair). docs/providers.md lists
// the rules. logbook's own format keeps everything.
type Omission struct {
	// Index is the position, in the input, of the message the omitted
	// part belongs to: the tool message, or the assistant message whose
	// call is left out.
	Index int
	// CallID is the call of the omitted result or call.
	CallID string
	// Rule names what was broken: TOOL_RESULT_UNMATCHED (a result without
	// its call right before it), TOOL_RESULT_REPEATED (a second result for
	// a call) or TOOL_CALLS_UNANSWERED (a call without a result; the
	// tool-call block is left out of its assistant message).
	Rule sdk.Code
}

// String says what was left out, for a warning: `message 3: tool result
// for call "c1" left out (TOOL_RESULT_UNMATCHED)`.
func (o Omission) String() string { return o.Describe("message " + strconv.Itoa(o.Index)) }

// Describe is String with the message named by place instead of by its
// index (a door names it by the seq of its event).
func (o Omission) Describe(place string) string {
	what := "tool result"
	if o.Rule == sdk.CodeToolCallsUnanswered {
		what = "tool call"
	}
	return place + ": " + what + " for call " + strconv.Quote(o.CallID) + " left out (" + string(o.Rule) + ")"
}

// Omissions returns what the provider formats (openai, anthropic,
// openai-responses) leave out of msgs, in message order; nil when the
// messages pair up. Its errors are the renderers': PAYLOAD_INVALID for a
// message that is not a derived message, TOOL_CALLS_PENDING when calls at
// the end have no result yet, TOOL_CALL_REPEATED when one message announces a
// call id twice.
func Omissions(msgs [][]byte) ([]Omission, error) {
	ms, err := parseMessages(msgs)
	if err != nil {
		return nil, err
	}
	_, omitted, err := pair(ms)
	return omitted, err
}

// AtSeqs returns err with Seq set to seqs[i] when err is an *sdk.Error
// whose Index i names a message and seqs holds the seq of each message's
// node (session.MessageView.NodeSeq), so the error names the event; any
// other err is returned as it is.
func AtSeqs(err error, seqs []sdk.Seq) error {
	e, ok := err.(*sdk.Error)
	if !ok || e.Index == nil || e.Seq != nil || *e.Index < 0 || *e.Index >= len(seqs) {
		return err
	}
	return e.WithSeq(int64(seqs[*e.Index]))
}

// pair orders ms as every provider needs them: each assistant message's
// tool calls answered by the tool messages right after it, in call order.
// Results that answer no call right before them, second results, and calls
// without a result before the next other message are left out and listed.
// Calls without a result at the end (a step still open) are
// TOOL_CALLS_PENDING; a call id announced twice by one message is
// TOOL_CALL_REPEATED (a result could not say which call it answers). Both
// errors carry the index of the announcing message and Meta "callIds",
// a JSON array of the ids. A call id an earlier message announced already (a
// harness that reuses ids across steps) is sent renamed, with its result,
// as renamed says: Anthropic refuses a tool_use id used twice in one
// request.
func pair(ms []message) ([]message, []Omission, error) {
	out := make([]message, 0, len(ms))
	var omitted []Omission
	announced := map[string]bool{}
	for i := 0; i < len(ms); {
		m := ms[i]
		switch m.role {
		case "tool":
			omitted = append(omitted, Omission{Index: i, CallID: m.toolCallID, Rule: sdk.CodeToolResultUnmatched})
			i++
			continue
		case "assistant":
		default:
			out = append(out, m)
			i++
			continue
		}
		calls := m.callIDs()
		if dup := firstRepeat(calls); dup != "" {
			return nil, nil, callsError(sdk.CodeToolCallRepeated, i, []string{dup},
				"message %d announces call %s twice; a provider needs each call id once, and a result could not say which it answers", i, dup)
		}
		results := map[string]message{}
		j := i + 1
		for ; j < len(ms) && ms[j].role == "tool"; j++ {
			r := ms[j]
			switch _, done := results[r.toolCallID]; {
			case !slices.Contains(calls, r.toolCallID):
				omitted = append(omitted, Omission{Index: j, CallID: r.toolCallID, Rule: sdk.CodeToolResultUnmatched})
			case done:
				omitted = append(omitted, Omission{Index: j, CallID: r.toolCallID, Rule: sdk.CodeToolResultRepeated})
			default:
				results[r.toolCallID] = r
			}
		}
		var missing []string
		for _, id := range calls {
			if _, ok := results[id]; !ok {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			if j == len(ms) {
				return nil, nil, callsError(sdk.CodeToolCallsPending, i, missing,
					"calls %s of message %d have no result yet (a step is open); a provider needs every call answered: render the logbook format, or wait for the results",
					strings.Join(missing, ", "), i)
			}
			m = m.without(missing)
			for _, id := range missing {
				omitted = append(omitted, Omission{Index: i, CallID: id, Rule: sdk.CodeToolCallsUnanswered})
			}
		}
		m = m.renamed(announced)
		out = append(out, m)
		for _, b := range m.blocks {
			if r, ok := results[b.str("id")]; ok && b.typ == "tool-call" {
				r.toolCallID = b.callID
				out = append(out, r)
			}
		}
		i = j
	}
	return out, omitted, nil
}

// callsError is an error of code naming calls in Meta "callIds", with the
// index of the message that announced them.
func callsError(code sdk.Code, index int, calls []string, format string, args ...any) *sdk.Error {
	return sdk.Errorf(code, op, format, args...).WithIndex(index).WithMeta("callIds", string(jsonv.AppendStringArray(nil, calls)))
}

// callIDs returns the ids of m's tool-call blocks, in order.
func (m message) callIDs() []string {
	var ids []string
	for _, b := range m.blocks {
		if b.typ == "tool-call" {
			ids = append(ids, b.str("id"))
		}
	}
	return ids
}

// without returns m without the tool-call blocks of the calls ids.
func (m message) without(ids []string) message {
	m.blocks = slices.DeleteFunc(slices.Clone(m.blocks), func(b block) bool {
		return b.typ == "tool-call" && slices.Contains(ids, b.str("id"))
	})
	return m
}

// firstRepeat returns the first id that ids holds twice, or "".
func firstRepeat(ids []string) string {
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			return id
		}
	}
	return ""
}

// renamed returns m with each tool-call block's callID made unique among
// the ids announced records (the ids of earlier messages, to which m's are
// added): an id seen before is sent as id + "_" + n, with n = 2, 3, … the
// first that neither an earlier message nor m itself uses
// (docs/providers.md, Repeated call ids).
func (m message) renamed(announced map[string]bool) message {
	own := m.callIDs()
	taken := func(id string) bool { return announced[id] || slices.Contains(own, id) }
	cloned := false
	for k, b := range m.blocks {
		if b.typ != "tool-call" {
			continue
		}
		id := b.callID
		if announced[id] {
			for n := 2; ; n++ {
				if !taken(id + "_" + strconv.Itoa(n)) {
					id += "_" + strconv.Itoa(n)
					break
				}
			}
			if !cloned {
				m.blocks, cloned = slices.Clone(m.blocks), true
			}
			m.blocks[k].callID = id
		}
		announced[id] = true
	}
	return m
}
