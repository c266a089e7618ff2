package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk"
)

// t0 is the test clock's start.
var t0 = time.Date(2026, 12, 7, 20, 0, 0, 0, time.UTC)

// clock is a settable test clock.
type clock struct{ ns atomic.Int64 }

func newClock() *clock               { c := &clock{}; c.ns.Store(t0.UnixNano()); return c }
func (c *clock) now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) add(d time.Duration) { c.ns.Add(int64(d)) }

var (
	keysOnce sync.Once
	rsaKey   *rsa.PrivateKey
	ecKey    *ecdsa.PrivateKey
	edKey    ed25519.PrivateKey
)

// testKeys generates the test keys once per test binary.
func testKeys(t testing.TB) {
	t.Helper()
	keysOnce.Do(func() {
		var err error
		if rsaKey, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if ecKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
		_, edKey, _ = ed25519.GenerateKey(rand.Reader)
	})
}

// pemFile writes the public keys of keys as a PEM file.
func pemFile(t testing.TB, dir string, keys ...crypto.Signer) string {
	t.Helper()
	var out []byte
	for _, k := range keys {
		der, err := x509.MarshalPKIXPublicKey(k.Public())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})...)
	}
	path := filepath.Join(dir, "idp.pem")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// jwtConfig is a configuration accepting JWTs of issuer "https://id.test"
// for audience "logbook" verified with the key file path.
func jwtConfig(t testing.TB, path string, jwks bool) *config.Config {
	j := &config.JWT{Issuer: "https://id.test", Audience: "logbook", TenantClaim: "tenant", RoleClaim: "role", Leeway: 30 * time.Second}
	if jwks {
		j.JWKSFile = path
	} else {
		j.PublicKeyFile = path
	}
	return &config.Config{DataDir: t.TempDir(), Auth: config.Auth{JWT: j}}
}

// claims are the claims of a valid token at t0.
func claims() map[string]any {
	return map[string]any{
		"iss": "https://id.test", "aud": []string{"logbook", "other"}, "sub": "alice@example.com",
		"exp": t0.Add(10 * time.Minute).Unix(), "nbf": t0.Add(-time.Minute).Unix(), "iat": t0.Unix(),
		"tenant": "acme", "role": "write",
	}
}

// sign signs c with key under alg, with kid when it is not "".
func sign(t testing.TB, alg jose.SignatureAlgorithm, key any, kid string, c map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func newJWTTestVerifier(t testing.TB, cfg *config.Config, c *clock) *Verifier {
	t.Helper()
	v, err := newVerifier(context.Background(), Options{Config: cfg}, c.now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

func TestJWTAcceptedAlgorithms(t *testing.T) {
	testKeys(t)
	dir := t.TempDir()
	v := newJWTTestVerifier(t, jwtConfig(t, pemFile(t, dir, rsaKey, ecKey, edKey), false), newClock())
	if !v.Configured() {
		t.Fatal("Configured = false with a JWT key")
	}
	for _, tc := range []struct {
		alg jose.SignatureAlgorithm
		key any
	}{
		{jose.RS256, rsaKey}, {jose.RS512, rsaKey}, {jose.PS256, rsaKey}, {jose.PS384, rsaKey},
		{jose.ES256, ecKey}, {jose.EdDSA, edKey},
	} {
		// PEM keys have no kid: a token naming one is checked against them all.
		for _, kid := range []string{"", "idp-2026"} {
			p, err := v.Verify(context.Background(), sign(t, tc.alg, tc.key, kid, claims()))
			if err != nil || p != (Principal{Name: "alice@example.com", Tenant: "acme", Role: RoleWrite}) {
				t.Errorf("%s, kid %q: Verify = %+v, %v", tc.alg, kid, p, err)
			}
		}
	}
}

func TestJWTRefusals(t *testing.T) {
	testKeys(t)
	dir := t.TempDir()
	keyFile := pemFile(t, dir, ecKey)
	pubPEM, _ := os.ReadFile(keyFile)
	v := newJWTTestVerifier(t, jwtConfig(t, keyFile, false), newClock())
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	with := func(k string, val any) map[string]any {
		c := claims()
		if val == nil {
			delete(c, k)
		} else {
			c[k] = val
		}
		return c
	}
	b64 := base64.RawURLEncoding.EncodeToString
	payload, _ := json.Marshal(claims())
	for _, tc := range []struct {
		name, token, want string
	}{
		{"alg none", b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + b64(payload) + ".", `JWT algorithm "none" is not accepted`},
		{"HS256 with the public key as secret", sign(t, jose.HS256, pubPEM, "", claims()), `JWT algorithm "HS256" is not accepted`},
		{"another key", sign(t, jose.ES256, other, "", claims()), "signature does not verify"},
		{"tampered payload", func() string {
			parts := strings.Split(sign(t, jose.ES256, ecKey, "", claims()), ".")
			forged, _ := json.Marshal(with("role", "admin"))
			return parts[0] + "." + b64(forged) + "." + parts[2]
		}(), "signature does not verify"},
		{"garbage", "x.y.z", "neither a logbook token"},
		{"expired", sign(t, jose.ES256, ecKey, "", with("exp", t0.Add(-31*time.Second).Unix())), "JWT expired at 2026-12-07T19:59:29Z"},
		{"no exp", sign(t, jose.ES256, ecKey, "", with("exp", nil)), "no exp claim"},
		{"not yet valid", sign(t, jose.ES256, ecKey, "", with("nbf", t0.Add(time.Minute).Unix())), "not valid before 2026-12-07T20:01:00Z"},
		{"issued in the future", sign(t, jose.ES256, ecKey, "", with("iat", t0.Add(time.Minute).Unix())), "issued in the future"},
		{"wrong issuer", sign(t, jose.ES256, ecKey, "", with("iss", "https://evil.test")), `issuer "https://evil.test" is not the configured issuer "https://id.test"`},
		{"wrong audience", sign(t, jose.ES256, ecKey, "", with("aud", "other")), `audience does not include the configured audience "logbook"`},
		{"no sub", sign(t, jose.ES256, ecKey, "", with("sub", nil)), "no sub claim"},
		{"control character in sub", sign(t, jose.ES256, ecKey, "", with("sub", "al\nice")), "sub claim \"al\\nice\" has a control character"},
		{"no tenant", sign(t, jose.ES256, ecKey, "", with("tenant", nil)), `JWT has no "tenant" claim`},
		{"tenant not a string", sign(t, jose.ES256, ecKey, "", with("tenant", 7)), `JWT claim "tenant" is not a string`},
		{"bad tenant", sign(t, jose.ES256, ecKey, "", with("tenant", "Acme")), `JWT claim "tenant": tenant name "Acme" must match`},
		{"all tenants without operator", sign(t, jose.ES256, ecKey, "", with("tenant", "*")), `needs role operator, not write`},
		{"no role", sign(t, jose.ES256, ecKey, "", with("role", nil)), `JWT has no "role" claim`},
		{"bad role", sign(t, jose.ES256, ecKey, "", with("role", "root")), `JWT claim "role" = "root" is not a role`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := v.Verify(context.Background(), tc.token)
			if p != (Principal{}) {
				t.Errorf("principal %+v returned with the error", p)
			}
			wantUnauthenticated(t, err, tc.token, tc.want)
		})
	}
}

func TestJWTOperatorOfAllTenantsAndLongSubject(t *testing.T) {
	testKeys(t)
	v := newJWTTestVerifier(t, jwtConfig(t, pemFile(t, t.TempDir(), edKey), false), newClock())
	c := claims()
	c["tenant"], c["role"], c["sub"] = "*", "operator", strings.Repeat("é", 40) // 80 bytes
	p, err := v.Verify(context.Background(), sign(t, jose.EdDSA, edKey, "", c))
	if err != nil || p.Tenant != AllTenants || p.Role != RoleOperator || p.Name != strings.Repeat("é", 32) {
		t.Fatalf("Verify = %+v, %v; want operator of * named by the sub's first 64 bytes", p, err)
	}
}

func TestJWTLeewayAndCacheExpiry(t *testing.T) {
	testKeys(t)
	clk := newClock()
	v := newJWTTestVerifier(t, jwtConfig(t, pemFile(t, t.TempDir(), ecKey), false), clk)
	c := claims()
	c["exp"] = t0.Add(90 * time.Second).Unix()
	tok := sign(t, jose.ES256, ecKey, "", c)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatal(err)
	}
	clk.add(100 * time.Second) // past exp, within the 30 s leeway: verified again and accepted
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("within the leeway: %v", err)
	}
	clk.add(30 * time.Second) // past exp + leeway: the cache must not answer
	_, err := v.Verify(context.Background(), tok)
	wantUnauthenticated(t, err, tok, "JWT expired")
}

func TestJWKSKeySelectionAndRotation(t *testing.T) {
	testKeys(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "idp.jwks")
	writeJWKS := func(keys ...jose.JSONWebKey) {
		b, err := json.Marshal(jose.JSONWebKeySet{Keys: keys})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	ecPub := jose.JSONWebKey{Key: ecKey.Public(), KeyID: "ec-1", Algorithm: string(jose.ES256), Use: "sig"}
	rsaPub := jose.JSONWebKey{Key: rsaKey.Public(), KeyID: "rsa-1", Algorithm: string(jose.RS256), Use: "sig"}
	writeJWKS(ecPub, rsaPub)
	v := newJWTTestVerifier(t, jwtConfig(t, path, true), newClock())
	ctx := context.Background()
	ecTok := sign(t, jose.ES256, ecKey, "ec-1", claims())
	for _, tok := range []string{ecTok, sign(t, jose.RS256, rsaKey, "rsa-1", claims()), sign(t, jose.ES256, ecKey, "", claims())} {
		if _, err := v.Verify(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	_, err := v.Verify(ctx, sign(t, jose.ES256, ecKey, "nope", claims()))
	wantUnauthenticated(t, err, "", `JWT kid "nope" names no configured key for ES256`)
	// The key is rotated out: its tokens, cached or not, are refused once
	// the file is re-read.
	writeJWKS(rsaPub)
	waitFor(t, "the verifier drops the removed key", func() bool { _, err := v.Verify(ctx, ecTok); return err != nil })
	// A key file that stops parsing keeps the keys read before.
	os.WriteFile(path, []byte("{"), 0o644)
	if err := v.jwt.refresh(); sdk.CodeOf(err) != sdk.CodeConfigInvalid {
		t.Fatalf("refresh of a bad key file = %v; want CONFIG_INVALID", err)
	}
	if _, err := v.Verify(ctx, sign(t, jose.RS256, rsaKey, "rsa-1", claims())); err != nil {
		t.Fatalf("after a bad key file: %v", err)
	}
}

func TestKeyFileRefusals(t *testing.T) {
	testKeys(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	der, _ := x509.MarshalPKCS8PrivateKey(ecKey)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	smallDER, _ := x509.MarshalPKIXPublicKey(small.Public())
	symmetric, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: []byte("0123456789abcdef0123456789abcdef"), KeyID: "h"}}})
	private, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: ecKey, KeyID: "p"}}})
	for _, tc := range []struct {
		name, path string
		jwks       bool
		want       string
	}{
		{"missing", filepath.Join(dir, "absent.pem"), false, "cannot open it"},
		{"no key", write("empty.pem", "nothing here"), false, "holds no PEM public key"},
		{"private key", write("priv.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))), false, "is a private key"},
		{"small RSA", write("small.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: smallDER}))), false, "RSA key of 1024 bits"},
		{"JWKS not JSON", write("bad.jwks", "["), true, "is not a JSON Web Key Set"},
		{"JWKS empty", write("empty.jwks", `{"keys": []}`), true, "holds no key"},
		{"JWKS symmetric key", write("sym.jwks", string(symmetric)), true, `key 0 (kid "h") is not a public key`},
		{"JWKS private key", write("priv.jwks", string(private)), true, `key 0 (kid "p") is not a public key`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewVerifier(context.Background(), Options{Config: jwtConfig(t, tc.path, tc.jwks)})
			if sdk.CodeOf(err) != sdk.CodeConfigInvalid || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
				t.Fatalf("NewVerifier = %v; want CONFIG_INVALID naming %s and saying %q", err, tc.path, tc.want)
			}
		})
	}
}

// FuzzCheckClaims checks that claim validation never panics and accepts
// only principals the rest of logbook can trust: a valid scope and a name
// of at most MaxSubjectBytes of UTF-8 without control characters.
func FuzzCheckClaims(f *testing.F) {
	for _, c := range []map[string]any{
		claims(),
		{"iss": "https://id.test", "aud": "logbook", "sub": "ops", "exp": t0.Add(time.Hour).Unix(), "tenant": "*", "role": "operator"},
		{"iss": "https://id.test", "aud": "logbook", "sub": strings.Repeat("日本", 20), "exp": t0.Add(time.Hour).Unix(), "tenant": "default", "role": "read"},
		{"iss": "https://id.test", "aud": "logbook", "sub": "x", "exp": 1e300, "tenant": "a", "role": "admin"},
	} {
		b, _ := json.Marshal(c)
		f.Add(b)
	}
	f.Add([]byte(`{"exp": "soon"}`))
	f.Add([]byte(`null`))
	cfg := &config.JWT{Issuer: "https://id.test", Audience: "logbook", TenantClaim: "tenant", RoleClaim: "role", Leeway: 30 * time.Second}
	f.Fuzz(func(t *testing.T, payload []byte) {
		p, _, err := checkClaims(payload, cfg, t0)
		if err != nil {
			if sdk.CodeOf(err) != sdk.CodeUnauthenticated {
				t.Fatalf("error %v is not UNAUTHENTICATED", err)
			}
			return
		}
		if CheckScope(p.Tenant, p.Role) != nil {
			t.Fatalf("accepted scope %q/%s", p.Tenant, p.Role)
		}
		if p.Name == "" || len(p.Name) > MaxSubjectBytes || !utf8.ValidString(p.Name) || strings.ContainsFunc(p.Name, isControl) {
			t.Fatalf("accepted name %q", p.Name)
		}
	})
}

func isControl(r rune) bool { return r < 0x20 || r >= 0x7f && r < 0xa0 }
