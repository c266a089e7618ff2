package config

import (
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2/hclsyntax"
)

var serveSchema = schema{
	where: "in serve",
	attrs: []string{"allowed_hosts", "allowed_origins", "idle_release"},
}

// minIdleRelease is the shortest idle_release other than 0 (never).
const minIdleRelease = time.Second

func (d *decoder) serve(c *Config, blocks []*hclsyntax.Block) {
	if len(blocks) == 0 {
		return
	}
	for _, b := range blocks[1:] {
		d.errorf(b.TypeRange, "serve block is declared twice (first at %s)", d.pos(blocks[0].TypeRange))
	}
	b := blocks[0]
	d.noLabels(b)
	attrs, _ := d.content(b.Body, serveSchema)
	if a := attrs["allowed_hosts"]; d.strings(a, &c.Serve.AllowedHosts) == set {
		for _, h := range c.Serve.AllowedHosts {
			if err := CheckAllowedHost(h); err != "" {
				d.errorf(a.SrcRange, "allowed_hosts: %q %s", h, err)
			}
		}
	}
	if a := attrs["allowed_origins"]; d.strings(a, &c.Serve.AllowedOrigins) == set {
		for _, o := range c.Serve.AllowedOrigins {
			if err := CheckAllowedOrigin(o); err != "" {
				d.errorf(a.SrcRange, "allowed_origins: %q %s", o, err)
			}
		}
	}
	if a := attrs["idle_release"]; a != nil {
		var t time.Duration
		if d.duration(a, &t, 0, 0) == set {
			if t != 0 && t < minIdleRelease {
				d.errorf(a.SrcRange, "idle_release = %q must be 0 (never) or >= %s", t, minIdleRelease)
			} else {
				c.Serve.IdleRelease = t
			}
		}
	}
}

// CheckAllowedHost returns "" when h is an allowed_hosts entry (a host name
// or IP, optionally with ":port", optionally starting with "*." to match
// every subdomain), else what is wrong with it. The --allowed-host flag
// uses it too.
func CheckAllowedHost(h string) string {
	host := h
	if hp, port, err := net.SplitHostPort(h); err == nil {
		if !isPort(port) {
			return "has a port that is not a number from 1 to 65535"
		}
		host = hp
	} else if strings.HasPrefix(h, "[") {
		host = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	}
	if net.ParseIP(host) != nil {
		return ""
	}
	name := strings.TrimPrefix(host, "*.")
	if name == "" || len(name) > 253 {
		return "is not a host name, an IP or host:port"
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return "is not a host name, an IP or host:port"
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return "is not a host name, an IP or host:port"
			}
		}
	}
	return ""
}

// CheckAllowedOrigin returns "" when o is an allowed_origins entry: an
// origin as browsers send it, "http://host[:port]" or "https://host[:port]"
// with nothing after the authority; else what is wrong with it. The
// --allowed-origin flag uses it too.
func CheckAllowedOrigin(o string) string {
	u, err := url.Parse(o)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https"):
		return `is not an origin such as "https://app.example.com" or "http://localhost:3000"`
	case u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return `is not an origin: scheme://host[:port] with no path, query or user`
	case u.Port() != "" && !isPort(u.Port()):
		return "has a port that is not a number from 1 to 65535"
	}
	return ""
}

func isPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	n := 0
	for _, r := range p {
		if r < '0' || r > '9' {
			return false
		}
		n = n*10 + int(r-'0')
	}
	return n >= 1 && n <= 65535
}
