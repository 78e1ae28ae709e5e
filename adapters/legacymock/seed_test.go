package legacymock

import "testing"

// The seed is what docs/legacy-mock.md ("What the seed holds") promises:
// QA and the dashboard lean on these rows by name.
func TestSeedMatchesDocs(t *testing.T) {
	c := newClient(t, Config{})
	accs := c.must(200, "GET", "/accounts", nil).list("accounts")
	if len(accs) != 2 || accs[0]["id"] != fbAccount || accs[0]["label"] != "Facebook" || accs[0]["platform"] != "facebook" ||
		accs[1]["id"] != redditAccount || accs[1]["platform"] != "reddit" || accs[0]["connectedAt"] == nil || accs[1]["connectedAt"] == nil {
		t.Errorf("accounts %v", accs)
	}

	comms := c.must(200, "GET", "/communities", nil).list("communities")
	count, asking := map[string]int{}, 0
	state := map[string]string{}
	for _, cm := range comms {
		count[cm["platform"].(string)]++
		if qs, _ := cm["entryQuestions"].([]any); cm["platform"] == "facebook" && len(qs) > 0 {
			asking++
		}
		if js := cm["joinState"].(string); js != "none" {
			state[cm["name"].(string)] = js
		}
	}
	if len(comms) != 18 || count["facebook"] != 7 || count["x"] != 4 || count["reddit"] != 7 || asking != 6 {
		t.Errorf("catalog of %d: %v, %d groups with entry questions", len(comms), count, asking)
	}
	want := map[string]string{
		"Austin Small Business Owners": "accepted", "r/smallbusiness": "accepted", "r/SaaS": "accepted",
		"Indie Hackers": "accepted", "Salon & Spa Owners Network": "pending",
	}
	if len(state) != len(want) {
		t.Errorf("joined or pending: %v", state)
	}
	for name, js := range want {
		if state[name] != js {
			t.Errorf("%s is %q, want %s", name, state[name], js)
		}
	}

	kws := c.must(200, "GET", "/keywords", nil).list("keywords")
	byPlatform := map[string]int{}
	for _, k := range kws {
		byPlatform[k["platform"].(string)]++
	}
	if len(kws) != 8 || len(byPlatform) != 3 {
		t.Errorf("%d keywords over %v", len(kws), byPlatform)
	}

	lst := c.must(200, "GET", "/listings", nil).list("listings")
	if len(lst) != 2 || lst[0]["status"] != "active" || lst[1]["status"] != "under-review" {
		t.Errorf("listings %v", lst)
	}
	if n := len(c.must(200, "GET", "/feed", nil).list("items")); n != 18 {
		t.Errorf("%d feed items", n)
	}
	if r := c.must(200, "GET", "/brand", nil); r.body["brand"] != nil {
		t.Errorf("brand %s", r.raw)
	}
	if r := c.must(200, "GET", "/api-keys", nil); len(r.list("apiKeys")) != 0 || r.body["apiKeys"] == nil {
		t.Errorf("api keys %s", r.raw)
	}
}
