package main

import (
	"strings"
	"testing"
)

// The operator who is also the only owner can find the first start's
// owner again, give it a real address and name, read its id from
// GET /me, and learn from a plan limit's refusal which setting raises it;
// once the deployment has a second owner, the refusal sends owners to
// the operator instead.
func TestOwnerListUpdateAndTheOperatorsLimits(t *testing.T) {
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")

	list := strings.Split(s.mustAdmin("owner", "list"), "\n")
	if len(list) != 2 || list[0] != "ID\tEMAIL\tNAME\tCREATED" {
		t.Fatalf("owner list:\n%s", strings.Join(list, "\n"))
	}
	row := strings.Split(list[1], "\t")
	if len(row) != 4 || row[0] != s.OwnerID || row[1] != "owner@localhost" || row[2] != "First owner" || !isTime(row[3]) {
		t.Fatalf("bootstrap owner's row %q", list[1])
	}

	if out := s.mustAdmin("owner", "update", "--owner", s.OwnerID, "--email", "ada@example.com", "--name", "Ada"); out != "" {
		t.Fatalf("owner update printed %q, want nothing", out)
	}
	row = strings.Split(strings.Split(s.mustAdmin("owner", "list"), "\n")[1], "\t")
	if row[0] != s.OwnerID || row[1] != "ada@example.com" || row[2] != "Ada" {
		t.Fatalf("after update: %q", row)
	}
	if _, err := s.admin("owner", "update", "--owner", s.OwnerID); err == nil {
		t.Fatal("owner update with nothing to change succeeded")
	}
	if _, err := s.admin("owner", "update", "--owner", "no-such-owner", "--name", "x"); err == nil {
		t.Fatal("owner update of an unknown owner succeeded")
	}

	me := dataOf(t, s.call("GET", "/api/v1/me", s.APIKey, nil).want(t, 200, ""))
	if me["ownerId"] != s.OwnerID || me["plan"] != "free" {
		t.Fatalf("GET /me: %v", me)
	}

	phrase := func(text string) response {
		return s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": text, "platform": "reddit", "community": "SaaS"})
	}
	phrase("acme crm").want(t, 201, "")
	_, msg := phrase("other crm").want(t, 403, "plan_limit").errorCode(t)
	const alone = "the plan allows 1 phrase per platform (reddit has 1); the operator raises it with EARSHOT_PLAN_PHRASES_PER_PLATFORM"
	if msg != alone {
		t.Fatalf("API refusal %q, want %q", msg, alone)
	}
	_, err := s.admin("phrase", "add", "--owner", s.OwnerID, "--platform", "reddit", "--phrase", "other crm", "--community", "SaaS")
	if err == nil || !strings.Contains(err.Error(), alone) {
		t.Fatalf("console refusal: %v", err)
	}

	bob := s.mustAdmin("owner", "create", "--email", "bob@example.com", "--name", "Bob")
	if _, err := s.admin("owner", "update", "--owner", bob, "--email", "ada@example.com"); err == nil {
		t.Fatal("owner update to a taken address succeeded")
	}
	_, msg = phrase("other crm").want(t, 403, "plan_limit").errorCode(t)
	if want := "the plan allows 1 phrase per platform (reddit has 1); ask the operator to raise it"; msg != want {
		t.Fatalf("API refusal with two owners %q, want %q", msg, want)
	}
	if list := strings.Split(s.mustAdmin("owner", "list"), "\n"); len(list) != 3 || !strings.HasPrefix(list[2], bob+"\tbob@example.com\tBob\t") {
		t.Fatalf("owner list with two owners:\n%s", strings.Join(list, "\n"))
	}
}
