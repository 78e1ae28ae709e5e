package dashboard

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// manyNotes holds n unread notifications, newest first, and lists as
// many as it is asked for, as the store does.
type manyNotes struct {
	fakeNotifications
	n int
}

func (m manyNotes) List(_ context.Context, _ string, limit int) ([]core.Notification, int, error) {
	var out []core.Notification
	for i := 0; i < m.n && i < limit; i++ {
		out = append(out, core.Notification{ID: fmt.Sprintf("n%d", i), Kind: core.NotifyAccountHealth, Severity: "alert",
			Title: fmt.Sprintf("note %d", i), CreatedAt: time.Unix(1_700_000_000-int64(i), 0)})
	}
	return out, m.n, nil
}

// An owner keeps more notifications than the page lists: the page says
// the older ones are not shown, and only then.
func TestNotificationsPageSaysOlderAreNotListed(t *testing.T) {
	for _, n := range []int{notificationsPage, notificationsPage + 30} {
		unread := n
		d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
			Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{}, Phrases: fakePhrases{}, Notifications: manyNotes{fakeNotifications{&unread}, n}})
		if err != nil {
			t.Fatal(err)
		}
		body := get(d, "/app/notifications", true).Body.String()
		if got := strings.Count(body, `<li class="note `); got != notificationsPage {
			t.Fatalf("%d kept: %d listed", n, got)
		}
		if says := strings.Contains(body, `id="notes-older"`); says != (n > notificationsPage) {
			t.Fatalf("%d kept: says older ones are not listed: %v\n%s", n, says, body)
		}
	}
}
