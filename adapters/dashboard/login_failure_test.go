package dashboard

import (
	"bytes"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// A sign-in request the server fails to take (its database gone) is
// answered "internal error", as every page answers one, and the log
// says why, as it does for every other page: otherwise nobody can tell
// why owners cannot sign in.
func TestSignInRequestFailureIsLogged(t *testing.T) {
	db := dbtest.Memory(t)
	sessions := app.NewSessions(app.SessionDeps{Store: gormstore.NewSessionStore(db), Limiter: gormstore.NewRateLimiter(db)}, app.SessionConfig{})
	var log bytes.Buffer
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(&log, nil))}, Deps{Sessions: sessions})
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close() // the database goes away
	w := serve(d, formPost("/app/login", url.Values{"email": {"ada@example.com"}}, "same-origin", false))
	if w.Code != 500 || !strings.Contains(w.Body.String(), "internal error") {
		t.Fatalf("status %d\n%s", w.Code, w.Body)
	}
	if logged := log.String(); !strings.Contains(logged, "level=ERROR") || !strings.Contains(logged, "path=/app/login") {
		t.Fatalf("the failure left no error in the log: %q", logged)
	}
}
