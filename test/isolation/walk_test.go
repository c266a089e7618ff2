package isolation

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
)

// The session ids of the walk. own is tenant A's, theirs tenant B's (and
// absent from A), nowhere exists in no tenant; twin ids exist in B and are
// made again in A by the calls that create (one per creating call).
const (
	ownID     = "alpha-own"
	theirsID  = "beta-target"
	nowhereID = "nowhere-target"
)

// walkIDs are every id an answer of the walk may name, masked before
// answers are compared.
var walkIDs = []string{ownID, theirsID, nowhereID, twinID("v1"), twinID("connect"), twinID("grpc")}

// twinID is the id B holds and A creates through door.
func twinID(door string) string { return "beta-twin-" + door }

// probe is one route or method on one protocol: do makes its call on host
// with a bearer token, an explicit tenant ("" = none: ?tenant= on /v1,
// Logbook-Tenant on Connect and gRPC) and a session id.
type probe struct {
	name         string
	door         string // v1, connect or grpc
	role         role
	namesSession bool
	creates      bool
	missing      string // the code an id that exists nowhere gets
	do           func(ctx context.Context, host int, token, tenant, id string) (answer, error)
}

// world is a deployment with the walk's sessions and credentials.
type world struct {
	d     *deployment
	spec  *spec
	conns []*grpc.ClientConn // one per host
	calls atomic.Int64       // calls the walk made, for its log
}

// probes are every route of docs/openapi.json on /v1 and every Sessions
// method on Connect's JSON and on gRPC.
func (w *world) probes(t *testing.T) []probe {
	t.Helper()
	var out []probe
	for _, r := range w.spec.routes {
		c0, err := w.spec.routeCall(r, nowhereID)
		if err != nil {
			t.Fatalf("%s %s: %v", r.Method, r.Path, err)
		}
		out = append(out, probe{name: c0.Name, door: "v1", role: c0.Role, namesSession: c0.NamesSession, creates: c0.Creates, missing: c0.Missing,
			do: func(ctx context.Context, host int, token, tenant, id string) (answer, error) {
				c, err := w.spec.routeCall(r, id)
				if err != nil {
					return answer{}, err
				}
				return v1(ctx, w.d.http, w.d.base(host), token, tenant, c, walkIDs)
			}})
	}
	methods := sessionsService().Methods()
	for i := range methods.Len() {
		m := methods.Get(i)
		c0, err := methodCall(m, nowhereID)
		if err != nil {
			t.Fatalf("%s: %v", m.Name(), err)
		}
		out = append(out, probe{name: "Connect " + string(m.Name()), door: "connect", role: c0.Role, namesSession: c0.NamesSession, creates: c0.Creates, missing: c0.Missing,
			do: func(ctx context.Context, host int, token, tenant, id string) (answer, error) {
				c, err := methodCall(m, id)
				if err != nil {
					return answer{}, err
				}
				return connectJSON(ctx, w.d.http, w.d.base(host), token, tenant, c, walkIDs)
			}})
		out = append(out, probe{name: "gRPC " + string(m.Name()), door: "grpc", role: c0.Role, namesSession: c0.NamesSession, creates: c0.Creates, missing: c0.Missing,
			do: func(ctx context.Context, host int, token, tenant, id string) (answer, error) {
				c, err := methodCall(m, id)
				if err != nil {
					return answer{}, err
				}
				return grpcCall(ctx, w.conns[host], token, tenant, c, walkIDs)
			}})
	}
	return out
}

// credential is a bearer token the walk presents, and what to call it.
type credential struct{ name, bearer string }

// credentials are tenant A's token and a JWT of A, both of role r.
func (w *world) credentials(r role) []credential {
	now := time.Now()
	return []credential{
		{"A's " + r.String() + " token", w.d.token(tenantA, r)},
		{"A's " + r.String() + " JWT", w.d.jwt("alpha-"+r.String(), tenantA, r, now.Add(-time.Minute), now.Add(time.Hour))},
	}
}

// refused are credentials every route refuses with 401: none, a revoked
// token, an expired JWT and one not yet valid, and JWTs of another issuer
// or audience or signed by another key.
func (w *world) refused() []credential {
	now := time.Now()
	other, _ := newDeploymentKey()
	return []credential{
		{"no credential", ""},
		{"a revoked token", w.d.tokens["revoked"]},
		{"an expired JWT", w.d.jwt("alpha-expired", tenantA, roleAdmin, now.Add(-2*time.Hour), now.Add(-time.Hour))},
		{"a JWT not yet valid", w.d.jwt("alpha-early", tenantA, roleAdmin, now.Add(time.Hour), now.Add(2*time.Hour))},
		{"a JWT signed by another key", signJWT(other, "alpha-forged", tenantA, roleAdmin, now.Add(-time.Minute), now.Add(time.Hour), jwtIssuer, jwtAudience)},
		{"a JWT of another audience", signJWT(w.d.key, "alpha-aud", tenantA, roleAdmin, now.Add(-time.Minute), now.Add(time.Hour), jwtIssuer, "someone-else")},
	}
}

// check runs the walk's three checks on p at host.
func (w *world) check(t *testing.T, p probe, host int) {
	ctx := t.Context()
	ask := func(cred credential, tenant, id string) answer {
		t.Helper()
		w.calls.Add(1)
		a, err := p.do(ctx, host, cred.bearer, tenant, id)
		if err != nil {
			t.Fatalf("%s with %s on %s: %v", p.name, cred.name, id, err)
		}
		return a
	}
	// (c) Authentication first: no session is looked at.
	for _, cred := range w.refused() {
		if a := ask(cred, "", theirsID); a.Status != http.StatusUnauthorized {
			t.Errorf("%s with %s: %v, want 401", p.name, cred.name, a)
		}
	}
	// (b) A role below the route's: 403 PERMISSION_DENIED, the same
	// whether the session is A's, B's or nobody's.
	targets := []string{nowhereID}
	if p.namesSession {
		targets = []string{ownID, theirsID, nowhereID}
	}
	for _, r := range p.role.below() {
		for _, cred := range w.credentials(r) {
			first := ask(cred, "", targets[0])
			if first.Status != http.StatusForbidden || first.Code != "PERMISSION_DENIED" {
				t.Errorf("%s with %s on %s: %v, want 403 PERMISSION_DENIED", p.name, cred.name, targets[0], first)
				continue
			}
			for _, id := range targets[1:] {
				if a := ask(cred, "", id); a != first {
					t.Errorf("%s with %s: on %s %v, on %s %v: the refusal differs", p.name, cred.name, targets[0], first, id, a)
				}
			}
		}
	}
	// (a) Tenant scope: B's session is, to A, an id that exists nowhere.
	for _, cred := range w.credentials(p.role) {
		switch {
		case p.namesSession:
			theirs, nowhere := ask(cred, "", theirsID), ask(cred, "", nowhereID)
			if theirs.Code != p.missing {
				t.Errorf("%s with %s on B's session: %v, want %s", p.name, cred.name, theirs, p.missing)
			}
			if theirs != nowhere {
				t.Errorf("%s with %s: B's session answers\n  %v\nan id that exists nowhere answers\n  %v", p.name, cred.name, theirs, nowhere)
			}
			if a := ask(cred, tenantB, theirsID); a.Status != http.StatusForbidden || a.Code != "PERMISSION_DENIED" {
				t.Errorf("%s with %s naming tenant %s: %v, want 403 PERMISSION_DENIED", p.name, cred.name, tenantB, a)
			}
		case p.creates && cred.name == w.credentials(p.role)[0].name:
			a := ask(cred, "", twinID(p.door))
			if a.Status >= 300 {
				t.Errorf("%s with %s of the id %s B holds: %v, want it made in A", p.name, cred.name, twinID(p.door), a)
			}
		}
	}
	// A tenant name that breaks the name rule is refused as such, for an
	// operator too.
	op := credential{"the operator token", w.d.tokens["operator"]}
	if a := ask(op, "Not_A_Tenant", nowhereID); a.Status != http.StatusBadRequest || a.Code != "TENANT_INVALID" {
		t.Errorf("%s with %s naming tenant Not_A_Tenant: %v, want 400 TENANT_INVALID", p.name, op.name, a)
	}
	// An operator addresses B explicitly; without naming it, it works in
	// the implicit tenant, where B's session does not exist either.
	if p.namesSession {
		if a, n := ask(op, "", theirsID), ask(op, "", nowhereID); a != n || a.Code != p.missing {
			t.Errorf("%s with %s on B's session without naming B: %v; on no session: %v", p.name, op.name, a, n)
		}
		if p.role == roleRead {
			if a := ask(op, tenantB, theirsID); a.Status >= 300 {
				t.Errorf("%s with %s naming %s on B's session: %v, want it found", p.name, op.name, tenantB, a)
			}
		}
	}
}

// walk runs check on every probe at host.
func (w *world) walk(t *testing.T, host int) {
	probes := w.probes(t)
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) { w.check(t, p, host) })
	}
	t.Logf("%s: %d probes (/v1 routes, Connect and gRPC methods), %d calls on host %d", w.d.name, len(probes), w.calls.Load(), host)
}
