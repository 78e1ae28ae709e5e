package webhooksender_test

import (
	"context"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/earshothq/earshot/adapters/webhooksender"
	"github.com/earshothq/earshot/core"
)

// During a rotation's overlap a message carries two webhook-signature
// values, the new secret's first, and the Standard Webhooks library
// verifies it with either secret; X-Service-Signature, one value in the
// spec, is the new secret's. Without a previous secret there is one value.
func TestRotationSignsWithBothSecrets(t *testing.T) {
	newer, err := core.NewWebhookSecret()
	if err != nil {
		t.Fatal(err)
	}
	older, err := core.NewWebhookSecret()
	if err != nil {
		t.Fatal(err)
	}
	srv, got := capture(t)
	s := webhooksender.New(webhooksender.Config{AllowPrivate: true, Timeout: 2 * time.Second})
	m := message(srv.URL)
	m.Secret, m.PreviousSecret = newer, older
	if r := s.Send(context.Background(), m); !r.Delivered() {
		t.Fatalf("Send = %+v", r)
	}
	c := <-got
	vals := strings.Fields(c.header.Get("webhook-signature"))
	ts := c.header.Get(core.HeaderTimestamp)
	if len(vals) != 2 || !strings.HasPrefix(vals[0], "v1,") || !strings.HasPrefix(vals[1], "v1,") {
		t.Fatalf("webhook-signature %q, want two v1 values", c.header.Get("webhook-signature"))
	}
	for name, secret := range map[string]string{"new": newer, "old": older} {
		lib, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		if err := lib.Verify(c.body, c.header); err != nil {
			t.Errorf("the library refuses the message with the %s secret: %v", name, err)
		}
	}
	// New first: the first value alone verifies with the new secret.
	if err := core.VerifyStandard(newer, m.DeliveryID, vals[0], ts, c.body, time.Now()); err != nil {
		t.Errorf("the first value is not the new secret's: %v", err)
	}
	if sig := c.header.Get(core.HeaderSignature); sig != specSignature(newer, ts, c.body) || strings.Contains(sig, ",") {
		t.Errorf("X-Service-Signature %q, want the new secret's one value", sig)
	}

	m.PreviousSecret = ""
	if r := s.Send(context.Background(), m); !r.Delivered() {
		t.Fatalf("Send = %+v", r)
	}
	c = <-got
	if vals := strings.Fields(c.header.Get("webhook-signature")); len(vals) != 1 {
		t.Fatalf("without a previous secret webhook-signature is %q", c.header.Get("webhook-signature"))
	}
	lib, _ := standardwebhooks.NewWebhook(older)
	if err := lib.Verify(c.body, c.header); err == nil {
		t.Error("the old secret verifies a message sent without it")
	}
}
