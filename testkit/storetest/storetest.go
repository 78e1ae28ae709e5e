// Package storetest is the contract suite for the stores of package ports.
// Every store implementation runs the same cases through Run; a case makes
// its own owners with unique emails instead of truncating tables, so cases
// run in parallel on one database and two runs never see each other's rows.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Stores is one backend's set of stores, sharing a database. A backend
// may serve two ports with one value (Phrases and Listening, Webhooks and
// Deliveries); each is still named by its port, so every case uses only
// what its port promises.
type Stores struct {
	Owners     ports.OwnerStore
	Keys       ports.KeyStore
	Phrases    ports.PhraseStore
	Listening  ports.ListeningStore
	Matches    ports.MatchStore
	Accounts   ports.AccountStore
	Webhooks   ports.WebhookStore
	Deliveries ports.DeliveryQueue
	Backlog    ports.ScoringBacklog // counts the matches Matches stores
	Trends     ports.TrendStore     // the daily counts Matches keeps
	// RefillTrends, where the backend fills its daily counts from the
	// matches stored before it kept them (a schema upgrade), returns
	// stores on a database of their own and a function that empties
	// their counts and fills them again as that step does. Nil leaves
	// the case out.
	RefillTrends func(t *testing.T) (Stores, func() error)
	Channels     ports.ChannelStore // nil: the channel cases are skipped
	// Recent keeps the window of recent posts that Matches adds to.
	Recent         ports.RecentStore
	FilterArchives ports.FilterArchiveStore
}

// Factory opens a migrated, possibly shared, database for the test.
type Factory func(t *testing.T) Stores

// Run runs every case against the stores f makes.
func Run(t *testing.T, f Factory) {
	s := f(t)
	// Trims bound every owner's window at once: these cases run alone,
	// before the parallel ones start.
	t.Run("RecentTrim", func(t *testing.T) { testRecentTrim(t, s) })
	t.Run("RecentConcurrent", func(t *testing.T) { testRecentConcurrent(t, s) })
	cases := []struct {
		name string
		run  func(*testing.T, Stores)
	}{
		{"Owners", testOwners},
		{"OwnerList", testOwnerList},
		{"OwnerUpdate", testOwnerUpdate},
		{"EmailChange", testEmailChange},
		{"EmailChangeRace", testEmailChangeRace},
		{"EmailChangeReplaced", testEmailChangeReplaced},
		{"EmailChangeRequestRace", testEmailChangeRequestRace},
		{"Keys", testKeys},
		{"KeyLimit", testKeyLimit},
		{"KeyByIDAndLastUse", testKeyByIDAndLastUse},
		{"KeyNames", testKeyNames},
		{"IngestKeyLimit", testIngestKeyLimit},
		{"RevokedKeysKept", testRevokedKeysKept},
		{"Phrases", testPhrases},
		{"PhraseDuplicate", testPhraseDuplicate},
		{"PhraseDuplicateTyped", testPhraseDuplicateTyped},
		{"PhraseDuplicateTypedConcurrent", testPhraseDuplicateTypedConcurrent},
		{"PhraseLimit", testPhraseLimit},
		{"PhraseLimitConcurrent", testPhraseLimitConcurrent},
		{"Idempotency", testIdempotency},
		{"IdempotencyConcurrent", testIdempotencyConcurrent},
		{"PhraseStatusAndDelete", testPhraseStatusAndDelete},
		{"PhraseFilters", testPhraseFilters},
		{"UpdatePhrase", testUpdatePhrase},
		{"UpdatePhraseConcurrent", testUpdatePhraseConcurrent},
		{"SaveMatches", testSaveMatches},
		{"SaveMatchesLarge", testSaveMatchesLarge},
		{"SaveMatchesConcurrent", testSaveMatchesConcurrent},
		{"MatchPaging", testMatchPaging},
		{"MatchFilters", testMatchFilters},
		{"Search", testSearch},
		{"SearchPaging", testSearchPaging},
		{"SearchAfterDelete", testSearchAfterDelete},
		{"Isolation", testIsolation},
		{"Accounts", testAccounts},
		{"PhraseVersionAndListening", testPhraseVersionAndListening},
		{"Claims", testClaims},
		{"ClaimsConcurrent", testClaimsConcurrent},
		{"SetScores", testSetScores},
		{"Backlog", testBacklog},
		{"Webhooks", testWebhookStore},
		{"WebhookRecovery", testWebhookRecovery},
		{"Channels", testChannelStore},
		{"ImpossibleIDs", testImpossibleIDs},
		{"TrendCounts", testTrendCounts},
		{"TrendCountedOnce", testTrendCountedOnce},
		{"TrendFill", testTrendFill},
		{"RecentKeep", testRecentKeep},
		{"RecentSearch", testRecentSearch},
		{"Backfill", testBackfill},
		{"FilterArchive", testFilterArchive},
		{"FilterArchiveUnarchived", testFilterArchiveUnarchived},
		{"FilterArchiveNothing", testFilterArchiveNothing},
	}
	// Delivery claims take due deliveries of every owner, so the cases
	// that claim run one at a time, before the others start: run beside
	// each other, one would lease the other's deliveries for an hour.
	// So does ClaimsConcurrent, which claims every unscored match until
	// none is left.
	claims := map[string]bool{"Webhooks": true, "WebhookRecovery": true, "Channels": true, "ClaimsConcurrent": true}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !claims[c.name] {
				t.Parallel()
			}
			c.run(t, s)
		})
	}
}

var ctx = context.Background()

func unique() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func newOwner(t *testing.T, s Stores) core.Owner {
	t.Helper()
	o, err := core.NewOwner("o"+unique()+"@example.com", "Owner")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Owners.CreateOwner(ctx, &o); err != nil {
		t.Fatalf("CreateOwner: %v", err)
	}
	return o
}

var roomy = core.Limits{PhrasesPerPlatform: 100, AccountsPerPlatform: 1, WebhooksPerPerson: 0}

func newPhrase(t *testing.T, s Stores, ownerID, text, platform, community string) core.Phrase {
	t.Helper()
	p, err := core.NewPhrase(ownerID, text, platform, community)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Phrases.CreatePhrase(ctx, &p, roomy, ports.Idempotency{}); err != nil {
		t.Fatalf("CreatePhrase(%q): %v", text, err)
	}
	return p
}

func wantKind(t *testing.T, err error, k core.Kind) {
	t.Helper()
	if !core.IsKind(err, k) {
		t.Fatalf("error = %v, want kind %s", err, k)
	}
}

func testOwners(t *testing.T, s Stores) {
	o := newOwner(t, s)
	if o.ID == "" || o.CreatedAt.IsZero() {
		t.Fatalf("CreateOwner left ID or CreatedAt empty: %+v", o)
	}
	got, err := s.Owners.Owner(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Email != o.Email || got.Name != o.Name || !got.CreatedAt.Equal(o.CreatedAt) {
		t.Fatalf("Owner = %+v, want %+v", got, o)
	}
	_, err = s.Owners.Owner(ctx, "no-such-owner")
	wantKind(t, err, core.KindNotFound)
	dup := core.Owner{Email: o.Email}
	wantKind(t, s.Owners.CreateOwner(ctx, &dup), core.KindConflict)
	n, err := s.Owners.CountOwners(ctx)
	if err != nil || n < 1 {
		t.Fatalf("CountOwners = %d, %v", n, err)
	}
}

func testKeys(t *testing.T, s Stores) {
	o := newOwner(t, s)
	_, hash, _ := core.NewSecret(core.APIKey)
	k := core.Key{OwnerID: o.ID, Kind: core.APIKey, Name: "ci", Hash: hash, Scopes: []core.Scope{core.ScopeRead, core.ScopeWebhooks}}
	if err := s.Keys.CreateKey(ctx, &k, core.MaxAPIKeys); err != nil {
		t.Fatal(err)
	}
	got, err := s.Keys.KeyByHash(ctx, hash)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != k.ID || got.OwnerID != o.ID || got.Kind != core.APIKey || got.Name != "ci" ||
		!got.Has(core.ScopeWebhooks) || got.Has(core.ScopeWritePhrases) || got.Revoked() {
		t.Fatalf("KeyByHash = %+v", got)
	}
	_, ihash, _ := core.NewSecret(core.IngestKey)
	ik := core.Key{OwnerID: o.ID, Kind: core.IngestKey, Hash: ihash}
	if err := s.Keys.CreateKey(ctx, &ik, core.MaxAPIKeys); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Keys.KeyByHash(ctx, ihash); len(got.Scopes) != 0 || got.Kind != core.IngestKey {
		t.Fatalf("ingest key = %+v", got)
	}
	_, err = s.Keys.KeyByHash(ctx, core.HashSecret("svc_api_unknown"))
	wantKind(t, err, core.KindNotFound)
	dup := core.Key{OwnerID: o.ID, Kind: core.APIKey, Hash: hash}
	wantKind(t, s.Keys.CreateKey(ctx, &dup, core.MaxAPIKeys), core.KindConflict)

	list, err := s.Keys.Keys(ctx, o.ID, core.APIKey)
	if err != nil || len(list) != 1 || list[0].ID != k.ID {
		t.Fatalf("Keys = %+v, %v", list, err)
	}
	other := newOwner(t, s)
	wantKind(t, s.Keys.RevokeKey(ctx, other.ID, k.ID, time.Now()), core.KindNotFound)
	if got, _ := s.Keys.KeyByHash(ctx, hash); got.Revoked() {
		t.Fatal("another owner revoked the key")
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	if err := s.Keys.RevokeKey(ctx, o.ID, k.ID, at); err != nil {
		t.Fatal(err)
	}
	if err := s.Keys.RevokeKey(ctx, o.ID, k.ID, at.Add(time.Hour)); err != nil {
		t.Fatalf("revoking twice: %v", err)
	}
	got, _ = s.Keys.KeyByHash(ctx, hash)
	if !got.RevokedAt.Equal(at) {
		t.Fatalf("RevokedAt = %v, want %v", got.RevokedAt, at)
	}
	wantKind(t, s.Keys.RevokeKey(ctx, o.ID, "no-such-key", at), core.KindNotFound)
}

func testKeyByIDAndLastUse(t *testing.T, s Stores) {
	o := newOwner(t, s)
	_, hash, _ := core.NewSecret(core.IngestKey)
	k := core.Key{OwnerID: o.ID, Kind: core.IngestKey, Name: "helper", Hash: hash}
	if err := s.Keys.CreateKey(ctx, &k, core.MaxAPIKeys); err != nil {
		t.Fatal(err)
	}
	got, err := s.Keys.Key(ctx, o.ID, k.ID)
	if err != nil || got.ID != k.ID || got.Kind != core.IngestKey || got.Name != "helper" || got.Hash != hash ||
		!got.CreatedAt.Equal(k.CreatedAt) || !got.LastUsedAt.IsZero() {
		t.Fatalf("Key = %+v, %v", got, err)
	}
	other := newOwner(t, s)
	_, err = s.Keys.Key(ctx, other.ID, k.ID)
	wantKind(t, err, core.KindNotFound)
	_, err = s.Keys.Key(ctx, o.ID, "no-such-key")
	wantKind(t, err, core.KindNotFound)
	// The lookup by hash reads a key as the lookup by id does, whatever
	// its name holds.
	named := newOwner(t, s)
	for _, name := range []string{"", "-", "12:a-b ✓", "a,b"} {
		_, h, _ := core.NewSecret(core.IngestKey)
		k := core.Key{OwnerID: named.ID, Kind: core.IngestKey, Name: name, Hash: h}
		if err := s.Keys.CreateKey(ctx, &k, core.MaxAPIKeys); err != nil {
			t.Fatal(err)
		}
		byHash, err := s.Keys.KeyByHash(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		byID, err := s.Keys.Key(ctx, named.ID, k.ID)
		if err != nil || !reflect.DeepEqual(byHash, byID) {
			t.Fatalf("key named %q: by hash %+v, by id %+v (%v)", name, byHash, byID, err)
		}
	}

	at := time.Now().UTC().Truncate(time.Microsecond)
	if err := s.Keys.MarkKeyUsed(ctx, k.ID, at); err != nil {
		t.Fatal(err)
	}
	if err := s.Keys.MarkKeyUsed(ctx, k.ID, at.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Keys.MarkKeyUsed(ctx, "no-such-key", at); err != nil {
		t.Fatalf("marking an unknown key: %v", err)
	}
	if got, _ := s.Keys.KeyByHash(ctx, hash); !got.LastUsedAt.Equal(at) {
		t.Fatalf("KeyByHash LastUsedAt = %v, want %v (an earlier mark must not move it back)", got.LastUsedAt, at)
	}
	if got, _ := s.Keys.Key(ctx, o.ID, k.ID); !got.LastUsedAt.Equal(at) {
		t.Fatalf("Key LastUsedAt = %v, want %v", got.LastUsedAt, at)
	}
	list, err := s.Keys.Keys(ctx, o.ID, core.IngestKey)
	if err != nil || len(list) != 1 || !list[0].LastUsedAt.Equal(at) {
		t.Fatalf("Keys = %+v, %v", list, err)
	}
	later := at.Add(90 * time.Second)
	if err := s.Keys.MarkKeyUsed(ctx, k.ID, later); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Keys.Key(ctx, o.ID, k.ID); !got.LastUsedAt.Equal(later) {
		t.Fatalf("LastUsedAt = %v, want %v", got.LastUsedAt, later)
	}
}

func testKeyLimit(t *testing.T, s Stores) {
	o := newOwner(t, s)
	var first core.Key
	for i := 0; i < 3; i++ {
		_, hash, _ := core.NewSecret(core.APIKey)
		k := core.Key{OwnerID: o.ID, Kind: core.APIKey, Hash: hash}
		if err := s.Keys.CreateKey(ctx, &k, 3); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = k
		}
	}
	_, hash, _ := core.NewSecret(core.APIKey)
	k := core.Key{OwnerID: o.ID, Kind: core.APIKey, Hash: hash}
	wantKind(t, s.Keys.CreateKey(ctx, &k, 3), core.KindPlanLimit)
	if _, err := s.Keys.KeyByHash(ctx, hash); !core.IsKind(err, core.KindNotFound) {
		t.Fatal("a key refused by the limit was stored")
	}
	if err := s.Keys.RevokeKey(ctx, o.ID, first.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.Keys.CreateKey(ctx, &k, 3); err != nil {
		t.Fatalf("after a revoke a new key fits: %v", err)
	}
	_, ihash, _ := core.NewSecret(core.IngestKey)
	ik := core.Key{OwnerID: o.ID, Kind: core.IngestKey, Hash: ihash}
	if err := s.Keys.CreateKey(ctx, &ik, 3); err != nil {
		t.Fatalf("ingest keys do not count against the API key limit: %v", err)
	}
	wrong := core.Key{OwnerID: "no-such-owner", Kind: core.APIKey, Hash: core.HashSecret(unique())}
	wantKind(t, s.Keys.CreateKey(ctx, &wrong, 3), core.KindNotFound)
}

func testPhrases(t *testing.T, s Stores) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "Acme CRM", "reddit", "r/SaaS")
	if p.ID == "" || p.CreatedAt.IsZero() || p.LastCheckedAt.IsZero() {
		t.Fatalf("CreatePhrase left fields empty: %+v", p)
	}
	got, err := s.Phrases.Phrase(ctx, o.ID, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Phrase != "Acme CRM" || got.Platform != core.Reddit || got.Community != "saas" ||
		got.Status != core.Listening || got.LastSource != core.SourceReddit || got.Matches != 0 ||
		!got.CreatedAt.Equal(p.CreatedAt) {
		t.Fatalf("Phrase = %+v", got)
	}
	newPhrase(t, s, o.ID, "acme", "x", "")
	newPhrase(t, s, o.ID, "acme", "facebook", "")
	all, err := s.Phrases.Phrases(ctx, o.ID, ports.PhraseFilter{})
	if err != nil || len(all) != 3 || all[0].ID != p.ID {
		t.Fatalf("Phrases = %+v, %v", all, err)
	}
	xs, _ := s.Phrases.Phrases(ctx, o.ID, ports.PhraseFilter{Platform: core.X})
	if len(xs) != 1 || xs[0].Platform != core.X {
		t.Fatalf("Phrases(x) = %+v", xs)
	}
	u, err := s.Phrases.Usage(ctx, o.ID)
	if err != nil || u.Phrases[core.Reddit] != 1 || u.Phrases[core.X] != 1 || u.Phrases[core.Facebook] != 1 || u.Accounts[core.X] != 0 {
		t.Fatalf("Usage = %+v, %v", u, err)
	}
	_, err = s.Phrases.Phrase(ctx, o.ID, "no-such-phrase")
	wantKind(t, err, core.KindNotFound)
}

func testPhraseDuplicate(t *testing.T, s Stores) {
	o := newOwner(t, s)
	newPhrase(t, s, o.ID, "Straße Bikes", "reddit", "bikes")
	for _, tc := range []struct {
		text, platform, community string
		conflict                  bool
	}{
		{"STRASSE BIKES", "reddit", "bikes", false}, // not equal under simple folding
		{"straße bikes", "reddit", "Bikes", true},
		{"STRAẞE  bikes", "reddit", "/r/bikes/", true},
		{"straße bikes", "reddit", "cycling", false},
		{"straße bikes", "x", "", false},
	} {
		p, err := core.NewPhrase(o.ID, tc.text, tc.platform, tc.community)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Phrases.CreatePhrase(ctx, &p, roomy, ports.Idempotency{})
		if tc.conflict {
			wantKind(t, err, core.KindConflict)
		} else if err != nil {
			t.Fatalf("%q on %s/%s: %v", tc.text, tc.platform, tc.community, err)
		}
	}
}

func testPhraseLimit(t *testing.T, s Stores) {
	o := newOwner(t, s)
	limits := core.Limits{PhrasesPerPlatform: 2}
	for i := 0; i < 2; i++ {
		p, _ := core.NewPhrase(o.ID, fmt.Sprintf("phrase %d", i), "x", "")
		if _, err := s.Phrases.CreatePhrase(ctx, &p, limits, ports.Idempotency{}); err != nil {
			t.Fatal(err)
		}
	}
	p, _ := core.NewPhrase(o.ID, "one too many", "x", "")
	_, err := s.Phrases.CreatePhrase(ctx, &p, limits, ports.Idempotency{})
	wantKind(t, err, core.KindPlanLimit)
	q, _ := core.NewPhrase(o.ID, "one too many", "facebook", "")
	if _, err := s.Phrases.CreatePhrase(ctx, &q, limits, ports.Idempotency{}); err != nil {
		t.Fatalf("the limit is per platform: %v", err)
	}
	// A lowered limit keeps what exists and refuses only new phrases.
	lowered := core.Limits{PhrasesPerPlatform: 1}
	p2, _ := core.NewPhrase(o.ID, "another", "x", "")
	_, err = s.Phrases.CreatePhrase(ctx, &p2, lowered, ports.Idempotency{})
	wantKind(t, err, core.KindPlanLimit)
	if xs, _ := s.Phrases.Phrases(ctx, o.ID, ports.PhraseFilter{Platform: core.X}); len(xs) != 2 {
		t.Fatalf("existing phrases after a lowered limit: %d, want 2", len(xs))
	}
}

func testPhraseLimitConcurrent(t *testing.T, s Stores) {
	o := newOwner(t, s)
	limits := core.Limits{PhrasesPerPlatform: 3}
	var wg sync.WaitGroup
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _ := core.NewPhrase(o.ID, fmt.Sprintf("concurrent %d", i), "x", "")
			_, err := s.Phrases.CreatePhrase(ctx, &p, limits, ports.Idempotency{})
			if err != nil && !core.IsKind(err, core.KindPlanLimit) {
				t.Errorf("CreatePhrase: %v", err)
			}
		}()
	}
	wg.Wait()
	if xs, _ := s.Phrases.Phrases(ctx, o.ID, ports.PhraseFilter{}); len(xs) != 3 {
		t.Fatalf("%d phrases after concurrent creates, want the limit 3", len(xs))
	}
}

func testIdempotency(t *testing.T, s Stores) {
	o := newOwner(t, s)
	idem := ports.Idempotency{Key: "req-1", Since: time.Now().Add(-24 * time.Hour)}
	p, _ := core.NewPhrase(o.ID, "first", "x", "")
	replayed, err := s.Phrases.CreatePhrase(ctx, &p, roomy, idem)
	if err != nil || replayed {
		t.Fatalf("first create: replayed=%v err=%v", replayed, err)
	}
	q, _ := core.NewPhrase(o.ID, "a different body", "facebook", "")
	replayed, err = s.Phrases.CreatePhrase(ctx, &q, roomy, idem)
	if err != nil || !replayed || q.ID != p.ID || q.Phrase != "first" {
		t.Fatalf("replay: replayed=%v err=%v phrase=%+v", replayed, err, q)
	}
	// The same key from another owner is another request.
	other := newOwner(t, s)
	r, _ := core.NewPhrase(other.ID, "first", "x", "")
	if replayed, err := s.Phrases.CreatePhrase(ctx, &r, roomy, idem); err != nil || replayed || r.ID == p.ID {
		t.Fatalf("other owner: replayed=%v err=%v", replayed, err)
	}
	// Past the window the key is new again.
	later := ports.Idempotency{Key: "req-1", Since: time.Now().Add(time.Hour)}
	n, _ := core.NewPhrase(o.ID, "second", "x", "")
	if replayed, err := s.Phrases.CreatePhrase(ctx, &n, roomy, later); err != nil || replayed || n.ID == p.ID {
		t.Fatalf("expired key: replayed=%v err=%v", replayed, err)
	}
}

func testIdempotencyConcurrent(t *testing.T, s Stores) {
	o := newOwner(t, s)
	idem := ports.Idempotency{Key: "burst-" + unique(), Since: time.Now().Add(-24 * time.Hour)}
	ids := make([]string, 20)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, _ := core.NewPhrase(o.ID, "burst", "x", "")
			if _, err := s.Phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1}, idem); err != nil {
				t.Errorf("CreatePhrase: %v", err)
			}
			ids[i] = p.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("concurrent idempotent creates returned different phrases: %v", ids)
		}
	}
	if xs, _ := s.Phrases.Phrases(ctx, o.ID, ports.PhraseFilter{}); len(xs) != 1 {
		t.Fatalf("%d phrases, want 1", len(xs))
	}
}

func testPhraseStatusAndDelete(t *testing.T, s Stores) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "pause me", "x", "")
	got, err := s.Phrases.SetPhraseStatus(ctx, o.ID, p.ID, core.Paused)
	if err != nil || got.Status != core.Paused || got.ID != p.ID {
		t.Fatalf("SetPhraseStatus = %+v, %v", got, err)
	}
	listening, _ := s.Phrases.Phrases(ctx, o.ID, ports.PhraseFilter{Status: core.Listening})
	if len(listening) != 0 {
		t.Fatalf("a paused phrase is listed as listening")
	}
	if got, _ := s.Phrases.SetPhraseStatus(ctx, o.ID, p.ID, core.Listening); got.Status != core.Listening {
		t.Fatalf("resume: %+v", got)
	}
	_, err = s.Phrases.SetPhraseStatus(ctx, o.ID, "no-such-phrase", core.Paused)
	wantKind(t, err, core.KindNotFound)

	keep := newPhrase(t, s, o.ID, "keep me", "x", "")
	res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{
		{Post: post("d1"), PhraseIDs: []string{p.ID, keep.ID}},
	})
	if err != nil || len(res.Matches) != 2 {
		t.Fatalf("SaveMatches = %+v, %v", res, err)
	}
	if err := s.Phrases.DeletePhrase(ctx, o.ID, p.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.Phrases.Phrase(ctx, o.ID, p.ID)
	wantKind(t, err, core.KindNotFound)
	ms, _, _ := s.Matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 10})
	if len(ms) != 1 || ms[0].PhraseID != keep.ID {
		t.Fatalf("matches after delete: %+v", ms)
	}
	wantKind(t, s.Phrases.DeletePhrase(ctx, o.ID, p.ID), core.KindNotFound)
	// A deleted phrase frees its place under the limit.
	again, _ := core.NewPhrase(o.ID, "pause me", "x", "")
	if _, err := s.Phrases.CreatePhrase(ctx, &again, core.Limits{PhrasesPerPlatform: 2}, ports.Idempotency{}); err != nil {
		t.Fatalf("create after delete: %v", err)
	}
}

func post(id string) core.Post {
	return core.Post{ExternalID: id, Author: "ada", Title: "Title " + id, Text: "text of " + id, URL: "https://example.com/" + id, Likes: 3, Comments: 1}
}

func testSaveMatches(t *testing.T, s Stores) {
	o := newOwner(t, s)
	a := newPhrase(t, s, o.ID, "alpha", "x", "")
	b := newPhrase(t, s, o.ID, "beta", "x", "")
	fb := newPhrase(t, s, o.ID, "alpha", "facebook", "")
	long := post("long")
	long.Text = strings.Repeat("é", 3000)
	long.Title = ""
	res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{
		{Post: post("p1"), PhraseIDs: []string{a.ID, b.ID}},
		{Post: post("p2"), PhraseIDs: nil},
		{Post: long, PhraseIDs: []string{a.ID, fb.ID}}, // fb is another platform's: ignored
		{Post: post("p1"), PhraseIDs: []string{a.ID}},  // twice in one batch
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Saved != 3 || res.Known != 1 || len(res.Matches) != 3 {
		t.Fatalf("SaveMatches = saved %d known %d matches %d", res.Saved, res.Known, len(res.Matches))
	}
	for i := 1; i < len(res.Matches); i++ {
		if !res.Matches[i].CreatedAt.After(res.Matches[i-1].CreatedAt) {
			t.Fatalf("CreatedAt not strictly increasing: %v", res.Matches)
		}
	}
	m, err := s.Matches.Match(ctx, o.ID, res.Matches[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	want := post("p1")
	if m.Phrase != "alpha" || m.PhraseID != a.ID || m.Platform != core.X || m.Score != nil ||
		m.Post != want || !m.CreatedAt.Equal(res.Matches[0].CreatedAt) {
		t.Fatalf("Match = %+v", m)
	}
	lm, _ := s.Matches.Match(ctx, o.ID, res.Matches[2].ID)
	if len([]rune(lm.Post.Text)) != core.MaxPostText || lm.Post.Title != "" {
		t.Fatalf("long post: text %d chars, title %q", len([]rune(lm.Post.Text)), lm.Post.Title)
	}
	// Resending the batch is skipped whole.
	res, err = s.Matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{{Post: post("p1"), PhraseIDs: []string{a.ID}}, {Post: post("p2")}})
	if err != nil || res.Saved != 0 || res.Known != 2 || len(res.Matches) != 0 {
		t.Fatalf("resend = %+v, %v", res, err)
	}
	// The same id on another platform is another post.
	res, err = s.Matches.SaveMatches(ctx, o.ID, core.Facebook, []ports.PostMatches{{Post: post("p1"), PhraseIDs: []string{fb.ID}}})
	if err != nil || res.Saved != 1 || len(res.Matches) != 1 {
		t.Fatalf("facebook p1 = %+v, %v", res, err)
	}
	got, _ := s.Phrases.Phrase(ctx, o.ID, a.ID)
	if got.Matches != 2 {
		t.Fatalf("alpha matches = %d, want 2", got.Matches)
	}
	_, err = s.Matches.Match(ctx, o.ID, "no-such-match")
	wantKind(t, err, core.KindNotFound)
}

// testSaveMatchesConcurrent saves batches of one owner from many
// goroutines at once, the same posts in several of them: a store that
// stores waiting batches together must still count each batch's own
// posts and return each its own matches, every post stored once.
func testSaveMatchesConcurrent(t *testing.T, s Stores) {
	o := newOwner(t, s)
	a := newPhrase(t, s, o.ID, "alpha", "x", "")
	const writers, batches, size, distinct = 8, 6, 10, 200
	type outcome struct {
		res   ports.SaveResult
		batch []string
	}
	out := make(chan outcome, writers*batches)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				var batch []ports.PostMatches
				var ids []string
				for i := range size {
					id := fmt.Sprintf("c%03d", (w*37+b*size+i*7)%distinct)
					ids = append(ids, id)
					batch = append(batch, ports.PostMatches{Post: post(id), PhraseIDs: []string{a.ID}})
				}
				res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, batch)
				if err != nil {
					t.Error(err)
					return
				}
				out <- outcome{res, ids}
			}
		})
	}
	wg.Wait()
	close(out)
	saved, matched := 0, map[string]bool{}
	stamps := map[time.Time]bool{}
	for oc := range out {
		if oc.res.Saved+oc.res.Known != size || len(oc.res.Matches) != oc.res.Saved {
			t.Fatalf("batch %v: saved %d known %d matches %d", oc.batch, oc.res.Saved, oc.res.Known, len(oc.res.Matches))
		}
		saved += oc.res.Saved
		for i, m := range oc.res.Matches {
			if !slices.Contains(oc.batch, m.Post.ExternalID) || matched[m.Post.ExternalID] || stamps[m.CreatedAt] {
				t.Fatalf("match %+v: not its batch's, or its post or createdAt seen twice", m)
			}
			if i > 0 && !m.CreatedAt.After(oc.res.Matches[i-1].CreatedAt) {
				t.Fatalf("CreatedAt not strictly increasing within a batch: %v", oc.res.Matches)
			}
			matched[m.Post.ExternalID], stamps[m.CreatedAt] = true, true
		}
	}
	ms, _, err := s.Matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if saved != len(matched) || len(ms) != saved {
		t.Fatalf("saved %d posts, %d matched, %d stored", saved, len(matched), len(ms))
	}
	got, _ := s.Phrases.Phrase(ctx, o.ID, a.ID)
	if got.Matches != saved {
		t.Fatalf("phrase counts %d matches, want %d", got.Matches, saved)
	}
	_, err = s.Matches.SaveMatches(ctx, "no-such-owner", core.X, []ports.PostMatches{{Post: post("x"), PhraseIDs: []string{a.ID}}})
	wantKind(t, err, core.KindNotFound)
}

// testSaveMatchesLarge saves full batches, of more matches than posts,
// twice each: stores that prepare statements by size meet each size once
// unprepared and once prepared.
func testSaveMatchesLarge(t *testing.T, s Stores) {
	o := newOwner(t, s)
	ids := []string{newPhrase(t, s, o.ID, "one", "x", "").ID, newPhrase(t, s, o.ID, "two", "x", "").ID}
	for round := 0; round < 2; round++ {
		for _, perPost := range [][]string{ids[:1], ids} {
			var batch []ports.PostMatches
			for i := 0; i < core.MaxIngestBatch; i++ {
				batch = append(batch, ports.PostMatches{Post: post(fmt.Sprintf("l%d-%d-%03d", round, len(perPost), i)), PhraseIDs: perPost})
			}
			res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, batch)
			if want := len(batch) * len(perPost); err != nil || res.Saved != len(batch) || len(res.Matches) != want {
				t.Fatalf("round %d, %d phrases a post: saved %d, %d matches, %v; want %d, %d", round, len(perPost), res.Saved, len(res.Matches), err, len(batch), want)
			}
			res, err = s.Matches.SaveMatches(ctx, o.ID, core.X, batch)
			if err != nil || res.Known != len(batch) || len(res.Matches) != 0 {
				t.Fatalf("resend = known %d, %d matches, %v", res.Known, len(res.Matches), err)
			}
		}
	}
	for i, id := range ids {
		p, err := s.Phrases.Phrase(ctx, o.ID, id)
		if want := 2 * core.MaxIngestBatch * (2 - i); err != nil || p.Matches != want {
			t.Fatalf("phrase %d: %d matches, %v; want %d", i, p.Matches, err, want)
		}
	}
}

func testMatchPaging(t *testing.T, s Stores) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "paged", "x", "")
	const total = 230
	// Big batches saved in one transaction share a clock reading: the
	// store must still give every match its own createdAt.
	for b := 0; b < total; b += 100 {
		var batch []ports.PostMatches
		for i := b; i < min(b+100, total); i++ {
			batch = append(batch, ports.PostMatches{Post: post(fmt.Sprintf("p%03d", i)), PhraseIDs: []string{p.ID}})
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // concurrent writers of one owner
			defer wg.Done()
			if _, err := s.Matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{{Post: post(fmt.Sprintf("c%03d", b)), PhraseIDs: []string{p.ID}}}); err != nil {
				t.Error(err)
			}
		}()
		if _, err := s.Matches.SaveMatches(ctx, o.ID, core.X, batch); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
	}
	want := total + 3
	seen := map[string]bool{}
	var before time.Time
	var last time.Time
	for pages := 0; ; pages++ {
		ms, more, err := s.Matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Before: before, Limit: 25})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if seen[m.ID] {
				t.Fatalf("match %s returned twice", m.ID)
			}
			if !last.IsZero() && !m.CreatedAt.Before(last) {
				t.Fatalf("not newest first: %v after %v", m.CreatedAt, last)
			}
			seen[m.ID], last = true, m.CreatedAt
		}
		if !more {
			break
		}
		if len(ms) != 25 {
			t.Fatalf("page of %d with more after it", len(ms))
		}
		before = ms[len(ms)-1].CreatedAt
		if pages > want {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != want {
		t.Fatalf("paging returned %d matches, want %d", len(seen), want)
	}
}

func testMatchFilters(t *testing.T, s Stores) {
	o := newOwner(t, s)
	x := newPhrase(t, s, o.ID, "filter", "x", "")
	f := newPhrase(t, s, o.ID, "filter", "facebook", "")
	if _, err := s.Matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{{Post: post("x1"), PhraseIDs: []string{x.ID}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Matches.SaveMatches(ctx, o.ID, core.Facebook, []ports.PostMatches{{Post: post("f1"), PhraseIDs: []string{f.ID}}}); err != nil {
		t.Fatal(err)
	}
	ms, more, _ := s.Matches.Matches(ctx, o.ID, ports.MatchFilter{Platform: core.Facebook, MinScore: -1, Limit: 10})
	if len(ms) != 1 || more || ms[0].Platform != core.Facebook {
		t.Fatalf("platform filter: %+v", ms)
	}
	ms, _, _ = s.Matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: 0, Limit: 10})
	if len(ms) != 0 {
		t.Fatalf("min_score 0 returned %d unscored matches", len(ms))
	}
	all, _, _ := s.Matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 10})
	setScore := func(ownerID string, sc core.Score) []core.Match {
		t.Helper()
		got, err := s.Matches.SetScores(ctx, []ports.ScoreUpdate{{Match: core.Match{OwnerID: ownerID, ID: all[0].ID}, Score: sc}}, core.QueueMatchCreated)
		if err != nil {
			t.Fatalf("SetScores: %v", err)
		}
		return got
	}
	stored := func() core.Match {
		t.Helper()
		m, err := s.Matches.Match(ctx, o.ID, all[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	got := setScore(o.ID, core.Score{Value: 80, Intent: core.IntentBuying, Reason: "asks where to buy"})
	if m := stored(); len(got) != 1 || got[0].ID != all[0].ID || m.Score == nil || m.Score.Value != 80 || m.Score.Intent != core.IntentBuying || m.Score.Reason != "asks where to buy" {
		t.Fatalf("SetScores = %+v; stored %+v", got, m)
	}
	if got := setScore(o.ID, core.Score{Value: 10, Intent: core.IntentPraise, Reason: "again"}); len(got) != 0 || stored().Score.Value != 80 {
		t.Fatalf("a second score changed the score: %+v, stored %+v", got, stored().Score)
	}
	if got := setScore("someone-else", core.Score{Value: 1}); len(got) != 0 || stored().Score.Value != 80 {
		t.Fatalf("another owner scored the match: %+v, stored %+v", got, stored().Score)
	}
	for _, tc := range []struct{ min, want int }{{0, 1}, {80, 1}, {81, 0}} {
		ms, _, _ = s.Matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: tc.min, Limit: 10})
		if len(ms) != tc.want {
			t.Fatalf("min_score %d: %d matches, want %d", tc.min, len(ms), tc.want)
		}
	}
	ms, more, _ = s.Matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 1})
	if len(ms) != 1 || !more || ms[0].Platform != core.Facebook {
		t.Fatalf("limit 1: %+v more=%v", ms, more)
	}
}

func testIsolation(t *testing.T, s Stores) {
	a, b := newOwner(t, s), newOwner(t, s)
	p := newPhrase(t, s, a.ID, "mine", "x", "")
	res, err := s.Matches.SaveMatches(ctx, a.ID, core.X, []ports.PostMatches{{Post: post("iso"), PhraseIDs: []string{p.ID}}})
	if err != nil || len(res.Matches) != 1 {
		t.Fatal(err)
	}
	_, err = s.Phrases.Phrase(ctx, b.ID, p.ID)
	wantKind(t, err, core.KindNotFound)
	_, err = s.Phrases.SetPhraseStatus(ctx, b.ID, p.ID, core.Paused)
	wantKind(t, err, core.KindNotFound)
	wantKind(t, s.Phrases.DeletePhrase(ctx, b.ID, p.ID), core.KindNotFound)
	_, err = s.Matches.Match(ctx, b.ID, res.Matches[0].ID)
	wantKind(t, err, core.KindNotFound)
	if xs, _ := s.Phrases.Phrases(ctx, b.ID, ports.PhraseFilter{}); len(xs) != 0 {
		t.Fatalf("owner B lists A's phrases: %+v", xs)
	}
	if ms, _, _ := s.Matches.Matches(ctx, b.ID, ports.MatchFilter{MinScore: -1, Limit: 10}); len(ms) != 0 {
		t.Fatalf("owner B lists A's matches: %+v", ms)
	}
	// B saving A's phrase id makes no match: phrases are per owner.
	res, err = s.Matches.SaveMatches(ctx, b.ID, core.X, []ports.PostMatches{{Post: post("iso"), PhraseIDs: []string{p.ID}}})
	if err != nil || len(res.Matches) != 0 || res.Saved != 1 {
		t.Fatalf("B with A's phrase id: %+v, %v", res, err)
	}
	got, _ := s.Phrases.Phrase(ctx, a.ID, p.ID)
	if got.Status != core.Listening || got.Matches != 1 {
		t.Fatalf("A's phrase changed: %+v", got)
	}
	if u, _ := s.Phrases.Usage(ctx, b.ID); u.Phrases[core.X] != 0 {
		t.Fatalf("B's usage counts A's phrase: %+v", u)
	}
}

func testAccounts(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	limits := core.Limits{AccountsPerPlatform: 1}
	a, err := s.Accounts.EnsureAccount(ctx, o.ID, core.X, limits)
	if err != nil || a.ID == "" || a.Platform != core.X || a.HasSession || a.Label != "X" {
		t.Fatalf("EnsureAccount = %+v, %v", a, err)
	}
	again, err := s.Accounts.EnsureAccount(ctx, o.ID, core.X, core.Limits{AccountsPerPlatform: 0})
	if err != nil || again.ID != a.ID {
		t.Fatalf("an existing account stays when the limit drops: %+v, %v", again, err)
	}
	_, err = s.Accounts.EnsureAccount(ctx, o.ID, core.Facebook, core.Limits{AccountsPerPlatform: 0})
	wantKind(t, err, core.KindPlanLimit)
	if u, _ := s.Phrases.Usage(ctx, o.ID); u.Accounts[core.X] != 1 || u.Accounts[core.Facebook] != 0 {
		t.Fatalf("usage: %+v", u)
	}
	_, _, err = s.Accounts.Session(ctx, o.ID, core.X)
	wantKind(t, err, core.KindNotFound)
	if err := s.Accounts.SetSession(ctx, o.ID, a.ID, []byte("sealed")); err != nil {
		t.Fatal(err)
	}
	acc, jar, err := s.Accounts.Session(ctx, o.ID, core.X)
	if err != nil || string(jar) != "sealed" || acc.ID != a.ID || !acc.HasSession {
		t.Fatalf("Session = %+v %q %v", acc, jar, err)
	}
	wantKind(t, s.Accounts.SetSession(ctx, other.ID, a.ID, []byte("theirs")), core.KindNotFound)
	_, _, err = s.Accounts.Session(ctx, other.ID, core.X)
	wantKind(t, err, core.KindNotFound)
	// Concurrent first uses connect one account.
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := s.Accounts.EnsureAccount(ctx, other.ID, core.Reddit, limits)
			if err != nil {
				t.Error(err)
			}
			ids[i] = a.ID
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("concurrent EnsureAccount made several accounts: %v", ids)
		}
	}
}

func testPhraseVersionAndListening(t *testing.T, s Stores) {
	o := newOwner(t, s)
	v0, err := s.Listening.PhraseVersion(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	p := newPhrase(t, s, o.ID, "versioned "+unique(), "reddit", "versions")
	v1, _ := s.Listening.PhraseVersion(ctx, o.ID)
	s.Phrases.SetPhraseStatus(ctx, o.ID, p.ID, core.Paused)
	v2, _ := s.Listening.PhraseVersion(ctx, o.ID)
	if !(v0 < v1 && v1 < v2) {
		t.Fatalf("versions %d %d %d do not grow", v0, v1, v2)
	}
	_, err = s.Listening.PhraseVersion(ctx, "no-such-owner")
	wantKind(t, err, core.KindNotFound)

	q := newPhrase(t, s, o.ID, "listening "+unique(), "reddit", "versions")
	list, err := s.Listening.ListeningPhrases(ctx, core.Reddit)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, x := range list {
		found[x.ID] = true
		if x.Status != core.Listening || x.Platform != core.Reddit {
			t.Fatalf("ListeningPhrases returned %+v", x)
		}
	}
	if found[p.ID] || !found[q.ID] {
		t.Fatalf("paused phrase listed or listening one missing")
	}
	// One owner's listening phrases of a platform, oldest first: not the
	// paused one, not another platform's, not another owner's.
	r := newPhrase(t, s, o.ID, "listening too "+unique(), "reddit", "elsewhere")
	newPhrase(t, s, o.ID, "listening on x "+unique(), "x", "")
	other := newOwner(t, s)
	theirs := newPhrase(t, s, other.ID, q.Phrase, "reddit", "versions")
	own, err := s.Listening.OwnerListeningPhrases(ctx, o.ID, core.Reddit)
	if err != nil || len(own) != 2 || own[0].ID != q.ID || own[1].ID != r.ID || own[0].Status != core.Listening || own[0].OwnerID != o.ID {
		t.Fatalf("OwnerListeningPhrases = %+v, %v; want %s then %s", own, err, q.ID, r.ID)
	}
	if own, err := s.Listening.OwnerListeningPhrases(ctx, other.ID, core.Reddit); err != nil || len(own) != 1 || own[0].ID != theirs.ID {
		t.Fatalf("the other owner's listening phrases: %+v, %v", own, err)
	}
	if own, err := s.Listening.OwnerListeningPhrases(ctx, "no-such-owner", core.Reddit); err != nil || len(own) != 0 {
		t.Fatalf("an unknown owner's listening phrases: %+v, %v", own, err)
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	if err := s.Listening.MarkChecked(ctx, []string{q.ID}, core.SourceMirror, at); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Phrases.Phrase(ctx, o.ID, q.ID)
	if got.LastSource != core.SourceMirror || !got.LastCheckedAt.Equal(at) {
		t.Fatalf("MarkChecked: %+v", got)
	}
}

// testClaims: the scoring sweep's claims. ClaimUnscored takes unscored
// matches of every owner, so the case looks at its own owner's among
// them; a claim whose limit is above every free match of the database
// takes them all.
func testClaims(t *testing.T, s Stores) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "claims", "x", "")
	var batch []ports.PostMatches
	for i := 0; i < 5; i++ {
		batch = append(batch, ports.PostMatches{Post: post(fmt.Sprintf("claim-%d", i)), PhraseIDs: []string{p.ID}})
	}
	res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, batch)
	if err != nil {
		t.Fatal(err)
	}
	saved := map[string]core.Match{}
	for _, m := range res.Matches {
		saved[m.ID] = m
	}
	// A scored match is never claimed.
	scored := scoreMatch(t, s, res.Matches[1], core.Score{Value: 50, Intent: core.IntentDiscussion, Reason: "talks about it"})
	// Concurrent sweeps claim disjoint matches: the four left, once each,
	// each the match as saved, under its owner.
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ms, err := s.Matches.ClaimUnscored(ctx, 2, time.Hour)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, m := range ms {
					if want, ok := saved[m.ID]; ok {
						seen[m.ID]++
						if m.OwnerID != o.ID || m.PhraseID != p.ID || m.Score != nil || m.Post.ExternalID != want.Post.ExternalID {
							t.Errorf("claimed %+v, saved %+v", m, want)
						}
					}
				}
				mu.Unlock()
				if len(ms) == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != 4 {
		t.Fatalf("sweeps claimed %d of the owner's 4 free matches: %v", len(seen), seen)
	}
	for id, n := range seen {
		if n != 1 || id == scored.ID {
			t.Fatalf("claimed %s %d times", id, n)
		}
	}
	// claims reports whether one claim of every free match took id.
	claims := func(lease time.Duration, id string) bool {
		t.Helper()
		ms, err := s.Matches.ClaimUnscored(ctx, 1<<20, lease)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ms, func(m core.Match) bool { return m.ID == id })
	}
	// A leased match is not claimed again while its lease runs.
	for _, m := range res.Matches {
		if claims(time.Hour, m.ID) {
			t.Fatalf("match %s claimed again within its lease", m.ID)
		}
	}
	// A match whose lease ran out is claimed again: a negative lease runs
	// out at once.
	late, err := s.Matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{{Post: post("claim-late"), PhraseIDs: []string{p.ID}}})
	if err != nil || len(late.Matches) != 1 {
		t.Fatalf("SaveMatches: %+v, %v", late, err)
	}
	id := late.Matches[0].ID
	if !claims(-time.Hour, id) {
		t.Fatal("a free match was not claimed")
	}
	if !claims(time.Hour, id) {
		t.Fatal("a match whose lease ran out was not claimed again")
	}
	if claims(time.Hour, id) {
		t.Fatal("a leased match was claimed twice")
	}
}

// testClaimsConcurrent: sweeps claiming at once each get at most their
// limit, never a match another holds, and together every match once.
func testClaimsConcurrent(t *testing.T, s Stores) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "sweeps", "x", "")
	const n, limit = 200, 5
	var batch []ports.PostMatches
	for i := 0; i < n; i++ {
		batch = append(batch, ports.PostMatches{Post: post(fmt.Sprintf("sweep-%d", i)), PhraseIDs: []string{p.ID}})
	}
	res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, batch)
	if err != nil || len(res.Matches) != n {
		t.Fatalf("SaveMatches: %d, %v", len(res.Matches), err)
	}
	var mu sync.Mutex
	seen := map[string]int{} // every match claimed, of any owner
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ms, err := s.Matches.ClaimUnscored(ctx, limit, time.Hour)
				if err != nil {
					t.Error(err)
					return
				}
				if len(ms) > limit {
					t.Errorf("a claim of %d took %d", limit, len(ms))
				}
				mu.Lock()
				for _, m := range ms {
					seen[m.ID]++
				}
				mu.Unlock()
				if len(ms) == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("match %s claimed %d times", id, k)
		}
	}
	for _, m := range res.Matches {
		if seen[m.ID] != 1 {
			t.Fatalf("match %s of %d claimed %d times, want once", m.ID, n, seen[m.ID])
		}
	}
}
