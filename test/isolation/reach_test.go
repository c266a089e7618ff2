package isolation

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/seed-e5e476df/logbook/internal/testserve"
)

// The walk's requests reach the session they name: on a serve without
// credentials (one implicit tenant, as before tenants), every probe that
// names a session answers its case's missing code for an id that exists
// nowhere, and a read probe answers 2xx for one that exists. Without
// this, a request the server refused for its shape (USAGE before any
// lookup) would answer the same for B's session and for no session, and
// the tenant check would pass without looking.
func TestProbesReachTheSession(t *testing.T) {
	s, err := loadSpec(openapiPath)
	if err != nil {
		t.Fatal(err)
	}
	p, err := testserve.Start(logbookBin, startTimeout, "--data", filepath.Join(t.TempDir(), "data"), "--log-level", "warn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill9(exitTimeout) })
	d := &deployment{name: "plain", hosts: []*testserve.Process{p}, http: h2cClient()}
	t.Cleanup(d.http.CloseIdleConnections)
	w := &world{d: d, spec: s}
	conn, err := dialGRPC(p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	w.conns = append(w.conns, conn)
	w.mustV1(t, 0, "", http.MethodPost, "/v1/sessions", "application/json", `{"id":"`+theirsID+`"}`, http.StatusCreated)
	w.mustV1(t, 0, "", http.MethodPost, "/v1/sessions/"+theirsID+"/events?flush=true", "application/x-ndjson", appendLine+userLine("m", needle), http.StatusOK)
	for _, pr := range w.probes(t) {
		if !pr.namesSession {
			continue
		}
		a, err := pr.do(t.Context(), 0, "", "", nowhereID)
		if err != nil {
			t.Fatalf("%s: %v", pr.name, err)
		}
		if a.Code != pr.missing {
			t.Errorf("%s on an id that exists nowhere: %v, want %s", pr.name, a, pr.missing)
		}
		if pr.role != roleRead {
			continue
		}
		if a, err := pr.do(t.Context(), 0, "", "", theirsID); err != nil || a.Status >= 300 {
			t.Errorf("%s on a stored session: %v %v, want it found", pr.name, a, err)
		}
	}
}
