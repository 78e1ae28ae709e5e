package dashboard

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/earshothq/earshot/app"
)

// The link of an owner since deleted (an operator removed the row) is
// still one of ours: its page offers the button, and the button or a
// mailbox provider's one-click POST (RFC 8058, which expects a 2xx)
// answers that the alert emails are off, which they are: there is no
// one left to mail. It is not "copy the whole link", which would send
// the reader hunting for a link they have whole.
func TestAlertsOffLinkOfADeletedOwner(t *testing.T) {
	w := newOffWorld(t)
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Sessions: fakeSessions{}, AlertsOff: w.alerts})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.SQL().ExecContext(context.Background(), "DELETE FROM owners WHERE id = ?", w.ana.ID); err != nil {
		t.Fatal(err)
	}
	path := app.AlertsOffPath + w.anaTok
	if g := get(d, path, false); g.Code != 200 {
		t.Fatalf("GET %d", g.Code)
	}
	for _, site := range []string{"same-origin", "cross-site"} {
		if p := serve(d, formPost(path, nil, site, false)); p.Code != 200 || !strings.Contains(p.Body.String(), "Alert emails are off") {
			t.Fatalf("POST (%s) %d:\n%s", site, p.Code, p.Body)
		}
	}
}
