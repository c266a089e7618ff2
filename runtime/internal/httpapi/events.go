package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/internal/appendinput"
	"github.com/seed-e5e476df/logbook/runtime/internal/host"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/sdk"
)

// appendEvents is POST /v1/sessions/{id}/events?flush=&expectedSeq=&operationId=: the
// NDJSON body's append inputs, one per line (blank lines skipped),
// appended in order, resuming the session when it is not live (and
// releasing it again when the request fails: host.Appender). The answer
// is 200 with the canonical envelope of every appended event, one per
// line. The first rejected line ends the request: the lines before it stay
// appended (flushed when flush is set) and the answer is its problem, with
// line, index, appended and firstSeq. With expectedSeq the log must be
// that long when the first line is appended, else SEQ_CONFLICT and nothing
// is appended. With operationId the body is appended once, as one atomic
// group, exactly as /events/group appends it (docs/format.md, "Operation
// ids"): the whole body at most MaxRequestBytes, all or nothing.
func (a *API) appendEvents(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, ok := appendParams(w, r)
	if !ok {
		return
	}
	if p.operationID != "" {
		a.group(w, r, p)
		return
	}
	ap, err := a.h.Appender(ctx, r.PathValue("id"))
	if err == nil {
		lb := lineBatcher{ap: ap}
		if p.expected != nil {
			want := sdk.Offset(*p.expected)
			lb.want = &want
		}
		err = lb.run(ctx, appendinput.NewReader(r.Body, int64(a.opts.MaxRequestBytes)))
	}
	res, err := ap.Finish(ctx, err, p.flush)
	if err != nil {
		p := NewProblem(err).withAppended(res)
		var le *lineError
		if errors.As(err, &le) {
			p.Line, p.Index = &le.line, &le.index
		}
		p.Write(w)
		return
	}
	writeEnvelopes(w, res.Events)
}

// writeEnvelopes answers 200 with the canonical envelope of each event,
// one per line (NDJSON).
func writeEnvelopes(w http.ResponseWriter, evs []events.Event) {
	w.Header().Set("Content-Type", ndjsonType)
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, e := range evs {
		if _, err := bw.Write(e.Envelope); err != nil {
			return
		}
		if err := bw.WriteByte('\n'); err != nil {
			return
		}
	}
	_ = bw.Flush()
}

// withAppended sets the append details of a problem from an append's
// result: appended events, firstSeq when known, and fenced. An
// OPERATION_CONFLICT appended nothing, and its firstSeq stays the one its
// error names: the original operation's first seq (docs/errors.md).
func (p *Problem) withAppended(res host.AppendResult) *Problem {
	n := int64(len(res.Events))
	p.Appended = &n
	p.Fenced = res.Fenced
	if p.Code == string(sdk.CodeOperationConflict) {
		return p
	}
	p.FirstSeq = nil
	if res.FirstSeq != nil {
		first := int64(*res.FirstSeq)
		p.FirstSeq = &first
	}
	return p
}

// lineError is the error of one line of an append's body.
type lineError struct {
	line  int // from 1
	index int // the input's position among the request's inputs, from 0
	err   error
}

func (e *lineError) Error() string { return "line " + strconv.Itoa(e.line) + ": " + e.err.Error() }

func (e *lineError) Unwrap() error { return e.err }

// lineBatcher queues the inputs of one request's lines on the service's
// appender, commits them when a batch is full or no more input is
// buffered, and maps a rejected input back to its line.
type lineBatcher struct {
	ap       *host.Appender
	want     *sdk.Offset // the expected length, checked by the first batch
	appended int         // inputs appended so far
	checked  bool        // a batch was appended, so want was checked
	lines    []int       // the line of each queued input
}

// run reads and appends lines until the end of the body or the first
// rejected line, whose error it returns as a *lineError.
func (lb *lineBatcher) run(ctx context.Context, lr *appendinput.Reader) error {
	for {
		text, err := lr.Next()
		if err == io.EOF {
			return lb.commit(ctx)
		}
		if err != nil {
			if cerr := lb.commit(ctx); cerr != nil {
				return cerr
			}
			return &lineError{line: lr.Line(), index: lb.appended, err: err}
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		in, err := appendinput.Parse(text)
		if err != nil {
			if cerr := lb.commit(ctx); cerr != nil {
				return cerr
			}
			return &lineError{line: lr.Line(), index: lb.appended, err: err}
		}
		lb.lines = append(lb.lines, lr.Line())
		if full := lb.ap.Queue(in, len(text)); full || !lr.Buffered() {
			if err := lb.commit(ctx); err != nil {
				return err
			}
		}
	}
}

// commit appends the queued inputs; none only when want is still to be
// checked.
func (lb *lineBatcher) commit(ctx context.Context) error {
	if lb.ap.Queued() == 0 && (lb.want == nil || lb.checked) {
		return nil
	}
	n, err := lb.ap.Commit(ctx, lb.want)
	lb.want, lb.checked = nil, true
	lb.appended += n
	lines := lb.lines
	lb.lines = lb.lines[:0]
	if err != nil {
		if n < len(lines) {
			return &lineError{line: lines[n], index: lb.appended, err: err}
		}
		return err
	}
	return nil
}

// NextSeqHeader is the response header of a read of events (NDJSON) that
// carries the log's length when it was read: the seq the next event will
// have.
const NextSeqHeader = "Logbook-Next-Seq"

// readEvents is GET /v1/sessions/{id}/events?from=&to=&limit=: the log's
// envelopes [from, to), at most limit of them, as NDJSON, with the log's
// length in NextSeqHeader; with Accept: text/event-stream or follow=true,
// Server-Sent Events instead (see stream), limit bounding how many are
// sent.
func (a *API) readEvents(w http.ResponseWriter, r *http.Request) {
	q := query{r: r}
	from, to := q.seq("from"), q.seq("to")
	follow := q.flag("follow")
	if q.p != nil {
		q.p.Write(w)
		return
	}
	var limit int64
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 1 || n > sdk.MaxSeq {
			problemf(sdk.CodeUsage, "limit=%q must be an integer in 1 … 2^53−1", s).Write(w)
			return
		}
		limit = n
	}
	tr := host.TailRequest{ID: r.PathValue("id"), End: int64(sdk.MaxSeq) + 1}
	if from != nil {
		tr.From = *from
	}
	if to != nil {
		tr.End = *to
	}
	sse := follow || acceptsSSE(r)
	if sse {
		if id := r.Header.Get("Last-Event-ID"); id != "" {
			last, err := strconv.ParseInt(id, 10, 64)
			if err != nil || last < 0 || last >= sdk.MaxSeq {
				problemf(sdk.CodeInvalidSeq, "Last-Event-ID %q must be the seq of an event", id).Write(w)
				return
			}
			tr.From = last + 1
		}
	}
	if tr.End < tr.From {
		problemf(sdk.CodeInvalidSeq, "from %d and to %d must satisfy from ≤ to", tr.From, tr.End).Write(w)
		return
	}
	if limit > 0 && tr.End-tr.From > limit {
		tr.End = tr.From + limit
	}
	if sse {
		a.stream(w, r, tr)
		return
	}
	out := newEventWriter(w, ndjsonType)
	out.finish(a.h.Window(r.Context(), tr.ID, tr.From, tr.End, func(n int64) { w.Header().Set(NextSeqHeader, strconv.FormatInt(n, 10)) }, out))
}

// acceptsSSE reports whether the request asks for Server-Sent Events.
func acceptsSSE(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		if bytes.Contains([]byte(v), []byte(sseType)) {
			return true
		}
	}
	return false
}

// stream serves Server-Sent Events: one event per envelope from tr.From,
// "id: <seq>" and "data: <envelope>", live events as they are appended,
// and a comment line every Heartbeat while idle. A browser's EventSource
// that reconnects sends the last id it saw as Last-Event-ID, and the
// stream resumes right after it: no gap, no duplicate. The stream ends at
// tr.End, when the client goes, or when the server stops.
func (a *API) stream(w http.ResponseWriter, r *http.Request, tr host.TailRequest) {
	out := newEventWriter(w, sseType)
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	beats := make(chan struct{})
	defer close(beats)
	go func() {
		t := time.NewTicker(a.opts.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-beats:
				return
			case <-t.C:
				if err := out.heartbeat(); err != nil {
					cancel(err)
					return
				}
			}
		}
	}()
	tr.Follow = true
	err := a.h.Tail(ctx, tr, out)
	if errors.Is(err, host.ErrStopping) {
		err = nil // the client reconnects elsewhere or later, from its last id
	}
	out.finish(err)
}

// eventWriter writes an event stream's body (NDJSON or SSE), a host.Sink;
// until its first write an error can still be answered as a problem. A
// heartbeat may write beside the tail, so writes hold mu.
type eventWriter struct {
	w       http.ResponseWriter
	bw      *bufio.Writer
	rc      *http.ResponseController
	ctype   string
	mu      sync.Mutex
	started bool
	buf     []byte
}

func newEventWriter(w http.ResponseWriter, ctype string) *eventWriter {
	return &eventWriter{w: w, bw: bufio.NewWriterSize(w, 64<<10), rc: http.NewResponseController(w), ctype: ctype}
}

// start sends the response's headers; the caller holds mu.
func (o *eventWriter) start() {
	if o.started {
		return
	}
	o.started = true
	h := o.w.Header()
	h.Set("Content-Type", o.ctype)
	if o.ctype == sseType {
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
	}
	o.w.WriteHeader(http.StatusOK)
}

// Event writes e: its envelope on a line of NDJSON, or one SSE event
// ("id: <seq>", "data: <envelope>").
func (o *eventWriter) Event(e session.Event) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.start()
	// The envelope goes from the session's bytes to the buffered writer,
	// which sends one larger than its buffer straight to the connection:
	// a stream keeps no copy of an event, however large.
	if o.ctype == sseType {
		o.buf = append(strconv.AppendInt(append(o.buf[:0], "id: "...), int64(e.Seq()), 10), "\ndata: "...)
		if _, err := o.bw.Write(o.buf); err != nil {
			return err
		}
	}
	if _, err := e.WriteEnvelope(o.bw); err != nil {
		return err
	}
	end := "\n"
	if o.ctype == sseType {
		end = "\n\n"
	}
	_, err := o.bw.WriteString(end)
	return err
}

// Flush sends what is written to the client.
func (o *eventWriter) Flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.start()
	return o.flush()
}

// heartbeat writes an SSE comment.
func (o *eventWriter) heartbeat() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.start()
	if _, err := o.bw.WriteString(": heartbeat\n\n"); err != nil {
		return err
	}
	return o.flush()
}

// flush sends what is buffered; the caller holds mu.
func (o *eventWriter) flush() error {
	if err := o.bw.Flush(); err != nil {
		return err
	}
	return o.rc.Flush()
}

// finish ends the stream: an error before the first byte is answered as
// its problem; one after it aborts the response, so the client sees a cut
// stream rather than a clean end.
func (o *eventWriter) finish(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case err == nil:
		o.start()
		_ = o.flush()
	case !o.started:
		NewProblem(err).Write(o.w)
	case errors.Is(err, context.Canceled):
		// The client went away.
	default:
		panic(http.ErrAbortHandler)
	}
}
