package dashboard

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// listedNotes lists the notifications a test gives.
type listedNotes struct {
	fakeNotifications
	items []core.Notification
}

func (l listedNotes) List(context.Context, string, int) ([]core.Notification, int, error) {
	return l.items, len(l.items), nil
}

// A switch-off notification's words include a receiver's or a service's
// (the reason): the page shows them as text, and links to the webhook's
// page to switch it on.
func TestWebhookOffNotificationEscaped(t *testing.T) {
	unread := 1
	n := core.Notification{ID: "n1", OwnerID: "own", Kind: core.NotifyWebhookOff, SubjectID: "wh_1", Severity: "alert",
		Title:   `Your webhook https://hooks.example.com/<b>x</b> was switched off`,
		Message: `The webhook https://hooks.example.com/in is off. Why: switched off at once: telegram: <script>alert(1)</script> "><img src=x onerror=alert(2)>, http 403.`,
		Email:   true, CreatedAt: time.Unix(1_700_000_000, 0)}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{}, Phrases: fakePhrases{}, Notifications: listedNotes{fakeNotifications{&unread}, []core.Notification{n}}})
	if err != nil {
		t.Fatal(err)
	}
	w := get(d, "/app/notifications", true)
	body := w.Body.String()
	if w.Code != 200 {
		t.Fatalf("status %d", w.Code)
	}
	for _, bad := range []string{"<script>alert", "<img src=x", "<b>x</b>"} {
		if strings.Contains(body, bad) {
			t.Errorf("the page carries %q", bad)
		}
	}
	for _, good := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&#34;&gt;&lt;img src=x onerror=alert(2)&gt;", "&lt;b&gt;x&lt;/b&gt;",
		`<a href="/app/webhooks/wh_1">`} {
		if !strings.Contains(body, good) {
			t.Errorf("the page lacks %q", good)
		}
	}
}
