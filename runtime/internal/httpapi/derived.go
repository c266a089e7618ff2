package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/seed-e5e476df/logbook/runtime/internal/compaction"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/provenance"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// The derived views a log viewer reads beside the events: provenance,
// shadowed nodes and token estimates.

// why is GET /v1/sessions/{id}/why?seq=: the provenance tree of event seq
// (runtime/internal/provenance), the JSON `logbook why ID SEQ --json` prints. A
// missing or malformed seq is USAGE, one past the end INVALID_BOUNDARY.
func (a *API) why(w http.ResponseWriter, r *http.Request) {
	s := r.URL.Query().Get("seq")
	seq, err := strconv.ParseInt(s, 10, 64)
	if err != nil || seq < 0 || seq > sdk.MaxSeq {
		problemf(sdk.CodeUsage, "query parameter seq=%q is required: the seq of an event, an integer in 0 … 2^53−1", s).Write(w)
		return
	}
	sess, ok := a.viewAt(w, r, false)
	if !ok {
		return
	}
	b, err := Why(r.Context(), a.h, sess, seq)
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	writeDoc(w, http.StatusOK, b)
}

// Why returns the provenance tree of event seq of sess (runtime/internal/provenance,
// with h's projections) as the JSON `logbook why ID SEQ --json` prints; a
// seq past the log's end is INVALID_BOUNDARY. The Connect Why call answers
// it too.
func Why(ctx context.Context, h *host.Host, sess *session.Session, seq int64) ([]byte, error) {
	root, err := provenance.Tree(ctx, sess.Events().Slice(), h.Engine().Projections, seq)
	if err != nil {
		return nil, err
	}
	// Unescaped, as the CLI prints it and as the log's canonical JSON
	// holds the text its summaries quote: "<" stays "<", not "\u003c".
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// shadowed is GET /v1/sessions/{id}/shadowed?at=: the nodes replacements
// took off the surface, ascending, and for each the replacing event that
// shadowed it, {"shadowed": [seq…], "replacedBy": {"<seq>": seq}}.
func (a *API) shadowed(w http.ResponseWriter, r *http.Request) {
	sess, ok := a.viewAt(w, r, true)
	if !ok {
		return
	}
	seqs, by, err := Shadowed(r.Context(), a.h, sess)
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	b := []byte(`{"shadowed":[`)
	for i, s := range seqs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(s), 10)
	}
	b = append(b, `],"replacedBy":{`...)
	for i, s := range seqs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(strconv.AppendInt(append(b, '"'), int64(s), 10), `":`...)
		b = strconv.AppendInt(b, int64(by[s]), 10)
	}
	writeDoc(w, http.StatusOK, append(b, "}}"...))
}

// Shadowed returns the nodes of sess that replacements took off the
// surface, ascending, and for each the seq of the replacing event that
// shadowed it (folded with h's projections). The Connect Shadowed call
// answers it too.
func Shadowed(ctx context.Context, h *host.Host, sess *session.Session) ([]sdk.Seq, map[sdk.Seq]sdk.Seq, error) {
	fold, err := session.Fold(ctx, sess.Events().Slice(), h.Engine().Projections)
	if err != nil {
		return nil, nil, err
	}
	by := map[sdk.Seq]sdk.Seq{}
	for _, rep := range fold.Replacements {
		for _, s := range rep.Shadowed {
			by[s] = rep.Seq
		}
	}
	seqs := make([]sdk.Seq, 0, len(by))
	for s := range by {
		seqs = append(seqs, s)
	}
	slices.Sort(seqs)
	return seqs, by, nil
}

// tokensMethod says how GET …/tokens estimates.
const tokensMethod = "compaction estimate (docs/compaction.md): each surface node counts the estimate of its derived message " +
	"(per block a quarter of its code points, rounded up, plus 4; plus 4 per message); perTurn and surfaceTokens sum the nodes, " +
	"headerTokens estimates the folded header's tools, and total is what the compaction policies compare with their threshold: " +
	"the provider's reported usage of the last assistant message plus the estimates after it (baseline provider), " +
	"else headerTokens + surfaceTokens (baseline estimated)"

// tokens is GET /v1/sessions/{id}/tokens?at=: the token estimate of the
// session's next request (compaction.Measure), {total, surfaceTokens,
// headerTokens, baseline, perTurn: [{turn, startSeq, tokens}], nodes:
// [{seq, tokens}], method}. perTurn sums the surface nodes by the stretch
// of the log their seq lies in: a turn (turn/start … turn/end, "turn" its
// number, startSeq the seq of its turn/start) or the events between turns
// (no "turn", startSeq the stretch's first seq); stretches without a
// surface node are left out.
func (a *API) tokens(w http.ResponseWriter, r *http.Request) {
	sess, ok := a.viewAt(w, r, true)
	if !ok {
		return
	}
	b, err := Tokens(sess)
	if err != nil {
		NewProblem(err).Write(w)
		return
	}
	writeDoc(w, http.StatusOK, b)
}

// Tokens returns the token estimate of sess's next request as the JSON GET
// /v1/sessions/{id}/tokens answers (see tokens); the Connect Tokens call
// answers it too.
func Tokens(sess *session.Session) ([]byte, error) {
	m, err := compaction.Measure(sess)
	if err != nil {
		return nil, err
	}
	stretches, of := turnStretches(sess.Events())
	sums := make([]int64, len(stretches))
	used := make([]bool, len(stretches))
	for _, n := range m.Nodes {
		i := of[n.Seq]
		sums[i] += n.Tokens
		used[i] = true
	}
	b := []byte(`{"total":`)
	b = strconv.AppendInt(b, m.TotalTokens, 10)
	b = append(b, `,"surfaceTokens":`...)
	b = strconv.AppendInt(b, m.SurfaceTokens, 10)
	b = append(b, `,"headerTokens":`...)
	b = strconv.AppendInt(b, m.HeaderTokens, 10)
	b = append(b, `,"baseline":"`...)
	b = append(b, m.BaselineKind...)
	b = append(b, `","perTurn":[`...)
	first := true
	for i, st := range stretches {
		if !used[i] {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '{')
		if st.turn != nil {
			b = append(strconv.AppendInt(append(b, `"turn":`...), *st.turn, 10), ',')
		}
		b = append(b, `"startSeq":`...)
		b = strconv.AppendInt(b, int64(st.start), 10)
		b = append(b, `,"tokens":`...)
		b = strconv.AppendInt(b, sums[i], 10)
		b = append(b, '}')
	}
	b = append(b, `],"nodes":[`...)
	for i, n := range m.Nodes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"seq":`...)
		b = strconv.AppendInt(b, int64(n.Seq), 10)
		b = append(b, `,"tokens":`...)
		b = strconv.AppendInt(b, n.Tokens, 10)
		b = append(b, '}')
	}
	b = append(b, `],"method":`...)
	b = jsonv.AppendString(b, tokensMethod)
	return append(b, '}'), nil
}

// stretch is a turn of a log, or a run of events between turns.
type stretch struct {
	turn  *int64 // the turn's number; nil between turns
	start sdk.Seq
}

// turnStretches splits a log into its turns and the runs of events
// between them, in order, and returns for each event the index of its
// stretch. A turn runs from its turn/start to its turn/end, inclusive.
func turnStretches(events session.EventList) ([]stretch, []int) {
	var out []stretch
	of := make([]int, events.Len())
	open := false // the current stretch is a turn not yet ended
	for i, e := range events.All() {
		switch {
		case e.Type() == session.TypeTurnStart:
			n, _ := e.DataView().Get("turn").Int()
			out = append(out, stretch{turn: &n, start: e.Seq()})
			open = true
		case len(out) == 0 || (!open && out[len(out)-1].turn != nil):
			out = append(out, stretch{start: e.Seq()})
		}
		of[i] = len(out) - 1
		if e.Type() == session.TypeTurnEnd {
			open = false
		}
	}
	return out, of
}
