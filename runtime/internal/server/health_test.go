package server_test

import (
	"net/http"
	"testing"

	"github.com/seed-e5e476df/logbook/runtime/internal/server"
)

// With a credential configured, only /healthz answers without one, on
// loopback too: a path that merely starts like it, or climbs out of it,
// /readyz and grpc.health.v1 all need one.
func TestHealthPathsNeedNoToken(t *testing.T) {
	e := startEngine(t, headless(t.TempDir()))
	r := serve(t, e, server.Options{Verifier: operator("health-token-0123456789")})
	for path, want := range map[string]int{
		"/healthz":                             http.StatusOK,
		"/readyz":                              http.StatusUnauthorized,
		"/grpc.health.v1.Health/Check":         http.StatusUnauthorized,
		"/healthzx":                            http.StatusUnauthorized,
		"/readyz/":                             http.StatusUnauthorized,
		"/healthz/../logbook.v1.Sessions/List": http.StatusUnauthorized,
		"/grpc.health.v1.Health/Check/../../logbook.v1.Sessions": http.StatusUnauthorized,
	} {
		req, err := http.NewRequest(http.MethodGet, r.url+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s without a token: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
