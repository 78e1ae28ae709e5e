package health

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

func TestCheckSignal(t *testing.T) {
	fb := core.Facebook
	tests := []struct {
		name string
		sig  Signal
		ok   bool
	}{
		{"answer", Signal{Platform: fb, Status: 200}, true},
		{"error with codes", Signal{Platform: fb, Status: 400, Code: 190, Subcode: 459}, true},
		{"no answer", Signal{Platform: core.X, NoResponse: true}, true},
		{"body at the bound", Signal{Platform: fb, Status: 200, Body: strings.Repeat("a", MaxSignalBody)}, true},
		{"unknown platform", Signal{Platform: "myspace", Status: 200}, false},
		{"no platform", Signal{Status: 200}, false},
		{"no status", Signal{Platform: fb}, false},
		{"status too small", Signal{Platform: fb, Status: 99}, false},
		{"status too large", Signal{Platform: fb, Status: 600}, false},
		{"status with no answer", Signal{Platform: fb, Status: 200, NoResponse: true}, false},
		{"negative code", Signal{Platform: fb, Status: 400, Code: -1}, false},
		{"negative subcode", Signal{Platform: fb, Status: 400, Subcode: -459}, false},
		{"long location", Signal{Platform: fb, Status: 302, Location: strings.Repeat("l", MaxSignalLocation+1)}, false},
		{"long body", Signal{Platform: fb, Status: 200, Body: strings.Repeat("a", MaxSignalBody+1)}, false},
	}
	for _, tt := range tests {
		err := CheckSignal(tt.sig)
		if (err == nil) != tt.ok {
			t.Errorf("%s: CheckSignal = %v", tt.name, err)
		}
		if err != nil && !core.IsKind(err, core.KindInvalid) {
			t.Errorf("%s: kind of %v is not invalid", tt.name, err)
		}
	}
}

func TestApply(t *testing.T) {
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	fb := core.Facebook
	ok := Signal{Platform: fb, Status: 200}
	checkpoint := Signal{Platform: fb, Status: 400, Code: 190, Subcode: 459}
	captcha := Signal{Platform: fb, Status: 200, Body: `<div class="g-recaptcha">`}
	limited := Signal{Platform: fb, Status: 400, Code: 17}
	timeout := Signal{Platform: fb, NoResponse: true}
	expired := Signal{Platform: fb, Status: 401}
	tests := []struct {
		name  string
		from  Issue
		sig   Signal
		want  Issue
		retry time.Duration // 0: none
	}{
		{"healthy stays healthy", None, ok, None, 0},
		{"checkpoint recorded", None, checkpoint, Checkpointed, 0},
		{"rate limit recorded with a retry time", None, limited, RateLimited, RateLimitedRetry},
		{"network error recorded with a retry time", None, timeout, NetworkError, NetworkErrorRetry},
		{"healthy answer clears a rate limit", RateLimited, ok, None, 0},
		{"healthy answer clears a network error", NetworkError, ok, None, 0},
		{"healthy answer clears an expired session", SessionExpired, ok, None, 0},
		{"healthy answer never clears a checkpoint", Checkpointed, ok, Checkpointed, 0},
		{"healthy answer never clears an interstitial", ChallengeInterstitial, ok, ChallengeInterstitial, 0},
		{"healthy answer never clears a captcha", CaptchaHTML, ok, CaptchaHTML, 0},
		{"a rate limit does not hide a challenge", Checkpointed, limited, Checkpointed, 0},
		{"an expired session does not hide a challenge", CaptchaHTML, expired, CaptchaHTML, 0},
		{"a newer challenge replaces a challenge", CaptchaHTML, checkpoint, Checkpointed, 0},
		{"a new issue replaces a transient one", RateLimited, expired, SessionExpired, 0},
		{"a challenge replaces a transient issue", NetworkError, captcha, CaptchaHTML, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := Record{LastIssue: tt.from, LastCheckedAt: now.Add(-time.Hour)}
			if tt.from != None {
				before.RawSignal = &RawSignal{Status: 999}
			}
			got := before.Apply(tt.sig, now)
			if got.LastIssue != tt.want {
				t.Fatalf("issue %q, want %q", got.LastIssue, tt.want)
			}
			if !got.LastCheckedAt.Equal(now) {
				t.Errorf("lastCheckedAt %v, want the report's time", got.LastCheckedAt)
			}
			switch {
			case tt.want == None && got.RawSignal != nil:
				t.Errorf("a healthy record keeps raw signal %+v", got.RawSignal)
			case tt.want != None && tt.want == tt.from && tt.from.Resolvable() && got.RawSignal.Status != 999:
				t.Errorf("a kept challenge lost the signal that named it: %+v", got.RawSignal)
			case tt.want != None && tt.want != tt.from && (got.RawSignal == nil || *got.RawSignal != tt.sig.Raw()):
				t.Errorf("raw signal %+v, want %+v", got.RawSignal, tt.sig.Raw())
			}
			if tt.retry == 0 && !got.RetryAfter.IsZero() {
				t.Errorf("retryAfter %v, want none", got.RetryAfter)
			}
			if tt.retry != 0 && !got.RetryAfter.Equal(now.Add(tt.retry)) {
				t.Errorf("retryAfter %v, want %v", got.RetryAfter, now.Add(tt.retry))
			}
		})
	}
}

func TestRawKeepsNoBodyOrLocation(t *testing.T) {
	s := Signal{Platform: core.X, Status: 302, Code: 1, Subcode: 2, Location: "https://x.com/login?token=secret", Body: "secret", ViaProxy: true}
	if got := s.Raw(); got != (RawSignal{Status: 302, Code: 1, Subcode: 2, ViaProxy: true}) {
		t.Fatalf("Raw = %+v", got)
	}
}

func TestResolved(t *testing.T) {
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	for _, is := range []Issue{Checkpointed, ChallengeInterstitial, CaptchaHTML} {
		r := Record{LastIssue: is, RawSignal: &RawSignal{Status: 400}, LastCheckedAt: now.Add(-time.Hour), RetryAfter: now.Add(time.Hour)}
		got, err := r.Resolved(now)
		if err != nil {
			t.Fatalf("%s: %v", is, err)
		}
		if got != (Record{LastCheckedAt: now}) {
			t.Errorf("%s: resolved to %+v", is, got)
		}
		if v := Evaluate(true, got.LastIssue); v.State != Healthy {
			t.Errorf("%s: view after resolve %s", is, v.State)
		}
	}
	for _, is := range []Issue{None, RateLimited, SessionExpired, NetworkError, Unknown} {
		r := Record{LastIssue: is, LastCheckedAt: now.Add(-time.Hour)}
		got, err := r.Resolved(now)
		if !errors.Is(err, ErrNotResolvable) || !core.IsKind(err, core.KindConflict) {
			t.Errorf("%q: Resolved error %v, want 409", is, err)
		}
		if got != r {
			t.Errorf("%q: a refused resolve changed the record to %+v", is, got)
		}
	}
}

// Repeating a report is a fixed point: the second report changes nothing
// but the check's time, so it can never make a second notification.
func TestApplyRepeatIsStable(t *testing.T) {
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	for _, sig := range []Signal{
		{Platform: core.Facebook, Status: 401}, {Platform: core.Facebook, Status: 400, Code: 190, Subcode: 459},
		{Platform: core.X, Status: 429}, {Platform: core.Reddit, Status: 200},
	} {
		once := Record{}.Apply(sig, now)
		twice := once.Apply(sig, now.Add(time.Minute))
		if once.LastIssue != twice.LastIssue {
			t.Errorf("%+v: %q then %q", sig, once.LastIssue, twice.LastIssue)
		}
		if _, changed := Transition(Evaluate(true, once.LastIssue), Evaluate(true, twice.LastIssue)); changed {
			t.Errorf("%+v: a repeated report made a notification", sig)
		}
	}
}

// A rate limit waits what the platform named, within bounds; without a
// named wait, RateLimitedRetry.
func TestApplyRetryAfterNamed(t *testing.T) {
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		named, want time.Duration
	}{
		{0, RateLimitedRetry},
		{2 * time.Minute, 2 * time.Minute},
		{90 * 24 * time.Hour, MaxRetryAfter},
	} {
		got := Record{}.Apply(Signal{Platform: core.X, Status: 429, RetryAfter: tc.named}, now)
		if got.LastIssue != RateLimited || !got.RetryAfter.Equal(now.Add(tc.want)) {
			t.Errorf("named %v: %s retry after %v, want %v", tc.named, got.LastIssue, got.RetryAfter.Sub(now), tc.want)
		}
	}
	if err := CheckSignal(Signal{Platform: core.X, Status: 429, RetryAfter: -time.Second}); err == nil {
		t.Error("a negative retryAfter passed the check")
	}
}
