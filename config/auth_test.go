package config_test

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/seed-e5e476df/logbook/config"
)

func TestAuthBlockDefaults(t *testing.T) {
	c := parse(t, mem)
	if !reflect.DeepEqual(c.Auth, config.Auth{}) {
		t.Fatalf("Auth without a block = %+v; want the zero value (token store at <data_dir>/tokens, no JWT)", c.Auth)
	}
	c = parse(t, "auth {\n  jwt {\n    public_key_file = \"keys/idp.pem\"\n    issuer = \"https://id.example\"\n    audience = \"logbook\"\n  }\n}"+mem)
	want := config.JWT{
		PublicKeyFile: filepath.Join(".", "keys/idp.pem"),
		Issuer:        "https://id.example",
		Audience:      "logbook",
		TenantClaim:   config.DefaultTenantClaim,
		RoleClaim:     config.DefaultRoleClaim,
		Leeway:        config.DefaultJWTLeeway,
	}
	if c.Auth.JWT == nil || *c.Auth.JWT != want || c.Auth.TokensFile != "" {
		t.Fatalf("Auth = %+v, JWT %+v; want JWT %+v", c.Auth, c.Auth.JWT, want)
	}
}

func TestAuthBlockSettings(t *testing.T) {
	c, err := config.Parse([]byte("data_dir = \"/data\"\nauth {\n  tokens_file = \"secrets/tokens\"\n  jwt {\n    jwks_file = \"/etc/idp.jwks\"\n"+
		"    issuer = \"i\"\n    audience = \"a\"\n    tenant_claim = \"org\"\n    role_claim = \"lb_role\"\n    leeway = \"0s\"\n  }\n}"+mem), "/etc/logbook/l.hcl")
	if err != nil {
		t.Fatal(err)
	}
	want := config.Auth{TokensFile: "/data/secrets/tokens", JWT: &config.JWT{JWKSFile: "/etc/idp.jwks", Issuer: "i", Audience: "a", TenantClaim: "org", RoleClaim: "lb_role"}}
	if c.Auth.TokensFile != want.TokensFile || *c.Auth.JWT != *want.JWT {
		t.Fatalf("Auth = %+v, JWT %+v; want %+v, JWT %+v", c.Auth, c.Auth.JWT, want, want.JWT)
	}
	// A relative key file is resolved against the config file's directory.
	c, err = config.Parse([]byte("auth {\n  jwt {\n    public_key_file = \"idp.pem\"\n    issuer = \"i\"\n    audience = \"a\"\n  }\n}"+mem), "/etc/logbook/l.hcl")
	if err != nil || c.Auth.JWT.PublicKeyFile != "/etc/logbook/idp.pem" {
		t.Fatalf("public_key_file = %q (%v); want /etc/logbook/idp.pem", c.Auth.JWT.PublicKeyFile, err)
	}
	if c.Auth.JWT.Leeway != config.DefaultJWTLeeway {
		t.Fatalf("leeway = %s; want the default %s", c.Auth.JWT.Leeway, config.DefaultJWTLeeway)
	}
}

func TestAuthBlockRules(t *testing.T) {
	const jwtOpen = "auth {\n  jwt {\n    issuer = \"i\"\n    audience = \"a\"\n" // the key under test is on line 5
	const jwtClose = "  }\n}" + mem
	for _, tc := range []struct {
		name, src, pos string
		want           []string
	}{
		{"tokens_file not empty", "auth {\n  tokens_file = \"\"\n}" + mem, "t.hcl:2:3:", []string{`tokens_file = "" must not be empty`}},
		{"tokens_file a string", "auth {\n  tokens_file = 3\n}" + mem, "t.hcl:2:3:", []string{"tokens_file = 3 must be a string"}},
		{"unknown key in auth", "auth {\n  token_file = \"x\"\n}" + mem, "t.hcl:2:3:", []string{`unknown key "token_file" in auth`, "tokens_file"}},
		{"auth twice", "auth {}\nauth {}" + mem, "t.hcl:2:1:", []string{"auth block is declared twice"}},
		{"auth takes no label", "auth \"x\" {}" + mem, "t.hcl:1:6:", []string{"auth block takes no label"}},
		{"jwt needs a key file", "auth {\n  jwt {\n    issuer = \"i\"\n    audience = \"a\"\n  }\n}" + mem, "t.hcl:2:3:", []string{"jwt block needs public_key_file", "jwks_file"}},
		{"jwt key files exclusive", jwtOpen + "    public_key_file = \"a.pem\"\n    jwks_file = \"a.jwks\"\n" + jwtClose, "t.hcl:6:5:", []string{"public_key_file and jwks_file are exclusive"}},
		{"jwt needs issuer", "auth {\n  jwt {\n    public_key_file = \"a.pem\"\n    audience = \"a\"\n  }\n}" + mem, "t.hcl:2:3:", []string{"jwt block needs issuer"}},
		{"jwt needs audience", "auth {\n  jwt {\n    public_key_file = \"a.pem\"\n    issuer = \"i\"\n  }\n}" + mem, "t.hcl:2:3:", []string{"jwt block needs audience"}},
		{"jwt issuer not empty", "auth {\n  jwt {\n    public_key_file = \"a.pem\"\n    audience = \"a\"\n    issuer = \"\"\n  }\n}" + mem, "t.hcl:5:5:", []string{`issuer = "" must not be empty`}},
		{"jwt tenant_claim not empty", jwtOpen + "    public_key_file = \"a.pem\"\n    tenant_claim = \"\"\n" + jwtClose, "t.hcl:6:5:", []string{`tenant_claim = "" must not be empty`}},
		{"jwt role_claim a string", jwtOpen + "    public_key_file = \"a.pem\"\n    role_claim = true\n" + jwtClose, "t.hcl:6:5:", []string{"role_claim = true must be a string"}},
		{"jwt leeway bounds", jwtOpen + "    public_key_file = \"a.pem\"\n    leeway = \"10m\"\n" + jwtClose, "t.hcl:6:5:", []string{"leeway", "must be between 0s and 5m0s"}},
		{"jwt leeway a duration", jwtOpen + "    public_key_file = \"a.pem\"\n    leeway = \"soon\"\n" + jwtClose, "t.hcl:6:5:", []string{`leeway = "soon" must be a duration`}},
		{"unknown key in jwt", jwtOpen + "    public_key_file = \"a.pem\"\n    jwks_url = \"https://x\"\n" + jwtClose, "t.hcl:6:5:", []string{`unknown key "jwks_url" in jwt`, "jwks_file"}},
		{"jwt twice", "auth {\n  jwt {\n    public_key_file = \"a.pem\"\n    issuer = \"i\"\n    audience = \"a\"\n  }\n  jwt {}\n}" + mem, "t.hcl:7:3:", []string{"jwt block is declared twice in auth"}},
	} {
		t.Run(tc.name, func(t *testing.T) { wantErr(t, tc.src, tc.pos, tc.want...) })
	}
}
