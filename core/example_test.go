package core_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
)

// A receiver checks the X-Service-Signature of each message with the
// secret the webhook was created with. The request below carries the
// headers earshot's sender sets on every try.
func ExampleVerify() {
	secret := "whsec_c2VjcmV0LWJ5dGVzLWZvci10aGUtZXhhbXBsZS0zMmI=" // as the create answer showed it

	handler := func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20)) // the raw body, not re-encoded
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		err = core.Verify(secret, r.Header.Get(core.HeaderSignature), r.Header.Get(core.HeaderTimestamp), body, time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized) // the message never holds the secret
			return
		}
		// Retries carry the same delivery id: drop one already handled.
		fmt.Println("verified", r.Header.Get(core.HeaderEvent), r.Header.Get(core.HeaderDelivery))
		w.WriteHeader(http.StatusNoContent)
	}

	// A test ping as earshot sends it.
	id := "0196f0c3-7c2e-7a51-9a4e-2f1b3c4d5e6f"
	body := `{"id":"` + id + `","type":"ping","createdAt":"2026-03-01T12:00:00.000Z","data":{"webhookId":"0196f0c3-0000-7000-8000-000000000001","message":"This is a test message from earshot."}}`
	ts := time.Now().Unix()
	req := httptest.NewRequest(http.MethodPost, "https://hooks.example.com/earshot", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(core.HeaderEvent, "ping")
	req.Header.Set(core.HeaderDelivery, id)
	req.Header.Set(core.HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(core.HeaderSignature, core.Sign(secret, ts, []byte(body)))

	rec := httptest.NewRecorder()
	handler(rec, req)
	fmt.Println(rec.Code)

	// The same message with one byte changed is refused.
	tampered := httptest.NewRequest(http.MethodPost, "https://hooks.example.com/earshot", strings.NewReader(strings.Replace(body, "ping", "pong", 1)))
	tampered.Header = req.Header.Clone()
	rec = httptest.NewRecorder()
	handler(rec, tampered)
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output:
	// verified ping 0196f0c3-7c2e-7a51-9a4e-2f1b3c4d5e6f
	// 204
	// 401 webhook signature does not match
}

// The webhook-* headers follow Standard Webhooks: the same message, its
// id, instant and body, signed with the secret's decoded bytes. During a
// secret rotation the header holds one value per secret, separated by
// a space, and either secret verifies it.
func ExampleVerifyStandard() {
	oldSecret := "whsec_c2VjcmV0LWJ5dGVzLWZvci10aGUtZXhhbXBsZS0zMmI="
	newSecret := "whsec_bmV3LXNlY3JldC1ieXRlcy1mb3ItdGhlLWV4YW1wbGU="

	handler := func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		err = core.VerifyStandard(oldSecret, r.Header.Get(core.HeaderStandardID),
			r.Header.Get(core.HeaderStandardSignature), r.Header.Get(core.HeaderStandardTimestamp), body, time.Now())
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		fmt.Println("verified", r.Header.Get(core.HeaderStandardID))
		w.WriteHeader(http.StatusNoContent)
	}

	// A match.created message sent while the old secret still signs
	// beside the new one.
	id := "0196f0c3-7c2e-7a51-9a4e-2f1b3c4d5e6f"
	body := `{"id":"` + id + `","type":"match.created","createdAt":"2026-03-01T12:00:00.000Z","data":{"id":"0196f0c2-1111-7000-8000-000000000002"}}`
	ts := time.Now().Unix()
	stamp := strconv.FormatInt(ts, 10)
	req := httptest.NewRequest(http.MethodPost, "https://hooks.example.com/earshot", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(core.HeaderEvent, core.EventMatchCreated)
	req.Header.Set(core.HeaderDelivery, id)
	req.Header.Set(core.HeaderTimestamp, stamp)
	req.Header.Set(core.HeaderSignature, core.Sign(newSecret, ts, []byte(body)))
	req.Header.Set(core.HeaderStandardID, id)
	req.Header.Set(core.HeaderStandardTimestamp, stamp)
	req.Header.Set(core.HeaderStandardSignature, core.SignStandardEach([]string{newSecret, oldSecret}, id, ts, []byte(body)))

	rec := httptest.NewRecorder()
	handler(rec, req)
	fmt.Println(rec.Code)
	// Output:
	// verified 0196f0c3-7c2e-7a51-9a4e-2f1b3c4d5e6f
	// 204
}

// ParseSearch reads the q of a search box. What it refuses is of kind
// KindInvalid, with a message fit to show the person who typed it.
func ExampleParseSearch() {
	s, err := core.ParseSearch(`"acme crm" pricing -jobs`)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range s.Terms {
		fmt.Println(t.Words, t.Exclude)
	}

	_, err = core.ParseSearch("-jobs")
	fmt.Println(core.IsKind(err, core.KindInvalid), core.Message(err))
	// Output:
	// [acme crm] false
	// [pricing] false
	// [jobs] true
	// true q must hold a word to find, with letters or numbers, not only words to leave out
}

// NewPhraseFilters normalises filters as a person typed them; Keep then
// decides each post in which the phrase was found. The counts of Exclude
// and Require words found in the post come from a scan with the matcher
// (package match), here written out.
func ExampleNewPhraseFilters() {
	f, err := core.NewPhraseFilters(core.PhraseFilters{
		Exclude:            []string{"  Hiring ", "hiring"},
		ExcludeAuthors:     []string{"u/AcmeBot"},
		ExcludeCommunities: []string{"r/ads"},
		MinLikes:           2,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q %q %q\n", f.Exclude, f.ExcludeAuthors, f.ExcludeCommunities)

	post := core.Post{Author: "jane", Title: "Any alternative to acme crm?", Likes: 5}
	fmt.Println(f.Keep(core.FilterPostOf(post, "saas"), core.FilterHits{}))
	fmt.Println(f.Keep(core.FilterPostOf(post, "ads"), core.FilterHits{}))
	fmt.Println(f.Keep(core.FilterPostOf(post, "saas"), core.FilterHits{Excluded: 1}))

	_, err = core.NewPhraseFilters(core.PhraseFilters{MinLikes: -1})
	fmt.Println(core.KindOf(err), err)
	// Output:
	// ["Hiring"] ["AcmeBot"] ["ads"]
	// true
	// false
	// false
	// invalid_parameter minLikes must be a whole number from 0 to 1000000
}

// A daily digest at 09:00 in Berlin: DigestDue says whether it goes out
// at a sweep and which matches it gathers. Keeping each digest's now as
// the next one's last makes the periods follow one another with no gap
// and no overlap.
func ExampleDigestDue() {
	s, err := core.NewAlertSchedule("daily", 9, "Europe/Berlin")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s)

	berlin, _ := time.LoadLocation("Europe/Berlin")
	last := time.Date(2026, 3, 1, 9, 0, 30, 0, berlin) // when the last digest went out
	for _, now := range []time.Time{
		time.Date(2026, 3, 2, 8, 59, 0, 0, berlin),
		time.Date(2026, 3, 2, 9, 0, 10, 0, berlin),
	} {
		due, from := core.DigestDue(s, last, now)
		if !due {
			fmt.Println(now.Format("15:04"), "not due")
			continue
		}
		fmt.Println(now.Format("15:04"), "due: matches from", from.In(berlin).Format("Jan 2 15:04:05"), "to now")
	}
	// Output:
	// daily at 09:00 Europe/Berlin
	// 08:59 not due
	// 09:00 due: matches from Mar 1 09:00:30 to now
}
