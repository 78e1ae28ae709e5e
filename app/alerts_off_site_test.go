package app

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/earshothq/earshot/adapters/smtpmail"
	"github.com/earshothq/earshot/core"
)

// A site address whose path holds a comma is one EARSHOT_SITE_URL
// accepts (its check keeps a comma as written, and turns %2C into one).
// The stop link under it still goes in the mail's List-Unsubscribe,
// where a comma would separate two addresses: it is written %2C, so the
// mailer sends the alert instead of refusing it at every sweep.
func TestStopLinkUnderASitePathWithAComma(t *testing.T) {
	t.Parallel()
	const site = "https://listen.example.com/a,b"
	links := testLinks(t, testSecret)
	o := core.Owner{ID: "0b7f3c8e-5d2a-4c1e-9f00-123456789abc", Email: "ana@example.com"}
	off := links.URL(site, o.ID)
	const want = "https://listen.example.com/a%2Cb" + AlertsOffPath
	tok, ok := strings.CutPrefix(off, want)
	if !ok {
		t.Fatalf("link %q, want it under %s", off, want)
	}
	if id, ok := links.Owner(tok); !ok || id != o.ID {
		t.Fatalf("the link's token reads as %q, %v", id, ok)
	}
	m := AlertMail(o, []core.Match{{ID: "m1", Score: &core.Score{Value: 90}, Post: core.Post{URL: "https://x.com/1", Text: "t"}}}, site, off)
	if err := smtpmail.NewLogMailer(slog.New(slog.DiscardHandler)).Send(context.Background(), m); err != nil {
		t.Fatalf("the alert is refused: %v", err)
	}
}
