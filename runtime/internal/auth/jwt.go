package auth

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk"
)

// jwtAlgorithms are the signature algorithms a JWT may use: asymmetric
// ones only, so that a verification key can never sign ("none" and the
// HMAC algorithms are refused before any key is tried).
var jwtAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// MaxSubjectBytes is the longest Principal.Name a JWT gives: a longer sub
// claim is cut (at a character boundary) to this many bytes.
const MaxSubjectBytes = 64

// Cache bounds: a verified JWT is remembered until its exp, at most
// maxCacheAge, and at most maxCached of them at once.
const (
	maxCacheAge = time.Minute
	maxCached   = 10000
)

// jwtVerifier verifies JWTs against the keys of the auth.jwt block and
// remembers the ones it verified.
type jwtVerifier struct {
	cfg  config.JWT
	keys atomic.Pointer[keySet]
	now  func() time.Time

	mu    sync.RWMutex
	cache map[[sha256.Size]byte]cachedJWT
}

// cachedJWT is a verified JWT: its principal, until when it may be
// trusted without verifying again, and the keys that verified it (a cache
// entry of replaced keys is a miss).
type cachedJWT struct {
	p     Principal
	until time.Time
	keys  *keySet
}

// newJWTVerifier reads the key file of cfg.
func newJWTVerifier(cfg *config.JWT, now func() time.Time) (*jwtVerifier, error) {
	ks, err := loadKeys(cfg)
	if err != nil {
		return nil, err
	}
	v := &jwtVerifier{cfg: *cfg, now: now, cache: make(map[[sha256.Size]byte]cachedJWT)}
	v.keys.Store(ks)
	return v, nil
}

// refresh re-reads the key file when it changed; on failure the keys read
// last stay in use and the error is returned.
func (v *jwtVerifier) refresh() error {
	path, _ := keyFile(&v.cfg)
	fi, err := os.Stat(path)
	if err != nil {
		return sdk.Wrapf(sdk.CodeConfigInvalid, op, err, "jwt key file %s: cannot stat it; keeping the keys read before", strconv.Quote(path))
	}
	if fileVersion(fi) == v.keys.Load().version {
		return nil
	}
	ks, err := loadKeys(&v.cfg)
	if err != nil {
		return err
	}
	v.keys.Store(ks)
	return nil
}

// verify checks a JWT whose SHA-256 is hash.
func (v *jwtVerifier) verify(token string, hash [sha256.Size]byte) (Principal, error) {
	now := v.now()
	keys := v.keys.Load()
	v.mu.RLock()
	c, ok := v.cache[hash]
	v.mu.RUnlock()
	if ok && c.keys == keys && now.Before(c.until) {
		return c.p, nil
	}
	tok, err := jwt.ParseSigned(token, jwtAlgorithms)
	if err != nil {
		if alg := headerAlg(token); alg != "" && !slices.Contains(jwtAlgorithms, jose.SignatureAlgorithm(alg)) {
			return Principal{}, unauthenticated("JWT algorithm %s is not accepted; use RS256/384/512, PS256/384/512, ES256/384/512 or EdDSA", quoteClip(alg))
		}
		return Principal{}, unauthenticated("the bearer token is neither a logbook token (lb_…) nor a well-formed signed JWT")
	}
	h := tok.Headers[0]
	var payload json.RawMessage
	tried, verified := 0, false
	for _, k := range keys.keys {
		// A key without a kid (every PEM key) is tried for every token; a
		// key with one only for tokens naming it or naming none.
		if h.KeyID != "" && k.KeyID != "" && k.KeyID != h.KeyID || k.Algorithm != "" && k.Algorithm != h.Algorithm {
			continue
		}
		tried++
		if tok.Claims(k.Key, &payload) == nil {
			verified = true
			break
		}
	}
	switch {
	case tried == 0 && h.KeyID != "":
		return Principal{}, unauthenticated("JWT kid %s names no configured key for %s", quoteClip(h.KeyID), h.Algorithm)
	case !verified:
		return Principal{}, unauthenticated("JWT signature does not verify with the configured keys")
	}
	p, exp, err := checkClaims(payload, &v.cfg, now)
	if err != nil {
		return Principal{}, err
	}
	until := now.Add(maxCacheAge)
	if exp.Before(until) {
		until = exp
	}
	if now.Before(until) {
		v.remember(hash, cachedJWT{p: p, until: until, keys: keys}, now)
	}
	return p, nil
}

// remember caches c, first dropping the expired entries when the cache is
// full, and everything when that is not enough.
func (v *jwtVerifier) remember(hash [sha256.Size]byte, c cachedJWT, now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.cache) >= maxCached {
		for h, e := range v.cache {
			if !now.Before(e.until) {
				delete(v.cache, h)
			}
		}
		if len(v.cache) >= maxCached {
			clear(v.cache)
		}
	}
	v.cache[hash] = c
}

// headerAlg returns the alg of a compact JWS's header, "" when it has
// none or does not decode.
func headerAlg(token string) string {
	head, _, ok := strings.Cut(token, ".")
	if !ok {
		return ""
	}
	b, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return ""
	}
	var h struct {
		Alg string `json:"alg"`
	}
	if json.Unmarshal(b, &h) != nil {
		return ""
	}
	return h.Alg
}

// checkClaims checks the claims of a JWT whose signature verified against
// cfg at now: iss, aud, exp (required), nbf and iat within cfg.Leeway; a
// sub (the principal's name, cut to MaxSubjectBytes, without control
// characters); the role claim, one of the four roles; the tenant claim, a
// tenant name, or AllTenants with role operator. It returns the principal
// and the token's expiry. Every refusal is UNAUTHENTICATED naming the
// claim.
func checkClaims(payload []byte, cfg *config.JWT, now time.Time) (Principal, time.Time, error) {
	var std jwt.Claims
	var extra map[string]json.RawMessage
	if err := json.Unmarshal(payload, &std); err != nil {
		return Principal{}, time.Time{}, unauthenticated("JWT claims do not decode: %v", err)
	}
	if err := json.Unmarshal(payload, &extra); err != nil || extra == nil {
		return Principal{}, time.Time{}, unauthenticated("JWT claims are not a JSON object")
	}
	if std.Expiry == nil {
		return Principal{}, time.Time{}, unauthenticated("JWT has no exp claim; logbook accepts only tokens that expire")
	}
	err := std.ValidateWithLeeway(jwt.Expected{Issuer: cfg.Issuer, AnyAudience: jwt.Audience{cfg.Audience}, Time: now}, cfg.Leeway)
	switch {
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return Principal{}, time.Time{}, unauthenticated("JWT issuer %s is not the configured issuer %s", quoteClip(std.Issuer), strconv.Quote(cfg.Issuer))
	case errors.Is(err, jwt.ErrInvalidAudience):
		return Principal{}, time.Time{}, unauthenticated("JWT audience does not include the configured audience %s", strconv.Quote(cfg.Audience))
	case errors.Is(err, jwt.ErrExpired):
		return Principal{}, time.Time{}, unauthenticated("JWT expired at %s (leeway %s)", std.Expiry.Time().UTC().Format(time.RFC3339), cfg.Leeway)
	case errors.Is(err, jwt.ErrNotValidYet):
		return Principal{}, time.Time{}, unauthenticated("JWT is not valid before %s (leeway %s)", std.NotBefore.Time().UTC().Format(time.RFC3339), cfg.Leeway)
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return Principal{}, time.Time{}, unauthenticated("JWT is issued in the future, at %s (leeway %s)", std.IssuedAt.Time().UTC().Format(time.RFC3339), cfg.Leeway)
	case err != nil:
		return Principal{}, time.Time{}, unauthenticated("JWT claims do not validate: %v", err)
	}
	name, err := subject(std.Subject)
	if err != nil {
		return Principal{}, time.Time{}, err
	}
	roleName, err := stringClaim(extra, cfg.RoleClaim)
	if err != nil {
		return Principal{}, time.Time{}, err
	}
	role, err := ParseRole(roleName)
	if err != nil {
		return Principal{}, time.Time{}, unauthenticated("JWT claim %s = %s is not a role: read, write, admin or operator", strconv.Quote(cfg.RoleClaim), quoteClip(roleName))
	}
	tenant, err := stringClaim(extra, cfg.TenantClaim)
	if err != nil {
		return Principal{}, time.Time{}, err
	}
	if err := CheckScope(tenant, role); err != nil {
		return Principal{}, time.Time{}, unauthenticated("JWT claim %s: %s", strconv.Quote(cfg.TenantClaim), detail(err))
	}
	return Principal{Name: name, Tenant: tenant, Role: role}, std.Expiry.Time(), nil
}

// subject checks a sub claim and cuts it to MaxSubjectBytes.
func subject(sub string) (string, error) {
	switch {
	case sub == "":
		return "", unauthenticated("JWT has no sub claim; it names the caller in audit records")
	case !utf8.ValidString(sub):
		return "", unauthenticated("JWT sub claim is not valid UTF-8")
	case strings.ContainsFunc(sub, unicode.IsControl):
		return "", unauthenticated("JWT sub claim %s has a control character", quoteClip(sub))
	}
	if len(sub) > MaxSubjectBytes {
		cut := MaxSubjectBytes
		for !utf8.RuneStart(sub[cut]) {
			cut--
		}
		sub = sub[:cut]
	}
	return sub, nil
}

// stringClaim returns the string claim called name.
func stringClaim(claims map[string]json.RawMessage, name string) (string, error) {
	raw, ok := claims[name]
	if !ok {
		return "", unauthenticated("JWT has no %s claim", strconv.Quote(name))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", unauthenticated("JWT claim %s is not a string", strconv.Quote(name))
	}
	return s, nil
}

// quoteClip quotes a value taken from a token for a message, cut to 64
// bytes.
func quoteClip(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strconv.Quote(s)
}

// unauthenticated is the error of a refused credential.
func unauthenticated(format string, args ...any) error {
	return sdk.Errorf(sdk.CodeUnauthenticated, op, format, args...)
}
