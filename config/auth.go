package config

import (
	"path/filepath"
	"time"

	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// The defaults and bounds of the auth block's jwt block.
const (
	// DefaultTenantClaim is the JWT claim holding the tenant: "tenant".
	DefaultTenantClaim = "tenant"
	// DefaultRoleClaim is the JWT claim holding the role: "role".
	DefaultRoleClaim = "role"
	// DefaultJWTLeeway is the clock skew allowed on exp, nbf and iat: 30s.
	DefaultJWTLeeway = 30 * time.Second
	// MaxJWTLeeway is the largest leeway: 5m.
	MaxJWTLeeway = 5 * time.Minute
)

var authSchema = schema{
	where:  "in auth",
	attrs:  []string{"tokens_file"},
	blocks: []string{"jwt"},
}

var jwtSchema = schema{
	where: "in jwt",
	attrs: []string{"public_key_file", "jwks_file", "issuer", "audience", "tenant_claim", "role_claim", "leeway"},
}

// Auth is the body of the auth block: the credentials logbook serve
// accepts besides --token-file (docs/operations.md, "Tenants, roles and
// tokens"). Without the block it holds the defaults: the token store and
// no JWT.
type Auth struct {
	// TokensFile is the token file that `logbook token` writes and serve
	// reads. Key tokens_file; a relative path is resolved against DataDir.
	// Default "": <data_dir>/tokens, or, when the primary persistence is
	// postgres, a table in its schema. When set it is used whatever the
	// primary is.
	TokensFile string

	// JWT is the jwt block, or nil when there is none: then no JWT is
	// accepted.
	JWT *JWT
}

// JWT is the body of the auth block's jwt block: how serve verifies JSON
// Web Tokens signed by an identity provider. Keys are read from files,
// never fetched; serve re-reads a file when it changes.
type JWT struct {
	// PublicKeyFile is a PEM file of one or more public keys (PUBLIC KEY,
	// RSA PUBLIC KEY or CERTIFICATE blocks). Key public_key_file; a
	// relative path is resolved against the config file's directory.
	// Exactly one of PublicKeyFile and JWKSFile is set.
	PublicKeyFile string

	// JWKSFile is a JSON Web Key Set file of public keys; a token's kid
	// selects one. Key jwks_file; resolved as PublicKeyFile.
	JWKSFile string

	// Issuer is the iss claim every token must carry. Key issuer;
	// required.
	Issuer string

	// Audience must be one of a token's aud values. Key audience;
	// required.
	Audience string

	// TenantClaim names the claim holding the tenant: a tenant name, or
	// "*" with role operator. Key tenant_claim; default "tenant".
	TenantClaim string

	// RoleClaim names the claim holding the role: read, write, admin or
	// operator. Key role_claim; default "role".
	RoleClaim string

	// Leeway is the clock skew allowed when checking exp, nbf and iat.
	// Key leeway; default 30s; 0 – 5m.
	Leeway time.Duration
}

func (d *decoder) auth(c *Config, blocks []*hclsyntax.Block) {
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks[1:] {
		d.errorf(b.TypeRange, "auth block is declared twice (first at %s)", d.pos(blocks[0].TypeRange))
	}
	b := blocks[0]
	d.noLabels(b)
	attrs, inner := d.content(b.Body, authSchema)
	var tokens string
	if d.nonEmpty(attrs["tokens_file"], &tokens, " (omit tokens_file for <data_dir>/tokens)") == set {
		c.Auth.TokensFile = c.ResolvePath(tokens)
	}
	for i, jb := range inner {
		if i > 0 {
			d.errorf(jb.TypeRange, "jwt block is declared twice in auth (first at %s)", d.pos(inner[0].TypeRange))
			continue
		}
		c.Auth.JWT = d.jwt(jb)
	}
}

func (d *decoder) jwt(b *hclsyntax.Block) *JWT {
	d.noLabels(b)
	attrs, _ := d.content(b.Body, jwtSchema)
	j := &JWT{TenantClaim: DefaultTenantClaim, RoleClaim: DefaultRoleClaim, Leeway: DefaultJWTLeeway}
	pk := d.nonEmpty(attrs["public_key_file"], &j.PublicKeyFile, "")
	ks := d.nonEmpty(attrs["jwks_file"], &j.JWKSFile, "")
	switch {
	case pk == set && ks == set:
		d.errorf(attrs["jwks_file"].SrcRange, "public_key_file and jwks_file are exclusive: set one of them")
	case pk == unset && ks == unset:
		d.errorf(b.TypeRange, `jwt block needs public_key_file = "…" (PEM) or jwks_file = "…" (JSON Web Key Set)`)
	}
	j.PublicKeyFile = d.configPath(j.PublicKeyFile)
	j.JWKSFile = d.configPath(j.JWKSFile)
	for _, k := range []struct {
		key, example string
		dst          *string
	}{{"issuer", `"https://id.example.com/"`, &j.Issuer}, {"audience", `"logbook"`, &j.Audience}} {
		if d.nonEmpty(attrs[k.key], k.dst, "") == unset {
			d.errorf(b.TypeRange, "jwt block needs %s, such as %s = %s: tokens of another %s are refused", k.key, k.key, k.example, k.key)
		}
	}
	d.nonEmpty(attrs["tenant_claim"], &j.TenantClaim, ` (omit it for "tenant")`)
	d.nonEmpty(attrs["role_claim"], &j.RoleClaim, ` (omit it for "role")`)
	d.duration(attrs["leeway"], &j.Leeway, 0, MaxJWTLeeway)
	return j
}

// configPath resolves a path given in the config file against the file's
// directory; "" stays "".
func (d *decoder) configPath(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(d.baseDir, p)
}
