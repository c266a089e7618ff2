package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk"
)

// PollInterval is how often a Verifier checks the token store and the
// JWT key file for changes: a revoked token is refused on every host
// within about this long (plus one database round trip).
const PollInterval = 250 * time.Millisecond

// refreshTimeout bounds one re-read of the token store, so a database
// that stops answering cannot stall the polling.
const refreshTimeout = 5 * time.Second

// LegacyTokenName is the Principal.Name of the --token-file token.
const LegacyTokenName = "token-file"

// Options configure NewVerifier.
type Options struct {
	// Config gives the auth block (tokens_file, jwt), DataDir and the
	// primary persistence (postgres keeps the tokens in its schema).
	// Required.
	Config *config.Config
	// LegacyToken is the token of serve --token-file, accepted as
	// Principal{Name: LegacyTokenName, Tenant: AllTenants, Role:
	// RoleOperator}; "" = none.
	LegacyToken string
	// Logger receives the failures of the background re-reads (a key
	// file that stops parsing, a token store that cannot be read);
	// default a null logger.
	Logger hclog.Logger
}

// Verifier tells who a request's bearer token comes from: a token of the
// store, a JWT signed by a configured key, or the --token-file token. It
// re-reads the store and the key file every PollInterval in a goroutine
// of its own, which Close stops. Its methods are safe for concurrent use.
type Verifier struct {
	store      *Store
	jwt        *jwtVerifier // nil without an auth.jwt block
	legacy     [sha256.Size]byte
	hasLegacy  bool
	log        hclog.Logger
	configured atomic.Bool

	stop context.CancelFunc
	done chan struct{}
}

// NewVerifier opens the token store (OpenStore), reads the JWT key file
// and starts watching both. A token file that is invalid or too widely
// readable, or a key file that cannot be read or holds no acceptable
// public key, is CONFIG_INVALID naming it.
func NewVerifier(ctx context.Context, o Options) (*Verifier, error) {
	if o.Config == nil {
		return nil, sdk.Errorf(sdk.CodeConfigInvalid, op, "auth.Options.Config is required")
	}
	return newVerifier(ctx, o, time.Now)
}

// newVerifier is NewVerifier with a clock, for the tests.
func newVerifier(ctx context.Context, o Options, now func() time.Time) (*Verifier, error) {
	v := &Verifier{log: o.Logger, done: make(chan struct{})}
	if v.log == nil {
		v.log = hclog.NewNullLogger()
	}
	if o.LegacyToken != "" {
		v.legacy, v.hasLegacy = sha256.Sum256([]byte(o.LegacyToken)), true
	}
	if j := o.Config.Auth.JWT; j != nil {
		jv, err := newJWTVerifier(j, now)
		if err != nil {
			return nil, err
		}
		v.jwt = jv
	}
	s, err := OpenStore(ctx, o.Config)
	if err != nil {
		return nil, err
	}
	v.store = s
	v.noteConfigured()
	pollCtx, stop := context.WithCancel(context.Background())
	v.stop = stop
	go v.poll(pollCtx)
	return v, nil
}

// Configured reports whether any credential exists: a token in the store,
// a JWT key or the --token-file token. Once true it stays true for the
// Verifier's life, so revoking the last token never opens a server that
// required credentials.
func (v *Verifier) Configured() bool { return v.configured.Load() }

func (v *Verifier) noteConfigured() {
	if v.hasLegacy || v.jwt != nil || !v.store.empty() {
		v.configured.Store(true)
	}
}

// Verify returns the principal of a bearer token (the text after
// "Authorization: Bearer "). A token that is missing, unknown or revoked,
// or a JWT that fails any check, is UNAUTHENTICATED saying why; the
// message never contains the token.
func (v *Verifier) Verify(_ context.Context, bearer string) (Principal, error) {
	if bearer == "" {
		return Principal{}, unauthenticated("no bearer token; send Authorization: Bearer <token>")
	}
	hash := sha256.Sum256([]byte(bearer))
	if v.hasLegacy && subtle.ConstantTimeCompare(hash[:], v.legacy[:]) == 1 {
		return Principal{Name: LegacyTokenName, Tenant: AllTenants, Role: RoleOperator}, nil
	}
	if strings.HasPrefix(bearer, TokenPrefix) {
		if t, ok := v.store.lookup(hash); ok {
			return t.principal(), nil
		}
		return Principal{}, unauthenticated("unknown or revoked token")
	}
	if v.jwt == nil {
		if strings.Count(bearer, ".") == 2 {
			return Principal{}, unauthenticated("JWTs are not accepted: the configuration has no auth { jwt { … } } block")
		}
		return Principal{}, unauthenticated("unknown bearer token: not a logbook token (lb_…) and not the --token-file token")
	}
	return v.jwt.verify(bearer, hash)
}

// Close stops watching the store and the key file and closes the store.
func (v *Verifier) Close() error {
	v.stop()
	<-v.done
	return v.store.Close()
}

// poll re-reads what changed every PollInterval until ctx ends. A token
// store that became invalid accepts nothing until it is valid again; a key
// file that did keeps the keys read before. Both are logged once per
// change of error.
func (v *Verifier) poll(ctx context.Context) {
	defer close(v.done)
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	var lastStoreErr, lastKeyErr string
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, refreshTimeout)
		err := v.store.refresh(rctx)
		cancel()
		if err != nil && sdk.CodeOf(err) == sdk.CodeConfigInvalid {
			v.store.clear()
		}
		lastStoreErr = v.logChange(lastStoreErr, err, "the token store cannot be read; refusing its tokens until it can")
		v.noteConfigured()
		if v.jwt != nil {
			lastKeyErr = v.logChange(lastKeyErr, v.jwt.refresh(), "the JWT key file cannot be read; keeping the keys read before")
		}
	}
}

// logChange logs err when its text differs from last's, and returns its
// text.
func (v *Verifier) logChange(last string, err error, msg string) string {
	text := ""
	if err != nil {
		text = err.Error()
	}
	if text != last {
		if err != nil {
			v.log.Error(msg, "error", text)
		} else {
			v.log.Info("credentials readable again")
		}
	}
	return text
}
