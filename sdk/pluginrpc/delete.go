package pluginrpc

import (
	"context"
	"errors"
	"io"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// The delete capability (sdk.Deleter) over gRPC: the server answers
// Unimplemented when its backend has none; the client turns Unimplemented
// into CONFIG_INVALID, since the host asks only plugins that declare
// sdk.CapabilityDelete.

// deleter returns the call's backend as an sdk.Deleter, or the
// Unimplemented status.
func (s *persistenceServer) deleter(tenant string) (sdk.Deleter, error) {
	return served[sdk.Deleter](s, tenant, "this persistence backend cannot delete sessions (it implements no sdk.Deleter)")
}

// Delete serves sdk.Deleter.Delete.
func (s *persistenceServer) Delete(ctx context.Context, req *logbookv1.DeleteRequest) (*logbookv1.AuditRecord, error) {
	d, err := s.deleter(req.GetTenant())
	if err != nil {
		return nil, err
	}
	r, err := d.Delete(ctx, req.GetSessionId(), sdk.AuditRequest{Reason: req.GetReason(), By: req.GetBy()})
	if err != nil {
		return nil, toStatus(err)
	}
	return auditToProto(r), nil
}

// SetHold serves sdk.Deleter.SetHold.
func (s *persistenceServer) SetHold(ctx context.Context, req *logbookv1.SetHoldRequest) (*logbookv1.SetHoldReply, error) {
	d, err := s.deleter(req.GetTenant())
	if err != nil {
		return nil, err
	}
	r, changed, err := d.SetHold(ctx, req.GetSessionId(), req.GetHeld(), sdk.AuditRequest{Reason: req.GetReason(), By: req.GetBy()})
	if err != nil {
		return nil, toStatus(err)
	}
	reply := &logbookv1.SetHoldReply{Changed: changed}
	if changed {
		reply.Record = auditToProto(r)
	}
	return reply, nil
}

// Held serves sdk.Deleter.Held.
func (s *persistenceServer) Held(ctx context.Context, req *logbookv1.StatRequest) (*logbookv1.HeldReply, error) {
	d, err := s.deleter(req.GetTenant())
	if err != nil {
		return nil, err
	}
	held, err := d.Held(ctx, req.GetId())
	if err != nil {
		return nil, toStatus(err)
	}
	return &logbookv1.HeldReply{Held: held}, nil
}

// Audit serves sdk.Deleter.Audit: one message per record.
func (s *persistenceServer) Audit(req *logbookv1.AuditRequest, stream logbookv1.Persistence_AuditServer) error {
	d, err := s.deleter(req.GetTenant())
	if err != nil {
		return err
	}
	var sendErr error
	err = d.Audit(stream.Context(), func(r sdk.AuditRecord) error {
		sendErr = stream.Send(auditToProto(r))
		return sendErr
	})
	if sendErr != nil {
		return sendErr
	}
	return toStatus(err)
}

// Delete implements sdk.Deleter over the Delete RPC.
func (c *persistenceClient) Delete(ctx context.Context, id string, r sdk.AuditRequest) (sdk.AuditRecord, error) {
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.AuditRecord{}, err
	}
	rec, err := c.rpc.Delete(ctx, &logbookv1.DeleteRequest{SessionId: id, Reason: r.Reason, By: r.By, Tenant: c.tenant})
	if err != nil {
		return sdk.AuditRecord{}, deleteErr(ctx, "persistence.Delete", id, err)
	}
	return auditFromProto(rec), nil
}

// SetHold implements sdk.Deleter over the SetHold RPC.
func (c *persistenceClient) SetHold(ctx context.Context, id string, held bool, r sdk.AuditRequest) (sdk.AuditRecord, bool, error) {
	if err := sdk.ValidateSessionID(id); err != nil {
		return sdk.AuditRecord{}, false, err
	}
	reply, err := c.rpc.SetHold(ctx, &logbookv1.SetHoldRequest{SessionId: id, Held: held, Reason: r.Reason, By: r.By, Tenant: c.tenant})
	if err != nil {
		return sdk.AuditRecord{}, false, deleteErr(ctx, "persistence.SetHold", id, err)
	}
	if !reply.GetChanged() {
		return sdk.AuditRecord{}, false, nil
	}
	return auditFromProto(reply.GetRecord()), true, nil
}

// Held implements sdk.Deleter over the Held RPC.
func (c *persistenceClient) Held(ctx context.Context, id string) (bool, error) {
	if err := sdk.ValidateSessionID(id); err != nil {
		return false, err
	}
	reply, err := c.rpc.Held(ctx, &logbookv1.StatRequest{Id: id, Tenant: c.tenant})
	if err != nil {
		return false, deleteErr(ctx, "persistence.Held", id, err)
	}
	return reply.GetHeld(), nil
}

// Audit implements sdk.Deleter over the Audit stream; fn's error cancels
// the stream and is returned as is.
func (c *persistenceClient) Audit(ctx context.Context, fn func(sdk.AuditRecord) error) error {
	const call = "persistence.Audit"
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.rpc.Audit(actx, &logbookv1.AuditRequest{Tenant: c.tenant})
	for err == nil {
		var r *logbookv1.AuditRecord
		if r, err = st.Recv(); err == nil {
			if ferr := fn(auditFromProto(r)); ferr != nil {
				return ferr
			}
		}
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return deleteErr(ctx, call, "", err)
}

// deleteErr is fromStatus, except that Unimplemented is CONFIG_INVALID:
// the plugin declared a capability it does not serve.
func deleteErr(ctx context.Context, call, id string, err error) error {
	if s, ok := status.FromError(err); ok && s.Code() == codes.Unimplemented {
		return &sdk.Error{Code: sdk.CodeConfigInvalid, Op: errOp, SessionID: id,
			Detail: "the persistence plugin cannot delete sessions (it does not implement " + call + "); it must not declare the capability " + sdk.CapabilityDelete, Err: err}
	}
	return fromStatus(ctx, call, err)
}

func auditToProto(r sdk.AuditRecord) *logbookv1.AuditRecord {
	return &logbookv1.AuditRecord{TimeUnixMicros: r.Time.UnixMicro(), Op: string(r.Op), SessionId: r.Session,
		Events: int64(r.Events), Digest: r.Digest, Reason: r.Reason, By: r.By}
}

func auditFromProto(r *logbookv1.AuditRecord) sdk.AuditRecord {
	return sdk.AuditRecord{Time: time.UnixMicro(r.GetTimeUnixMicros()).UTC(), Op: sdk.AuditOp(r.GetOp()), Session: r.GetSessionId(),
		Events: sdk.Offset(r.GetEvents()), Digest: r.GetDigest(), Reason: r.GetReason(), By: r.GetBy()}
}

var _ sdk.Deleter = (*persistenceClient)(nil)
