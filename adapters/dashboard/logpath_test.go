package dashboard

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// A page that fails with an internal error logs its path, and a path
// segment of a token's form is logged as {token}, as the server's
// request log writes it: a sign-in link or address confirmation in the
// log would let whoever reads it take the account.
func TestFailedPageLogsNoToken(t *testing.T) {
	link, _, err := core.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	cookie, _, err := core.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	db := dbtest.Memory(t)
	sessions := app.NewSessions(app.SessionDeps{Store: gormstore.NewSessionStore(db), Limiter: gormstore.NewRateLimiter(db)}, app.SessionConfig{})
	var log bytes.Buffer
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(&log, nil))}, Deps{Sessions: sessions})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close() // the database goes away: the session cannot be looked up

	// Through the whole dashboard: the session check fails on a page
	// whose address carries a token-shaped segment.
	r := httptest.NewRequest("GET", "/app/webhooks/"+link, nil)
	r.AddCookie(&http.Cookie{Name: cookieName, Value: cookie})
	w := httptest.NewRecorder()
	d.ServeHTTP(w, r)
	if w.Code != 500 {
		t.Fatalf("status %d\n%s", w.Code, w.Body)
	}
	// And the link pages' own addresses, failing as any page may.
	for _, path := range []string{"/app/login/" + link, "/app/account/confirm/" + link} {
		if got := d.statusLogged(httptest.NewRequest("GET", path, nil), errors.New("database gone")); got != 500 {
			t.Fatalf("%s: status %d", path, got)
		}
	}
	logged := log.String()
	for _, want := range []string{"path=/app/webhooks/{token}", "path=/app/login/{token}", "path=/app/account/confirm/{token}"} {
		if !strings.Contains(logged, want) {
			t.Errorf("log lacks %s:\n%s", want, logged)
		}
	}
	if strings.Contains(logged, link) || strings.Contains(logged, cookie) {
		t.Fatalf("a token reached the log:\n%s", logged)
	}
}
