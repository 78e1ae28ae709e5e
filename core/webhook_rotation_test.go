package core_test

import (
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// An overlap is 0 (the old secret stops at once) up to 7 days; a
// rotation keeps the old secret signing until the rotation's time plus
// the overlap, and forgets it at once with none.
func TestSecretOverlapEnd(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		overlap time.Duration
		until   time.Time
		ok      bool
	}{
		{core.DefaultSecretOverlap, at.Add(24 * time.Hour), true},
		{0, time.Time{}, true},
		{time.Second, at.Add(time.Second), true},
		{core.MaxSecretOverlap, at.Add(7 * 24 * time.Hour), true},
		{core.MaxSecretOverlap + time.Second, time.Time{}, false},
		{-time.Second, time.Time{}, false},
	} {
		got, err := core.SecretOverlapEnd(at, c.overlap)
		if !c.ok {
			if !core.IsKind(err, core.KindInvalid) || !strings.Contains(core.Message(err), "7 days") {
				t.Errorf("overlap %v: %v, want an invalid_parameter naming the bound", c.overlap, err)
			}
			continue
		}
		if err != nil || !got.Equal(c.until) {
			t.Errorf("overlap %v: %v, %v; want %v", c.overlap, got, err, c.until)
		}
	}
	if core.DefaultSecretOverlap != 24*time.Hour || core.MaxSecretOverlap != 7*24*time.Hour {
		t.Fatalf("default %v, max %v", core.DefaultSecretOverlap, core.MaxSecretOverlap)
	}
}

// During the overlap a message is signed by the new secret and the old
// one, new first; at the overlap's end and after it, and with no
// rotation, by the new one alone.
func TestSigningSecrets(t *testing.T) {
	at := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	w := core.Webhook{ID: "h1", PreviousSecretUntil: at.Add(time.Hour)}
	for _, c := range []struct {
		name  string
		w     core.Webhook
		old   string
		at    time.Time
		signs bool // PreviousSecretSigns
		want  []string
	}{
		{"at the rotation", w, "old", at, true, []string{"new", "old"}},
		{"a second before the end", w, "old", at.Add(time.Hour - time.Second), true, []string{"new", "old"}},
		{"at the end", w, "old", at.Add(time.Hour), false, []string{"new"}},
		{"after the end", w, "old", at.Add(2 * time.Hour), false, []string{"new"}},
		{"no rotation", core.Webhook{ID: "h1"}, "", at, false, []string{"new"}},
		{"an overlap but no old secret kept", w, "", at, true, []string{"new"}},
		{"an old secret kept past its overlap", core.Webhook{ID: "h1"}, "old", at, false, []string{"new"}},
	} {
		got := c.w.SigningSecrets("new", c.old, c.at)
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if s := c.w.PreviousSecretSigns(c.at); s != c.signs {
			t.Errorf("%s: PreviousSecretSigns = %v, want %v", c.name, s, c.signs)
		}
	}
}

// webhook-signature during an overlap carries one v1 value per secret,
// new first, separated by a space; each verifies with its own secret, and
// a Standard Webhooks header of the new secret alone equals SignStandard.
func TestSignStandardEach(t *testing.T) {
	body := []byte(`{"id":"d1"}`)
	const ts = 1700000000
	both := core.SignStandardEach([]string{newSecret, oldSecret}, "d1", ts, body)
	want := core.SignStandard(newSecret, "d1", ts, body) + " " + core.SignStandard(oldSecret, "d1", ts, body)
	if both != want {
		t.Fatalf("SignStandardEach = %q, want %q", both, want)
	}
	now := time.Unix(ts, 0)
	for _, secret := range []string{newSecret, oldSecret} {
		if err := core.VerifyStandard(secret, "d1", both, "1700000000", body, now); err != nil {
			t.Errorf("the header of both does not verify with %s: %v", secret[:10], err)
		}
	}
	if err := core.VerifyStandard("whsec_AAAA", "d1", both, "1700000000", body, now); err == nil {
		t.Error("a third secret verifies")
	}
	if one := core.SignStandardEach([]string{newSecret}, "d1", ts, body); one != core.SignStandard(newSecret, "d1", ts, body) {
		t.Errorf("one secret: %q", one)
	}
}
