package main

import (
	"fmt"
	"strings"
	"testing"
)

// The inbox in the browser for owners with 0, 1, 5 and 50 phrases: the
// page renders and its phrase menu lists exactly the owner's own
// phrases, whichever owner was shown the inbox before; an owner without
// phrases has no menu, only the step to add one.
func TestInboxBrowserPhraseMenu(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_PLAN_PHRASES_PER_PLATFORM=50")
	type owner struct {
		id   string
		want []string
	}
	var owners []owner
	for _, n := range []int{0, 1, 5, 50} {
		id := s.mustAdmin("owner", "create", "--email", fmt.Sprintf("o%d@example.com", n))
		key := s.mustAdmin("key", "create", "--owner", id, "--name", "w", "--scopes", "write:phrases")
		o := owner{id: id, want: []string{"Any phrase"}}
		for i := range n {
			platform := []string{"x", "facebook"}[i%2]
			phrase := fmt.Sprintf("owner%d phrase %d", n, i)
			s.call("POST", "/api/v1/keywords", key, map[string]any{"phrase": phrase, "platform": platform}).want(t, 201, "")
			o.want = append(o.want, phrase+" ("+platform+")")
		}
		owners = append(owners, o)
	}
	// Twice round, so that each owner's inbox follows another's.
	for round := range 2 {
		for _, o := range owners {
			b.signIn(s.loginLink(o.id))
			b.open(s.URL + "/app/")
			if h := b.text("main h1"); h != "Inbox" {
				t.Fatalf("round %d, owner with %d phrases: heading %q\n%s", round, len(o.want)-1, h, b.text("main"))
			}
			if len(o.want) == 1 {
				// Without phrases there is nothing to filter: the inbox
				// is the step to add one.
				if eval[bool](b, `!!document.querySelector("#f-phrase")`) || !eval[bool](b, `!!document.querySelector('#empty a[href="/app/phrases"]')`) {
					t.Fatalf("round %d, owner without phrases:\n%s", round, b.text("main"))
				}
				continue
			}
			got := eval[[]string](b, `Array.from(document.querySelectorAll("#f-phrase option")).map(function(o){return o.textContent})`)
			// The menu's order is the phrase list's; compare as sets.
			if !sameSet(got, o.want) {
				t.Fatalf("round %d, owner with %d phrases: phrase menu\n%s\nwant\n%s", round, len(o.want)-1,
					strings.Join(got, "\n"), strings.Join(o.want, "\n"))
			}
			if len(o.want) > 1 {
				// Choosing a phrase filters by it and keeps it chosen.
				b.do(js(`document.querySelector("#f-phrase").selectedIndex = 1`))
				b.submitAndWait(`form.filters button[type="submit"]`)
				if sel := eval[string](b, `document.querySelector("#f-phrase").selectedOptions[0].textContent`); sel != got[1] {
					t.Fatalf("after filtering by %q the menu shows %q", got[1], sel)
				}
			}
		}
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, s := range a {
		seen[s]++
	}
	for _, s := range b {
		if seen[s]--; seen[s] < 0 {
			return false
		}
	}
	return true
}
