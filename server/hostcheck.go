package server

import (
	"fmt"
	"net"
	"strings"

	"github.com/ctxsel/ctxsel"
)

// DNS rebinding: a web page on attacker.example can make its own name
// resolve to 127.0.0.1 and then read this server's answers as same-origin
// responses, the user's indexed documents included, API keys or not (the
// page's own script sends the request). What it cannot change is the Host
// header, which stays attacker.example. So a server that listens on a
// loopback address answers only requests whose Host is a loopback name
// (localhost, 127.0.0.0/8, [::1], with or without a port), on every route,
// and Config.AllowedHosts (--allowed-hosts) names the others a set-up needs
// (a reverse proxy, a container's name). A server listening on another
// address checks Host only when AllowedHosts is given.

// hostPolicy is which Host values are served.
type hostPolicy struct {
	any   bool            // no check
	names map[string]bool // lowercased host, or host:port
}

// newHostPolicy is the policy for a server listening on addr (host:port)
// with allowed, Config.AllowedHosts, given.
func newHostPolicy(addr string, allowed []string) *hostPolicy {
	p := &hostPolicy{names: map[string]bool{}}
	host, _, err := net.SplitHostPort(addr)
	if len(allowed) == 0 && (err != nil || !IsLoopback(host)) {
		p.any = true
		return p
	}
	for _, a := range allowed {
		if a == "*" {
			p.any = true
		}
		p.names[strings.ToLower(a)] = true
	}
	return p
}

// allows reports whether a request with this Host value is served.
func (p *hostPolicy) allows(hostHeader string) bool {
	if p.any {
		return true
	}
	host, port, ok := splitHost(hostHeader)
	if !ok {
		return false
	}
	if IsLoopback(host) {
		return true
	}
	host = strings.ToLower(host)
	return p.names[host] || port != "" && p.names[host+":"+port]
}

// splitHost splits a Host header value into its host (brackets removed from
// an IPv6 literal) and port ("" when absent); ok is false for anything that
// is not a plain host[:port].
func splitHost(v string) (host, port string, ok bool) {
	if v == "" {
		return "", "", false
	}
	if v[0] == '[' {
		end := strings.IndexByte(v, ']')
		if end < 0 {
			return "", "", false
		}
		host, rest := v[1:end], v[end+1:]
		if rest != "" {
			if rest[0] != ':' {
				return "", "", false
			}
			port = rest[1:]
			if !validPort(port) {
				return "", "", false
			}
		}
		return host, port, host != "" && strings.IndexByte(host, '%') < 0
	}
	host, port, found := strings.Cut(v, ":")
	if found && !validPort(port) {
		return "", "", false
	}
	return host, port, host != ""
}

func validPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	return true
}

// checkAllowedHosts validates Config.AllowedHosts: each a host name or IP
// address, with or without a port, or "*" for any.
func checkAllowedHosts(hosts []string) error {
	for _, h := range hosts {
		if h == "*" {
			continue
		}
		host, _, ok := splitHost(h)
		if !ok || strings.ContainsAny(host, " \t/\\@?#,") || strings.Contains(h, "://") {
			return fmt.Errorf("%w: config: allowed_hosts: %q: want a host name or address, with or without :PORT (e.g. ctxsel.lan, ctxsel.lan:8080, [::1]:8080), or *", ctxsel.ErrInvalidInput, h)
		}
	}
	return nil
}

// hostRefusedMsg is what a request with a Host outside the policy is told;
// it does not echo the Host back.
const hostRefusedMsg = "the Host header names no host this server answers to (a guard against DNS rebinding: on a loopback address it serves only localhost, 127.0.0.1 and [::1]); start it with --allowed-hosts NAME to serve another name"
