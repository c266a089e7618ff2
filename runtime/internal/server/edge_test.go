package server

import (
	"net"
	"strings"
	"testing"
)

var (
	loopbackV4 = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7420}
	loopbackV6 = &net.TCPAddr{IP: net.IPv6loopback, Port: 7420}
	lanAddr    = &net.TCPAddr{IP: net.IPv4(192, 0, 2, 10), Port: 7420}
	anyAddr    = &net.TCPAddr{IP: net.IPv4zero, Port: 7420}
	unixAddr   = &net.UnixAddr{Name: "/run/logbook.sock", Net: "unix"}
)

// The Host rule: on loopback the defaults and AllowedHosts pass and
// nothing else; off loopback anything passes unless AllowedHosts narrows
// it.
func TestAllowHost(t *testing.T) {
	extra := []string{"devbox.lan", "*.corp.test", "pinned.test:8080", "10.1.2.3", "[fd00::1]:7420"}
	cases := []struct {
		name  string
		addr  net.Addr
		hosts []string
		host  string
		want  bool
	}{
		{"localhost", loopbackV4, nil, "localhost", true},
		{"localhost with the port", loopbackV4, nil, "localhost:7420", true},
		{"localhost with another port", loopbackV4, nil, "localhost:9999", true},
		{"localhost in capitals", loopbackV4, nil, "LocalHost:7420", true},
		{"localhost with a trailing dot", loopbackV4, nil, "localhost.:7420", true},
		{"a .localhost name", loopbackV4, nil, "app.localhost:7420", true},
		{"a deep .localhost name", loopbackV4, nil, "a.b.localhost", true},
		{"the listen address", loopbackV4, nil, "127.0.0.1:7420", true},
		{"another loopback IPv4", loopbackV4, nil, "127.5.5.5", true},
		{"loopback IPv6", loopbackV4, nil, "[::1]:7420", true},
		{"loopback IPv6 without the port", loopbackV4, nil, "[::1]", true},
		{"loopback IPv6 spelled long", loopbackV6, nil, "[0:0:0:0:0:0:0:1]:7420", true},
		{"IPv4-mapped loopback", loopbackV4, nil, "[::ffff:127.0.0.1]:7420", true},
		{"a rebound name", loopbackV4, nil, "evil.example", false},
		{"a rebound name with the port", loopbackV4, nil, "evil.example:7420", false},
		{"localhost as a prefix", loopbackV4, nil, "localhost.evil.example:7420", false},
		{"localhost glued on", loopbackV4, nil, "evillocalhost:7420", false},
		{"a loopback IP as a name prefix", loopbackV4, nil, "127.0.0.1.nip.io:7420", false},
		{"a LAN IP", loopbackV4, nil, "192.168.1.5:7420", false},
		{"the unspecified IP", loopbackV4, nil, "0.0.0.0:7420", false},
		{"no Host", loopbackV4, nil, "", false},
		{"only a port", loopbackV4, nil, ":7420", false},
		{"an allowed name", loopbackV4, extra, "devbox.lan:7420", true},
		{"an allowed name in capitals", loopbackV4, extra, "DEVBOX.LAN", true},
		{"a subdomain of an allowed name", loopbackV4, extra, "a.devbox.lan", false},
		{"a subdomain of a wildcard", loopbackV4, extra, "x.corp.test:7420", true},
		{"a deep subdomain of a wildcard", loopbackV4, extra, "x.y.corp.test", true},
		{"the wildcard's own name", loopbackV4, extra, "corp.test", false},
		{"a suffix that is not a subdomain", loopbackV4, extra, "evilcorp.test", false},
		{"an allowed name on its port", loopbackV4, extra, "pinned.test:8080", true},
		{"an allowed name on another port", loopbackV4, extra, "pinned.test:7420", false},
		{"an allowed name without its port", loopbackV4, extra, "pinned.test", false},
		{"an allowed IP", loopbackV4, extra, "10.1.2.3:7420", true},
		{"an allowed IPv6 on its port", loopbackV4, extra, "[fd00::1]:7420", true},
		{"an allowed IPv6 on another port", loopbackV4, extra, "[fd00::1]:1", false},
		{"the defaults stay with a list", loopbackV4, extra, "localhost:7420", true},
		{"off loopback: any name", lanAddr, nil, "evil.example", true},
		{"off loopback: no Host", lanAddr, nil, "", true},
		{"the unspecified address: any name", anyAddr, nil, "whatever.test", true},
		{"off loopback narrowed: a listed name", lanAddr, extra, "devbox.lan:7420", true},
		{"off loopback narrowed: another name", lanAddr, extra, "evil.example:7420", false},
		{"off loopback narrowed: localhost is not listed", lanAddr, extra, "localhost:7420", false},
		{"a Unix socket: any name", unixAddr, nil, "unix", true},
		{"a Unix socket narrowed", unixAddr, extra, "unix", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEdge(c.addr, c.hosts, nil)
			if got := e.allowHost(c.host); got != c.want {
				t.Errorf("allowHost(%q) on %v with %q = %v, want %v", c.host, c.addr, c.hosts, got, c.want)
			}
		})
	}
}

// The Origin rule: none passes, the own origin (host:port = Host, any
// scheme) passes, an allowed one passes with CORS, anything else is
// refused, "null" included.
func TestCheckOrigin(t *testing.T) {
	e := newEdge(loopbackV4, nil, []string{"http://app.test:3000", "https://App.Example.com:443/"})
	cases := []struct {
		name    string
		origins []string
		host    string
		want    originVerdict
	}{
		{"no Origin", nil, "127.0.0.1:7420", originNone},
		{"own origin, http", []string{"http://127.0.0.1:7420"}, "127.0.0.1:7420", originOwn},
		{"own origin, https", []string{"https://127.0.0.1:7420"}, "127.0.0.1:7420", originOwn},
		{"own origin in capitals", []string{"HTTP://LOCALHOST:7420"}, "localhost:7420", originOwn},
		{"own origin, IPv6", []string{"http://[::1]:7420"}, "[::1]:7420", originOwn},
		{"own origin on the default port", []string{"http://localhost"}, "localhost", originOwn},
		{"own origin, the Host names the default port", []string{"http://localhost"}, "localhost:80", originOwn},
		{"own origin naming the default port", []string{"https://logbook.test:443"}, "logbook.test", originOwn},
		{"own name, another port", []string{"http://127.0.0.1:7421"}, "127.0.0.1:7420", originRefused},
		{"own name, no port", []string{"http://127.0.0.1"}, "127.0.0.1:7420", originRefused},
		{"another loopback spelling", []string{"http://localhost:7420"}, "127.0.0.1:7420", originRefused},
		{"a foreign origin", []string{"http://evil.example"}, "127.0.0.1:7420", originRefused},
		{"null", []string{"null"}, "127.0.0.1:7420", originRefused},
		{"empty", []string{""}, "127.0.0.1:7420", originRefused},
		{"two origins", []string{"http://127.0.0.1:7420", "http://127.0.0.1:7420"}, "127.0.0.1:7420", originRefused},
		{"a file origin", []string{"file://"}, "127.0.0.1:7420", originRefused},
		{"another scheme", []string{"ws://127.0.0.1:7420"}, "127.0.0.1:7420", originRefused},
		{"with a path", []string{"http://127.0.0.1:7420/x"}, "127.0.0.1:7420", originRefused},
		{"with user info", []string{"http://u@127.0.0.1:7420"}, "127.0.0.1:7420", originRefused},
		{"with an IPv6 zone", []string{"http://[fe80::1%25eth0]:7420"}, "[fe80::1%25eth0]:7420", originRefused},
		{"an allowed origin", []string{"http://app.test:3000"}, "127.0.0.1:7420", originAllowed},
		{"an allowed origin on another port", []string{"http://app.test:3001"}, "127.0.0.1:7420", originRefused},
		{"an allowed origin with another scheme", []string{"https://app.test:3000"}, "127.0.0.1:7420", originRefused},
		{"an allowed origin written with its default port", []string{"https://app.example.com"}, "127.0.0.1:7420", originAllowed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := e.checkOrigin(c.origins, c.host); got != c.want {
				t.Errorf("checkOrigin(%q, Host %q) = %v, want %v", c.origins, c.host, got, c.want)
			}
		})
	}
}

// Bad AllowedHosts and AllowedOrigins entries are refused with
// CONFIG_INVALID naming them.
func TestCheckEdgeOptions(t *testing.T) {
	for _, c := range []struct {
		hosts, origins []string
		bad            string
	}{
		{hosts: []string{"devbox.lan", "bad host"}, bad: "bad host"},
		{hosts: []string{"devbox.lan:99999"}, bad: "devbox.lan:99999"},
		{origins: []string{"app.test"}, bad: "app.test"},
		{origins: []string{"http://app.test/path"}, bad: "http://app.test/path"},
		{origins: []string{"null"}, bad: "null"},
	} {
		err := checkEdgeOptions(c.hosts, c.origins)
		if err == nil || !strings.Contains(err.Error(), "CONFIG_INVALID") || !strings.Contains(err.Error(), c.bad) {
			t.Errorf("checkEdgeOptions(%q, %q) = %v; want CONFIG_INVALID naming %q", c.hosts, c.origins, err, c.bad)
		}
	}
	if err := checkEdgeOptions([]string{"devbox.lan", "*.corp.test", "[::1]:7420", "10.0.0.1"}, []string{"http://localhost:3000", "https://app.example.com"}); err != nil {
		t.Errorf("good entries: %v", err)
	}
}

// FuzzEdgeHeaders checks the Host and Origin parsing on any input: it
// never panics, a loopback listener without a list accepts only names
// that are localhost or under it and loopback IPs, "null" and two Origins
// are always refused, and a normal origin is its own normal form.
func FuzzEdgeHeaders(f *testing.F) {
	for _, s := range []string{"localhost", "127.0.0.1:7420", "[::1]:7420", "evil.example", "[", "]:", "a.localhost.", "::1", "[::ffff:127.0.0.1]", "%", ""} {
		f.Add(s, "http://"+s)
	}
	f.Add("127.0.0.1:7420", "null")
	f.Add("x", "https://[::1]:443/")
	e := newEdge(loopbackV4, nil, nil)
	f.Fuzz(func(t *testing.T, host, origin string) {
		if e.allowHost(host) {
			name, _ := splitHost(host)
			ip := net.ParseIP(name)
			if !(ip != nil && ip.IsLoopback() || ip == nil && (name == "localhost" || strings.HasSuffix(name, ".localhost"))) {
				t.Fatalf("allowHost(%q) accepted %q", host, name)
			}
		}
		if e.checkOrigin([]string{"null"}, host) != originRefused || e.checkOrigin([]string{origin, origin}, host) != originRefused {
			t.Fatal("null or two origins passed")
		}
		if n, ok := normalOrigin(origin); ok {
			if again, ok := normalOrigin(n); !ok || again != n {
				t.Fatalf("normalOrigin(%q) = %q, then %q (%v)", origin, n, again, ok)
			}
		}
		e.checkOrigin([]string{origin}, host)
	})
}
