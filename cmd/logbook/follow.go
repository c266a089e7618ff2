package main

import (
	"bufio"
	"context"
	"errors"

	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/sdk"
)

// errFollowDone ends a --follow --to once the event before --to is printed.
var errFollowDone = errors.New("follow reached --to")

// followEvents prints the stored events of id from `from` on, then each
// batch the primary reports stored (service.FollowStored), flushing stdout
// after every batch, until ctx ends (SIGINT or SIGTERM: a normal end) or
// the event before `to` is printed.
func (a *app) followEvents(ctx context.Context, id string, from, to seqFlag) error {
	svc, err := a.service(ctx)
	if err != nil {
		return err
	}
	if !svc.CanFollowStored() {
		return sdk.Errorf(sdk.CodeConfigInvalid, "logbook", "the primary persistence backend cannot be followed (its plugin declares no %q capability)", sdk.CapabilityWatch)
	}
	if to.set && to.v <= from.v {
		return nil
	}
	w := bufio.NewWriter(a.stdout)
	err = svc.FollowStored(ctx, id, sdk.Offset(from.v), func(evs []events.Event) error {
		for _, ev := range evs {
			if to.set && int64(ev.Seq) >= to.v {
				break
			}
			w.Write(ev.Envelope)
			w.WriteByte('\n')
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if to.set && int64(evs[len(evs)-1].Seq) >= to.v-1 {
			return errFollowDone
		}
		return nil
	})
	if errors.Is(err, errFollowDone) || (err != nil && ctx.Err() != nil) {
		return nil
	}
	return err
}
