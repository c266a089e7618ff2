package auth

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/seed-e5e476df/logbook/sdk/durable"
)

// BenchmarkVerifyToken verifies a store token among 1000: the cost every
// request with a scoped token pays.
func BenchmarkVerifyToken(b *testing.B) {
	ctx := context.Background()
	c := fileConfig(b)
	entries := make([]entry, 1000)
	var secret string
	for i := range entries {
		sec, hash := newSecret()
		entries[i] = entry{Token: Token{Name: "t" + strconv.Itoa(i), Tenant: "acme", Role: RoleWrite, Created: time.Now()}, hash: hash}
		if i == 500 {
			secret = sec
		}
	}
	if err := durable.WriteFile(c.ResolvePath("tokens"), encodeTokenFile(newTokenSet(entries)), 0o600); err != nil {
		b.Fatal(err)
	}
	v, err := NewVerifier(ctx, Options{Config: c})
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := v.Verify(ctx, secret); err != nil {
			b.Fatal(err)
		}
	}
}

// benchmarkJWT verifies one ES256 or RS256 JWT, again and again: cached,
// the cost of every request but the first of a token each minute.
func benchmarkJWT(b *testing.B, alg jose.SignatureAlgorithm, cached bool) {
	testKeys(b)
	ctx := context.Background()
	key := map[jose.SignatureAlgorithm]any{jose.ES256: ecKey, jose.RS256: rsaKey, jose.EdDSA: edKey}[alg]
	v, err := newVerifier(ctx, Options{Config: jwtConfig(b, pemFile(b, b.TempDir(), ecKey, rsaKey, edKey), false)}, time.Now)
	if err != nil {
		b.Fatal(err)
	}
	defer v.Close()
	c := claims()
	c["exp"], c["nbf"], c["iat"] = time.Now().Add(time.Hour).Unix(), time.Now().Unix(), time.Now().Unix()
	tok := sign(b, alg, key, "", c)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if !cached {
			v.jwt.mu.Lock()
			clear(v.jwt.cache)
			v.jwt.mu.Unlock()
		}
		if _, err := v.Verify(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyJWTCached(b *testing.B) { benchmarkJWT(b, jose.ES256, true) }

// BenchmarkVerifyJWTUncached is the first request of each token: parsing
// and one signature verification.
func BenchmarkVerifyJWTUncached(b *testing.B) {
	for _, alg := range []jose.SignatureAlgorithm{jose.ES256, jose.RS256, jose.EdDSA} {
		b.Run(string(alg), func(b *testing.B) { benchmarkJWT(b, alg, false) })
	}
}
