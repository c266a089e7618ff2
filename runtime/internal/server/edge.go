package server

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/sdk"
)

// This file holds the checks a request passes at the edge, before the
// token and before routing: its Host (against DNS rebinding) and its
// Origin (against pages of other sites), and the CORS answers for the
// origins the operator allowed. CORS is written here rather than taken
// from a library because the policy is not the usual one: an origin
// outside the list is refused outright (403), not merely left without
// CORS headers, since a no-cors request would otherwise still reach a
// handler.

// edge is the Host and Origin policy of one listener.
type edge struct {
	// anyHost accepts every Host: a listener off loopback (where the token
	// is required) with no AllowedHosts.
	anyHost bool
	// defaults accepts localhost, *.localhost, the loopback IPs and
	// listen: a loopback listener.
	defaults bool
	listen   net.IP // the listener's IP; nil when not TCP or unspecified
	hosts    []hostPattern
	origins  map[string]bool // AllowedOrigins, by normalOrigin
}

// hostPattern is one AllowedHosts entry.
type hostPattern struct {
	name   string // lower case, without "*." and without brackets
	ip     net.IP // name as an IP; nil for a host name
	port   string // "" matches any port
	suffix bool   // "*.name": every subdomain of name
}

// newEdge returns the policy of a listener at addr. hosts and origins must
// pass config.CheckAllowedHost and config.CheckAllowedOrigin.
func newEdge(addr net.Addr, hosts, origins []string) *edge {
	e := &edge{origins: map[string]bool{}}
	loopback := false
	if t, ok := addr.(*net.TCPAddr); ok {
		loopback = t.IP.IsLoopback()
		if !t.IP.IsUnspecified() {
			e.listen = t.IP
		}
	}
	e.defaults = loopback
	e.anyHost = !loopback && len(hosts) == 0
	for _, h := range hosts {
		e.hosts = append(e.hosts, parseHostPattern(h))
	}
	for _, o := range origins {
		if n, ok := normalOrigin(o); ok {
			e.origins[n] = true
		}
	}
	return e
}

// checkEdgeOptions refuses (CONFIG_INVALID) an AllowedHosts or
// AllowedOrigins entry that is not one.
func checkEdgeOptions(hosts, origins []string) error {
	for _, h := range hosts {
		if why := config.CheckAllowedHost(h); why != "" {
			return sdk.Errorf(sdk.CodeConfigInvalid, "serve", "allowed host %q %s", h, why)
		}
	}
	for _, o := range origins {
		if why := config.CheckAllowedOrigin(o); why != "" {
			return sdk.Errorf(sdk.CodeConfigInvalid, "serve", "allowed origin %q %s", o, why)
		}
	}
	return nil
}

func parseHostPattern(h string) hostPattern {
	name, port := splitHost(h)
	p := hostPattern{port: port}
	if rest, ok := strings.CutPrefix(name, "*."); ok {
		p.suffix, name = true, rest
	}
	p.name, p.ip = name, net.ParseIP(name)
	return p
}

// splitHost splits a Host header value (or an AllowedHosts entry) into its
// host, lower case, without brackets and without one trailing dot, and its
// port ("" when none).
func splitHost(hostport string) (host, port string) {
	host = hostport
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1]
	}
	host = strings.ToLower(host)
	if net.ParseIP(host) == nil {
		host = strings.TrimSuffix(host, ".")
	}
	return host, port
}

// match reports whether a Host's host and port fit the pattern.
func (p hostPattern) match(host string, ip net.IP, port string) bool {
	if p.port != "" && p.port != port {
		return false
	}
	switch {
	case p.ip != nil:
		return ip != nil && p.ip.Equal(ip)
	case p.suffix:
		return ip == nil && strings.HasSuffix(host, "."+p.name)
	default:
		return ip == nil && host == p.name
	}
}

// allowHost reports whether the server accepts a request whose Host
// header is hostport (see Options.AllowedHosts).
func (e *edge) allowHost(hostport string) bool {
	if e.anyHost {
		return true
	}
	host, port := splitHost(hostport)
	if host == "" {
		return false
	}
	ip := net.ParseIP(host)
	if e.defaults {
		if ip != nil && (ip.IsLoopback() || e.listen != nil && e.listen.Equal(ip)) {
			return true
		}
		if ip == nil && (host == "localhost" || strings.HasSuffix(host, ".localhost")) {
			return true
		}
	}
	for _, p := range e.hosts {
		if p.match(host, ip, port) {
			return true
		}
	}
	return false
}

// originVerdict is what the Origin check decided.
type originVerdict int

const (
	originNone    originVerdict = iota // no Origin header: not a cross-site browser request
	originOwn                          // the server's own origin
	originAllowed                      // an AllowedOrigins entry: answer with CORS headers
	originRefused                      // anything else, "null" included
)

// checkOrigin decides on a request's Origin header values: none passes;
// exactly one that is the server's own (its host:port is host, the Host
// the request was accepted with, whatever its scheme) or an allowed one
// passes; anything else ("null", two headers, a foreign origin) is
// refused.
func (e *edge) checkOrigin(values []string, host string) originVerdict {
	switch {
	case len(values) == 0:
		return originNone
	case len(values) > 1:
		return originRefused
	}
	n, ok := normalOrigin(values[0])
	if !ok {
		return originRefused
	}
	if sameAuthority(n, host) {
		return originOwn
	}
	if e.origins[n] {
		return originAllowed
	}
	return originRefused
}

// defaultPorts are the ports an origin leaves out for its scheme.
var defaultPorts = map[string]string{"http": "80", "https": "443"}

// normalOrigin returns an origin as "scheme://host[:port]", lower case,
// without the scheme's default port and without a trailing "/"; false
// when o is not an http or https origin ("null" is not, nor one with an
// IPv6 zone, which no browser sends).
func normalOrigin(o string) (string, bool) {
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || strings.Contains(u.Host, "%") || u.User != nil || u.Opaque != "" || u.RawQuery != "" || u.Fragment != "" || u.Path != "" && u.Path != "/" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	def, ok := defaultPorts[scheme]
	if !ok {
		return "", false
	}
	host := strings.ToLower(u.Host)
	if h, p, err := net.SplitHostPort(host); err == nil && p == def {
		host = h
		if strings.Contains(h, ":") {
			host = "[" + h + "]"
		}
	}
	return scheme + "://" + host, true
}

// sameAuthority reports whether a normal origin's host:port is the Host
// header host, a missing port on either side being the origin scheme's
// default.
func sameAuthority(origin, host string) bool {
	scheme, authority, _ := strings.Cut(origin, "://")
	host = strings.ToLower(host)
	if authority == host {
		return true
	}
	def := ":" + defaultPorts[scheme]
	return authority+def == host
}

// The CORS answers for an allowed origin.
const (
	corsMethods = "GET, HEAD, POST, DELETE"
	// corsRequestHeaders are the headers a page may send: the credential,
	// the media type, the /v1 API's Last-Event-ID, the tenant an operator
	// names, and Connect's, gRPC-Web's.
	corsRequestHeaders = "Authorization, Content-Type, Accept, Last-Event-ID, Logbook-Tenant, " +
		"Connect-Protocol-Version, Connect-Timeout-Ms, Connect-Accept-Encoding, Connect-Content-Encoding, " +
		"Grpc-Timeout, X-Grpc-Web, X-User-Agent"
	// corsExposedHeaders are the response headers a page may read: the
	// error code, a created session's Location, the auth challenge, and
	// gRPC-Web's status.
	corsExposedHeaders = "Logbook-Code, Location, WWW-Authenticate, Grpc-Status, Grpc-Message, Grpc-Status-Details-Bin"
	corsMaxAge         = "7200"
)

// allowCORS adds the CORS headers of a request from an allowed origin.
func allowCORS(h http.Header, origin string) {
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", corsExposedHeaders)
}

// preflight answers a CORS preflight from an allowed origin (204), also
// for a page on a public origin calling a loopback server (Chromium's
// Private Network Access): the operator allowed the origin.
func preflight(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	allowCORS(h, r.Header.Get("Origin"))
	h.Set("Access-Control-Allow-Methods", corsMethods)
	h.Set("Access-Control-Allow-Headers", corsRequestHeaders)
	h.Set("Access-Control-Max-Age", corsMaxAge)
	if r.Header.Get("Access-Control-Request-Private-Network") == "true" {
		h.Set("Access-Control-Allow-Private-Network", "true")
	}
	w.WriteHeader(http.StatusNoContent)
}

// isPreflight reports whether r is a CORS preflight.
func isPreflight(r *http.Request) bool {
	return r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
}
