package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk"
)

// maxKeyFileBytes bounds a key file read.
const maxKeyFileBytes = 1 << 20

// minRSABits is the smallest RSA key accepted.
const minRSABits = 2048

// keySet is the JWT verification keys read from the key file at one
// moment. It is never changed once built.
type keySet struct {
	keys    []jose.JSONWebKey
	version string // the file's version (fileVersion) when read
}

// keyFile returns the key file cfg names and whether it is a JWKS.
func keyFile(cfg *config.JWT) (string, bool) {
	if cfg.JWKSFile != "" {
		return cfg.JWKSFile, true
	}
	return cfg.PublicKeyFile, false
}

// loadKeys reads the key file of cfg: PEM public keys or a JSON Web Key
// Set of public keys. A file that cannot be read, holds a private or
// symmetric key, a key of another type (RSA of at least 2048 bits, ECDSA
// P-256/384/521 or Ed25519) or no key is CONFIG_INVALID naming it.
func loadKeys(cfg *config.JWT) (*keySet, error) {
	path, jwks := keyFile(cfg)
	bad := func(format string, args ...any) *sdk.Error {
		return sdk.Errorf(sdk.CodeConfigInvalid, op, "jwt key file %s: %s", strconv.Quote(path), fmt.Sprintf(format, args...))
	}
	f, err := os.Open(path)
	if err != nil {
		e := bad("cannot open it")
		e.Err = err
		return nil, e
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, bad("cannot stat it: %v", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	switch {
	case err != nil:
		return nil, bad("cannot read it: %v", err)
	case len(data) > maxKeyFileBytes:
		return nil, bad("is larger than %d bytes", maxKeyFileBytes)
	}
	var keys []jose.JSONWebKey
	if jwks {
		keys, err = parseJWKS(data)
	} else {
		keys, err = parsePEMKeys(data)
	}
	if err != nil {
		return nil, bad("%v", err)
	}
	return &keySet{keys: keys, version: fileVersion(fi)}, nil
}

// parsePEMKeys reads PUBLIC KEY, RSA PUBLIC KEY and CERTIFICATE blocks.
func parsePEMKeys(data []byte) ([]jose.JSONWebKey, error) {
	var keys []jose.JSONWebKey
	for n := 0; ; n++ {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		var key any
		var err error
		switch {
		case b.Type == "PUBLIC KEY":
			key, err = x509.ParsePKIXPublicKey(b.Bytes)
		case b.Type == "RSA PUBLIC KEY":
			key, err = x509.ParsePKCS1PublicKey(b.Bytes)
		case b.Type == "CERTIFICATE":
			var c *x509.Certificate
			if c, err = x509.ParseCertificate(b.Bytes); err == nil {
				key = c.PublicKey
			}
		case strings.Contains(b.Type, "PRIVATE KEY"):
			return nil, errors.New("PEM block " + strconv.Itoa(n) + " is a private key: give the public key only (openssl pkey -pubout)")
		default:
			return nil, errors.New("PEM block " + strconv.Itoa(n) + " is a " + strconv.Quote(b.Type) + ", not a PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE")
		}
		if err != nil {
			return nil, errors.New("PEM block " + strconv.Itoa(n) + " (" + b.Type + ") does not parse: " + err.Error())
		}
		if err := checkKey(key); err != nil {
			return nil, errors.New("PEM block " + strconv.Itoa(n) + ": " + err.Error())
		}
		keys = append(keys, jose.JSONWebKey{Key: key})
	}
	if len(keys) == 0 {
		return nil, errors.New("holds no PEM public key")
	}
	return keys, nil
}

// parseJWKS reads a JSON Web Key Set of public keys.
func parseJWKS(data []byte) ([]jose.JSONWebKey, error) {
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, errors.New(`is not a JSON Web Key Set {"keys": [...]}: ` + err.Error())
	}
	if len(set.Keys) == 0 {
		return nil, errors.New("holds no key")
	}
	for i, k := range set.Keys {
		name := "key " + strconv.Itoa(i)
		if k.KeyID != "" {
			name += " (kid " + strconv.Quote(k.KeyID) + ")"
		}
		if !k.IsPublic() {
			return nil, errors.New(name + " is not a public key: a JWKS for logbook holds public keys only, never private or symmetric ones")
		}
		if err := checkKey(k.Key); err != nil {
			return nil, errors.New(name + ": " + err.Error())
		}
	}
	return set.Keys, nil
}

// checkKey accepts the public keys of the accepted algorithms.
func checkKey(key any) error {
	switch k := key.(type) {
	case *rsa.PublicKey:
		if k.N.BitLen() < minRSABits {
			return errors.New("RSA key of " + strconv.Itoa(k.N.BitLen()) + " bits; at least " + strconv.Itoa(minRSABits) + " are needed")
		}
	case *ecdsa.PublicKey:
		switch k.Curve.Params().Name {
		case "P-256", "P-384", "P-521":
		default:
			return errors.New("ECDSA key on curve " + k.Curve.Params().Name + "; P-256, P-384 and P-521 are accepted")
		}
	case ed25519.PublicKey:
	default:
		return errors.New("not an RSA, ECDSA or Ed25519 public key")
	}
	return nil
}
