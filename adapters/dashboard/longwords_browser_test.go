package dashboard

// Pages with long unbroken words where the walk of cmd/earshot has none:
// a phrase's filters, a receiver's or a chat service's words in a
// webhook's reason and delivery log, and a long phrase on a match. Run
// in Debian's Chromium at phone width; skipped without it.

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// longPhrases lists one phrase whose filters skip a long word and an
// author with a long handle.
type longPhrases struct {
	fakePhrases
	long string
}

func (p longPhrases) List(context.Context, string, ports.PhraseFilter) ([]core.Phrase, error) {
	return []core.Phrase{{ID: "p1", Phrase: "acme", Platform: core.X, Status: core.Listening,
		Filters: core.PhraseFilters{Exclude: []string{p.long}, ExcludeAuthors: []string{p.long[:60]}}}}, nil
}

// reasonWebhooks has one webhook, switched off with a reason that
// repeats a receiver's long word, and a failed delivery saying it.
type reasonWebhooks struct {
	countingWebhooks
	long string
}

func (h *reasonWebhooks) List(context.Context, string) ([]core.Webhook, error) {
	return []core.Webhook{{ID: "h1", URL: "https://hooks.example.com/in", DisabledReason: "switched off after 5 failed deliveries in a row; last error: slack: " + h.long + ", http 400",
		ConsecutiveFailures: 5, Platforms: core.Platforms}}, nil
}
func (h *reasonWebhooks) Deliveries(context.Context, string, string) ([]core.Delivery, error) {
	at := time.Date(2026, 5, 1, 11, 0, 0, 0, time.UTC)
	return []core.Delivery{{ID: "d1", Event: "match.created", Trigger: core.TriggerScheduled, Status: core.DeliveryFailed, Tries: 5,
		ResponseStatus: 400, Error: "slack: " + h.long + ", http 400", CreatedAt: at, LastAttemptAt: at}}, nil
}

func TestLongWordsStayOnAPhoneScreen(t *testing.T) {
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("no Chromium at %s: browser test skipped", chromium)
	}
	long := strings.Repeat("verylongword", 12)
	it := item(1, "about acme", "ada", "https://x.com/1")
	it.Match.Phrase = "acme" + long[:90]
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{items: []ports.InboxItem{it}}, Matches: fakeMatches{m: it.Match},
			Phrases: longPhrases{long: long}, Webhooks: &reasonWebhooks{long: long}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, stop := context.WithTimeout(bctx, 60*time.Second)
	defer stop()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(375, 800), chromedp.Navigate(srv.URL+"/app/login")); err != nil {
		t.Skipf("Chromium does not start (%v): browser test skipped", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.cookie = "`+cookieName+`=`+tok+`; path=/app/"`)); err != nil {
		t.Fatal(err)
	}
	// How far the page reaches past the screen, and the first elements
	// that do; "" when nothing does.
	const overflow = `(function(){var d=document.documentElement;if(d.scrollWidth<=d.clientWidth)return "";
var out=[];document.querySelectorAll("main *").forEach(function(e){var r=e.getBoundingClientRect();if(r.right>d.clientWidth+1&&out.length<4)out.push(e.tagName.toLowerCase()+(e.className?"."+e.className:""))});
return "scroll width "+d.scrollWidth+" of "+d.clientWidth+": "+out.join(", ")})()`
	for _, path := range []string{"/app/", "/app/phrases", "/app/webhooks", "/app/webhooks/h1"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+path), chromedp.WaitReady(chromedp.CSS("main h1"))); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		over, err := chromedp.Run(ctx, chromedp.Evaluate[string](overflow))
		if err != nil {
			t.Fatal(err)
		}
		if over != "" {
			t.Errorf("%s at 375 px reaches past the screen: %s", path, over)
		}
	}
}
