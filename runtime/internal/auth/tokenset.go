package auth

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed-e5e476df/logbook/sdk"
)

// tokenFileVersion is the version of the token file's document this build
// reads and writes.
const tokenFileVersion = 1

// entry is one stored token: its description and the SHA-256 of its
// secret.
type entry struct {
	Token
	hash [sha256.Size]byte
}

// tokenSet is the content of a store at one moment. It is never changed
// once built, so verifiers read it without a lock.
type tokenSet struct {
	entries []entry // sorted by name
	byHash  map[[sha256.Size]byte]Token
}

// newTokenSet indexes entries, which must have unique names and hashes.
func newTokenSet(entries []entry) *tokenSet {
	s := &tokenSet{entries: slices.Clone(entries), byHash: make(map[[sha256.Size]byte]Token, len(entries))}
	slices.SortFunc(s.entries, func(a, b entry) int { return strings.Compare(a.Name, b.Name) })
	for _, e := range s.entries {
		s.byHash[e.hash] = e.Token
	}
	return s
}

// tokens returns the descriptions in name order, a fresh slice.
func (s *tokenSet) tokens() []Token {
	out := make([]Token, len(s.entries))
	for i, e := range s.entries {
		out[i] = e.Token
	}
	return out
}

// find returns the index of the entry called name, or -1.
func (s *tokenSet) find(name string) int {
	return slices.IndexFunc(s.entries, func(e entry) bool { return e.Name == name })
}

// fileDoc is the token file: a versioned JSON document.
type fileDoc struct {
	Version int         `json:"version"`
	Tokens  []fileToken `json:"tokens"`
}

// fileToken is one token of the file.
type fileToken struct {
	Name    string `json:"name"`
	Tenant  string `json:"tenant"`
	Role    string `json:"role"`
	SHA256  string `json:"sha256"`
	Created string `json:"created"`
}

// parseTokenFile reads the token file's content; where names the file in
// errors. Anything but the documented shape is CONFIG_INVALID naming the
// file, the token (by position and name) and the rule.
func parseTokenFile(data []byte, where string) (*tokenSet, error) {
	bad := func(format string, args ...any) error {
		return sdk.Errorf(sdk.CodeConfigInvalid, op, "%s: %s", where, fmt.Sprintf(format, args...))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc struct {
		Version *int         `json:"version"`
		Tokens  *[]fileToken `json:"tokens"`
	}
	if err := dec.Decode(&doc); err != nil {
		return nil, bad(`is not the token document {"version": %d, "tokens": [...]}: %v`, tokenFileVersion, err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, bad("has data after its JSON document")
	}
	switch {
	case doc.Version == nil:
		return nil, bad("has no version; this build reads version %d", tokenFileVersion)
	case *doc.Version != tokenFileVersion:
		return nil, bad("is version %d; this build reads version %d", *doc.Version, tokenFileVersion)
	case doc.Tokens == nil:
		return nil, bad(`has no "tokens" array`)
	}
	entries := make([]entry, 0, len(*doc.Tokens))
	names := make(map[string]bool, len(*doc.Tokens))
	hashes := make(map[[sha256.Size]byte]string, len(*doc.Tokens))
	for i, ft := range *doc.Tokens {
		e, err := ft.entry()
		if err != nil {
			return nil, bad("token %d (%s): %v", i, strconv.Quote(ft.Name), detail(err))
		}
		if names[e.Name] {
			return nil, bad("token %d: name %s is used twice", i, strconv.Quote(e.Name))
		}
		if other, dup := hashes[e.hash]; dup {
			return nil, bad("token %d (%s): same sha256 as token %s", i, strconv.Quote(e.Name), strconv.Quote(other))
		}
		names[e.Name], hashes[e.hash] = true, e.Name
		entries = append(entries, e)
	}
	return newTokenSet(entries), nil
}

// entry checks one token of the file.
func (ft fileToken) entry() (entry, error) {
	if err := ValidateTokenName(ft.Name); err != nil {
		return entry{}, err
	}
	role, err := ParseRole(ft.Role)
	if err != nil {
		return entry{}, err
	}
	if err := CheckScope(ft.Tenant, role); err != nil {
		return entry{}, err
	}
	var h [sha256.Size]byte
	if len(ft.SHA256) != 2*sha256.Size || strings.ToLower(ft.SHA256) != ft.SHA256 {
		return entry{}, sdk.Errorf(sdk.CodeConfigInvalid, op, "sha256 must be 64 lowercase hex digits")
	}
	if _, err := hex.Decode(h[:], []byte(ft.SHA256)); err != nil {
		return entry{}, sdk.Errorf(sdk.CodeConfigInvalid, op, "sha256 must be 64 lowercase hex digits")
	}
	created, err := time.Parse(time.RFC3339Nano, ft.Created)
	if err != nil {
		return entry{}, sdk.Errorf(sdk.CodeConfigInvalid, op, "created %s is not an RFC 3339 time", strconv.Quote(ft.Created))
	}
	return entry{Token: Token{Name: ft.Name, Tenant: ft.Tenant, Role: role, Created: created.UTC()}, hash: h}, nil
}

// encodeTokenFile renders s as the token file.
func encodeTokenFile(s *tokenSet) []byte {
	doc := fileDoc{Version: tokenFileVersion, Tokens: make([]fileToken, len(s.entries))}
	for i, e := range s.entries {
		doc.Tokens[i] = fileToken{
			Name:    e.Name,
			Tenant:  e.Tenant,
			Role:    e.Role.String(),
			SHA256:  hex.EncodeToString(e.hash[:]),
			Created: e.Created.UTC().Format(time.RFC3339Nano),
		}
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil { // only strings and an int: cannot fail
		panic("auth: encoding the token file: " + err.Error())
	}
	return append(b, '\n')
}

// detail is the rule an error of this package or sdk states, without its
// op and code, for an error that adds where it happened.
func detail(err error) string {
	var e *sdk.Error
	if errors.As(err, &e) {
		return e.Detail
	}
	return err.Error()
}
