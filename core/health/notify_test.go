package health

import "testing"

// TestTransitionSpecTable checks every row of the legacy spec's section 6
// table, plus the transitions it implies.
func TestTransitionSpecTable(t *testing.T) {
	tests := []struct {
		name     string
		from, to Issue
		notify   bool
		severity Severity
		action   Action
	}{
		{"null to checkpointed", None, Checkpointed, true, Alert, OpenChallenge},
		{"null to captcha_html", None, CaptchaHTML, true, Alert, OpenChallenge},
		{"null to challenge_interstitial", None, ChallengeInterstitial, true, Alert, OpenChallenge},
		{"null to rate_limited", None, RateLimited, true, Informational, Wait},
		{"rate_limited to null", RateLimited, None, true, Recovery, NoAction},
		{"checkpointed to null", Checkpointed, None, true, Recovery, NoAction},
		{"session_expired to session_expired", SessionExpired, SessionExpired, false, "", ""},
		{"null to null", None, None, false, "", ""},
		{"rate_limited to rate_limited", RateLimited, RateLimited, false, "", ""},
		{"null to session_expired", None, SessionExpired, true, Alert, Reconnect},
		{"rate_limited to checkpointed", RateLimited, Checkpointed, true, Alert, OpenChallenge},
		{"rate_limited to network_error", RateLimited, NetworkError, true, Informational, Wait},
		{"captcha_html to checkpointed", CaptchaHTML, Checkpointed, true, Alert, OpenChallenge},
		{"null to ip_blocked", None, IPBlocked, true, Alert, UseProxy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, ok := Transition(Evaluate(true, tt.from), Evaluate(true, tt.to))
			if ok != tt.notify {
				t.Fatalf("notify = %v, want %v", ok, tt.notify)
			}
			if !ok {
				return
			}
			if n.Severity != tt.severity || n.Action != tt.action || n.Message == "" {
				t.Errorf("got %s/%s %q, want %s/%s", n.Severity, n.Action, n.Message, tt.severity, tt.action)
			}
		})
	}
}

func TestTransitionConnection(t *testing.T) {
	n, ok := Transition(Evaluate(false, None), Evaluate(true, None))
	if !ok || n.Severity != Informational || n.To.State != Healthy {
		t.Errorf("connect: %+v %v", n, ok)
	}
	n, ok = Transition(Evaluate(true, None), Evaluate(false, None))
	if !ok || n.Severity != Informational || n.Action != Connect {
		t.Errorf("disconnect: %+v %v", n, ok)
	}
	// Resolving a checkpoint met while connecting lands on healthy: recovery.
	n, ok = Transition(Evaluate(false, Checkpointed), Evaluate(true, None))
	if !ok || n.Severity != Recovery {
		t.Errorf("resolve while connecting: %+v %v", n, ok)
	}
}

func TestNotifier(t *testing.T) {
	type step struct {
		id        string
		connected bool
		issue     Issue
		want      Severity // "" means no notification
	}
	steps := []step{
		{"a", true, None, ""},                    // baseline
		{"a", true, None, ""},                    // re-render
		{"a", true, "rate-limit", Informational}, // null to rate_limited, loose spelling
		{"a", true, RateLimited, ""},             // same normalised issue
		{"a", true, None, Recovery},              // rate_limited to null
		{"a", true, Checkpointed, Alert},         // null to checkpointed
		{"a", true, "checkpoint", ""},            // same issue after normalising
		{"b", true, SessionExpired, ""},          // baseline of another account
		{"b", true, SessionExpired, ""},          // session_expired to session_expired
		{"a", true, None, Recovery},              // checkpointed to null
		{"b", true, CaptchaHTML, Alert},          // b changes independently of a
		{"c", false, None, ""},                   // new account baseline
		{"c", true, None, Informational},         // connected
	}
	var n Notifier
	for i, s := range steps {
		note, ok := n.Observe(s.id, s.connected, s.issue)
		if ok != (s.want != "") || note.Severity != s.want {
			t.Fatalf("step %d (%s %v %q): got %v %q, want %q", i, s.id, s.connected, s.issue, ok, note.Severity, s.want)
		}
		if ok && note.AccountID != s.id {
			t.Fatalf("step %d: account %q", i, note.AccountID)
		}
	}
	n.Forget("a")
	if _, ok := n.Observe("a", true, RateLimited); ok {
		t.Error("a forgotten account must start with a silent baseline")
	}
}
