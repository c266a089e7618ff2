package transfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/seed-e5e476df/logbook/runtime/internal/rpcsize"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/headerjson"
)

// Copied is what CopySession did to one session.
type Copied struct {
	Appended int64 // events appended to the target
	Created  bool  // the target did not hold the session and created it
}

// CopySession copies session id from src to dst, resumably: dst is opened
// for write (created with src's header when absent), its stored events
// must equal src's prefix (else MIRROR_DIVERGED), the rest is appended in
// batches of at most batchBytes (counted as rpcsize.AppendBatchLen counts)
// under compare-and-set, flushed, and the whole copy is read back and
// compared with src (MIRROR_DIVERGED at the first differing seq).
func CopySession(ctx context.Context, src, dst sdk.Persistence, id string, batchBytes int) (Copied, error) {
	from, err := OpenStored(ctx, src, id)
	if err != nil {
		return Copied{}, err
	}
	defer from.Close()
	var c Copied
	o, err := dst.Open(ctx, id, sdk.AccessWrite)
	if errors.Is(err, sdk.CodeSessionNotFound) {
		o, err = dst.Create(ctx, from.Header())
		c.Created = true
	}
	if err != nil {
		return Copied{}, err
	}
	to := &Stored{p: dst, o: o}
	defer to.Close()
	n, m := from.Len(), to.Len()
	switch {
	case !bytes.Equal(headerjson.Encode(to.Header()), headerjson.Encode(from.Header())):
		return Copied{}, diverged(id, "the target's session header differs from the source's")
	case m > n:
		return Copied{}, diverged(id, fmt.Sprintf("the target holds %d events, the source %d", m, n))
	}
	if seq, err := firstDifference(ctx, from, to, m); err != nil || seq >= 0 {
		return Copied{}, differs(id, seq, err)
	}
	for off := m; off < n; off += ReadChunk {
		envs, err := from.ReadAll(ctx, off, min(off+ReadChunk, n))
		if err != nil {
			return Copied{}, err
		}
		for i := 0; i < len(envs); {
			rest := envs[i:]
			j := i + rpcsize.AppendBatchLen(len(rest), batchBytes, func(k int) int { return len(rest[k]) })
			if _, err := dst.Append(ctx, o.Handle, sdk.Seq(off+int64(i)), envs[i:j]); err != nil {
				return Copied{}, err
			}
			i = j
		}
	}
	d, err := dst.Flush(ctx, o.Handle)
	if err != nil {
		return Copied{}, err
	}
	if int64(d.NextSeq) != n {
		return Copied{}, diverged(id, fmt.Sprintf("after the copy the target holds %d events, the source %d", d.NextSeq, n))
	}
	if seq, err := firstDifference(ctx, from, to, n); err != nil || seq >= 0 {
		return Copied{}, differs(id, seq, err)
	}
	c.Appended = n - m
	return c, nil
}

// MigrateOptions configure Migrate.
type MigrateOptions struct {
	// BatchBytes caps one Append to the target; required (> 0). A host
	// passes rpcsize.MaxCopyBatchBytes of its plugin request cap.
	BatchBytes int
	// Listed, when set, is called once src has listed its sessions, with
	// how many Migrate will copy.
	Listed func(sessions int)
	// Done, when set, is called after each session with its id and the
	// error that failed it (nil when it was copied or already complete).
	Done func(id string, err error)
}

// Migrated is the outcome of Migrate.
type Migrated struct {
	Sessions int   // the sessions the source listed
	Copied   int   // sessions that got events or were created
	Complete int   // sessions the target already held in full
	Failed   int   // sessions that failed
	Events   int64 // events appended, over all sessions
}

// Migrate copies every session src lists to dst with CopySession, in src's
// order; a session that fails (or that src lists with an error) does not
// stop the others. It stops early when ctx ends. The error is the failure
// of the first session that failed, wrapped with how many did (its code is
// that session's), or ctx's error; run Migrate again to resume.
func Migrate(ctx context.Context, src, dst sdk.Persistence, opts MigrateOptions) (Migrated, error) {
	if opts.BatchBytes <= 0 {
		return Migrated{}, sdk.Errorf(sdk.CodeUsage, "migrate", "MigrateOptions.BatchBytes must be > 0; got %d", opts.BatchBytes)
	}
	entries, err := List(ctx, src)
	if err != nil {
		return Migrated{}, err
	}
	res := Migrated{Sessions: len(entries)}
	if opts.Listed != nil {
		opts.Listed(len(entries))
	}
	var first error
	for _, en := range entries {
		err := en.Err
		if err == nil {
			var c Copied
			if c, err = CopySession(ctx, src, dst, en.ID, opts.BatchBytes); err == nil {
				if c.Appended > 0 || c.Created {
					res.Copied++
					res.Events += c.Appended
				} else {
					res.Complete++
				}
			}
		}
		if err != nil {
			res.Failed++
			if first == nil {
				first = err
			}
		}
		if opts.Done != nil {
			opts.Done(en.ID, err)
		}
		if ctx.Err() != nil {
			break
		}
	}
	if first != nil {
		e := sdk.Errorf(sdk.CodeOf(first), "migrate", "%d of %d sessions failed (run migrate again to resume); the first", res.Failed, res.Sessions)
		e.Err = first
		return res, e
	}
	return res, ctx.Err()
}

// diverged is MIRROR_DIVERGED for session id.
func diverged(id, detail string) error {
	return sdk.Errorf(sdk.CodeMirrorDiverged, "transfer", "%s", detail).WithSession(id)
}

// differs turns the result of firstDifference into an error: the read
// error, or MIRROR_DIVERGED at seq.
func differs(id string, seq int64, err error) error {
	if err != nil {
		return err
	}
	return sdk.Errorf(sdk.CodeMirrorDiverged, "transfer", "the target's event differs from the source's").WithSession(id).WithSeq(seq)
}
