package server

import (
	"context"
	"time"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/runtime/internal/httpapi"
	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// Hold puts a legal hold on a stored session (host.SetHold), by the principal (httpapi.AuditBy).
func (v *service) Hold(ctx context.Context, req *connect.Request[logbookv1.SessionsHoldRequest]) (*connect.Response[logbookv1.SessionsHoldReply], error) {
	return v.setHold(ctx, req.Msg, true)
}

// ReleaseHold lifts a legal hold (host.SetHold), by the principal (httpapi.AuditBy).
func (v *service) ReleaseHold(ctx context.Context, req *connect.Request[logbookv1.SessionsHoldRequest]) (*connect.Response[logbookv1.SessionsHoldReply], error) {
	return v.setHold(ctx, req.Msg, false)
}

// setHold serves Hold (held) and ReleaseHold; the record is left out when
// nothing changed.
func (v *service) setHold(ctx context.Context, m *logbookv1.SessionsHoldRequest, held bool) (*connect.Response[logbookv1.SessionsHoldReply], error) {
	rec, changed, err := v.h.SetHold(ctx, m.GetSessionId(), held, sdk.AuditRequest{Reason: m.GetReason(), By: httpapi.AuditBy(ctx)})
	if err != nil {
		return nil, toConnect(err, nil)
	}
	reply := &logbookv1.SessionsHoldReply{Changed: changed}
	if changed {
		reply.Record = &logbookv1.SessionsAuditRecord{
			Time: rec.Time.UTC().Format(time.RFC3339Nano), Op: string(rec.Op), SessionId: rec.Session,
			Events: int64(rec.Events), Digest: rec.Digest, Reason: rec.Reason, By: rec.By,
		}
	}
	return connect.NewResponse(reply), nil
}
