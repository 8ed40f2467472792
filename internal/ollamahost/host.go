// Package ollamahost reads an Ollama server's address the way the ollama
// CLI reads OLLAMA_HOST, for the two Ollama clients (the embedder and the
// chat client), so that one address means the same server to both.
package ollamahost

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// DefaultPort is Ollama's port when an address without a scheme names
// none.
const DefaultPort = "11434"

// Parse turns an OLLAMA_HOST-style address into a base URL: surrounding
// space trimmed; "" means http://127.0.0.1:11434; no scheme means http;
// no port means 11434 (80 or 443 when the scheme is given); no host means
// 127.0.0.1; a path is kept. It is strict where the CLI guesses: a
// scheme other than http and https, user info, a query, a fragment, white
// space inside, a host that is neither an IP address nor a host name, or
// a port that is no number in 1…65535 is an error.
func Parse(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	scheme, hostport, ok := strings.Cut(s, "://")
	port := DefaultPort
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		port = "80"
	case scheme == "https":
		port = "443"
	default:
		return nil, fmt.Errorf("host %q: scheme must be http or https", s)
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	if strings.ContainsAny(hostport, "@?# \t\r\n") || strings.ContainsAny(path, "?# \t\r\n") {
		return nil, fmt.Errorf("host %q: want [http(s)://]host[:port][/path]", s)
	}
	host, p, err := net.SplitHostPort(hostport)
	if err == nil {
		port = p
	} else {
		host = strings.Trim(hostport, "[]") // a bare host, or a bare IPv6 address
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if net.ParseIP(host) == nil && strings.IndexFunc(host, notHostRune) >= 0 {
		return nil, fmt.Errorf("host %q: a host name is letters, digits, '-', '_' and '.'", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return nil, fmt.Errorf("host %q: port must be a number in 1…65535", s)
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port)}
	if path != "" { // as written: escaped already, if at all
		p, err := url.Parse("http://h/" + path)
		if err != nil {
			return nil, fmt.Errorf("host %q: bad path", s)
		}
		u.Path, u.RawPath = p.Path, p.RawPath
	}
	if _, err := url.Parse(u.String()); err != nil {
		return nil, fmt.Errorf("host %q: %w", s, err)
	}
	return u, nil
}

// notHostRune reports a rune no host name holds.
func notHostRune(r rune) bool {
	return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
}
