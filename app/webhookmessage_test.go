package app

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// A test ping is made before anything answers it, so its text may not
// claim that the receiver checked its signature: it tells the receiver
// which header to check instead. Its data is {webhookId, message}.
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
	if !strings.Contains(msg, core.HeaderSignature) {
		t.Errorf("ping message does not name the signature header %s: %q", core.HeaderSignature, msg)
	}
}
