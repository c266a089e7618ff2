package sqlstore

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
)

// Materialize is the frame of a create that is stored whole in one
// transaction (sdk.PrefixCopier.CopyPrefix, sdk.Importer.Import): create
// takes the claim and returns the pending create's handle, store stores
// it and returns what is durable; on any failure the handle is closed,
// which abandons the create, and nothing is stored.
func Materialize(ctx context.Context, create func() (sdk.Opened, error), store func(handle string) (sdk.Durable, error), close func(ctx context.Context, handle string) error) (sdk.Opened, error) {
	o, err := create()
	if err != nil {
		return sdk.Opened{}, err
	}
	d, err := store(o.Handle)
	if err != nil {
		_ = close(context.WithoutCancel(ctx), o.Handle)
		return sdk.Opened{}, err
	}
	o.NextSeq, o.Revision = d.NextSeq, d.Revision
	return o, nil
}
