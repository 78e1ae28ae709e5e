package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/app/record"
	"github.com/earshothq/earshot/core"
)

// A test ping is made before anything answers it, so its text may not
// claim that the receiver checked its signature: it tells the receiver
// which headers to check instead, one per scheme. Its data is
// {webhookId, message}.
func TestPingClaimsNoCheck(t *testing.T) {
	t.Parallel()
	d, err := messenger{}.ping(core.Webhook{ID: "w1", OwnerID: "o1"}, "d1", time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Data map[string]string `json:"data"`
	}
	if err := json.Unmarshal(d.Payload, &body); err != nil {
		t.Fatal(err)
	}
	msg := body.Data["message"]
	if len(body.Data) != 2 || body.Data["webhookId"] != "w1" || msg == "" {
		t.Fatalf("ping data %q, want webhookId and message", body.Data)
	}
	if strings.Contains(msg, "verifies") || strings.Contains(msg, "verified") {
		t.Errorf("ping message claims a signature check that never happened: %q", msg)
	}
	for _, h := range []string{core.HeaderSignature, core.HeaderStandardSignature} {
		if !strings.Contains(msg, h) {
			t.Errorf("ping message does not name the signature header %s: %q", h, msg)
		}
	}
}

// A match.created message carries the match's public record as its data,
// byte for byte as json.Marshal writes record.Match: GET /matches/{id}
// answers with the same bytes (httpapi's TestMatchRecordIsTheWebhookData).
// The envelope has the delivery's id, event and creation time.
func TestMatchCreatedCarriesTheRecord(t *testing.T) {
	t.Parallel()
	m := core.Match{ID: "m1", Phrase: "acme", Platform: core.X, CreatedAt: time.UnixMicro(1_700_000_000_123_456),
		Score: &core.Score{Value: 91, Intent: core.IntentBuying, Reason: "asks where to buy"},
		Post:  core.Post{Author: "ada", Title: "a & b", Text: "<b>who sells acme?</b>", URL: "https://x.com/ada/1"}}
	d := core.Delivery{ID: "d1", Event: core.EventMatchCreated, CreatedAt: time.UnixMilli(1_700_000_000_500)}
	body, err := messenger{}.matchCreated(d, m)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		ID, Type, CreatedAt string
		Data                json.RawMessage
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(record.NewMatch(m))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Data) != string(want) {
		t.Fatalf("data %s\nwant %s", got.Data, want)
	}
	if got.ID != "d1" || got.Type != core.EventMatchCreated || got.CreatedAt != "2023-11-14T22:13:20.500Z" {
		t.Fatalf("envelope %s", body)
	}
}
