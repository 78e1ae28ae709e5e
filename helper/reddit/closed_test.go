package reddit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/reddit"
)

// Reddit's answers for a community refused for its own reason, as
// adapters/reddit's tests serve them: a private community's 403 (its
// TestPrivateCommunityDoesNotRestTheWaysOfOthers, the shape redditwarp's
// tests raise on), a banned one's 404 (its TestNotFound), and the
// redirect to the community search for a name reddit does not know (its
// TestRedirectToCommunitySearchIsNoSuchCommunity).
var (
	privateAnswer = refuse(http.StatusForbidden, `{"reason": "private", "message": "Forbidden", "error": 403}`, "")
	bannedAnswer  = refuse(http.StatusNotFound, `{"reason": "banned", "message": "Not Found", "error": 404}`, "")
)

func refuse(status int, body, location string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		if location != "" {
			w.Header().Set("Location", location)
		}
		if body != "" {
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func searchRedirect(w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, "/subreddits/search.json?q=secretclub", http.StatusFound)
}

// closedRig is a rig watching r/golang, r/sales and r/secretclub, all
// three in one group, where r/secretclub answers with refusal while
// closed is set; log holds what the reader told the owner.
type closedRig struct {
	*rig
	closed atomic.Bool
	log    *bytes.Buffer
}

func newClosedRig(t *testing.T, refusal func(w http.ResponseWriter, r *http.Request)) *closedRig {
	g := &closedRig{rig: newRig(t), log: &bytes.Buffer{}}
	g.closed.Store(true)
	g.earshot.set(func(f *earshotFake) {
		f.phrases = append(f.phrases, helper.Phrase{Phrase: "acme", Community: "secretclub"})
	})
	g.runner.Readers[0].(*reddit.Reader).Log = slog.New(slog.NewTextHandler(g.log, nil))
	g.reddit.mu.Lock()
	g.reddit.answer = func(w http.ResponseWriter, r *http.Request) bool {
		if !g.closed.Load() || !strings.Contains(r.URL.Path, "secretclub") {
			return false
		}
		refusal(w, r)
		return true
	}
	g.reddit.mu.Unlock()
	return g
}

// paths are the paths reddit was asked for since the i-th request.
func (f *redditFake) paths(i int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests[i:] {
		out = append(out, r.URL.Path)
	}
	return out
}

// warnings counts the warnings naming r/secretclub as refused.
func (g *closedRig) warnings() int {
	n := 0
	for _, l := range strings.Split(g.log.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "community=r/secretclub") {
			n++
		}
	}
	return n
}

// noAccountIssue fails t for any report the server would name as an
// issue of the account.
func noAccountIssue(t *testing.T, reports []helper.Signal) {
	t.Helper()
	for _, s := range reports {
		is := health.Classify(health.Signal{Platform: core.Reddit, Status: s.Status, Location: s.Location, Body: s.Body, ViaProxy: s.ViaProxy})
		if is != health.None || !s.OK() {
			t.Errorf("reported %+v, which the server names %q: the account is paused for one community's refusal", s, is)
		}
	}
}

// A community that went private answers 403 with reddit's JSON reason,
// and so does every group that names it: a multireddit naming a private
// community is refused whole. The group is read one community at a time
// once, the other communities of the group are still read, the account
// is not reported as needing its owner for a community's own refusal,
// and the owner is told which community and why.
func TestPrivateCommunityDoesNotStopOthers(t *testing.T) {
	g := newClosedRig(t, privateAnswer)
	g.reddit.add("new", thing{kind: "t3", id: "p1", sub: "golang", title: "Any alternative to Acme?", text: "x", created: 1767225500})
	g.reddit.add("comments", thing{kind: "t1", id: "c1", sub: "sales", text: "acme crm is fine", created: 1767225550})
	err := g.runner.Pass(context.Background())
	posts, reports, _ := g.earshot.snapshot()
	if _, ok := posts["t3_p1"]; !ok {
		t.Errorf("r/golang's post was not sent (pass: %v)", err)
	}
	if _, ok := posts["t1_c1"]; !ok || err != nil {
		t.Errorf("r/sales's comment was not sent (pass: %v)", err)
	}
	noAccountIssue(t, reports)
	want := []string{"/r/golang+sales+secretclub/new.json", "/r/golang/new.json", "/r/sales/new.json", "/r/secretclub/new.json",
		"/r/golang+sales/comments.json"}
	if got := g.reddit.paths(0); !slices.Equal(got, want) {
		t.Errorf("asked for %v, want %v: the group split once, the others read together after", got, want)
	}
	if n := g.warnings(); n != 1 || !strings.Contains(g.log.String(), "reason=private") {
		t.Errorf("%d warnings naming r/secretclub, want 1 with its reason; log:\n%s", n, g.log)
	}

	// From then on it is left out of the groups, and not warned of again
	// within the day.
	g.clock.move(time.Hour)
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	want = []string{"/r/golang+sales/new.json", "/r/golang+sales/comments.json"}
	if got := g.reddit.paths(5); !slices.Equal(got, want) {
		t.Errorf("the next pass asked for %v, want %v", got, want)
	}
	if n := g.warnings(); n != 1 {
		t.Errorf("%d warnings after the second pass, want still 1", n)
	}
	st, _ := helper.OpenState(g.state, g.earshot.srv.URL)
	if v := st.Get(reddit.Key("new", "secretclub")); v != "" {
		t.Errorf("the closed community's checkpoint moved to %q", v)
	}
}

// A banned community (404 with reddit's reason), one answering 404 with
// no reason, a quarantined one (403 with its reason) and a name reddit
// does not know (a redirect to its community search) are each the
// community's own refusal: the others are read, nothing is reported as
// the account's state.
func TestCommunityRefusalsAreTheCommunitys(t *testing.T) {
	for _, tc := range []struct {
		name, reason string
		answer       func(w http.ResponseWriter, r *http.Request)
	}{
		{"banned", "reason=banned", bannedAnswer},
		{"404 without a reason", `reason="not found"`, refuse(http.StatusNotFound, `{"message": "Not Found", "error": 404}`, "")},
		{"quarantined", "reason=quarantined", refuse(http.StatusForbidden, `{"reason": "quarantined", "message": "Forbidden", "error": 403}`, "")},
		{"search redirect", `reason="unknown to reddit"`, searchRedirect},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newClosedRig(t, tc.answer)
			g.reddit.add("new", thing{kind: "t3", id: "p1", sub: "golang", title: "acme", text: "x", created: 1767225500})
			if err := g.runner.Pass(context.Background()); err != nil {
				t.Fatalf("pass: %v", err)
			}
			posts, reports, _ := g.earshot.snapshot()
			if _, ok := posts["t3_p1"]; !ok {
				t.Errorf("r/golang's post was not sent")
			}
			noAccountIssue(t, reports)
			if n := g.warnings(); n != 1 || !strings.Contains(g.log.String(), tc.reason) {
				t.Errorf("%d warnings, want 1 with %s; log:\n%s", n, tc.reason, g.log)
			}
			if n := g.reddit.count(); n != 5 {
				t.Errorf("%d requests, want 5 (the group, each alone, the others' comments)", n)
			}
		})
	}
}

// A closed community is read alone once a day, not sooner; its
// checkpoint does not move while it is closed, so what it posted while
// closed is read once it reopens, and it joins the groups again.
func TestClosedCommunityIsReadAloneAgainAfterADay(t *testing.T) {
	g := newClosedRig(t, privateAnswer)
	g.closed.Store(false)
	g.reddit.add("new", thing{kind: "t3", id: "s1", sub: "secretclub", title: "acme", text: "before", created: 1767225500})
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	st, _ := helper.OpenState(g.state, g.earshot.srv.URL)
	if v := st.Get(reddit.Key("new", "secretclub")); v != "1767225500" {
		t.Fatalf("checkpoint %q before it closed", v)
	}

	g.closed.Store(true)
	g.clock.move(time.Hour)
	g.reddit.add("new", thing{kind: "t3", id: "s2", sub: "secretclub", title: "acme", text: "while closed",
		created: float64(g.clock.Now().Unix())})
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g.warnings() != 1 {
		t.Fatalf("warnings: %s", g.log)
	}

	// Within the day: not asked for.
	g.clock.move(23 * time.Hour)
	n := g.reddit.count()
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, p := range g.reddit.paths(n) {
		if strings.Contains(p, "secretclub") {
			t.Errorf("asked for %s within a day of its refusal", p)
		}
	}

	// A day on: asked alone, once; still closed, and the owner told again.
	g.clock.move(61 * time.Minute)
	n = g.reddit.count()
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"/r/golang+sales/new.json", "/r/golang+sales/comments.json", "/r/secretclub/new.json"}
	if got := g.reddit.paths(n); !slices.Equal(got, want) {
		t.Errorf("a day on, asked for %v, want %v", got, want)
	}
	if g.warnings() != 2 {
		t.Errorf("warnings after a day still closed: %s", g.log)
	}
	st, _ = helper.OpenState(g.state, g.earshot.srv.URL)
	if v := st.Get(reddit.Key("new", "secretclub")); v != "1767225500" {
		t.Errorf("checkpoint moved to %q while closed", v)
	}

	// Reopened: read alone from its checkpoint, then with the others.
	g.closed.Store(false)
	g.clock.move(reddit.ClosedRetry + time.Minute)
	n = g.reddit.count()
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	want = []string{"/r/golang+sales/new.json", "/r/golang+sales/comments.json", "/r/secretclub/new.json", "/r/secretclub/comments.json"}
	if got := g.reddit.paths(n); !slices.Equal(got, want) {
		t.Errorf("once reopened, asked for %v, want %v", got, want)
	}
	if posts, _, _ := g.earshot.snapshot(); posts["t3_s2"].Body == nil {
		t.Errorf("the post made while it was closed was not sent: %v", posts)
	}
	if !strings.Contains(g.log.String(), "reads the community again") {
		t.Errorf("the reopening was not logged: %s", g.log)
	}
	g.clock.move(time.Hour)
	n = g.reddit.count()
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	want = []string{"/r/golang+sales+secretclub/new.json", "/r/golang+sales+secretclub/comments.json"}
	if got := g.reddit.paths(n); !slices.Equal(got, want) {
		t.Errorf("after it reopened, asked for %v, want %v", got, want)
	}
	_, reports, _ := g.earshot.snapshot()
	noAccountIssue(t, reports)
}

// A true account problem is reported as before, and not taken for a
// community's: a 401, a login wall, a 403 without reddit's JSON reason
// (a block page, a bare Forbidden). The group is not split for it.
func TestAccountProblemsAreStillReported(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter, r *http.Request)
		status int
		paused bool
	}{
		{"401", refuse(http.StatusUnauthorized, `{"message": "Unauthorized", "error": 401}`, ""), 401, true},
		{"login wall", refuse(http.StatusFound, "", "https://www.reddit.com/login/?dest=%2Fr%2Fgolang"), 401, true},
		{"403 without a reason", refuse(http.StatusForbidden, `{"message": "Forbidden", "error": 403}`, ""), 403, false},
		{"403 block page", refuse(http.StatusForbidden, "<html><body>blocked</body></html>", ""), 403, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newClosedRig(t, nil)
			g.reddit.mu.Lock()
			g.reddit.answer = func(w http.ResponseWriter, r *http.Request) bool { tc.answer(w, r); return true }
			g.reddit.mu.Unlock()
			err := g.runner.Pass(context.Background())
			var p *helper.Paused
			if err == nil || errors.As(err, &p) != tc.paused {
				t.Fatalf("pass: %v, want a failure (paused: %t)", err, tc.paused)
			}
			_, reports, _ := g.earshot.snapshot()
			if len(reports) != 1 || reports[0].Status != tc.status {
				t.Fatalf("reports %+v, want one of status %d", reports, tc.status)
			}
			s := reports[0]
			if is := health.Classify(health.Signal{Platform: core.Reddit, Status: s.Status, Location: s.Location, Body: s.Body, ViaProxy: s.ViaProxy}); is == health.None {
				t.Errorf("the server names %+v no issue", s)
			}
			if n := g.reddit.count(); n != 1 {
				t.Errorf("%d requests, want 1: an account's refusal splits no group", n)
			}
			if g.warnings() != 0 {
				t.Errorf("a community was named closed: %s", g.log)
			}
		})
	}
}

// A split costs at most the group's size, once in a read: a group
// refused again after its split is left for the next read (its
// checkpoints unmoved), not split again.
func TestASplitIsOnceARead(t *testing.T) {
	g := newClosedRig(t, nil)
	g.reddit.mu.Lock()
	g.reddit.answer = func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "secretclub") || r.URL.Path == "/r/golang+sales/comments.json" {
			privateAnswer(w, r)
			return true
		}
		return false
	}
	g.reddit.mu.Unlock()
	g.reddit.add("comments", thing{kind: "t1", id: "c1", sub: "sales", text: "acme crm is fine", created: 1767225550})
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"/r/golang+sales+secretclub/new.json", "/r/golang/new.json", "/r/sales/new.json", "/r/secretclub/new.json",
		"/r/golang+sales/comments.json"}
	if got := g.reddit.paths(0); !slices.Equal(got, want) {
		t.Errorf("asked for %v, want %v", got, want)
	}
	st, _ := helper.OpenState(g.state, g.earshot.srv.URL)
	if v := st.Get(reddit.Key("comments", "sales")); v != "" {
		t.Errorf("the checkpoint of a listing not read moved to %q", v)
	}
	_, reports, _ := g.earshot.snapshot()
	noAccountIssue(t, reports)
}

// The closed set holds only the owner's communities: one whose phrases
// are gone is forgotten, and read with the others when a phrase names
// it again.
func TestAClosedCommunityIsForgottenWithItsPhrases(t *testing.T) {
	g := newClosedRig(t, privateAnswer)
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	var all []helper.Phrase
	g.earshot.set(func(f *earshotFake) {
		all = f.phrases
		f.phrases = f.phrases[:2]
	})
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	g.closed.Store(false)
	g.earshot.set(func(f *earshotFake) { f.phrases = all })
	n := g.reddit.count()
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"/r/golang+sales+secretclub/new.json", "/r/golang+sales+secretclub/comments.json"}
	if got := g.reddit.paths(n); !slices.Equal(got, want) {
		t.Errorf("asked for %v, want %v: the community was remembered after its phrases were gone", got, want)
	}
}

// Each batch names the communities the pass has not read by then: a
// batch sent while the pass is still in r/golang's comments names all
// three (none is read whole yet), and the pass's last batch names only
// r/secretclub, which reddit refused; so the server records as read only
// what the pass read.
func TestBatchesNameTheCommunitiesNotRead(t *testing.T) {
	g := newClosedRig(t, privateAnswer)
	for i := range 100 {
		g.reddit.add("new", thing{kind: "t3", id: fmt.Sprintf("p%d", i), sub: "golang", title: "acme?", text: "x", created: float64(1767225000 + i)})
	}
	g.reddit.add("comments", thing{kind: "t1", id: "c1", sub: "golang", text: "acme works", created: 1767225500})
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	g.earshot.mu.Lock()
	got := g.earshot.unread
	g.earshot.mu.Unlock()
	want := [][]string{{"golang", "sales", "secretclub"}, {"secretclub"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the batches named %q unread, want %q", got, want)
	}

	// Reopened and read alone a day later: the pass names none.
	g.closed.Store(false)
	g.clock.move(reddit.ClosedRetry)
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	g.earshot.mu.Lock()
	got = g.earshot.unread[len(want):]
	g.earshot.mu.Unlock()
	if len(got) != 1 || got[0] != nil {
		t.Fatalf("after r/secretclub reopened the batches named %q unread, want one naming none", got)
	}
}
