package httpapi

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/logtest"
)

// A request answered well is logged only at debug; a refusal at info, a
// failure on our side at warn; the metrics hear of every one.
func TestRequestLogLevels(t *testing.T) {
	status := map[string]int{"/ok": 200, "/gone": 404, "/broken": 500}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status[r.URL.Path]) })
	for _, tc := range []struct {
		level  slog.Level
		logged []string
	}{
		{slog.LevelInfo, []string{"/gone", "/broken"}},
		{slog.LevelDebug, []string{"/ok", "/gone", "/broken"}},
		{slog.LevelWarn, []string{"/broken"}},
	} {
		var buf logtest.Buffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level}))
		observed := 0
		h := RequestLog(log, func(string, string, int, time.Duration) { observed++ }, next)
		for _, p := range []string{"/ok", "/gone", "/broken"} {
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
		}
		if observed != 3 {
			t.Errorf("level %v: %d requests observed, want 3", tc.level, observed)
		}
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if buf.String() == "" {
			lines = nil
		}
		if len(lines) != len(tc.logged) {
			t.Fatalf("level %v: %d lines, want %v:\n%s", tc.level, len(lines), tc.logged, buf.String())
		}
		for i, p := range tc.logged {
			if !strings.Contains(lines[i], "path="+p) {
				t.Errorf("level %v: line %d is %q, want %s", tc.level, i, lines[i], p)
			}
		}
		if tc.level == slog.LevelDebug && !strings.Contains(buf.String(), "level=WARN msg=request method=GET path=/broken") {
			t.Errorf("a 500 is not a warning:\n%s", buf.String())
		}
	}
	if requestLevel(200, 2*time.Second, http.Header{}) != slog.LevelInfo {
		t.Error("a slow answer is not logged at info")
	}
}

// A Server-Sent Events stream stays open as long as its page does, so its
// length says nothing about the server: only a refusal or a failure puts
// it in the log. Other slow answers still do.
func TestRequestLogStreamsAreNotSlow(t *testing.T) {
	for _, tc := range []struct {
		contentType string
		status      int
		want        slog.Level
	}{
		{"text/event-stream", 200, slog.LevelDebug},
		{"text/event-stream; charset=utf-8", 200, slog.LevelDebug},
		{"Text/Event-Stream", 200, slog.LevelDebug},
		{"text/event-stream", 401, slog.LevelInfo},
		{"text/event-stream", 500, slog.LevelWarn},
		{"application/json", 200, slog.LevelInfo},
		{"", 200, slog.LevelInfo},
	} {
		h := http.Header{}
		if tc.contentType != "" {
			h.Set("Content-Type", tc.contentType)
		}
		if got := requestLevel(tc.status, 2*time.Second, h); got != tc.want {
			t.Errorf("%d %q after 2s: level %v, want %v", tc.status, tc.contentType, got, tc.want)
		}
	}
}
