package server

import (
	"context"
	"errors"
	"net/http"

	"connectrpc.com/connect"

	"github.com/seed-e5e476df/logbook/runtime/internal/metrics"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// MetricsPath serves Options.Metrics in the Prometheus text format. Once a
// credential is configured (always off loopback) it needs one, of any
// role; it names no session and no tenant.
const MetricsPath = "/metrics"

// mountSessions mounts h, which serves logbook.v1.Sessions, at its
// service path (where an unknown method is answered in the caller's
// protocol) and at each method's own path, so that a call's route, the
// pattern that served it, names its method.
func mountSessions(mux *http.ServeMux, h http.Handler) {
	path := sessionsPrefix
	mux.Handle(path, h)
	methods := logbookv1.File_logbook_v1_sessions_proto.Services().ByName("Sessions").Methods()
	for i := range methods.Len() {
		mux.Handle(path+string(methods.Get(i).Name()), h)
	}
}

// sessionsOptions are the Sessions handler's options: the request limit,
// and with metrics the counting of its error replies.
func (s *Server) sessionsOptions() []connect.HandlerOption {
	opts := []connect.HandlerOption{connect.WithReadMaxBytes(s.opts.MaxRequestBytes)}
	if s.opts.Metrics != nil {
		opts = append(opts, connect.WithInterceptors(errorCounter{s.opts.Metrics}))
	}
	return opts
}

// instrument mounts MetricsPath and counts every request by route and
// status, refusals included; without metrics it returns h as it is.
func (s *Server) instrument(mux *http.ServeMux, h http.Handler) http.Handler {
	m := s.opts.Metrics
	if m == nil {
		return h
	}
	mux.Handle("GET "+MetricsPath, m.Handler())
	return m.InstrumentHTTP(mux, h)
}

// errorCounter counts the error replies of the Sessions handler in
// logbook_errors_total, by the logbook code they carry (the Logbook-Code
// metadata toConnect sets) or, without one, by their RPC status.
type errorCounter struct{ m *metrics.Metrics }

// WrapUnary implements connect.Interceptor.
func (c errorCounter) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		resp, err := next(ctx, req)
		c.count(err)
		return resp, err
	}
}

// WrapStreamingClient implements connect.Interceptor; a handler has no
// client streams to count.
func (c errorCounter) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler implements connect.Interceptor.
func (c errorCounter) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		err := next(ctx, conn)
		c.count(err)
		return err
	}
}

func (c errorCounter) count(err error) {
	if err == nil {
		return
	}
	code := connect.CodeOf(err).String()
	if ce := (*connect.Error)(nil); errors.As(err, &ce) {
		if lc := ce.Meta().Get(codeHeader); lc != "" {
			code = lc
		}
	}
	c.m.Error(code)
}
