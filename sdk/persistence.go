package sdk

import "context"

// Access is the mode of Persistence.Open.
type Access int

// The access modes.
const (
	AccessRead  Access = 1 // no claim; works beside a writer
	AccessWrite Access = 2 // atomic single-writer claim
)

// Description is what Persistence.Describe returns.
type Description struct {
	Name          string
	FormatVersion int
	Compression   string // "" when the backend has none
}

// Torn is what a write open cut (or, for a read open, what it would cut).
type Torn struct {
	Bytes    int64
	FromSeq  Seq
	Artifact string // where the cut bytes were kept; "" for a read open
}

// Opened is the reply of Persistence.Open (and of Create, where the header is
// the one given and NextSeq is 0).
type Opened struct {
	Handle   string
	Header   Header
	NextSeq  Offset
	Revision string
	Torn     Torn
}

// Durable is the reply of Append and Flush: the stored next seq (for Flush,
// the durable one) and the revision.
type Durable struct {
	NextSeq  Offset
	Revision string
}

// Stat is the reply of Persistence.Stat.
type Stat struct {
	Header        Header
	Revision      string
	FormatVersion int
	EventCount    int64 // -1 when unknown
	SizeBytes     int64 // -1 when unknown
}

// ListEntry is one session of Persistence.List. Err is set, and Header may
// be zero, when the session cannot be read.
type ListEntry struct {
	ID       string
	Header   Header
	Revision string
	Err      error
}

// Persistence is a storage backend (SPEC §12.1). Events are canonical
// envelopes; the backend stores them byte for byte. Every method returns
// *Error values with the codes of SPEC §12–§14.
type Persistence interface {
	// Describe names the backend.
	Describe(ctx context.Context) (Description, error)
	// Create makes a new session with write ownership. Storage materializes
	// on the first Append or Flush.
	Create(ctx context.Context, h Header) (Opened, error)
	// Open opens a stored session for reading or writing.
	Open(ctx context.Context, id string, access Access) (Opened, error)
	// Append stores events[0] at firstSeq onwards, all or nothing, under
	// compare-and-set on firstSeq; success means durable. The event buffers
	// are valid only during the call: a backend that keeps them copies them.
	Append(ctx context.Context, handle string, firstSeq Seq, events [][]byte) (Durable, error)
	// Read calls fn with consecutive chunks of the events
	// [offset, min(offset+length, end)); length -1 reads to the end. The
	// chunks are fresh buffers fn may keep.
	Read(ctx context.Context, handle string, offset Offset, length int64, fn func(events [][]byte) error) error
	// Flush is a barrier for everything acknowledged; it materializes an
	// empty created session.
	Flush(ctx context.Context, handle string) (Durable, error)
	// Close releases the handle (and ownership); idempotent.
	Close(ctx context.Context, handle string) error
	// Stat describes a stored session without reading its events.
	Stat(ctx context.Context, id string) (Stat, error)
	// List calls fn for every materialized session (and those created by this
	// instance).
	List(ctx context.Context, fn func(ListEntry) error) error
}
