package core_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

func TestParsePlatform(t *testing.T) {
	cases := []struct {
		in   string
		want core.Platform
		ok   bool
	}{
		{"reddit", core.Reddit, true},
		{"x", core.X, true},
		{"facebook", core.Facebook, true},
		{"", "", false},
		{"Reddit", "", false},
		{"X", "", false},
		{" x", "", false},
		{"reddit ", "", false},
		{"twitter", "", false},
		{"fb", "", false},
		{"mirror", "", false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := core.ParsePlatform("platforms[1]", c.in)
			if c.ok {
				if err != nil || got != c.want {
					t.Fatalf("ParsePlatform(%q) = %q, %v; want %q", c.in, got, err, c.want)
				}
				if !got.Valid() {
					t.Errorf("%q.Valid() = false", got)
				}
				return
			}
			requireKind(t, err, core.KindInvalid)
			if got != "" {
				t.Errorf("ParsePlatform(%q) returned %q with its error", c.in, got)
			}
			if msg := core.Message(err); !strings.Contains(msg, "platforms[1]") {
				t.Errorf("message %q does not name the field", msg)
			}
			if core.Platform(c.in).Valid() {
				t.Errorf("Platform(%q).Valid() = true", c.in)
			}
		})
	}
}

func TestPlatformsOrder(t *testing.T) {
	want := []core.Platform{"reddit", "x", "facebook"}
	if !reflect.DeepEqual(core.Platforms, want) {
		t.Errorf("Platforms = %v, want %v", core.Platforms, want)
	}
}
