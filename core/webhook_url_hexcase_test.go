package core_test

import (
	"testing"

	"github.com/earshothq/earshot/core"
)

// The hex digits of an escape are case-insensitive (RFC 3986 6.2.2.1),
// so %2f and %2F name one address and must come out alike, upper-cased,
// in the path and in the query; the rest stays as given.
func TestWebhookURLEscapeHexCaseNormalisesAlike(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://hooks.example.com/a%2fb", "https://hooks.example.com/a%2Fb"},
		{"https://hooks.example.com/a%2Fb", "https://hooks.example.com/a%2Fb"},
		{"https://hooks.example.com/%2e%2E/%c3%a9%20x", "https://hooks.example.com/%2E%2E/%C3%A9%20x"},
		{"https://hooks.example.com/%7e%3a", "https://hooks.example.com/~%3A"},
		{"https://hooks.example.com/x?q=%2f&r=%e2%82%ac", "https://hooks.example.com/x?q=%2F&r=%E2%82%AC"},
		{"https://hooks.example.com/x?q=%zz%2%ab&s=abc", "https://hooks.example.com/x?q=%zz%2%AB&s=abc"},
		{"https://hooks.example.com/x?q=%a", "https://hooks.example.com/x?q=%a"},
	} {
		got, err := core.CheckWebhookURL(c.in, false)
		if err != nil || got != c.want {
			t.Errorf("CheckWebhookURL(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}
