// Package telemetry pushes the OpenTelemetry spans of package otlp to an
// OTLP/HTTP collector as the turns of live sessions end (the telemetry
// block of docs/operations.md).
//
// A Pusher listens to the store's feed, which never blocks an append: a
// slow listener only lags. The listener folds each live session's events
// into an otlp.Builder and, when a turn ends, puts that turn's spans in a
// bounded queue without waiting; a full queue drops them, counted and
// logged. One goroutine uploads the queue through the official exporter
// client (otlptracehttp), which retries a failed upload with backoff
// within the configured timeout. The root span of a session is pushed when
// the session is released (or the Pusher closes), since only then is its
// end known.
package telemetry

import (
	"context"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/seed-e5e476df/logbook/runtime/internal/otlp"
	"github.com/seed-e5e476df/logbook/runtime/internal/session"
	"github.com/seed-e5e476df/logbook/runtime/internal/store"
	"github.com/seed-e5e476df/logbook/sdk"
)

// maxBatch is how many queued items one upload takes at most.
const maxBatch = 64

// Options configure a Pusher.
type Options struct {
	// Endpoint is the collector's URL (config.Telemetry.OTLPEndpoint):
	// spans go to it as given when it has a path, else to /v1/traces.
	Endpoint string
	// Headers are sent with every upload.
	Headers map[string]string
	// Timeout bounds one upload, retries included.
	Timeout time.Duration
	// Queue is how many items (a turn's spans, a root span) may wait.
	Queue int
	// Logger receives the drops and failed uploads; nil discards them.
	Logger hclog.Logger
}

// Stats are a Pusher's counts of spans since it started.
type Stats struct {
	// Exported spans the collector accepted; Dropped spans a full queue
	// refused; Failed spans whose upload failed after its retries.
	Exported, Dropped, Failed uint64
	// Queued is how many items wait for upload now.
	Queued int
}

// Pusher is a running push: its store subscription, its queue and its
// upload goroutine. Close stops it.
type Pusher struct {
	o      Options
	client otlptrace.Client
	queue  chan []*tracepb.Span
	sub    *store.Subscription
	// sessions is the fold of each live session; the subscription's
	// goroutine owns it, and Close once the subscription stopped.
	sessions map[*session.Session]*fold

	exported, dropped, failed atomic.Uint64
	// dropping is set by a drop and cleared by the next item queued, so
	// that a full queue logs once per episode, not once per turn.
	dropping atomic.Bool
	// failing is set by a failed upload and cleared by the next that
	// succeeds, for the same reason.
	failing atomic.Bool

	// cancel stops an upload in flight; done closes when the upload
	// goroutine returned.
	cancel context.CancelFunc
	done   chan struct{}
}

// fold is one live session's builder and the next seq it expects.
type fold struct {
	b    *otlp.Builder
	next int64 // -1 before the first event
}

// Start subscribes to st's feed and starts uploading. A bad endpoint is
// CONFIG_INVALID.
func Start(st *store.Store, o Options) (*Pusher, error) {
	if o.Logger == nil {
		o.Logger = hclog.NewNullLogger()
	}
	if o.Queue < 1 {
		o.Queue = 1
	}
	u, err := url.Parse(o.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, "telemetry", "otlp_endpoint %q is not an http(s) URL such as http://127.0.0.1:4318", o.Endpoint)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	opts := []otlptracehttp.Option{
		otlptracehttp.WithEndpointURL(u.String()),
		otlptracehttp.WithTimeout(o.Timeout),
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{
			Enabled:         true,
			InitialInterval: 250 * time.Millisecond,
			MaxInterval:     5 * time.Second,
			MaxElapsedTime:  o.Timeout,
		}),
	}
	if len(o.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(o.Headers))
	}
	p := &Pusher{
		o:        o,
		client:   otlptracehttp.NewClient(opts...),
		queue:    make(chan []*tracepb.Span, o.Queue),
		sessions: map[*session.Session]*fold{},
		done:     make(chan struct{}),
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	if err := p.client.Start(ctx); err != nil {
		cancel()
		return nil, err
	}
	go p.upload(ctx)
	p.sub = st.Subscribe(p)
	return p, nil
}

// Stats returns the counts so far; safe for concurrent use.
func (p *Pusher) Stats() Stats {
	return Stats{Exported: p.exported.Load(), Dropped: p.dropped.Load(), Failed: p.failed.Load(), Queued: len(p.queue)}
}

// SessionLive starts the fold of s (store.Listener).
func (p *Pusher) SessionLive(s *session.Session) {
	p.sessions[s] = &fold{b: otlp.NewBuilder(s.ID(), otlp.Options{}), next: -1}
}

// Event folds e and queues the spans of the turn it ends (store.Listener).
func (p *Pusher) Event(s *session.Session, e session.Event) {
	f := p.sessions[s]
	if f == nil {
		return
	}
	if f.next < 0 {
		// The feed starts at the first live seq: fold what came before it
		// (the header in force, a turn a resume closes) without pushing.
		for _, old := range s.Events().Range(0, sdk.Offset(e.Seq())).All() {
			f.b.Add(event(old))
		}
	}
	f.next = int64(e.Seq()) + 1
	if spans := f.b.Add(event(e)); len(spans) > 0 {
		p.enqueue(s.ID(), spans)
	}
}

// SessionReleased queues the root span of s (store.Listener).
func (p *Pusher) SessionReleased(s *session.Session) {
	f := p.sessions[s]
	delete(p.sessions, s)
	if f != nil {
		if root := f.b.Root(); root != nil {
			p.enqueue(s.ID(), []*tracepb.Span{root})
		}
	}
}

// Close stops listening, folds what the feed had not delivered yet of the
// sessions still tracked and queues their root spans, then waits for the
// queue to drain until ctx ends, when it stops the upload in flight and
// drops what is left (counted).
func (p *Pusher) Close(ctx context.Context) error {
	p.sub.Close()
	for s, f := range p.sessions {
		if f.next >= 0 {
			for _, e := range s.Events().Range(sdk.Offset(f.next), s.Len()).All() {
				if spans := f.b.Add(event(e)); len(spans) > 0 {
					p.enqueue(s.ID(), spans)
				}
			}
		}
		p.SessionReleased(s)
	}
	close(p.queue)
	select {
	case <-p.done:
	case <-ctx.Done():
		p.cancel()
		<-p.done
	}
	p.cancel()
	return p.client.Stop(ctx)
}

// enqueue queues one item without waiting; a full queue drops it.
func (p *Pusher) enqueue(id string, spans []*tracepb.Span) {
	select {
	case p.queue <- spans:
		p.dropping.Store(false)
	default:
		n := p.dropped.Add(uint64(len(spans)))
		if !p.dropping.Swap(true) {
			p.o.Logger.Warn("telemetry: the OTLP queue is full (the collector is slow or down); dropping spans until it drains",
				"session", id, "spans", len(spans), "dropped_total", n, "queue", p.o.Queue)
		}
	}
}

// upload sends the queue until it is closed and empty, or ctx ends (then
// what is left counts as dropped).
func (p *Pusher) upload(ctx context.Context) {
	defer close(p.done)
	for first := range p.queue {
		spans := first
		// Only this goroutine receives, so a non-empty queue never blocks.
		for n := 1; n < maxBatch && len(p.queue) > 0; n++ {
			more, ok := <-p.queue
			if !ok {
				break
			}
			spans = append(spans, more...)
		}
		if ctx.Err() != nil {
			p.dropped.Add(uint64(len(spans)))
			continue
		}
		if err := p.send(ctx, spans); err != nil {
			n := p.failed.Add(uint64(len(spans)))
			if !p.failing.Swap(true) {
				p.o.Logger.Warn("telemetry: an OTLP upload failed after its retries; its spans are lost (logged once until an upload succeeds)",
					"spans", len(spans), "failed_total", n, "error", err)
			}
			continue
		}
		if p.failing.Swap(false) {
			p.o.Logger.Info("telemetry: OTLP uploads succeed again")
		}
		p.exported.Add(uint64(len(spans)))
	}
}

// send uploads spans, retrying with backoff within Options.Timeout. The
// exporter client retries the answers OTLP calls retryable (429, 502, 503,
// 504) itself, but not a connection that fails (a collector restarting),
// so every error is retried here until the timeout.
func (p *Pusher) send(ctx context.Context, spans []*tracepb.Span) error {
	rs := []*tracepb.ResourceSpans{otlp.ResourceSpans(spans)}
	ctx, cancel := context.WithTimeout(ctx, p.o.Timeout)
	defer cancel()
	wait := 250 * time.Millisecond
	for {
		err := p.client.UploadTraces(ctx, rs)
		if err == nil {
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// event converts a session event for the builder.
func event(e session.Event) otlp.Event {
	return otlp.Event{Seq: int64(e.Seq()), Time: e.Time(), Type: e.Type(), Data: e.Data()}
}
