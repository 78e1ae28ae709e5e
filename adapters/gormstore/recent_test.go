package gormstore

import (
	"encoding/json"
	"testing"
)

// The hand-written JSON strings of keepRecent read back as written.
func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `"quoted" \ back\slash`, "tab\tnew\nline\r\x01\x1f", "σοφία 🚀 \u2028", "</script>&<>"} {
		var got string
		b := appendJSONString(nil, s)
		if err := json.Unmarshal(b, &got); err != nil || got != s {
			t.Errorf("%q wrote %s: read back %q, %v", s, b, got, err)
		}
	}
}
