package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// busyAddresses refuses every new address as app.AddressChanges does
// past its confirmation mails a minute.
type busyAddresses struct{ addresses }

func (*busyAddresses) Request(context.Context, string, string) error {
	return core.Errorf(core.KindRateLimited, "too many confirmation links asked for: wait a minute and try again")
}

// A new address refused for too many links asked is a 429 with
// Retry-After, as every refusal past a limit is, and the page says it.
func TestAddressRequestPastItsLimitSaysWhen(t *testing.T) {
	a := &busyAddresses{addresses{email: "owner@localhost"}}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Sessions: fakeSessions{}, Phrases: fakePhrases{}, Addresses: a})
	if err != nil {
		t.Fatal(err)
	}
	w := serve(d, formPost("/app/account", url.Values{"email": {"new@example.com"}}, "same-origin", true))
	if w.Code != 429 || w.Header().Get("Retry-After") != "60" || !strings.Contains(w.Body.String(), "wait a minute") {
		t.Fatalf("%d Retry-After %q\n%s", w.Code, w.Header().Get("Retry-After"), w.Body.String())
	}
}
