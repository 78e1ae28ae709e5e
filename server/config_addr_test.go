package server

import (
	"errors"
	"net/url"
	"testing"
)

// EARSHOT_ADDR is refused when its host is neither an IP address nor a
// name (a space, a slash, an @): the listener would fail at start on a
// lookup of it, and the site address made of it would not parse. Every
// host a listener binds is kept, with a site address that parses.
func TestAddrHost(t *testing.T) {
	for _, v := range []string{" :0", "a b:0", "localhost :0", "\t:0", "a/b:0", "@:0", "a@b:0", "h?x:0", "h#x:0"} {
		_, err := readConfig(map[string]string{"EARSHOT_ADDR": v})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Name != "EARSHOT_ADDR" {
			t.Errorf("EARSHOT_ADDR=%q: %v, want it refused", v, err)
		}
	}
	for _, v := range []string{"127.0.0.1:8080", ":8080", "localhost:0", "[::1]:0", "[fe80::1%lo]:0", "my_host.internal:80", "0.0.0.0:443"} {
		c, err := readConfig(map[string]string{"EARSHOT_ADDR": v})
		if err != nil {
			t.Errorf("EARSHOT_ADDR=%q: %v", v, err)
			continue
		}
		if u, err := url.Parse(c.SiteURL); err != nil || u.Host == "" {
			t.Errorf("EARSHOT_ADDR=%q: site address %q does not parse: %v", v, c.SiteURL, err)
		}
	}
}
