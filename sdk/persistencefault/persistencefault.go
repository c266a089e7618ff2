// Package persistencefault wraps an sdk.Persistence so that a test makes its
// appends fail, lose their replies or wait, as a failing or slow disk would,
// without any fault hooks in the backend itself. It works in front of every
// backend and every transport (a direct call, a pluginrpc client).
//
// It is test machinery: no production code uses it.
package persistencefault

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// op is the Op of the errors the package injects.
const op = "persistencefault"

// Persistence is an sdk.Persistence that passes every call to the one it
// wraps, except the Appends its armed faults change. It hides the optional
// interfaces of the wrapped backend (sdk.SalvageReader, sdk.Configurable).
// All methods are safe for concurrent use.
type Persistence struct {
	sdk.Persistence

	mu      sync.Mutex
	failN   int
	failErr error
	loseN   int
	loseErr error
	delay   time.Duration
}

// Wrap returns p behind a Persistence with no fault armed.
func Wrap(p sdk.Persistence) *Persistence { return &Persistence{Persistence: p} }

// FailNextAppends makes the next n calls to Append return err before the
// wrapped backend sees them (so nothing is stored and no argument is
// checked); only a call whose context has already ended reaches the backend
// instead, and does not count. A nil err means a retryable IO_ERROR. n ≤ 0
// disarms the fault.
func (p *Persistence) FailNextAppends(n int, err error) {
	if err == nil {
		err = sdk.Errorf(sdk.CodeIOError, op, "injected append failure (FailNextAppends)")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failN, p.failErr = max(n, 0), err
}

// LoseNextAppendReplies makes the next n calls to Append that the wrapped
// backend accepts return err instead of its reply: the ambiguous failure of
// docs/plugins.md (the batch is durable, the caller cannot know). A
// rejected Append does not count. A nil err means a retryable IO_ERROR.
// n ≤ 0 disarms the fault.
func (p *Persistence) LoseNextAppendReplies(n int, err error) {
	if err == nil {
		err = sdk.Errorf(sdk.CodeIOError, op, "injected loss of the append reply after the batch was stored (LoseNextAppendReplies)")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.loseN, p.loseErr = max(n, 0), err
}

// SetAppendDelay makes every later Append wait d before it does anything,
// as a slow disk would; an Append whose ctx ends while it waits fails with
// IO_ERROR wrapping ctx.Err() and stores nothing. d ≤ 0 removes the delay.
func (p *Persistence) SetAppendDelay(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.delay = max(d, 0)
}

// Append applies the armed faults around the wrapped backend's Append: the
// delay, then FailNextAppends, then the call, then LoseNextAppendReplies.
func (p *Persistence) Append(ctx context.Context, handle string, firstSeq sdk.Seq, events [][]byte) (sdk.Durable, error) {
	if ctx.Err() != nil {
		return p.Persistence.Append(ctx, handle, firstSeq, events)
	}
	if err := p.wait(ctx); err != nil {
		return sdk.Durable{}, err
	}
	if err := p.take(&p.failN, &p.failErr); err != nil {
		return sdk.Durable{}, err
	}
	d, err := p.Persistence.Append(ctx, handle, firstSeq, events)
	if err != nil {
		return d, err
	}
	if err := p.take(&p.loseN, &p.loseErr); err != nil {
		return sdk.Durable{}, err
	}
	return d, nil
}

// wait sleeps the delay SetAppendDelay set, or until ctx ends.
func (p *Persistence) wait(ctx context.Context) error {
	p.mu.Lock()
	d := p.delay
	p.mu.Unlock()
	if d == 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		e := sdk.Errorf(sdk.CodeIOError, op, "append (delayed by SetAppendDelay %s) not done: the context ended", strconv.Quote(d.String()))
		e.Err = ctx.Err()
		return e
	}
}

// take consumes one count of a fault: it returns *err while *n > 0.
func (p *Persistence) take(n *int, err *error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if *n > 0 {
		*n--
		return *err
	}
	return nil
}
