package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"

	"github.com/seed-e5e476df/logbook/runtime/internal/auth"
	"github.com/seed-e5e476df/logbook/runtime/internal/engine"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1/logbookv1connect"
)

// The health endpoints.
const (
	// HealthzPath answers 200 while the process serves HTTP at all; it
	// never needs a credential and says nothing else.
	HealthzPath = "/healthz"
	// ReadyzPath answers 200 when the engine is ready (engine.Ready), else
	// 503 with an application/problem+json body naming what is not. Once
	// a credential is configured (always off loopback) it needs one, of
	// any role. Only an operator's credential gets each check's error text
	// (which may name a database's user, name and address); the server
	// logs it.
	ReadyzPath = "/readyz"
)

// mountHealth adds /healthz, /readyz and grpc.health.v1 to mux.
func (s *Server) mountHealth(mux *http.ServeMux) {
	mux.HandleFunc("GET "+HealthzPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.HandleFunc("GET "+ReadyzPath, s.readyz)
	mux.Handle(grpchealth.NewHandler(healthChecker{s}))
}

// viewerPattern is the route of Options.Viewer: every path no other route
// takes.
const viewerPattern = "/"

// public reports whether a request goes without a credential even when
// one is configured: HealthzPath, or a GET or HEAD the viewer serves
// (Options.Viewer; static files, no data). Only exact paths match, so no
// other path can pass for one.
func (s *Server) public(r *http.Request) bool {
	if r.URL.Path == HealthzPath {
		return true
	}
	if s.opts.Viewer == nil || r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	_, pattern := s.mux.Handler(r)
	return pattern == viewerPattern
}

// ready runs the engine's readiness check (bounded by
// engine.ProbeTimeout); ok when every component is ready. What is not
// ready is logged, each error once until it changes.
func (s *Server) ready(ctx context.Context) (checks []engine.Check, ok bool) {
	checks = s.h.Engine().Ready(ctx)
	var down []string
	for _, c := range checks {
		if c.Err != nil {
			down = append(down, c.Component+" "+c.Name+": "+c.Err.Error())
		}
	}
	why := strings.Join(down, "; ")
	s.readyMu.Lock()
	changed := why != s.notReady
	s.notReady = why
	s.readyMu.Unlock()
	if changed && why != "" {
		s.log.Warn("not ready", "why", why)
	} else if changed {
		s.log.Info("ready")
	}
	return checks, why == ""
}

// readyBody is the body of /readyz. When not ready it is an RFC 9457
// problem (application/problem+json) with the checks as an extension
// member; when ready the same members go as application/json.
type readyBody struct {
	Title  string      `json:"title"`
	Status int         `json:"status"`
	Detail string      `json:"detail,omitempty"`
	Checks []checkBody `json:"checks"`
}

// checkBody is one engine.Check of readyBody.
type checkBody struct {
	Component string `json:"component"`
	Name      string `json:"name"`
	Ready     bool   `json:"ready"`
	Code      string `json:"code,omitempty"`
	// Error is the check's error text, only for an operator's credential:
	// it may name what the backend connects to.
	Error string `json:"error,omitempty"`
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	checks, ok := s.ready(r.Context())
	p, authenticated := auth.FromContext(r.Context())
	detailed := authenticated && p.Role == auth.RoleOperator
	body := readyBody{Title: "ready", Status: http.StatusOK, Checks: make([]checkBody, len(checks))}
	var down []string
	for i, c := range checks {
		body.Checks[i] = checkBody{Component: c.Component, Name: c.Name, Ready: c.Err == nil}
		if c.Err != nil {
			body.Checks[i].Code = string(sdk.CodeOf(c.Err))
			if detailed {
				body.Checks[i].Error = c.Err.Error()
			}
			down = append(down, c.Component+" "+c.Name)
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json")
	if !ok {
		body.Title, body.Status = "not ready", http.StatusServiceUnavailable
		body.Detail = "not ready: " + strings.Join(down, ", ")
		w.Header().Set("Content-Type", "application/problem+json")
	}
	w.WriteHeader(body.Status)
	_ = json.NewEncoder(w).Encode(body)
}

// watchInterval is how often a grpc.health.v1 Watch stream checks the
// readiness again; it sends only a change.
const watchInterval = time.Second

// healthChecker answers grpc.health.v1 Check and Watch from the readiness
// check: SERVING exactly when /readyz answers 200, for the whole server
// ("") and for logbook.v1.Sessions.
type healthChecker struct{ s *Server }

// knownService refuses (NotFound) a service the server does not report.
func knownService(service string) error {
	if service != "" && service != logbookv1connect.SessionsName {
		return connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown service %q: this server reports the health of \"\" (the whole server) and %q", service, logbookv1connect.SessionsName))
	}
	return nil
}

// Check implements grpchealth.Checker. Once shutdown has begun it fails
// with Unavailable, which also ends every Watch stream.
func (h healthChecker) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	if err := knownService(req.Service); err != nil {
		return nil, err
	}
	if h.s.h.Stopping() {
		return nil, connect.NewError(connect.CodeUnavailable, errors.New("the server is shutting down"))
	}
	if _, ok := h.s.ready(ctx); !ok {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
}

// Watch implements grpchealth.Watcher: the stream checks again every
// watchInterval, so within one interval of the start of a shutdown its
// Check's Unavailable ends the stream instead of holding the shutdown.
// stop ends the goroutine that drives it.
func (h healthChecker) Watch(_ context.Context, req *grpchealth.CheckRequest, onChange func()) (stop func(), err error) {
	if err := knownService(req.Service); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				onChange()
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }, nil
}
