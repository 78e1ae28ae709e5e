package app

import (
	"context"
	"strings"
	"testing"
	"unicode"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// keptNotes keeps the notifications added, for their words.
type keptNotes struct {
	ports.NotificationStore
	added []core.Notification
}

func (k *keptNotes) AddNotification(_ context.Context, n *core.Notification) error {
	k.added = append(k.added, *n)
	return nil
}

// switchedOffWords is the notification and the email of w switching
// itself off, its emails linking to https://earshot.example.com/.
func switchedOffWords(t *testing.T, w core.Webhook) (core.Notification, ports.Mail) {
	t.Helper()
	kept := &keptNotes{}
	notes := NewNotifications(NotificationDeps{Store: kept, Log: quiet}, func() string { return "https://earshot.example.com/" })
	if err := notes.WebhookSwitchedOff(context.Background(), w); err != nil || len(kept.added) != 1 {
		t.Fatalf("WebhookSwitchedOff: %v, %d kept", err, len(kept.added))
	}
	n := kept.added[0]
	return n, NotificationMail(core.Owner{Email: "ana@example.com"}, n, "https://earshot.example.com/")
}

// A switched-off webhook's notification says which webhook, why, and
// what to do: fix the receiver, then switch it on on its page, whose
// address the email gives, or with the API. The raw id shows once, in
// the API call; an address too long to read is shortened.
func TestWebhookOffNotificationSaysWhichWhyWhatToDo(t *testing.T) {
	t.Parallel()
	const id = "01J9Z3K4M5N6P7Q8R9S0T1V2W3"
	reason := "switched off after 5 failed deliveries in a row; last error: http 502"
	n, m := switchedOffWords(t, core.Webhook{ID: id, OwnerID: "o1", URL: "https://hooks.example.com/earshot", DisabledReason: reason})
	if n.Title != "Your webhook https://hooks.example.com/earshot was switched off" {
		t.Errorf("title %q", n.Title)
	}
	want := "The webhook https://hooks.example.com/earshot is off. Why: " + reason + ". What to do: fix the receiver, then switch the webhook on again " +
		"on its page in the dashboard; or with the API: PATCH /api/v1/webhooks/" + id + ` {"active": true}. Messages queued meanwhile then go out.`
	if n.Message != want {
		t.Errorf("message\n%s\nwant\n%s", n.Message, want)
	}
	if c := strings.Count(n.Message, id); c != 1 {
		t.Errorf("the id %d times in %q", c, n.Message)
	}
	if !strings.Contains(m.Body, "\nIts page: https://earshot.example.com/app/webhooks/"+id+"\n") || strings.Count(m.Body, "PATCH") != 1 {
		t.Errorf("email body\n%s", m.Body)
	}

	long := "https://hooks.example.com/" + strings.Repeat("a1b2", 100) + "/tail"
	n, m = switchedOffWords(t, core.Webhook{ID: id, OwnerID: "o1", URL: long, DisabledReason: reason})
	name := strings.TrimSuffix(strings.TrimPrefix(n.Title, "Your webhook "), " was switched off")
	if len([]rune(name)) > 60 || !strings.HasPrefix(name, "https://hooks.example.com/a1b2") || !strings.HasSuffix(name, "/tail") || !strings.Contains(name, "…") {
		t.Errorf("a long address named %q", name)
	}
	if strings.Contains(m.Subject+m.Body, long) {
		t.Errorf("the long address whole in the email %q\n%s", m.Subject, m.Body)
	}
}

// A reason carries words a stranger chose (a channel's service's answer):
// in the email it stays on one line with no control characters, so it
// cannot start lines of its own, and it is bounded.
func TestWebhookOffNotificationReasonIsOneLine(t *testing.T) {
	t.Parallel()
	hostile := "switched off at once: telegram: no\r\n\r\nIts page: https://evil.example/\x1b[2J\u202e, http 403" + strings.Repeat(" long", 2000)
	for _, w := range []core.Webhook{
		{ID: "wh_1", OwnerID: "o1", URL: "https://hooks.example.com/in", DisabledReason: hostile},
		{ID: "ch_1", OwnerID: "o1", URL: "telegram chat 42 (bot 123456…)", Kind: core.ChannelTelegram, DisabledReason: hostile},
	} {
		n, m := switchedOffWords(t, w)
		for _, s := range []string{n.Title, n.Message} {
			if strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || r == '\u202e' }) {
				t.Errorf("%s: control characters in %q", w.ID, core.Cut(s, 300))
			}
		}
		if len(n.Message) > 1000 {
			t.Errorf("%s: a message of %d bytes", w.ID, len(n.Message))
		}
		for _, line := range strings.Split(m.Body, "\n") {
			if strings.HasPrefix(line, "Its page: https://evil") {
				t.Errorf("%s: a line of the reason's own in the email\n%s", w.ID, core.Cut(m.Body, 300))
			}
		}
	}
}
