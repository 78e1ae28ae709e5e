package dashboard

import (
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

// The page after a confirmed change says the old address was told only
// when the notice to it was sent; otherwise it says the change is made
// and the old address was not told.
func TestAddressChangedPageSaysWhetherTheOldAddressWasTold(t *testing.T) {
	for _, untold := range []bool{false, true} {
		a := &addresses{email: "owner@localhost", untold: untold}
		d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Sessions: fakeSessions{}, Phrases: fakePhrases{}, Addresses: a})
		if err != nil {
			t.Fatal(err)
		}
		w := serve(d, formPost("/app/account/confirm", url.Values{"token": {tok}}, "same-origin", false))
		body := w.Body.String()
		if w.Code != 200 || !strings.Contains(body, "Your earshot address is now <strong>ada@example.com</strong>.") {
			t.Fatalf("notice failed %v: %d\n%s", untold, w.Code, body)
		}
		claims := strings.Contains(body, "The old address was told.")
		warns := strings.Contains(body, "the old address could not be told")
		if claims == untold || warns != untold {
			t.Fatalf("notice failed %v, yet the page says:\n%s", untold, body)
		}
	}
}
