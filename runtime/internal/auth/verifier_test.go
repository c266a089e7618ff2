package auth

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk"
)

func newTestVerifier(t *testing.T, o Options) *Verifier {
	t.Helper()
	v, err := NewVerifier(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// wantUnauthenticated asserts that err is UNAUTHENTICATED containing want
// and not secret.
func wantUnauthenticated(t *testing.T, err error, secret, want string) {
	t.Helper()
	if sdk.CodeOf(err) != sdk.CodeUnauthenticated {
		t.Fatalf("error %v; want UNAUTHENTICATED", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if secret != "" && strings.Contains(err.Error(), secret) {
		t.Errorf("error %q echoes the credential", err)
	}
}

func TestVerifyStoreToken(t *testing.T) {
	ctx := context.Background()
	cfg := fileConfig(t)
	secret, _, err := openStore(t, cfg).Create(ctx, Token{Name: "ci", Tenant: "acme", Role: RoleWrite})
	if err != nil {
		t.Fatal(err)
	}
	v := newTestVerifier(t, Options{Config: cfg})
	if !v.Configured() {
		t.Fatal("Configured = false with a token in the store")
	}
	p, err := v.Verify(ctx, secret)
	if err != nil || p != (Principal{Name: "ci", Tenant: "acme", Role: RoleWrite}) {
		t.Fatalf("Verify = %+v, %v", p, err)
	}
	last := "A"
	if strings.HasSuffix(secret, last) {
		last = "B"
	}
	forged := secret[:len(secret)-1] + last
	_, err = v.Verify(ctx, forged)
	wantUnauthenticated(t, err, forged, "unknown or revoked token")
	_, err = v.Verify(ctx, "")
	wantUnauthenticated(t, err, "", "no bearer token")
	_, err = v.Verify(ctx, "some-other-secret")
	wantUnauthenticated(t, err, "some-other-secret", "unknown bearer token")
	_, err = v.Verify(ctx, "a.b.c")
	wantUnauthenticated(t, err, "", "no auth { jwt { … } } block")
}

func TestVerifyLegacyToken(t *testing.T) {
	const legacy = "0123456789abcdef-legacy"
	v := newTestVerifier(t, Options{Config: fileConfig(t), LegacyToken: legacy})
	if !v.Configured() {
		t.Fatal("Configured = false with a --token-file token")
	}
	p, err := v.Verify(context.Background(), legacy)
	if err != nil || p != (Principal{Name: "token-file", Tenant: AllTenants, Role: RoleOperator}) {
		t.Fatalf("Verify(legacy) = %+v, %v", p, err)
	}
	_, err = v.Verify(context.Background(), legacy+"x")
	wantUnauthenticated(t, err, legacy, "unknown bearer token")
}

func TestConfiguredFollowsTheStoreAndStaysTrue(t *testing.T) {
	ctx := context.Background()
	cfg := fileConfig(t)
	v := newTestVerifier(t, Options{Config: cfg})
	if v.Configured() {
		t.Fatal("Configured = true without any credential")
	}
	s := openStore(t, cfg)
	secret, _, err := s.Create(ctx, Token{Name: "first", Tenant: "a", Role: RoleRead})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the verifier sees the new token", func() bool { _, err := v.Verify(ctx, secret); return err == nil })
	if !v.Configured() {
		t.Fatal("Configured = false after a token was created")
	}
	if err := s.Revoke(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the verifier refuses the revoked token", func() bool { _, err := v.Verify(ctx, secret); return err != nil })
	if !v.Configured() {
		t.Fatal("Configured went back to false when the last token was revoked")
	}
}

// waitFor polls cond until it holds, failing after 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// testRevocationOnTwoHosts checks that a token revoked through one store
// handle is refused by two verifiers (two hosts) within a second.
func testRevocationOnTwoHosts(t *testing.T, cfg *config.Config) {
	ctx := context.Background()
	admin := openStore(t, cfg)
	secret, _, err := admin.Create(ctx, Token{Name: "agent", Tenant: "acme", Role: RoleWrite})
	if err != nil {
		t.Fatal(err)
	}
	hosts := []*Verifier{newTestVerifier(t, Options{Config: cfg}), newTestVerifier(t, Options{Config: cfg})}
	for i, h := range hosts {
		if _, err := h.Verify(ctx, secret); err != nil {
			t.Fatalf("host %d: %v", i, err)
		}
	}
	if err := admin.Revoke(ctx, "agent"); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for i, h := range hosts {
		for {
			_, err := h.Verify(ctx, secret)
			if err != nil {
				wantUnauthenticated(t, err, secret, "unknown or revoked token")
				break
			}
			if time.Since(revoked) > time.Second {
				t.Fatalf("host %d still accepts the token 1 s after its revocation", i)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Logf("both hosts refused the token %s after its revocation", time.Since(revoked).Round(time.Millisecond))
}

func TestRevocationReachesEveryHostWithinASecondFile(t *testing.T) {
	testRevocationOnTwoHosts(t, fileConfig(t))
}

func TestAStoreThatTurnsBadAcceptsNothing(t *testing.T) {
	ctx := context.Background()
	cfg := fileConfig(t)
	secret, _, err := openStore(t, cfg).Create(ctx, Token{Name: "ci", Tenant: "acme", Role: RoleWrite})
	if err != nil {
		t.Fatal(err)
	}
	v := newTestVerifier(t, Options{Config: cfg})
	path := cfg.ResolvePath("tokens")
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the verifier refuses tokens of a group-readable file", func() bool { _, err := v.Verify(ctx, secret); return err != nil })
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the verifier accepts the token again", func() bool { _, err := v.Verify(ctx, secret); return err == nil })
}
