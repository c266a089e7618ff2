package isolation

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/internal/pgtest"
	"github.com/seed-e5e476df/logbook/internal/testserve"
)

const (
	startTimeout = 60 * time.Second
	exitTimeout  = 30 * time.Second
	// tenantA and tenantB are the two tenants the walk keeps apart; their
	// names are long enough that /metrics cannot hold them by chance.
	tenantA = "iso-alpha"
	tenantB = "iso-beta"
	// jwtIssuer and jwtAudience are what the servers' auth block expects
	// of a JWT.
	jwtIssuer   = "iso-issuer"
	jwtAudience = "iso-audience"
)

// deployment is one backend served by real `logbook serve` processes over
// one config and data directory (one process; two for PostgreSQL, on one
// schema), with the credentials of the walk.
type deployment struct {
	name   string
	dir    string
	config string // the config file every process and token command reads
	data   string // the data directory (the tokens file of JSONL and SQLite)
	hosts  []*testserve.Process
	key    ed25519.PrivateKey // signs the walk's JWTs
	tokens map[string]string  // by token name: the bearer token
	http   *http.Client
}

// backendBlock is the persistence block of a deployment's config.
type backendBlock func(t *testing.T) string

// backends are the deployments the walk runs, by name, and the number of
// serve processes each runs (two hosts on one PostgreSQL schema).
var backends = []struct {
	name  string
	hosts int
	block backendBlock
}{
	{"jsonl", 1, func(*testing.T) string { return "persistence \"jsonl\" {\n  compression = \"none\"\n}\n" }},
	{"sqlite", 1, func(*testing.T) string { return "persistence \"sqlite\" {}\n" }},
	{"postgres", 2, func(t *testing.T) string {
		dsn := pgtest.DSN(t)
		return fmt.Sprintf("persistence \"postgres\" {\n  dsn    = %s\n  schema = %s\n}\n", strconv.Quote(dsn), strconv.Quote(pgtest.Schema(t, dsn)))
	}},
}

// deploy writes the config (the backend's block and an auth block naming
// a fresh Ed25519 public key), creates the walk's tokens with `logbook
// token create` and starts the hosts; the test's end stops them.
func deploy(t *testing.T, name string, hosts int, block backendBlock) *deployment {
	t.Helper()
	d := &deployment{name: name, dir: t.TempDir(), tokens: map[string]string{}}
	d.data = filepath.Join(d.dir, "data")
	d.config = filepath.Join(d.dir, "logbook.hcl")
	priv, err := newDeploymentKey()
	if err != nil {
		t.Fatal(err)
	}
	d.key = priv
	der, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(d.dir, "jwt.pub.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	// The compaction block makes compact reach the session (without one it
	// is refused before any lookup, which would prove nothing).
	cfg := block(t) + "compaction {\n  summarizer = \"compactor-summary\"\n}\n" + fmt.Sprintf("auth {\n  jwt {\n    public_key_file = %s\n    issuer          = %s\n    audience        = %s\n  }\n}\n",
		strconv.Quote(keyFile), strconv.Quote(jwtIssuer), strconv.Quote(jwtAudience))
	if err := os.WriteFile(d.config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []string{tenantA, tenantB} {
		for _, r := range []role{roleRead, roleWrite, roleAdmin} {
			d.createToken(t, tenant, r, tokenName(tenant, r))
		}
	}
	d.createToken(t, tenantA, roleAdmin, "revoked")
	d.createToken(t, "*", roleOperator, "operator")
	d.http = h2cClient()
	t.Cleanup(d.http.CloseIdleConnections)
	for i := range hosts {
		args := []string{"--config", d.config, "--data", d.data, "--log-level", "warn"}
		if hosts > 1 {
			args[3] = filepath.Join(d.dir, "data-"+strconv.Itoa(i))
		}
		p, err := testserve.Start(logbookBin, startTimeout, args...)
		if err != nil {
			t.Fatalf("%s: starting host %d: %v", name, i, err)
		}
		t.Cleanup(func() {
			if err := p.Kill9(exitTimeout); err != nil {
				t.Errorf("%s: stopping host %d: %v", name, i, err)
			}
		})
		d.hosts = append(d.hosts, p)
	}
	return d
}

// tokenName is the name of tenant's token of role r.
func tokenName(tenant string, r role) string { return tenant + "." + r.String() }

// createToken runs `logbook token create` and keeps the token it prints
// last.
func (d *deployment) createToken(t *testing.T, tenant string, r role, name string) {
	t.Helper()
	out := d.logbook(t, "token", "create", "--tenant", tenant, "--role", r.String(), "--name", name)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	tok := strings.TrimSpace(lines[len(lines)-1])
	if !strings.HasPrefix(tok, "lb_") {
		t.Fatalf("%s: token create printed %q last, not a token", d.name, tok)
	}
	d.tokens[name] = tok
}

// logbook runs the logbook binary with args on the deployment's config
// and data and returns its stdout; a failure fails t with its stderr.
func (d *deployment) logbook(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, logbookBin, append(args, "--config", d.config, "--data", d.data)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = withoutLogbookEnv()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: logbook %s: %v\n%s", d.name, strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// withoutLogbookEnv is the test's environment without LOGBOOK_CONFIG
// and LOGBOOK_DATA, so a command reads only its flags.
func withoutLogbookEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOGBOOK_CONFIG=") && !strings.HasPrefix(kv, "LOGBOOK_DATA=") {
			env = append(env, kv)
		}
	}
	return env
}

// token is the bearer token of tenant's role r.
func (d *deployment) token(tenant string, r role) string { return d.tokens[tokenName(tenant, r)] }

// base is host i's URL.
func (d *deployment) base(i int) string { return "http://" + d.hosts[i].Addr() }

// jwt signs a JWT for subject, tenant and role, valid from nbf to exp,
// with the deployment's key, issuer and audience.
func (d *deployment) jwt(subject, tenant string, r role, nbf, exp time.Time) string {
	return signJWT(d.key, subject, tenant, r, nbf, exp, jwtIssuer, jwtAudience)
}

// newDeploymentKey is a fresh Ed25519 key pair's private half.
func newDeploymentKey() (ed25519.PrivateKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	return priv, err
}

// signJWT signs a JWT (EdDSA, compact serialization) with key.
//
// It is signed here by hand, not with the JOSE library the server
// verifies with, so that a fault of that library in encoding cannot hide
// the same fault in decoding.
func signJWT(key ed25519.PrivateKey, subject, tenant string, r role, nbf, exp time.Time, iss, aud string) string {
	enc := base64.RawURLEncoding
	head, _ := json.Marshal(map[string]string{"alg": "EdDSA", "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"iss": iss, "aud": aud, "sub": subject,
		"tenant": tenant, "role": r.String(),
		"iat": nbf.Unix(), "nbf": nbf.Unix(), "exp": exp.Unix(),
	})
	signing := enc.EncodeToString(head) + "." + enc.EncodeToString(claims)
	return signing + "." + enc.EncodeToString(ed25519.Sign(key, []byte(signing)))
}

// h2cClient is an HTTP client that speaks HTTP/1.1 and, for gRPC-style
// streams, HTTP/2 without TLS.
func h2cClient() *http.Client {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}}
}
