package memory

import (
	"context"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// Import implements sdk.Importer: it creates h as Create does, collects
// the checked, copied batches beside the store, and stores them all at
// once under the store's lock, so no reader ever sees a part of them. On
// failure the create is abandoned and nothing is stored.
func (b *Backend) Import(ctx context.Context, h sdk.Header, events func(yield func(batch [][]byte) error) error) (sdk.Opened, error) {
	o, err := b.create(ctx, h, true)
	if err != nil {
		return sdk.Opened{}, err
	}
	var (
		all  [][]byte
		size int64
	)
	err = events(func(batch [][]byte) error {
		if err := handles.Ended(ctx, op, "import"); err != nil {
			return err
		}
		if err := checkBatch(sdk.Seq(len(all)), batch); err != nil {
			return err.WithSession(h.ID)
		}
		for _, ev := range copyBatch(batch) {
			all = append(all, ev)
			size += int64(len(ev))
		}
		return nil
	})
	if err == nil {
		o, err = b.storeImport(o, all, size)
	}
	if err != nil {
		_ = b.Close(context.WithoutCancel(ctx), o.Handle) // abandons the create: nothing is stored
		return sdk.Opened{}, err
	}
	return o, nil
}

// storeImport materializes the create o with every event of an import in
// one step.
func (b *Backend) storeImport(o sdk.Opened, events [][]byte, size int64) (sdk.Opened, error) {
	b.st.mu.Lock()
	defer b.st.mu.Unlock()
	hd, err := b.writable(o.Handle)
	if err != nil {
		return o, err
	}
	s, err := b.materialize(hd)
	if err != nil {
		return o, err
	}
	s.events, s.size = events, s.size+size
	s.gen++
	s.written = time.Now().UnixMilli()
	hd.floor = len(events)
	b.st.signalGrowth()
	o.NextSeq, o.Revision = sdk.Offset(len(events)), b.st.revision(s)
	return o, nil
}

var _ sdk.Importer = (*Backend)(nil)
